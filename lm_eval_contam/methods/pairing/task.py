"""lm-eval glue for the pairing test: one task per free-text partition, ``loglikelihood_rolling`` requests only.

Task ``metadata``: the partition, ``num_instances`` (100), ``group_size`` (6) and ``seed`` (0). One doc per group of
instances; requests per group: every first half with every second half of the group (``group_size ** 2`` texts,
each one forward pass). Every text's score is logged, so a reference model's run of the same task gives ``u`` per
text (verdicts.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.relabelling import RelabellingResult, pairing_test, relabelling_metrics
from lm_eval_contam.kit.instances import OwnNumber, SampledSettings, instance_text, sample_indices
from lm_eval_contam.lmeval.lm_eval_compat import rolling_loglikelihood
from lm_eval_contam.lmeval.partition_task import PartitionSteps, ScoredTextsTask
from lm_eval_contam.methods.pairing.halves import DEFAULT_GROUP_SIZE, halves, paired_texts, pairing_groups

METRICS = relabelling_metrics("pairing", count="pairing_groups")


@dataclass(frozen=True)
class PairingSettings(SampledSettings):
    group_size: int
    OWN = OwnNumber("group_size", DEFAULT_GROUP_SIZE, minimum=2, maximum=12)


def pairing_docs(settings: PairingSettings, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One doc per group of sampled instances that have halves: the group's first and second halves and every
    pairing of them."""
    partition = settings.partition
    indices = sample_indices(partition, rows, settings.num_instances, settings.seed)
    cut = [(index, halves(instance_text(partition, rows[index], source=f"{partition.label} row {index}")))
           for index in indices]
    usable = [(index, pair) for index, pair in cut if pair is not None]
    groups = pairing_groups(len(usable), group_size=settings.group_size, seed=settings.seed, identity=partition.label)
    if not groups:
        raise ContamError(f"{len(usable)} of {len(indices)} sampled instance(s) have two halves (at least 6 words); "
                          "the pairing test needs two", source=partition.label, field=partition.dataset.text_field)
    docs = []
    for number, group in enumerate(groups):
        firsts = [usable[position][1][0] for position in group]  # type: ignore[index]
        seconds = [usable[position][1][1] for position in group]  # type: ignore[index]
        docs.append({"identity": f"{partition.label}:group{number}", "row_indices": [usable[p][0] for p in group],
                     "size": len(group), "texts": paired_texts(firsts, seconds),
                     "left_out": len(indices) - len(usable)})
    return docs


def doc_record(settings: PairingSettings, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    return {"identity": doc["identity"], "size": doc["size"], "row_indices": list(doc["row_indices"]),
            "scores": [rolling_loglikelihood(result) for result in results], "left_out": doc["left_out"]}


def score_matrix(scores: Sequence[float], size: int) -> list[list[float]]:
    """A group's flat scores (row by row) as its square matrix."""
    return [list(scores[row * size:(row + 1) * size]) for row in range(size)]


def pairing_statistics(groups: Sequence[Sequence[float]], sizes: Sequence[int], *, seed: int,
                       name: str) -> RelabellingResult:
    return pairing_test([score_matrix(scores, size) for scores, size in zip(groups, sizes)], seed=seed, name=name)


def records_statistics(settings: PairingSettings, records: Sequence[Mapping[str, Any]]) -> RelabellingResult:
    return pairing_statistics([r["scores"] for r in records], [int(r["size"]) for r in records], seed=settings.seed,
                              name=settings.partition.label)


class PairingTask(ScoredTextsTask):
    """One partition's pairing test; its YAML's ``metadata`` names the partition."""

    metrics = METRICS
    steps = PartitionSteps(PairingSettings, docs=pairing_docs, record=doc_record, statistics=records_statistics)
