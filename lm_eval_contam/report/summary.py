"""From a loaded run to verdict records: pure functions, no rendering.

One :class:`Verdict` per (model, partition, method) with the method's own
decision and key numbers; the validation study imports :func:`verdicts` to count
detections. The rules (see :func:`timetravel_verdicts`, :func:`dcq_verdict`):

* ``tt_alg1``: the task's ``alg1_contaminated`` (bootstrap test of guided vs
  general ROUGE-L, flagged at p <= 0.05); p-value ``alg1_pvalue``.
* ``tt_alg2_judge_a``: the task's ``alg2_contaminated`` (>= 1 exact or >= 2
  near-exact matches by the deterministic Judge A).
* ``tt_judge_b``: ``alg2_contaminated`` of the run's ``.judge_b.json``.
* ``dcq_generate`` / ``dcq_loglikelihood`` (by the task's output type):
  ``dcq_pvalue < 0.05`` (exact paired McNemar test, BCQ hits vs BDQ picks).

DCR has no yes/no verdict: :func:`dcr_results` reads the level scores, the DCR
Factor with its interval, and every raw metric the hook adjusted.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lm_eval_contam.dcq.quiz import LETTERS, POSITIONS
from lm_eval_contam.errors import ContamError
from lm_eval_contam.hook import SCORE_METRIC, dcr_level_tasks
from lm_eval_contam.intervals import ConfidenceInterval
from lm_eval_contam.partitions import dataset_spec
from lm_eval_contam.report.load import ModelRun, Run, read_judge_b, read_samples

Method = Literal["tt_alg1", "tt_alg2_judge_a", "tt_judge_b", "dcq_generate", "dcq_loglikelihood"]
METHODS: tuple[Method, ...] = ("tt_alg1", "tt_alg2_judge_a", "tt_judge_b", "dcq_generate", "dcq_loglikelihood")
METHOD_NAMES: dict[Method, str] = {
    "tt_alg1": "Time Travel Alg. 1",
    "tt_alg2_judge_a": "Time Travel Alg. 2 (Judge A)",
    "tt_judge_b": "Time Travel Alg. 2 (Judge B)",
    "dcq_generate": "DCQ (generate)",
    "dcq_loglikelihood": "DCQ (loglikelihood)",
}
DCQ_ALPHA = 0.05
FILTER = "none"  # the project's tasks define no filters


@dataclass(frozen=True, order=True)
class Partition:
    """A benchmark partition as the prompts name it, e.g. ("AG News", "test")."""

    dataset: str
    split: str

    def __str__(self) -> str:
        return f"{self.dataset} {self.split}"


@dataclass(frozen=True)
class Verdict:
    """One method's decision on one partition for one model, with the numbers behind it."""

    model: str
    partition: Partition
    method: Method
    task: str
    flagged: bool
    pvalue: float | None = None
    n_instances: int | None = None
    variant: str | None = None  # Time Travel prompt style ("instruct", "completion")
    rouge_guided: float | None = None
    rouge_general: float | None = None
    exact_matches: int | None = None
    near_exact_matches: int | None = None
    judge_model: str | None = None  # Judge B only
    dcq_max: float | None = None
    dcq_min: float | None = None
    dcq_max_ci: ConfidenceInterval | None = None
    dcq_kappa: float | None = None
    bdq_pick_rates: tuple[float, ...] | None = None  # options A..E (E: "none of the provided options")
    bcq_hit_rates: tuple[float, ...] | None = None  # original in slot A..D
    unparseable: float | None = None


@dataclass(frozen=True)
class TimeTravelInstance:
    """One Time Travel doc's row in the report's per-instance table."""

    doc_id: int
    first_piece: str
    reference: str
    guided: str
    general: str
    rouge_guided: float
    rouge_general: float
    judge_a: str  # exact | near_exact | inexact
    judge_b: str | None = None


@dataclass(frozen=True)
class AdjustedMetric:
    """A benchmark metric beside its DCR-adjusted value (``<metric>_adj``)."""

    model: str
    task: str
    metric: str
    raw: float
    raw_stderr: float | None
    adjusted: float
    adjusted_stderr: float | None
    factor: float | None
    factor_ci: ConfidenceInterval | None


@dataclass(frozen=True)
class DCRSheet:
    """One DCR sheet's level scores S1..S4 and its Factor."""

    model: str
    sheet: str
    group: str | None
    level_scores: tuple[float | None, float | None, float | None, float | None]
    factor: float | None
    factor_ci: ConfidenceInterval | None


@dataclass(frozen=True)
class DCRResults:
    sheets: tuple[DCRSheet, ...]
    adjusted: tuple[AdjustedMetric, ...]


def _number(row: Mapping[str, Any], metric: str, *, task: str, model: ModelRun) -> float:
    value = row.get(f"{metric},{FILTER}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ContamError(f"{task} has no number for {metric!r} (got {value!r})",
                          source=str(model.files[task].results_file), field=f"{metric},{FILTER}")
    return float(value)


def _optional_number(row: Mapping[str, Any], key: str) -> float | None:
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def is_timetravel(row: Mapping[str, Any]) -> bool:
    return f"alg1_contaminated,{FILTER}" in row and f"alg2_contaminated,{FILTER}" in row


def is_dcq(row: Mapping[str, Any]) -> bool:
    return f"dcq_pvalue,{FILTER}" in row


def _config(model: ModelRun, task: str) -> dict[str, Any]:
    return dict((model.results.get("configs") or {}).get(task) or {})


def _metadata(model: ModelRun, task: str) -> dict[str, Any]:
    return dict(_config(model, task).get("metadata") or {})


def _display_name(key: str) -> str:
    """A registry key's name as the prompts write it ("ag_news" -> "AG News"); an unknown key as is."""
    try:
        return dataset_spec(key).display_name
    except ContamError:
        return key


def task_partition(model: ModelRun, task: str) -> Partition:
    """The partition a Time Travel or DCQ task audits, from its config in the results JSON."""
    config, metadata = _config(model, task), _metadata(model, task)
    key = metadata.get("dataset")
    dataset = _display_name(str(key)) if key else metadata.get("dataset_name")
    split = metadata.get("split_name") or config.get("test_split")
    if not dataset or not split:
        raise ContamError(f"{task}'s config names no dataset_name/dataset and split",
                          source=str(model.files[task].results_file), field=f"configs.{task}.metadata")
    return Partition(str(dataset), str(split))


def _n_instances(model: ModelRun, task: str) -> int | None:
    count = ((model.results.get("n-samples") or {}).get(task) or {}).get("effective")
    return int(count) if isinstance(count, (int, float)) else None


def timetravel_verdicts(model: ModelRun, task: str) -> list[Verdict]:
    """Alg. 1 and Alg. 2 (Judge A) from the task's metrics; Judge B when its verdict file exists."""
    row = model.results["results"][task]
    number = functools.partial(_number, row, task=task, model=model)
    common = {
        "model": model.label, "partition": task_partition(model, task), "task": task,
        "n_instances": _n_instances(model, task), "variant": _metadata(model, task).get("prompt_style"),
        "rouge_guided": number("rougeL_guided"), "rouge_general": number("rougeL_general"),
    }
    found = [
        Verdict(method="tt_alg1", flagged=number("alg1_contaminated") == 1.0, pvalue=number("alg1_pvalue"), **common),
        Verdict(method="tt_alg2_judge_a", flagged=number("alg2_contaminated") == 1.0,
                exact_matches=int(number("exact_matches")), near_exact_matches=int(number("near_exact_matches")),
                **common),
    ]
    judge_b_file = model.files[task].judge_b_file
    if judge_b_file is not None:
        judged = read_judge_b(judge_b_file)
        found.append(Verdict(
            method="tt_judge_b", flagged=bool(judged["alg2_contaminated"]), exact_matches=int(judged["exact_matches"]),
            near_exact_matches=int(judged["near_exact_matches"]), judge_model=judged.get("judge_model"),
            **{**common, "n_instances": len(judged["instances"])},
        ))
    return found


def dcq_verdict(model: ModelRun, task: str) -> Verdict:
    """Flagged when ``dcq_pvalue < 0.05``: the exact paired McNemar test of BCQ hits against BDQ picks at p*."""
    row = model.results["results"][task]
    number = functools.partial(_number, row, task=task, model=model)
    loglikelihood = _config(model, task).get("output_type") == "loglikelihood"
    method: Method = "dcq_loglikelihood" if loglikelihood else "dcq_generate"
    pvalue = number("dcq_pvalue")
    level = _metadata(model, task).get("confidence_level", 0.95)
    return Verdict(
        model=model.label, partition=task_partition(model, task), method=method, task=task,
        flagged=pvalue < DCQ_ALPHA, pvalue=pvalue, n_instances=_n_instances(model, task),
        dcq_max=number("dcq_max"), dcq_min=number("dcq_min"), dcq_kappa=number("dcq_kappa"),
        dcq_max_ci=ConfidenceInterval(number("dcq_max_ci_low"), number("dcq_max_ci_high"), float(level)),
        bdq_pick_rates=tuple(number(f"dcq_bdq_{letter}") for letter in LETTERS),
        bcq_hit_rates=tuple(number(f"dcq_bcq_{position}") for position in POSITIONS),
        unparseable=number("dcq_unparseable"),
    )


def model_verdicts(model: ModelRun) -> list[Verdict]:
    found: list[Verdict] = []
    for task, row in sorted(model.results["results"].items()):
        if is_timetravel(row):
            found.extend(timetravel_verdicts(model, task))
        elif is_dcq(row):
            found.append(dcq_verdict(model, task))
    return found


def verdicts(run: Run) -> list[Verdict]:
    """Every verdict of every model, by model (run order), then partition, then method."""
    order = {method: number for number, method in enumerate(METHODS)}
    return [
        verdict
        for model in run.models
        for verdict in sorted(model_verdicts(model), key=lambda v: (v.partition, order[v.method], v.task))
    ]


def timetravel_instances(model: ModelRun, task: str) -> list[TimeTravelInstance]:
    """The per-instance table of one Time Travel task, from its logged samples (empty without them)."""
    files = model.files[task]
    if files.samples_file is None:
        return []
    judge_b = {}
    if files.judge_b_file is not None:
        judge_b = {entry["doc_id"]: entry.get("judge_b_match") for entry in read_judge_b(files.judge_b_file)["instances"]}
    rows = []
    for sample in read_samples(files.samples_file):
        try:
            doc = sample["doc"]
            guided, general = (str(reply).strip() for reply in sample["filtered_resps"][:2])
            rows.append(TimeTravelInstance(
                doc_id=int(sample["doc_id"]), first_piece=str(doc["first_piece"]), reference=str(doc["reference"]),
                guided=guided, general=general, rouge_guided=float(sample["rougeL_guided"]),
                rouge_general=float(sample["rougeL_general"]), judge_a=str(sample["alg2_contaminated"]),
                judge_b=judge_b.get(sample["doc_id"]),
            ))
        except (KeyError, TypeError, ValueError) as error:
            raise ContamError(f"not a Time Travel sample ({type(error).__name__}: {error})",
                              source=str(files.samples_file), field="doc_id " + str(sample.get("doc_id"))) from None
    return sorted(rows, key=lambda row: row.doc_id)


def _interval(row: Mapping[str, Any], filter_name: str) -> ConfidenceInterval | None:
    low = _optional_number(row, f"dcr_factor_ci_low,{filter_name}")
    high = _optional_number(row, f"dcr_factor_ci_high,{filter_name}")
    return ConfidenceInterval(low, high) if low is not None and high is not None else None


def _group_of(model: ModelRun, level_tasks: Sequence[str]) -> str | None:
    for group, subtasks in (model.results.get("group_subtasks") or {}).items():
        if set(level_tasks) <= set(subtasks):
            return group
    return None


def dcr_sheets(model: ModelRun) -> list[DCRSheet]:
    """Each DCR sheet the run's level tasks name, with the factor the hook wrote on its group row."""
    rows = model.results["results"]
    sheets = []
    for sheet, tasks in sorted(dcr_level_tasks(model.results).items()):
        group = _group_of(model, list(tasks.values()))
        group_row = rows.get(group or "", {})
        scores = tuple(
            _optional_number(group_row, f"s{level},{FILTER}")
            if f"s{level},{FILTER}" in group_row
            else _optional_number(rows.get(tasks.get(level, ""), {}), f"{SCORE_METRIC},{FILTER}")
            for level in (1, 2, 3, 4)
        )
        sheets.append(DCRSheet(
            model=model.label, sheet=sheet, group=group, level_scores=scores,  # type: ignore[arg-type]
            factor=_optional_number(group_row, f"dcr_factor,{FILTER}"), factor_ci=_interval(group_row, FILTER),
        ))
    return sheets


def adjusted_metrics(model: ModelRun) -> list[AdjustedMetric]:
    """Every ``<metric>_adj`` row the hook (or ``adjust``) wrote, beside the raw metric."""
    found = []
    for task, row in sorted(model.results["results"].items()):
        for key, value in row.items():
            name, _, filter_name = key.partition(",")
            if not name.endswith("_adj") or not filter_name or _optional_number(row, key) is None:
                continue
            metric = name.removesuffix("_adj")
            raw = _optional_number(row, f"{metric},{filter_name}")
            if raw is None:
                continue
            found.append(AdjustedMetric(
                model=model.label, task=task, metric=metric if filter_name == FILTER else f"{metric},{filter_name}",
                raw=raw, raw_stderr=_optional_number(row, f"{metric}_stderr,{filter_name}"), adjusted=float(value),
                adjusted_stderr=_optional_number(row, f"{name}_stderr,{filter_name}"),
                factor=_optional_number(row, f"dcr_factor,{filter_name}"), factor_ci=_interval(row, filter_name),
            ))
    return found


def dcr_results(run: Run) -> DCRResults:
    return DCRResults(
        sheets=tuple(sheet for model in run.models for sheet in dcr_sheets(model)),
        adjusted=tuple(metric for model in run.models for metric in adjusted_metrics(model)),
    )
