"""After a run: ``<metric>_reordered`` (with its interval, gap and p) copied from each reordered task to its benchmark.

Works on lm-eval's own results dict (the one ``simple_evaluate`` returns and ``lm_eval run`` saves and prints), so
the rows appear in lm-eval's JSON and table beside the benchmark's ``acc`` (and DCR's ``acc_adj``), under the same
filter. A reordered task whose benchmark is not in the run is logged, never raised. With ``audit --reference-model``
the reference's samples of the reordered task are in the results while they are post-processed: the benchmark's row
also gets ``<metric>_reordered_gap_vs_reference`` (the gap less the reference's, paired per item, with its interval,
p and ``_items``: the items both scored, a seeded sample of about 2,000 of a larger task or group's).

A group (``mmlu``) gets the same rows over the items of all its reordered subtasks pooled (:func:`group_rows`), as
lm-eval pools a group's ``acc`` by size: the score, its interval, the gap and its exact p over every item, and the
gap less the reference's over every item the reference scored (a subject alone has only its share of them). They are
computed from the run's logged samples (an audit always logs them; ``run`` with ``--log_samples``).
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.registry import REFERENCE_SAMPLES_KEY
from lm_eval_contam.methods.reordered.orders import METHOD
from lm_eval_contam.methods.reordered.stats import ItemScores, item_scores, reference_gap_score, reordered_score
from lm_eval_contam.methods.reordered.task import DERIVED, SCORED_METRICS

log = logging.getLogger("lm_eval_contam.methods.reordered")
VS_REFERENCE = "_reordered_gap_vs_reference"  # <metric>_reordered_gap_vs_reference (+ _ci_low, _ci_high, _p)


def _items(samples: Any, metric: str) -> list[ItemScores]:
    """Each item's forms from a reordered task's logged samples (the derived row's record of every form)."""
    return item_scores(sample[f"{metric}_reordered"] for sample in samples or () if f"{metric}_reordered" in sample)


def reference_rows(task: str, samples: Any, reference_samples: Any, *, seed: int = 0) -> dict[str, float]:
    """``<metric>_reordered_gap_vs_reference`` and its interval, p and item count: the audited model's gap less the
    reference model's on the items both scored (paired per item: a position habit both share cancels; the reference
    scores a seeded sample of a large benchmark's items); empty when either lacks it."""
    return _reference_rows(task, {metric: (_items(samples, metric), _items(reference_samples, metric))
                                  for metric in SCORED_METRICS}, seed)


def _reference_rows(name: str, items: dict[str, tuple[list[ItemScores], list[ItemScores]]],
                    seed: int) -> dict[str, float]:
    """The rows of :func:`reference_rows` from each metric's (model's items, reference's items)."""
    rows: dict[str, float] = {}
    for metric, (mine, theirs) in items.items():
        if not mine or not theirs:
            continue
        try:
            score = reference_gap_score(mine, theirs, seed=seed, name=name)
        except ContamError as error:
            log.warning("reordered %s: no gap against the reference: %s", name, error)
            continue
        rows.update({f"{metric}{VS_REFERENCE},none": score.gap,
                     f"{metric}{VS_REFERENCE}_ci_low,none": score.gap_interval.low,
                     f"{metric}{VS_REFERENCE}_ci_high,none": score.gap_interval.high,
                     f"{metric}{VS_REFERENCE}_p,none": score.pvalue,
                     f"{metric}{VS_REFERENCE}_items,none": float(score.n_items)})
    return rows


def reordered_rows(row: dict[str, Any]) -> dict[str, Any]:
    """The derived rows of a reordered task's results row (``acc_reordered,none``, …; no stderr, no alias)."""
    return {key: value for key, value in row.items()
            if "," in key and any(key.partition(",")[0].endswith(suffix) for suffix in DERIVED)}


def _leaves(group: str, group_subtasks: dict[str, list[str]]) -> list[str]:
    """A group's plain tasks, through nested groups (``mmlu`` -> ``mmlu_stem`` -> its subjects)."""
    return [leaf for member in group_subtasks.get(group, [])
            for leaf in (_leaves(member, group_subtasks) if member in group_subtasks else [member])]


def _pooled(members: list[str], samples: dict[str, Any], metric: str,
            numbers: dict[tuple[str, int], int]) -> list[ItemScores]:
    """The members' items as one list, each numbered by (task, item) in ``numbers`` (shared by both models' lists, so
    the reference's items pair with the model's)."""
    return [ItemScores(numbers.setdefault((task, item.item), len(numbers)), item.original, item.reordered)
            for task in members for item in _items(samples.get(task), metric)]


def group_rows(results: dict[str, Any], reordered_of: dict[str, str], seed: int = 0) -> None:
    """Every group with reordered subtasks gets their items pooled: ``<metric>_reordered`` and the rest of its rows
    over all of them (``reordered_of``: benchmark task -> its reordered task), and with a reference model's samples
    the gap less the reference's over every item both scored. Without the samples of each (a run without
    ``--log_samples``) the group gets none, and the log says so."""
    subtasks = results.get("group_subtasks") or {}
    samples = results.get("samples") or {}
    reference = results.get(REFERENCE_SAMPLES_KEY) or {}
    for group in subtasks:
        members = [reordered_of[leaf] for leaf in _leaves(group, subtasks) if leaf in reordered_of]
        if not members:
            continue
        if any(task not in samples for task in members):
            log.info("group %s: no pooled reordered score without the subtasks' samples (--log_samples)", group)
            continue
        found: dict[str, float] = {}
        paired: dict[str, tuple[list[ItemScores], list[ItemScores]]] = {}
        for metric in SCORED_METRICS:
            numbers: dict[tuple[str, int], int] = {}
            pooled = _pooled(members, samples, metric, numbers)
            if pooled:
                score = reordered_score(pooled, name=group)
                found.update({f"{metric}{suffix},none": read(score) for suffix, (read, _) in DERIVED.items()})
            if all(task in reference for task in members):
                paired[metric] = (pooled, _pooled(members, reference, metric, numbers))
        found.update(_reference_rows(f"group {group}", paired, seed))
        for table in ("results", "groups"):
            if group in (results.get(table) or {}):
                results[table][group].update(found)
        higher = results.setdefault("higher_is_better", {})
        higher.setdefault(group, {}).update(higher.get(members[0]) or {})


def post_process_results(results: dict[str, Any]) -> dict[str, Any]:
    """The live hook: every reordered task's rows onto its benchmark's row, and the pooled rows onto each group's."""
    reordered_of: dict[str, str] = {}
    seed = 0
    for task, config in (results.get("configs") or {}).items():
        metadata = (config or {}).get("metadata") or {}
        if metadata.get("method") != METHOD:
            continue
        benchmark = str(metadata.get("reordered_benchmark"))
        row = (results.get("results") or {}).get(task)
        target = (results.get("results") or {}).get(benchmark)
        if row is None or target is None:
            log.warning("reordered task %s: %s is not in this run's results; no reordered score copied", task,
                        benchmark if target is None else task)
            continue
        target.update(reordered_rows(row))
        reordered_of[benchmark] = task
        seed = int(metadata.get("seed", 0))
        reference = (results.get(REFERENCE_SAMPLES_KEY) or {}).get(task)
        if reference is not None:  # audit --reference-model: the reference scored the same forms (or a sample)
            target.update(reference_rows(task, (results.get("samples") or {}).get(task), reference, seed=seed))
        higher = results.setdefault("higher_is_better", {})
        higher.setdefault(benchmark, {}).update(higher.get(task) or {})
    group_rows(results, reordered_of, seed)
    return results
