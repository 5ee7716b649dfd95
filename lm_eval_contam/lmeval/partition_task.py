"""The lm-eval task shape of a partition-level test: docs built once, one record per doc, metrics from the test.

A subclass gives ``metrics`` (name -> reader of its test's result; a property where the settings choose them) and
``steps``: its settings' class and the test's pure steps, each handed the settings (docs from the partition's rows, a
doc's record from its results, the test over the records). lm-eval logs each doc's record under every metric and each
metric reads the test over all records, computed once per record list (no bootstrap). A test that reads a second
partition too (a control) overrides ``build_docs`` and gets that partition's rows from ``partition_rows``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import datasets
from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask

from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.lmeval.lm_eval_compat import (
    aggregate_without_bootstrapping_task_statistics,
    rolling_arguments,
    task_request,
)


@dataclass(frozen=True)
class PartitionSteps:
    """A partition-level test's settings and pure steps, which know nothing of lm-eval."""

    # ``from_metadata(metadata, split)`` reads the settings from the task YAML's metadata (with the ``partition`` and
    # the ``seed``)
    settings: type
    record: Callable[[Any, Mapping[str, Any], Sequence[Any]], Mapping[str, Any]]  # (settings, doc, results)
    statistics: Callable[[Any, Sequence[Mapping[str, Any]]], Any]  # (settings, records): the test's result
    docs: Callable[[Any, Sequence[Mapping[str, Any]]], list[dict[str, Any]]] | None = None  # (settings, rows)


class PartitionTestTask(ConfigurableTask):
    metrics: Mapping[str, Callable[[Any], float]] = {}
    steps: PartitionSteps
    lower_is_better: tuple[str, ...] = ("_pvalue",)  # the suffixes of its metrics for which lower is better

    @property
    def settings(self) -> Any:
        return self.steps.settings.from_metadata(self.config.metadata, self.config.test_split)

    def build_docs(self, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return self.steps.docs(self.settings, rows)  # type: ignore[misc]

    def doc_record(self, doc: Mapping[str, Any], results: Sequence[Any]) -> Mapping[str, Any]:
        return self.steps.record(self.settings, doc, results)

    def partition_statistics(self, records: Sequence[Mapping[str, Any]]) -> Any:
        return self.steps.statistics(self.settings, records)

    def higher_is_better(self) -> dict[str, bool]:
        return {metric: not metric.endswith(self.lower_is_better) for metric in self.metrics}

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        self._docs: datasets.Dataset | None = None
        self._statistics: dict[str, Any] = {}  # record list (as JSON) -> the test over it: once for all metrics
        super().__init__(config=config, **kwargs)

    def partition_rows(self, partition: Partition) -> list[dict[str, Any]]:
        """A partition's rows: the split lm-eval loaded when it is of this task's dataset, else read from its source
        (a control of another dataset, or a split the task's YAML does not load)."""
        loaded = (partition.dataset == self.settings.partition.dataset and self.dataset is not None
                  and partition.split in self.dataset)
        return self.dataset[partition.split].to_list() if loaded else partition.rows()

    def test_docs(self) -> datasets.Dataset:
        if self._docs is None:
            self._docs = datasets.Dataset.from_list(self.build_docs(self.partition_rows(self.settings.partition)))
        return self._docs

    def process_results(self, doc: dict, results: list[Any]) -> dict[str, Any]:
        record = self.doc_record(doc, results)
        return {metric: record for metric in self.metrics}

    def aggregation(self) -> dict[str, Callable[..., float]]:
        def statistics(records: Sequence[Mapping[str, Any]]) -> Any:
            key = json.dumps(list(records), sort_keys=True)
            if key not in self._statistics:
                self._statistics[key] = self.partition_statistics(records)
            return self._statistics[key]

        def reader(read: Callable[[Any], float]) -> Callable[[Sequence[Mapping[str, Any]]], float]:
            return lambda records: float(read(statistics(records)))

        return {metric: reader(read) for metric, read in self.metrics.items()}

    def aggregate(self, bootstrap_iters: int | None = 100_000) -> tuple[dict[str, Any], int]:
        """lm-eval 0.5's aggregation entry point: no bootstrap of the partition statistics (see lm_eval_compat)."""
        return aggregate_without_bootstrapping_task_statistics(self, bootstrap_iters)


class ScoredTextsTask(PartitionTestTask):
    """A partition-level test whose docs are lists of whole texts (``doc["texts"]``), each scored alone as one
    ``loglikelihood_rolling`` request, in order (the option-order and pairing tests): a reference model's run of the
    same task scores the same texts."""

    def doc_to_text(self, doc: dict, doc_to_text: Any = None) -> str:
        return doc["texts"][0]

    def doc_to_target(self, doc: dict, doc_to_target: Any = None) -> str:
        return doc["texts"][0]

    def construct_requests(self, doc: dict, ctx: Any, **kwargs: Any) -> list[Instance]:
        return [task_request(self, doc, rolling_arguments(text), number, request_type="loglikelihood_rolling",
                             **kwargs) for number, text in enumerate(doc["texts"])]
