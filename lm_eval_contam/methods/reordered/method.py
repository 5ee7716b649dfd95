"""The reordered score's registry entry: no per-partition tasks and no verdicts; every multiple-choice benchmark of a
run (``audit --tasks``, ``run --tasks``) gets a reordered task, and the post-processing writes ``<metric>_reordered``
(with its interval, the gap and its p) beside the benchmark's own score."""

from __future__ import annotations

from lm_eval_contam.core.method_verdict import Verdict
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


SPEC = MethodSpec(
    name=METHOD, order=35, title="options reordered",
    # "reference": with --reference-model the reference scores the reordered tasks too (its own gap is subtracted).
    needs=frozenset({"logprobs", "reference"}),
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=NO_SECTION,
    output_types=frozenset({"multiple_choice"}),
    # With a reference: the forms of a seeded sample of about REFERENCE_ITEMS items of a large task or group.
    reference_docs=reference_doc_indices,
    benchmark_adjustment=BenchmarkAdjustment(tasks=adjustment_tasks, post_process=post_process_results,
                                             scored_like_benchmark=True),
)
