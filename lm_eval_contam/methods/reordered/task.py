"""lm-eval glue of a reordered task: its docs (each item in its original order, then its reorderings), the per-form
0/1 score lm-eval computes, and the aggregation into ``<metric>_reordered`` and its interval, gap and p.

A reordered task is a ``multiple_choice`` task whose docs are rows ``{item, order, text, choices, gold,
description}`` (``order`` 0: the benchmark's own form); lm-eval scores every form as it scores the benchmark
(``ConfigurableTask.process_results``: acc, acc_norm), and each form's score goes, with its item and order, to every
derived metric of the benchmark's metric; the aggregations group the forms by item (:mod:`.stats`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets
from lm_eval.api.task import ConfigurableTask

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects
from lm_eval_contam.methods.reordered.stats import N_RESAMPLES, ReorderedScore, item_scores, reordered_score

SCORED_METRICS = ("acc", "acc_norm")  # the benchmark metrics a reordered score is given for
# Derived row suffix -> (what it reads of the ReorderedScore, whether higher is better).
DERIVED: dict[str, tuple[Callable[[ReorderedScore], float], bool]] = {
    "_reordered": (lambda score: score.reordered, True),
    "_reordered_ci_low": (lambda score: score.reordered_interval.low, True),
    "_reordered_ci_high": (lambda score: score.reordered_interval.high, True),
    "_reordered_original": (lambda score: score.original, True),
    "_reordered_gap": (lambda score: score.gap, False),
    "_reordered_gap_ci_low": (lambda score: score.gap_interval.low, False),
    "_reordered_gap_ci_high": (lambda score: score.gap_interval.high, False),
    "_reordered_p": (lambda score: score.pvalue, True),
    "_reordered_items": (lambda score: float(score.n_items), True),
    "_reordered_reordered_items": (lambda score: float(score.n_reordered), True),
    "_reordered_k": (lambda score: float(score.reorderings), True),
}


def derived_names(metric: str) -> list[str]:
    """Every row a benchmark metric gets: ``acc_reordered``, ``acc_reordered_ci_low``, …"""
    return [metric + suffix for suffix in DERIVED]


def load_reordered_dataset(reordered_docs: str, **_metadata: Any) -> datasets.DatasetDict:
    """lm-eval ``custom_dataset``: the reordered task's rows (written by :mod:`.benchmark_tasks`) as one split."""
    rows = read_jsonl_objects(Path(reordered_docs))
    if not rows:
        raise ContamError("no rows", source=reordered_docs, field="reordered_docs")
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


@functools.lru_cache(maxsize=32)
def _score(records: tuple[tuple[int, int, float], ...], seed: int, n_resamples: int) -> ReorderedScore:
    return reordered_score(item_scores({"item": item, "order": order, "correct": correct}
                                       for item, order, correct in records), seed=seed, n_resamples=n_resamples)


def aggregate(suffix: str, seed: int, n_resamples: int) -> Callable[[Sequence[Mapping[str, Any]]], float]:
    """The aggregation of one derived row: every form's record of the metric, grouped by item and scored once."""
    read = DERIVED[suffix][0]

    def aggregation(records: Sequence[Mapping[str, Any]]) -> float:
        key = tuple(sorted((int(r["item"]), int(r["order"]), float(r["correct"])) for r in records))
        return read(_score(key, seed, n_resamples))

    aggregation.__name__ = f"reordered{suffix}"
    return aggregation


class ReorderedTask(ConfigurableTask):
    """The reordered forms of one benchmark task; its YAML's metadata names the benchmark and its metrics."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        metadata = dict(config.get("metadata") or {})
        self.scored = [str(metric) for metric in metadata.get("reordered_metrics") or ()]
        unknown = sorted(set(self.scored) - set(SCORED_METRICS))
        if not self.scored or unknown:
            raise ContamError(f"reordered_metrics is {self.scored!r}; expected some of {list(SCORED_METRICS)}",
                              source=str(config.get("task")), field="metadata.reordered_metrics")
        config["metric_list"] = [{"metric": metric, "aggregation": "mean", "higher_is_better": True}
                                 for metric in self.scored]
        seed, resamples = int(metadata.get("seed", 0)), int(metadata.get("n_resamples", N_RESAMPLES))
        self._derived = {name: aggregate(name[len(metric):], seed, resamples)
                         for metric in self.scored for name in derived_names(metric)}
        super().__init__(config=config, **kwargs)

    def process_results(self, doc: dict, results: list) -> dict[str, Any]:
        scored = super().process_results(doc, results)
        return {name: {"item": doc["item"], "order": doc["order"], "correct": float(scored[metric])}
                for metric in self.scored for name in derived_names(metric)}

    def aggregation(self) -> dict[str, Callable[[Sequence[Mapping[str, Any]]], float]]:
        return dict(self._derived)

    def higher_is_better(self) -> dict[str, bool]:
        return {metric + suffix: DERIVED[suffix][1] for metric in self.scored for suffix in DERIVED}
