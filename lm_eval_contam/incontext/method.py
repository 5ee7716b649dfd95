"""The in-context test's registry entry: every partition, log-likelihoods only, no control."""

from __future__ import annotations

from lm_eval_contam.incontext import report_section
from lm_eval_contam.incontext.configs import METHOD, render_task_config, task_name
from lm_eval_contam.incontext.verdicts import verdicts
from lm_eval_contam.partitions import Partition
from lm_eval_contam.registry import AuditedModel, MethodSpec, RenderTarget


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return [task_name(partition)] if model.plain_text else []


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    return {task_name(partition): render_task_config(partition, include=str(target.templates / METHOD / "_template_yaml"))}


SPEC = MethodSpec(
    name=METHOD,
    title="In-context test (ours, after CoDeC, NVIDIA 2025)",
    order=44,
    needs=frozenset({"logprobs"}),
    task_names=task_names,
    render_task_configs=render_task_configs,
    verdicts=verdicts,
    render_html=report_section.html,
    render_markdown=report_section.markdown,
    rate_keys=("incontext_twin",),
    evidence_kind="in-context",
)
