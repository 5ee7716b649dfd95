"""The Data Contamination Quiz's registry entry: its tasks, task YAMLs, quiz samples, verdicts and report section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import AuditedModel, Generation, MethodSpec, Quiz, QuizSample, RenderTarget
from lm_eval_contam.kit.instances import sample_instances
from lm_eval_contam.kit.quiz_options import read_failures, read_options
from lm_eval_contam.methods.dcq import report_section
from lm_eval_contam.methods.dcq.configs import ANSWER_MODES, METHOD, MODES, render_task_config, shipped_task_configs
from lm_eval_contam.methods.dcq.task import DCQSettings
from lm_eval_contam.methods.dcq.verdicts import TESTS, mode_test, verdicts


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    """One quiz task per answering mode; a chat API cannot score the quiz's letters, so it answers (generate mode)."""
    unknown = [mode for mode in model.quiz_modes if mode not in ANSWER_MODES]
    if unknown:
        raise ContamError(f"unknown DCQ mode(s) {unknown}; known: {', '.join(ANSWER_MODES)}", field="dcq_mode")
    modes = model.quiz_modes if model.plain_text else tuple(dict.fromkeys("generate" for _ in model.quiz_modes))
    return [partition.task_name(METHOD, "ll" if mode == "loglikelihood" else "") for mode in modes]


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    include = target.include(METHOD)
    return {partition.task_name(METHOD, variant): render_task_config(partition, variant, include=include,
                                                                     options_path=str(target.options_path))
            for variant in MODES}


def quiz_samples(metadata: Mapping[str, Any], split: str) -> list[QuizSample]:
    settings = DCQSettings.from_metadata(metadata, split)
    return [QuizSample(settings.partition, settings.num_instances, settings.seed, settings.options_path)]


def generate_alternative(task: str) -> str | None:
    """The generate-mode twin of a quiz answered by log-likelihood (``dcq_x_ll`` -> ``dcq_x``)."""
    return task.removesuffix("_ll") if task.startswith(f"{METHOD}_") and task.endswith("_ll") else None


def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
    """Not run when no sampled instance got valid quiz options (asked after the options are made): lm-eval refuses
    a task without docs, which would stop the whole audit."""
    settings = DCQSettings.from_metadata(config.get("metadata"), str(config.get("test_split")))
    instances = sample_instances(settings.partition, settings.partition.rows(), settings.num_instances, settings.seed)
    cached = read_options(settings.options_path)
    if any(instance.key in cached for instance in instances):
        return None
    failures = read_failures(settings.options_path)
    problems = dict.fromkeys(problem for instance in instances if instance.key in failures
                             for problem in failures[instance.key].problems)
    if not problems:  # options not made yet: the quiz itself names the command that makes them
        return None
    return mode_test(config).not_run(task=task, partition=settings.partition.label,
                                     reason=f"no valid quiz options ({'; '.join(list(problems)[:3])})")


def null_study_exclusion(config: Mapping[str, Any]) -> str | None:
    # A tiny model trained from scratch replies with unparseable text, so its rate would measure the parser.
    if config.get("output_type") == "loglikelihood":
        return None
    return "DCQ's generate mode needs an instruct model that answers with a letter"


SPEC = MethodSpec(
    name=METHOD, order=20, title="Data Contamination Quiz",
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=report_section,
    shipped_task_configs=shipped_task_configs,
    tests=tuple(TESTS.values()),
    evidence_kind="quiz",
    generation=Generation(alternative=generate_alternative),
    quiz=Quiz(samples=quiz_samples),
    cannot_run=cannot_run,
    null_study_exclusion=null_study_exclusion,
)
