"""lm-eval glue: one task per partition issuing the guided and the general prompt for every doc.

Everything here maps the pure functions of this package onto lm-eval's Task
interface; the method itself lives in split/prompts/stats/judge/instances.

Per doc, ``process_results`` returns one structured record, ``{"guided": ROUGE-L,
"general": ROUGE-L, "match": Judge A's class}``, under every partition-level
metric (lm-eval hands each aggregation only its own metric's values, and logs
them in the samples); the partition statistics are computed once per record
list (:func:`partition_statistics`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

import datasets
import numpy as np
from lm_eval.api.metrics import mean
from lm_eval.api.task import ConfigurableTask

from lm_eval_contam.core.partitions import Partition, metadata_number
from lm_eval_contam.core.stats import ALPHA, PermutationResult, permutation_test
from lm_eval_contam.core.text import rouge_l_f
from lm_eval_contam.lmeval.lm_eval_compat import (
    aggregate_without_bootstrapping_task_statistics,
    is_json_chat,
    task_request,
)
from lm_eval_contam.lmeval.request_parts import general_context, with_api_stop
from lm_eval_contam.methods.timetravel.instances import DEFAULT_NUM_INSTANCES, sample_docs
from lm_eval_contam.methods.timetravel.judge import Algorithm2Verdict, algorithm2_verdict, classify_match
from lm_eval_contam.methods.timetravel.stats import BootstrapResult, bootstrap_test

# Metrics aggregated from the per-doc record (the rest are means of per-doc ROUGE-L).
PARTITION_METRICS = ("alg1_pvalue", "alg1_contaminated", "alg1_permutation_pvalue", "exact_matches", "near_exact_matches", "alg2_contaminated")
METRICS = ("rougeL_guided", "rougeL_general", *PARTITION_METRICS)


# The paper rounds ROUGE-L to two decimals before its test; Alg. 1 does too by default.
ALG1_DECIMALS = 2


@dataclass(frozen=True)
class BootstrapOptions:
    paired: bool
    n_resamples: int
    seed: int
    decimals: int | None = ALG1_DECIMALS  # None: test the unrounded scores


@dataclass(frozen=True)
class PartitionStatistics:
    alg1: BootstrapResult
    alg1_permutation: PermutationResult
    alg2: Algorithm2Verdict


def record_key(record: Mapping[str, Any]) -> tuple[float, float, str]:
    return float(record["guided"]), float(record["general"]), str(record["match"])


@functools.lru_cache(maxsize=64)
def _statistics(records: tuple[tuple[float, float, str], ...], options: BootstrapOptions) -> PartitionStatistics:
    guided, general = ([record[column] for record in records] for column in (0, 1))
    if options.decimals is not None:
        guided, general = (list(np.round(scores, options.decimals)) for scores in (guided, general))
    return PartitionStatistics(
        alg1=bootstrap_test(guided, general, paired=options.paired, n_resamples=options.n_resamples, seed=options.seed),
        alg1_permutation=permutation_test(guided, general, seed=options.seed),
        alg2=algorithm2_verdict(match for _, _, match in records),
    )


def partition_statistics(records: Sequence[Mapping[str, Any]], options: BootstrapOptions) -> PartitionStatistics:
    """Alg. 1 (bootstrap and our permutation test) and Alg. 2 (Judge A counts) over one partition's per-doc records, computed once."""
    return _statistics(tuple(record_key(record) for record in records), options)


STATISTIC_READERS: dict[str, Callable[[PartitionStatistics], float]] = {
    "alg1_pvalue": lambda s: s.alg1.pvalue,
    "alg1_contaminated": lambda s: float(s.alg1.significant(ALPHA)),
    "alg1_permutation_pvalue": lambda s: s.alg1_permutation.pvalue,
    "exact_matches": lambda s: s.alg2.exact_matches,
    "near_exact_matches": lambda s: s.alg2.near_exact_matches,
    "alg2_contaminated": lambda s: float(s.alg2.contaminated),
}


def _alg1_decimals(value: Any) -> int | None:
    """The task's ``alg1_decimals`` metadata: an integer, or "none" to test unrounded scores."""
    return None if value is None or str(value).lower() == "none" else int(value)


class TimeTravelTask(ConfigurableTask):
    """A Time Travel partition; its YAML's ``metadata`` names the partition (see README)."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        self._sampled: list[dict[str, Any]] | None = None
        super().__init__(config=config, **kwargs)

    @property
    def _metadata(self) -> dict[str, Any]:
        return dict(self.config.metadata or {})

    @property
    def partition(self) -> Partition:
        return Partition.from_task_metadata(self._metadata, self.config.test_split)

    def test_docs(self) -> datasets.Dataset:
        if self._sampled is None:
            metadata = self._metadata
            self._sampled = sample_docs(
                super().test_docs(),
                self.partition,
                num_instances=metadata_number(metadata, "num_instances", DEFAULT_NUM_INSTANCES, minimum=1),
                seed=metadata_number(metadata, "seed", 0),
                style=str(metadata.get("prompt_style", "instruct")),
            )
        return datasets.Dataset.from_list(self._sampled)

    def fewshot_context(self, doc: dict, num_fewshot: int, **kwargs: Any) -> Any:  # type: ignore[override]
        """Completion-style prompts are plain text to continue, chat template or not: that is the style."""
        if self._metadata.get("prompt_style") == "completion":
            kwargs = {**kwargs, "apply_chat_template": False, "chat_template": None}
        return super().fewshot_context(doc, num_fewshot, **kwargs)

    def construct_requests(self, doc: dict, ctx: Any, **kwargs: Any) -> list:
        general_ctx = general_context(ctx, doc["guided_prompt"], doc["general_prompt"])
        generation_kwargs = self.config.generation_kwargs
        if is_json_chat(ctx):  # an API chat model: see request_parts.API_STOP
            generation_kwargs = with_api_stop(generation_kwargs)
        guided, general = (task_request(self, doc, (context, deepcopy(generation_kwargs)), idx, **kwargs)
                           for idx, context in enumerate((ctx, general_ctx)))
        return [guided, general]

    def process_results(self, doc: dict, results: list[str]) -> dict[str, Any]:
        guided_completion, general_completion = (result.strip() for result in results)
        record = {
            "guided": rouge_l_f(doc["reference"], guided_completion),
            "general": rouge_l_f(doc["reference"], general_completion),
            "match": classify_match(doc["reference"], guided_completion),
        }
        return {"rougeL_guided": record["guided"], "rougeL_general": record["general"],
                **{metric: record for metric in PARTITION_METRICS}}

    def aggregation(self) -> dict[str, Callable[..., float]]:
        metadata = self._metadata
        options = BootstrapOptions(
            paired=str(metadata.get("bootstrap", "paired")) != "unpaired",
            n_resamples=metadata_number(metadata, "n_resamples", 10_000, minimum=1),
            seed=metadata_number(metadata, "seed", 0),
            decimals=_alg1_decimals(metadata.get("alg1_decimals", ALG1_DECIMALS)),
        )

        def reader(metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
            return lambda records: STATISTIC_READERS[metric](partition_statistics(records, options))

        return {"rougeL_guided": mean, "rougeL_general": mean,
                **{metric: reader(metric) for metric in PARTITION_METRICS}}

    def aggregate(self, bootstrap_iters: int | None = 100_000) -> tuple[dict[str, Any], int]:
        """lm-eval 0.5's aggregation entry point: no bootstrap of the partition statistics (see lm_eval_compat)."""
        return aggregate_without_bootstrapping_task_statistics(self, bootstrap_iters)

    def higher_is_better(self) -> dict[str, bool]:
        # "Higher" means more evidence of contamination, except for the p-value.
        return {metric: not metric.endswith("_pvalue") for metric in METRICS}
