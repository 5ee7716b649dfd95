"""lm-eval glue: one task per partition issuing the guided and the general prompt for every doc.

Everything here maps the pure functions of this package onto lm-eval's Task
interface; the method itself lives in split/prompts/stats/judge/instances.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import datasets
from lm_eval.api.metrics import mean
from lm_eval.api.task import ConfigurableTask

from lm_eval_contam.errors import ContamError
from lm_eval_contam.text import rouge_l_f
from lm_eval_contam.timetravel.instances import (
    DEFAULT_NUM_INSTANCES,
    Partition,
    sample_docs,
)
from lm_eval_contam.timetravel.judge import classify_match, partition_verdict
from lm_eval_contam.timetravel.stats import ALPHA, bootstrap_test

METRICS = (
    "rougeL_guided",
    "rougeL_general",
    "alg1_pvalue",
    "alg1_contaminated",
    "exact_matches",
    "near_exact_matches",
    "alg2_contaminated",
)


def _bootstrap(pairs: Sequence[Mapping[str, float]], *, paired: bool, n_resamples: int, seed: int):
    return bootstrap_test(
        [pair["guided"] for pair in pairs],
        [pair["general"] for pair in pairs],
        paired=paired,
        n_resamples=n_resamples,
        seed=seed,
    )


def alg1_pvalue(pairs: Sequence[Mapping[str, float]], **options: Any) -> float:
    return _bootstrap(pairs, **options).pvalue


def alg1_contaminated(pairs: Sequence[Mapping[str, float]], **options: Any) -> float:
    return float(_bootstrap(pairs, **options).significant(ALPHA))


def exact_matches(classes: Sequence[str]) -> int:
    return partition_verdict(classes).exact_matches


def near_exact_matches(classes: Sequence[str]) -> int:
    return partition_verdict(classes).near_exact_matches


def alg2_contaminated(classes: Sequence[str]) -> float:
    return float(partition_verdict(classes).contaminated)


def swap_prompt(context: str, guided_prompt: str, general_prompt: str) -> str:
    """The rendered general context: the guided prompt replaced inside lm-eval's rendered context.

    Reusing lm-eval's rendering keeps the chat template, system prompt and any
    generation prefix identical between the two requests.
    """
    for old, new in ((guided_prompt, general_prompt), (guided_prompt.strip(), general_prompt.strip())):
        head, found, tail = context.rpartition(old)
        if found:
            return head + new + tail
    raise ContamError("the rendered context does not contain the guided prompt", field="doc_to_text")


class TimeTravelTask(ConfigurableTask):
    """A Time Travel partition; its YAML's ``metadata`` describes the partition (see README)."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        self._sampled: list[dict[str, Any]] | None = None
        super().__init__(config=config, **kwargs)

    @property
    def _metadata(self) -> dict[str, Any]:
        return dict(self.config.metadata or {})

    @property
    def partition(self) -> Partition:
        return Partition.from_metadata(self._metadata, source=f"task {self.config.task}")

    def test_docs(self) -> datasets.Dataset:
        if self._sampled is None:
            metadata = self._metadata
            self._sampled = sample_docs(
                super().test_docs(),
                self.partition,
                num_instances=int(metadata.get("num_instances", DEFAULT_NUM_INSTANCES)),
                seed=int(metadata.get("seed", 0)),
                style=str(metadata.get("prompt_style", "instruct")),
            )
        return datasets.Dataset.from_list(self._sampled)

    def construct_requests(self, doc: dict, ctx: Any, **kwargs: Any) -> list:
        if not isinstance(ctx, str):
            raise ContamError(f"expected a rendered text context, got {type(ctx).__name__}", field="doc_to_text")
        guided = super().construct_requests(doc, ctx, **dict(kwargs))
        general = super().construct_requests(doc, swap_prompt(ctx, doc["guided_prompt"], doc["general_prompt"]), **kwargs)
        general.idx = 1
        return [guided, general]

    def process_results(self, doc: dict, results: list[str]) -> dict[str, Any]:
        guided_completion, general_completion = (result.strip() for result in results)
        scores = {
            "guided": rouge_l_f(doc["reference"], guided_completion),
            "general": rouge_l_f(doc["reference"], general_completion),
        }
        match = classify_match(doc["reference"], guided_completion)
        return {
            "rougeL_guided": scores["guided"],
            "rougeL_general": scores["general"],
            "alg1_pvalue": scores,
            "alg1_contaminated": scores,
            "exact_matches": match,
            "near_exact_matches": match,
            "alg2_contaminated": match,
        }

    def aggregation(self) -> dict[str, Callable[..., float]]:
        metadata = self._metadata
        options = {
            "paired": str(metadata.get("bootstrap", "paired")) != "unpaired",
            "n_resamples": int(metadata.get("n_resamples", 10_000)),
            "seed": int(metadata.get("seed", 0)),
        }
        return {
            "rougeL_guided": mean,
            "rougeL_general": mean,
            "alg1_pvalue": functools.partial(alg1_pvalue, **options),
            "alg1_contaminated": functools.partial(alg1_contaminated, **options),
            "exact_matches": exact_matches,
            "near_exact_matches": near_exact_matches,
            "alg2_contaminated": alg2_contaminated,
        }

    def higher_is_better(self) -> dict[str, bool]:
        # "Higher" means more evidence of contamination, except for the p-value.
        return {metric: metric != "alg1_pvalue" for metric in METRICS}
