"""lm-eval glue for the in-context test: one task per partition, log-likelihoods only.

Task ``metadata``: the partition, ``num_instances`` (100), ``context_instances`` (3) and ``seed`` (0). Requests per
instance: the instance and its twin each scored alone (``loglikelihood_rolling``) and after the context
(``loglikelihood``), four forward passes, two of them over the context's length too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval.api.instance import Instance

from lm_eval_contam.core.wordnet import load_wordnet
from lm_eval_contam.kit.instances import OwnNumber, QuizInstance, SampledSettings, instance_text, sample_indices
from lm_eval_contam.kit.perturb import perturb
from lm_eval_contam.kit.scoring import utf8_bytes
from lm_eval_contam.lmeval.lm_eval_compat import (
    rolling_arguments,
    rolling_loglikelihood,
    task_request,
)
from lm_eval_contam.lmeval.partition_task import PartitionSteps, PartitionTestTask
from lm_eval_contam.methods.incontext.docs import DEFAULT_CONTEXT_INSTANCES, incontext_docs
from lm_eval_contam.methods.incontext.stats import gain, incontext_test

METRICS: dict[str, Callable[[Any], float]] = {
    "incontext_difference": lambda s: s.statistic,
    "incontext_pvalue": lambda s: s.pvalue,
    "incontext_instance_gain": lambda s: s.instance_gain,
    "incontext_twin_gain": lambda s: s.twin_gain,
    "codec_score": lambda s: s.codec_score,
}


@dataclass(frozen=True)
class InContextSettings(SampledSettings):
    context_instances: int
    OWN = OwnNumber("context_instances", DEFAULT_CONTEXT_INSTANCES, minimum=1, maximum=16)


def build_docs(settings: InContextSettings, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The sampled instances with their twins (DCQ's offline perturber, its first perturbation) and contexts."""
    partition = settings.partition
    indices = sample_indices(partition, rows, settings.num_instances, settings.seed)
    texts = [instance_text(partition, rows[i], source=f"{partition.label} row {i}") for i in indices]
    wordnet = load_wordnet()

    def twin(text: str) -> str | None:
        found = perturb(QuizInstance(text), seed=settings.seed, wordnet=wordnet)
        return found[0] if found else None

    docs = incontext_docs(texts, indices, twin, context_instances=settings.context_instances, seed=settings.seed,
                          partition_label=partition.label)
    return [doc.as_dict() for doc in docs]


def doc_record(settings: InContextSettings, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, float]:
    text_alone, text_in_context, twin_alone, twin_in_context = results
    return {"instance_gain": gain(float(text_in_context[0]), rolling_loglikelihood(text_alone), utf8_bytes(doc["text"])),
            "twin_gain": gain(float(twin_in_context[0]), rolling_loglikelihood(twin_alone), utf8_bytes(doc["twin"]))}


class InContextTask(PartitionTestTask):
    """One partition's in-context test; its YAML's ``metadata`` names the partition."""

    metrics = METRICS
    steps = PartitionSteps(InContextSettings, docs=build_docs, record=doc_record,
                           statistics=lambda settings, records: incontext_test(records, settings.seed))

    def doc_to_text(self, doc: dict, doc_to_text: Any = None) -> str:
        return doc["context"]

    def doc_to_target(self, doc: dict, doc_to_target: Any = None) -> str:
        return doc["text"]

    def construct_requests(self, doc: dict, ctx: Any, **kwargs: Any) -> list[Instance]:
        requests = []
        for text in (doc["text"], doc["twin"]):
            requests.append(("loglikelihood_rolling", rolling_arguments(text)))
            requests.append(("loglikelihood", (doc["context"], text)))
        return [task_request(self, doc, arguments, number, request_type=kind, **kwargs)
                for number, (kind, arguments) in enumerate(requests)]

    def higher_is_better(self) -> dict[str, bool]:
        return {metric: metric in ("incontext_difference", "codec_score") for metric in METRICS}
