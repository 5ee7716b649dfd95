"""The reordered score's registry entry: no per-partition tasks and no verdicts; every multiple-choice benchmark of a
run (``audit --tasks``, ``run --tasks``) gets a reordered task, and the post-processing writes ``<metric>_reordered``
(with its interval, the gap and its p) beside the benchmark's own score."""

from __future__ import annotations

from lm_eval_contam.core.method_verdict import EXPLORATORY, Test, Verdict
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import NO_SECTION, AuditedModel, BenchmarkAdjustment, MethodSpec, RenderTarget
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.methods.reordered.benchmark_tasks import adjustment_tasks, reference_doc_indices
from lm_eval_contam.methods.reordered.hook import post_process_results
from lm_eval_contam.methods.reordered.orders import METHOD


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return []  # a reordered task is added per benchmark (BenchmarkAdjustment), never per partition


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    return {}


def verdicts(results: ModelResults) -> list[Verdict]:
    return []  # a score beside the benchmark's, not a detection test: it decides nothing


# Its tests give rows beside the benchmark's score (``<metric>_reordered_gap`` and its p; with a reference model
# ``<metric>_reordered_gap_vs_reference``), never a verdict: shown, never driving.
WHY = "a score beside the benchmark's, read from its row: no verdict of its own"
GAP = Test(family=METHOD, name="reordered_gap", title="Original order vs reordered options (ours, after ConStat)",
           null=("the original option order is exchangeable with the item's reorderings (the model never saw which "
                 "order is the benchmark's), independently across items"),
           rule="an exact one-sided p of the gap acc - acc_reordered, reported beside the score; it flags nothing",
           compares=(), role=EXPLORATORY, rated=False, why=WHY)
GAP_VS_REFERENCE = Test(
    family=METHOD, name="reordered_gap_vs_reference", title="The reordered gap less the reference model's (ours)",
    null="the audited model's gap and the reference's are alike item by item (paired over the items both scored)",
    rule="the gap less the reference's, with its interval and p, reported beside the score; it flags nothing",
    compares=("reference",), role=EXPLORATORY, rated=False, why=WHY)


SPEC = MethodSpec(
    name=METHOD, order=35, title="options reordered",
    # With --reference-model the reference scores the reordered tasks too (its own gap is subtracted).
    tests=(GAP, GAP_VS_REFERENCE),
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=NO_SECTION,
    output_types=frozenset({"multiple_choice"}),
    # With a reference: the forms of a seeded sample of about REFERENCE_ITEMS items of a large task or group.
    reference_docs=reference_doc_indices,
    benchmark_adjustment=BenchmarkAdjustment(tasks=adjustment_tasks, post_process=post_process_results,
                                             scored_like_benchmark=True),
)
