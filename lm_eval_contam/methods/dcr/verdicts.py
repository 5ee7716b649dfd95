"""DCR's verdicts from a run: each sheet's level scores, its DCR Factor and the metrics it adjusted.

DCR quantifies rather than decides, so every verdict has ``flagged=None``: the
statistic is the DCR Factor the hook (or ``adjust``) wrote on the sheet's group
row, and the evidence holds S1..S4, the check mode that produced them
(``controlled``, ``paper``, ``manual`` or ``given``), each controlled level's
sign-test p-value (original vs control) and every ``<metric>_adj`` beside its raw
metric. Adjusted rows that no sheet of the run accounts for (e.g. ``adjust
--sheet-scores`` with a sheet the run did not name) get a verdict of their own,
sheet unknown, so they are never dropped. The report renders them with
``lm_eval_contam.report.methods.dcr``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.formatting import interval, number
from lm_eval_contam.core.method_verdict import EXPLORATORY, Test, Verdict
from lm_eval_contam.core.rundir import FILTER, ModelResults, number_or_none
from lm_eval_contam.core.stats import ConfidenceInterval
from lm_eval_contam.methods.dcr.results import (
    CHECK_MODE_ROW,
    PVALUE_METRIC,
    SCORE_METRIC,
    TOO_FEW_ITEMS_ROW,
    dcr_level_tasks,
    level_check_modes,
)
from lm_eval_contam.methods.dcr.schema import LEVELS
from lm_eval_contam.methods.dcr.sheet import load_sheet

FAMILY = "dcr"
NULL = "n/a: DCR estimates a risk factor, no test"
RULE = "acc_adj = acc × (1 − DCR Factor)"
# The rule names the check mode that produced the factor (CHECK_MODE_RULES), where it is known.
FACTOR = Test(family=FAMILY, name="dcr_factor", title="DCR Factor", null=NULL, rule=RULE + "{check_mode}", compares=(),
              role=EXPLORATORY, rated=False, why="a factor that adjusts a score, not a test: it has no p-value")
# What S3/S4 are in each check mode (the verdict's rule names the mode that produced the factor).
CHECK_MODE_RULES = {
    "controlled": "S3/S4 = max(0, pass rate on the items − on their perturbed twins); per-level H0: item and twin "
                  "are exchangeable (no item memory), exact one-sided sign test",
    "paper": "S_i = share of items whose automated Check passed, no control (the paper-style checks)",
    "manual": "S_i = share of items a person judged contaminated (the paper's Check)",
    "given": "S1..S4 given by hand (adjust --sheet-scores)",
}
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
    check_mode: str | None = None  # what produced S1..S4; None when no sheet is known
    level_pvalues: LevelScores = (None, None, None, None)  # controlled levels' sign test, original vs control
    scope: str | None = None  # a group's sheet: what its factor describes (Sheet.scope)

    def facts(self) -> list[tuple[str, str]]:
        tested = [f"L{level} p = {number(p)}" for level, p in zip(LEVELS, self.level_pvalues) if p is not None]
        return [("sheet", self.sheet),
                *([("factor of", self.scope)] if self.scope else []),
                ("check mode", self.check_mode or "unknown"),
                ("level scores S1–S4", ", ".join(number(score) for score in self.level_scores)),
                *([("item vs control (sign test)", ", ".join(tested))] if tested else []),
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


def adjusted_metrics(model: ModelResults) -> list[AdjustedMetric]:
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


def group_of(model: ModelResults, level_tasks: Sequence[str]) -> str | None:
    """The group holding all of a sheet's level tasks (``dcr_<bench>``), from lm-eval's group_subtasks."""
    for group, subtasks in (model.results.get("group_subtasks") or {}).items():
        if set(level_tasks) <= set(subtasks):
            return group
    return None


def level_scores(model: ModelResults, group: str | None, tasks: Mapping[int, str]) -> LevelScores:
    """S1..S4 as the hook wrote them on the group row, else each level task's own score."""
    group_row = model.row(group) if group else {}

    def score(level: int) -> float | None:
        if f"s{level},{FILTER}" in group_row:
            return number_or_none(group_row[f"s{level},{FILTER}"])
        return number_or_none(model.row(tasks[level]).get(f"{SCORE_METRIC},{FILTER}")) if level in tasks else None

    return tuple(score(level) for level in LEVELS)  # type: ignore[return-value]


def level_pvalues(model: ModelResults, tasks: Mapping[int, str]) -> LevelScores:
    """Each controlled level's sign-test p-value (None for levels checked without controls)."""
    return tuple(number_or_none(model.row(tasks[level]).get(f"{PVALUE_METRIC},{FILTER}")) if level in tasks else None
                 for level in LEVELS)  # type: ignore[return-value]


def check_mode_of(model: ModelResults, group_row: Mapping[str, Any], tasks: Mapping[int, str]) -> str:
    """What produced S1..S4: the hook's record on the group row, else what the level tasks recorded."""
    recorded = group_row.get(f"{CHECK_MODE_ROW},{FILTER}")
    return recorded if isinstance(recorded, str) else level_check_modes(model.results, tasks)


def sheet_targets(sheet: str) -> tuple[str | None, set[str], str | None]:
    """The sheet's group, the tasks it adjusts and what its factor describes (a group's sheet), from its file;
    (None, no tasks, None) when it cannot be loaded."""
    try:
        loaded = load_sheet(sheet)
    except ContamError:
        return None, set(), None
    return loaded.group, {target.task for target in loaded.adjusts}, loaded.scope


def _items(model: ModelResults, tasks: Mapping[int, str]) -> int | None:
    counts = [model.n_instances(task) for task in tasks.values()]
    return None if not counts or None in counts else sum(counts)  # type: ignore[arg-type]


def too_few_items_caveats(group_row: Mapping[str, Any]) -> tuple[str, ...]:
    """The hook's record of controlled levels too small to add evidence, as the verdict's caveat."""
    levels = group_row.get(f"{TOO_FEW_ITEMS_ROW},{FILTER}")
    if not isinstance(levels, str) or levels == "none":
        return ()
    return (f"too few items at {levels}: those levels add no evidence to the factor",)


def _verdict(model: ModelResults, *, partition: str, task: str, evidence: DCREvidence, n: int | None,
             caveats: tuple[str, ...] = ()) -> Verdict:
    mode = evidence.check_mode
    check_mode = f"; {mode} checks: {CHECK_MODE_RULES[mode]}" if mode in CHECK_MODE_RULES else ""
    return FACTOR.verdict(model=model.label, partition=partition, task=task, flagged=None, statistic=evidence.factor,
                          pvalue=None, confidence_interval=evidence.factor_ci, n=n, evidence=evidence,
                          caveats=caveats, check_mode=check_mode)


def verdicts(model: ModelResults) -> list[Verdict]:
    """One verdict per DCR sheet the run's level tasks name, then one per adjusted task no sheet accounts for."""
    adjusted = adjusted_metrics(model)
    found, accounted = [], set()
    for sheet, tasks in sorted(dcr_level_tasks(model.results).items()):
        sheet_group, targets, scope = sheet_targets(sheet)
        group = group_of(model, list(tasks.values())) or sheet_group
        group_row = model.row(group) if group else {}
        mine = tuple(row for row in adjusted if row.task in targets)
        accounted |= {row.task for row in mine}
        evidence = DCREvidence(sheet=sheet, level_scores=level_scores(model, group, tasks),
                               factor=number_or_none(group_row.get(f"dcr_factor,{FILTER}")),
                               factor_ci=factor_interval(group_row), adjusted=mine,
                               check_mode=check_mode_of(model, group_row, tasks),
                               level_pvalues=level_pvalues(model, tasks), scope=scope)
        found.append(_verdict(model, partition=f"DCR sheet {sheet}", task=group or sheet, evidence=evidence,
                              n=_items(model, tasks), caveats=too_few_items_caveats(group_row)))
    for task in sorted({row.task for row in adjusted} - accounted):
        rows = tuple(row for row in adjusted if row.task == task)
        evidence = DCREvidence(sheet=UNKNOWN_SHEET, level_scores=(None, None, None, None), factor=rows[0].factor,
                               factor_ci=rows[0].factor_ci, adjusted=rows)
        found.append(_verdict(model, partition=f"DCR sheet {UNKNOWN_SHEET}", task=task, evidence=evidence, n=None))
    return found
