"""The sentence-order test's registry entry: free-text partitions, log-likelihoods only, no control; run only when
the audit names a reference model (its verdict reads u; on the model's own scores natural text fails its null)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.partitions import Partition, local_free_text
from lm_eval_contam.core.registry import AuditedModel, MethodSpec, RenderTarget
from lm_eval_contam.methods.sentenceorder import report_section
from lm_eval_contam.methods.sentenceorder.configs import METHOD, render_task_config, shipped_task_configs, task_name
from lm_eval_contam.methods.sentenceorder.task import SentenceOrderSettings, sentence_order_docs
from lm_eval_contam.methods.sentenceorder.verdicts import TESTS, reference_tests, verdicts


def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
    settings = SentenceOrderSettings.from_metadata(config.get("metadata"), str(config.get("test_split")))
    try:
        sentence_order_docs(settings, settings.partition.rows())
    except ContamError as error:
        return NotRun(task=task, family=METHOD, test="sentence_order_reference",
                      title=TESTS["sentence_order_reference"].title, partition=settings.partition.label,
                      reason=error.reason)
    return None


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return [task_name(partition)] if model.plain_text and model.reference and local_free_text(partition) else []


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    if not (target.reference and local_free_text(partition)):
        return {}
    return {task_name(partition): render_task_config(partition, include=target.include(METHOD))}


SPEC = MethodSpec(
    name=METHOD, order=47, title="Sentence-order test (ours)",
    needs=frozenset({"logprobs", "reference"}),
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=report_section.SECTION,
    tests=tuple(TESTS.values()),
    output_types=frozenset({"generate_until", "loglikelihood", "loglikelihood_rolling"}),
    evidence_kind="sentence order",
    cannot_run=cannot_run,
    reference_tests=reference_tests,
    shipped_task_configs=shipped_task_configs,
)
