"""The pairing test's verdicts from a run (read from each task's logged records, and its reference's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import Test
from lm_eval_contam.core.relabelling import (
    RelabellingEvidence,
    RelabellingResult,
    reference_differenced,
    reference_tests_reading,
    relabelling_verdict,
    scored_as,
)
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.pairing.configs import METHOD
from lm_eval_contam.methods.pairing.task import pairing_statistics

NULL = ("the model never saw these instances: within each group, which second half goes with which first half is "
        "exchangeable in the double-centred log-likelihoods (each half's own level removed)")
REFERENCE_NULL = ("the fine-tune never saw these instances: within each group, which second half goes with which "
                  "first half is exchangeable in the double-centred u = log p(model) - log p(reference) (what the "
                  "reference shares with the model, e.g. a preference for coherent text, cancels in u)")
RECORD_METRIC = "pairing_pvalue"  # the metric each doc's record is logged under (every metric logs it)
RULE = (f"flagged when the Monte-Carlo relabelling p <= {ALPHA} (the true pairings' double-centred scores summed "
        "over groups are high among random pairings within each group)")
TESTS = {test.name: test for test in (
    Test("pairing", title="Pairing of halves (ours)", null=NULL, rule=RULE),
    Test("pairing_reference", compares=("reference",), title="Pairing of halves on u, against the reference model (ours)",
         null=REFERENCE_NULL, rule=RULE))}


def _verdict(model: ModelResults, task: str, partition: Partition, test: str, result: RelabellingResult,
             size: int, reference: str | None) -> Verdict:
    evidence = RelabellingEvidence("pairings of first and second halves", scored_as(reference), reference, result,
                                   size, unit="group")
    return relabelling_verdict(TESTS[test], model=model.label, partition=partition.label, task=task, family=METHOD,
                               evidence=evidence)


def reference_pairing_result(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], *,
                             seed: int, label: str, source: str) -> RelabellingResult:
    """The pairing test on u of one task's logged records (``doc_record``) against the reference model's records of
    the same groups (by ``identity``). The audit's verdicts and ``run --reference-model`` both read it."""
    differenced = reference_differenced(records, reference, source=source)
    return pairing_statistics(differenced, [int(record["size"]) for record in records], seed=seed,
                              name=f"{label}:reference")


# ``MethodSpec.reference_tests``: the test on u of one task from both models' logged samples and its config.
reference_tests = reference_tests_reading(RECORD_METRIC, lambda task, source: {
    "pairing_reference": reference_pairing_result(task.records, task.reference, seed=task.seed, label=task.label,
                                                  source=source)})


def task_verdicts(model: ModelResults, task: str) -> list[Verdict]:
    partition = model.partition(task)
    records = model.records(task, RECORD_METRIC)
    if not records:
        return []
    seed = model.seed(task)
    sizes = [int(record["size"]) for record in records]
    found = [_verdict(model, task, partition, "pairing",
                      pairing_statistics([r["scores"] for r in records], sizes, seed=seed, name=partition.label),
                      max(sizes), None)]
    reference = model.reference_records(task, RECORD_METRIC)
    if reference is not None:
        result = reference_pairing_result(records, reference, seed=seed, label=partition.label,
                                          source=str(model.reference.directory))  # type: ignore[union-attr]
        found.append(_verdict(model, task, partition, "pairing_reference", result, max(sizes),
                              model.reference.model or model.reference.label))  # type: ignore[union-attr]
    return found


def verdicts(model: ModelResults) -> list[Verdict]:
    return [verdict for task in model.tasks_of(METHOD) for verdict in task_verdicts(model, task)]
