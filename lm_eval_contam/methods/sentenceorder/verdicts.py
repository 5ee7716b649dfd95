"""The sentence-order test's verdicts from a run (read from each task's logged records, and its reference's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import Test
from lm_eval_contam.core.relabelling import (
    RelabellingEvidence,
    RelabellingResult,
    arrangement_test,
    reference_differenced,
    reference_tests_reading,
    relabelling_verdict,
    scored_as,
)
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.sentenceorder.configs import METHOD

NULL = ("the model never saw these instances: which of each instance's scored sentence orders is its own is "
        "exchangeable (uniform over them), independently across instances")
REFERENCE_NULL = ("the fine-tune never saw these instances: which of each instance's scored sentence orders is its own "
                  "is exchangeable in u = log p(model) - log p(reference), independently across instances (what the "
                  "reference shares with the model, e.g. a preference for coherent text, cancels in u)")
RECORD_METRIC = "sentence_order_pvalue"  # the metric each doc's record is logged under (every metric logs it)
RULE = (f"flagged when the Monte-Carlo relabelling p <= {ALPHA} (the sum over instances of the own order's "
        "standardised score is high among the sums with each instance's own order redrawn)")
TESTS = {test.name: test for test in (
    Test("sentence_order", title="Sentence order (ours)", null=NULL, rule=RULE),
    Test("sentence_order_reference", compares=("reference",),
         title="Sentence order on u, against the reference model (ours)", null=REFERENCE_NULL, rule=RULE))}


def _verdict(model: ModelResults, task: str, partition: Partition, test: str, result: RelabellingResult,
             per_item: int, reference: str | None) -> Verdict:
    evidence = RelabellingEvidence("sentence orders", scored_as(reference), reference, result, per_item,
                                   unit="instance")
    return relabelling_verdict(TESTS[test], model=model.label, partition=partition.label, task=task, family=METHOD,
                               evidence=evidence)


def reference_order_result(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], *,
                           seed: int, label: str, source: str) -> RelabellingResult:
    """The test on u of one task's logged records (``doc_record``) against the reference model's records of the same
    instances (by ``identity``). The audit's verdicts and ``run --reference-model`` both read it."""
    return arrangement_test(reference_differenced(records, reference, source=source), seed=seed,
                            name=f"{label}:reference")


# ``MethodSpec.reference_tests``: the test on u of one task from both models' logged samples and its config.
reference_tests = reference_tests_reading(RECORD_METRIC, lambda task, source: {
    "sentence_order_reference": reference_order_result(task.records, task.reference, seed=task.seed,
                                                       label=task.label, source=source)})


def task_verdicts(model: ModelResults, task: str) -> list[Verdict]:
    partition = model.partition(task)
    records = model.records(task, RECORD_METRIC)
    if not records:
        return []
    seed = model.seed(task)
    per_item = max(len(record["scores"]) for record in records)
    found = [_verdict(model, task, partition, "sentence_order",
                      arrangement_test([record["scores"] for record in records], seed=seed, name=partition.label),
                      per_item, None)]
    reference = model.reference_records(task, RECORD_METRIC)
    if reference is not None:
        result = reference_order_result(records, reference, seed=seed, label=partition.label,
                                        source=str(model.reference.directory))  # type: ignore[union-attr]
        found.append(_verdict(model, task, partition, "sentence_order_reference", result, per_item,
                              model.reference.model or model.reference.label))  # type: ignore[union-attr]
    return found


def verdicts(model: ModelResults) -> list[Verdict]:
    return [verdict for task in model.tasks_of(METHOD) for verdict in task_verdicts(model, task)]
