"""The pairing test's registry entry: free-text partitions, log-likelihoods only, no control; scored by the reference
model too when the audit names one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.partitions import Partition, local_free_text
from lm_eval_contam.core.registry import AuditedModel, MethodSpec, RenderTarget
from lm_eval_contam.methods.pairing import report_section
from lm_eval_contam.methods.pairing.configs import METHOD, render_task_config, shipped_configs, task_name
from lm_eval_contam.methods.pairing.task import PairingSettings, pairing_docs
from lm_eval_contam.methods.pairing.verdicts import TESTS, reference_tests, verdicts


def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
    settings = PairingSettings.from_metadata(config.get("metadata"), str(config.get("test_split")))
    try:
        pairing_docs(settings, settings.partition.rows())
    except ContamError as error:
        return NotRun(task=task, family=METHOD, test="pairing", title="Pairing of halves (ours)",
                      partition=settings.partition.label, reason=error.reason)
    return None


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return [task_name(partition)] if model.plain_text and local_free_text(partition) else []


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    if not local_free_text(partition):
        return {}
    return {task_name(partition): render_task_config(partition, include=target.include(METHOD))}


SPEC = MethodSpec(
    name=METHOD, order=46, title="Pairing test (ours)",
    needs=frozenset({"logprobs", "reference"}),
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=report_section.SECTION,
    tests=tuple(TESTS.values()),
    output_types=frozenset({"generate_until", "loglikelihood", "loglikelihood_rolling"}),
    evidence_kind="pairing",
    cannot_run=cannot_run,
    reference_tests=reference_tests,
    shipped_task_configs=lambda: shipped_configs(local_free_text),
)
