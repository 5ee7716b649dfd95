"""The likelihood modes' registry entry (ours): their tasks, task YAMLs, quiz samples, verdicts and report section;
the control mode's tasks are scored by the reference model too when the audit names one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import AuditedModel, MethodSpec, Quiz, QuizSample, RenderTarget
from lm_eval_contam.lmeval.context_window import MODEL_WINDOW_KEY, ModelWindow
from lm_eval_contam.methods.likelihood import report_section
from lm_eval_contam.methods.likelihood.configs import (
    METHOD,
    controlled_modes,
    render_task_config,
    shipped_task_configs,
    task_name,
)
from lm_eval_contam.methods.likelihood.docs import LIFT_MIN_DOCS, cut_sample
from lm_eval_contam.methods.likelihood.task import LikelihoodSettings
from lm_eval_contam.methods.likelihood.verdicts import LIFT, TESTS, reference_tests, verdicts


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    """Prompt log-probabilities only local backends give; the modes the partition's control allows."""
    return [task_name(partition, mode) for mode in controlled_modes(partition)] if model.plain_text else []


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    """The modes' YAMLs, each carrying the partition's control with its overlap with the audited rows, measured
    once per audit before the YAMLs are written (``audit.job.own_task_dirs``)."""
    include = target.include(METHOD)
    return {task_name(partition, mode): render_task_config(partition, mode, include=include,
                                                           options_path=str(target.options_path))
            for mode in controlled_modes(partition)}


def quiz_samples(metadata: Mapping[str, Any], split: str) -> list[QuizSample]:
    """The options mode scores the same quiz sample of the partition and of its control."""
    if metadata.get("mode") != "options":
        return []
    scored = LikelihoodSettings.from_metadata(metadata, split)
    return [QuizSample(partition, scored.num_instances, scored.seed, scored.options_path)
            for partition in (scored.partition, scored.control) if partition is not None]


def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
    """The lift mode is not run when fewer than two sampled texts can be cut (its reference is another instance's
    second piece), or when a second piece is longer than the audited model's window: lm-eval cannot score a
    continuation it would have to cut, and a lift over part of a piece is not the lift.

    The control and options modes score whole texts with lm-eval's rolling log-likelihood, window by window: any
    length is scored there.
    """
    metadata = dict(config.get("metadata") or {})
    if metadata.get("mode") != "lift":
        return None
    settings = LikelihoodSettings.from_metadata(metadata, str(config.get("test_split")))
    cut = cut_sample(settings.partition, settings.partition.rows(), num_instances=settings.num_instances,
                     seed=settings.seed)
    if len(cut) < LIFT_MIN_DOCS:
        reason = f"{len(cut)} text(s) long enough to cut, the lift needs at least {LIFT_MIN_DOCS}"
    else:
        window: ModelWindow | None = config.get(MODEL_WINDOW_KEY)
        scored = ((doc["row_index"], prompt, " " + doc["reference"]) for doc in cut
                  for prompt in (doc["guided_prompt"], doc["general_prompt"]))
        reason = window.over(scored, "'s second piece") if window is not None else None
        if reason is None:
            return None
    return LIFT.not_run(task=task, partition=settings.partition.label, reason=reason, variant="lift")


def reference_scores(metadata: Mapping[str, Any]) -> bool:
    """A reference model scores the control mode's tasks only: its test on u is the only one that reads it (the lift
    and options modes have none)."""
    return metadata.get("mode", "control") == "control"


SPEC = MethodSpec(
    name=METHOD, order=40, title="Likelihood modes (ours)",
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=report_section,
    shipped_task_configs=shipped_task_configs,
    tests=TESTS,
    quiz=Quiz(samples=quiz_samples),
    cannot_run=cannot_run,
    reference_tests=reference_tests,
    reference_scores=reference_scores,
)
