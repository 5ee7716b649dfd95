"""Time Travel's registry entry: its tasks, task YAMLs, verdicts and report section, for the core to loop over."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.partitions import Partition, metadata_number
from lm_eval_contam.core.registry import AuditedModel, Generation, MethodSpec, RenderTarget
from lm_eval_contam.methods.timetravel import report_section
from lm_eval_contam.methods.timetravel.configs import (
    METHOD,
    STYLES,
    render_task_config,
    shipped_task_configs,
    task_name,
)
from lm_eval_contam.methods.timetravel.instances import has_cuttable_row
from lm_eval_contam.methods.timetravel.verdicts import ALG1_PERMUTATION, TESTS, verdicts


def audit_styles(model: AuditedModel) -> tuple[str, ...]:
    """A chat model gets both prompt styles (it may replicate memorised text only when asked to continue plain
    text; the completion style stops at the first line break and costs little), combined in the report with a
    Bonferroni correction; a model without a chat template is a base model (completion style only); a chat API cannot
    continue plain text (instruct style only)."""
    if model.chat:
        return ("instruct", "completion") if model.plain_text else ("instruct",)
    return ("completion",)


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return [task_name(partition, style) for style in audit_styles(model)]


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    include = target.include(METHOD)
    return {task_name(partition, style): render_task_config(partition, style, include=include) for style in STYLES}


def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
    """Not run when no row's text can be cut into two pieces: there is nothing to complete."""
    metadata = dict(config.get("metadata") or {})
    partition = Partition.from_task_metadata(metadata, str(config.get("test_split")))
    if has_cuttable_row(partition.rows(), partition, seed=metadata_number(metadata, "seed", 0)):
        return None
    return ALG1_PERMUTATION.not_run(task=task, partition=partition.label, reason="texts too short to cut")


SPEC = MethodSpec(
    name=METHOD, order=10, title="Time Travel",
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=report_section,
    shipped_task_configs=shipped_task_configs,
    tests=TESTS,
    evidence_kind="generation",
    generation=Generation(capped=True),
    cannot_run=cannot_run,
)
