"""DCR's verdicts from a run: each sheet's level scores, its DCR Factor and the metrics it adjusted.

DCR quantifies rather than decides, so every verdict has ``flagged=None``: the
statistic is the DCR Factor the hook (or ``adjust``) wrote on the sheet's group
row, and the evidence holds S1..S4 and every ``<metric>_adj`` beside its raw
metric. Adjusted rows that no sheet of the run accounts for (e.g. ``adjust
--sheet-scores`` with a sheet the run did not name) get a verdict of their own,
sheet unknown, so they are never dropped. The report renders them with
``lm_eval_contam.report.methods.dcr``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.dcr.results import SCORE_METRIC, dcr_level_tasks
from lm_eval_contam.dcr.sheet import LEVELS, load_sheet
from lm_eval_contam.errors import ContamError
from lm_eval_contam.formatting import interval, number
from lm_eval_contam.rundir import FILTER, ModelRun, number_or_none
from lm_eval_contam.stats import ConfidenceInterval
from lm_eval_contam.verdict import Verdict

FAMILY = "dcr"
METHOD = "dcr_factor"
TITLE = "DCR Factor"
NULL = "n/a: DCR estimates a risk factor, no test"
RULE = "acc_adj = acc × (1 − DCR Factor)"
UNKNOWN_SHEET = "unknown"

LevelScores = tuple[float | None, float | None, float | None, float | None]


@dataclass(frozen=True)
class AdjustedMetric:
    """A benchmark metric beside its DCR-adjusted value (``<metric>_adj``), as written on the task's row."""

    task: str
    metric: str  # "acc", or "acc,<filter>" under a filter other than the project's
    raw: float
    raw_stderr: float | None
    adjusted: float
    adjusted_stderr: float | None
    factor: float | None
    factor_ci: ConfidenceInterval | None


@dataclass(frozen=True)
class DCREvidence:
    """One sheet's level scores S1..S4, its factor, and the adjusted metrics it accounts for."""

    sheet: str  # the sheet the level tasks name, or UNKNOWN_SHEET
    level_scores: LevelScores
    factor: float | None
    factor_ci: ConfidenceInterval | None
    adjusted: tuple[AdjustedMetric, ...]

    def facts(self) -> list[tuple[str, str]]:
        return [("sheet", self.sheet),
                ("level scores S1–S4", ", ".join(number(score) for score in self.level_scores)),
                ("DCR Factor", f"{number(self.factor)} {interval(self.factor_ci)}"),
                *((f"{row.task} {row.metric} → {row.metric}_adj",
                   f"{number(row.raw)} ± {number(row.raw_stderr)} → "
                   f"{number(row.adjusted)} ± {number(row.adjusted_stderr)}") for row in self.adjusted)]

    def summary(self) -> str:
        adjusted = "".join(f", {row.metric}_adj {number(row.adjusted)}" for row in self.adjusted)
        return f"factor {number(self.factor)}{adjusted}"


def factor_interval(row: Mapping[str, Any], filter_name: str = FILTER) -> ConfidenceInterval | None:
    """The factor's bootstrap interval as the hook writes it (``dcr_factor_ci_low`` / ``_high``)."""
    low = number_or_none(row.get(f"dcr_factor_ci_low,{filter_name}"))
    high = number_or_none(row.get(f"dcr_factor_ci_high,{filter_name}"))
    return ConfidenceInterval(low, high) if low is not None and high is not None else None


def adjusted_metrics(model: ModelRun) -> list[AdjustedMetric]:
    """Every ``<metric>_adj`` row the hook (or ``adjust``) wrote, beside its raw metric, by task."""
    found = []
    for task in sorted(model.results.get("results") or {}):
        row = model.row(task)
        for key, value in row.items():
            name, _, filter_name = key.partition(",")
            adjusted = number_or_none(value)
            if not name.endswith("_adj") or not filter_name or adjusted is None:
                continue
            metric = name.removesuffix("_adj")
            raw = number_or_none(row.get(f"{metric},{filter_name}"))
            if raw is None:
                continue
            found.append(AdjustedMetric(
                task=task, metric=metric if filter_name == FILTER else f"{metric},{filter_name}",
                raw=raw, raw_stderr=number_or_none(row.get(f"{metric}_stderr,{filter_name}")), adjusted=adjusted,
                adjusted_stderr=number_or_none(row.get(f"{name}_stderr,{filter_name}")),
                factor=number_or_none(row.get(f"dcr_factor,{filter_name}")),
                factor_ci=factor_interval(row, filter_name),
            ))
    return found


def group_of(model: ModelRun, level_tasks: Sequence[str]) -> str | None:
    """The group holding all of a sheet's level tasks (``dcr_<bench>``), from lm-eval's group_subtasks."""
    for group, subtasks in (model.results.get("group_subtasks") or {}).items():
        if set(level_tasks) <= set(subtasks):
            return group
    return None


def level_scores(model: ModelRun, group: str | None, tasks: Mapping[int, str]) -> LevelScores:
    """S1..S4 as the hook wrote them on the group row, else each level task's own score."""
    group_row = model.row(group) if group else {}

    def score(level: int) -> float | None:
        if f"s{level},{FILTER}" in group_row:
            return number_or_none(group_row[f"s{level},{FILTER}"])
        return number_or_none(model.row(tasks[level]).get(f"{SCORE_METRIC},{FILTER}")) if level in tasks else None

    return tuple(score(level) for level in LEVELS)  # type: ignore[return-value]


def sheet_targets(sheet: str) -> tuple[str | None, set[str]]:
    """The sheet's group and the tasks it adjusts, from its file; (None, no tasks) when it cannot be loaded."""
    try:
        loaded = load_sheet(sheet)
    except ContamError:
        return None, set()
    return loaded.group, {target.task for target in loaded.adjusts}


def _items(model: ModelRun, tasks: Mapping[int, str]) -> int | None:
    counts = [model.n_instances(task) for task in tasks.values()]
    return None if not counts or None in counts else sum(counts)  # type: ignore[arg-type]


def _verdict(model: ModelRun, *, partition: str, task: str, evidence: DCREvidence, n: int | None) -> Verdict:
    return Verdict(model=model.label, partition=partition, family=FAMILY, method=METHOD, title=TITLE, task=task,
                   flagged=None, statistic=evidence.factor, pvalue=None, confidence_interval=evidence.factor_ci,
                   n=n, null=NULL, rule=RULE, evidence=evidence)


def verdicts(model: ModelRun) -> list[Verdict]:
    """One verdict per DCR sheet the run's level tasks name, then one per adjusted task no sheet accounts for."""
    adjusted = adjusted_metrics(model)
    found, accounted = [], set()
    for sheet, tasks in sorted(dcr_level_tasks(model.results).items()):
        sheet_group, targets = sheet_targets(sheet)
        group = group_of(model, list(tasks.values())) or sheet_group
        group_row = model.row(group) if group else {}
        mine = tuple(row for row in adjusted if row.task in targets)
        accounted |= {row.task for row in mine}
        evidence = DCREvidence(sheet=sheet, level_scores=level_scores(model, group, tasks),
                               factor=number_or_none(group_row.get(f"dcr_factor,{FILTER}")),
                               factor_ci=factor_interval(group_row), adjusted=mine)
        found.append(_verdict(model, partition=f"DCR sheet {sheet}", task=group or sheet, evidence=evidence,
                              n=_items(model, tasks)))
    for task in sorted({row.task for row in adjusted} - accounted):
        rows = tuple(row for row in adjusted if row.task == task)
        evidence = DCREvidence(sheet=UNKNOWN_SHEET, level_scores=(None, None, None, None), factor=rows[0].factor,
                               factor_ci=rows[0].factor_ci, adjusted=rows)
        found.append(_verdict(model, partition=f"DCR sheet {UNKNOWN_SHEET}", task=task, evidence=evidence, n=None))
    return found
