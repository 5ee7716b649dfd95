"""The option-order test's registry entry: multiple-choice partitions, log-likelihoods only, no control."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import AuditedModel, MethodSpec, RenderTarget
from lm_eval_contam.methods.optionorder import report_section
from lm_eval_contam.methods.optionorder.configs import METHOD, render_task_config, task_name
from lm_eval_contam.methods.optionorder.orders import too_many_options
from lm_eval_contam.methods.optionorder.task import OptionOrderSettings, order_docs, usable_items
from lm_eval_contam.methods.optionorder.verdicts import ARRANGEMENT_TESTS, RANK_TEST, reference_tests, verdicts


def _multiple_choice(partition: Partition) -> bool:
    """Whether the partition has multiple-choice items the test can use. Local partitions only (a benchmark audited
    with --tasks, one's own data): the Hub datasets the papers audit have no options to reorder."""
    if partition.dataset.hf_path is not None:
        return False
    try:
        return usable_items(partition, partition.rows()) > 0
    except ContamError:
        return False  # an unreadable partition is reported by the methods that read it


def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
    """Not run when an item has more options than letters (A-Z), or when none of the *sampled* items is usable: the
    plan counts usable items over every row, so a large partition with a few usable items can sample none, and lm-eval
    would stop the whole audit on a task without docs."""
    settings = OptionOrderSettings.from_metadata(config.get("metadata"), str(config.get("test_split")))
    rows = settings.partition.rows()
    try:
        # An item with more options than letters cannot be rendered (an IndexError mid-audit, before)
        reason = too_many_options(rows, settings.partition.dataset.text_field)
        if reason is None:
            order_docs(settings, rows)
    except ContamError as error:
        reason = error.reason
    if reason is None:
        return None
    return RANK_TEST.not_run(task=task, partition=settings.partition.label, reason=reason)


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return [task_name(partition)] if model.plain_text and _multiple_choice(partition) else []


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    if not _multiple_choice(partition):
        return {}
    return {task_name(partition): render_task_config(partition, include=target.include(METHOD),
                                                     all_orders=target.reference)}


SPEC = MethodSpec(
    name=METHOD, order=45, title="Option-order test (ours, after Ni et al., AAAI 2025)",
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=report_section.SECTION,
    tests=(RANK_TEST, *ARRANGEMENT_TESTS.values()),
    output_types=frozenset({"multiple_choice"}),
    evidence_kind="option order",
    cannot_run=cannot_run,
    reference_tests=reference_tests,
)
