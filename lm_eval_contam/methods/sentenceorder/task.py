"""lm-eval glue for the sentence-order test: one task per free-text partition, ``loglikelihood_rolling`` requests only.

Task ``metadata``: the partition, ``num_instances`` (100), ``arrangements`` (24: the original order and up to 23
others) and ``seed`` (0). One doc per sampled instance of at least two sentences; requests per doc: one rolling
log-likelihood per order (up to 24 forward passes). Every order's score is logged, so a reference model's run of the
same task gives ``u`` per order (verdicts.py). The task's own metrics are the test on the model's log-likelihoods,
which natural text fails (see verdicts.py): the verdict reads u.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.relabelling import RelabellingResult, arrangement_test, relabelling_metrics
from lm_eval_contam.kit.instances import OwnNumber, SampledSettings, instance_text, sample_indices
from lm_eval_contam.lmeval.lm_eval_compat import rolling_loglikelihood
from lm_eval_contam.lmeval.partition_task import PartitionSteps, ScoredTextsTask
from lm_eval_contam.methods.sentenceorder.orders import DEFAULT_ARRANGEMENTS, sentence_orders, sentences

METRICS = relabelling_metrics("sentence_order", count="sentence_order_items")
SEPARATOR = " "


@dataclass(frozen=True)
class SentenceOrderSettings(SampledSettings):
    arrangements: int
    OWN = OwnNumber("arrangements", DEFAULT_ARRANGEMENTS, minimum=2, maximum=120)


def sentence_order_docs(settings: SentenceOrderSettings, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One doc per sampled instance with at least two sentences: its text in its own order, then in its other orders
    (each text once); every doc carries how many sampled instances were left out (one sentence)."""
    partition = settings.partition
    indices = sample_indices(partition, rows, settings.num_instances, settings.seed)
    docs, left_out = [], 0
    for index in indices:
        parts = sentences(instance_text(partition, rows[index], source=f"{partition.label} row {index}"))
        if len(parts) < 2:
            left_out += 1
            continue
        identity = f"{partition.label}:{index}"
        orders = sentence_orders(parts, arrangements=settings.arrangements, seed=settings.seed, identity=identity)
        docs.append({"row_index": index, "identity": identity, "sentences": len(parts),
                     "texts": [SEPARATOR.join(parts[i] for i in order) for order in orders]})
    if not docs:
        raise ContamError(f"none of the {len(indices)} sampled instance(s) has two sentences; the sentence-order test "
                          "needs one", source=partition.label, field=partition.dataset.text_field)
    for doc in docs:
        doc["left_out"] = left_out
    return docs


def doc_record(settings: SentenceOrderSettings, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    return {"identity": doc["identity"], "row_index": doc["row_index"], "sentences": doc["sentences"],
            "scores": [rolling_loglikelihood(result) for result in results], "left_out": doc["left_out"]}


def records_statistics(settings: SentenceOrderSettings, records: Sequence[Mapping[str, Any]]) -> RelabellingResult:
    return arrangement_test([r["scores"] for r in records], seed=settings.seed, name=settings.partition.label)


class SentenceOrderTask(ScoredTextsTask):
    """One partition's sentence-order test; its YAML's ``metadata`` names the partition."""

    metrics = METRICS
    steps = PartitionSteps(SentenceOrderSettings, docs=sentence_order_docs, record=doc_record,
                           statistics=records_statistics)
