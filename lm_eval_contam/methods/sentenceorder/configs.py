"""Thin task YAMLs of the sentence-order test: one per free-text partition audited against a reference model."""

from __future__ import annotations

from lm_eval_contam.core.partitions import Partition, local_free_text, registered_partitions
from lm_eval_contam.lmeval.task_yaml import seeded_task_yaml, shipped_path

METHOD = "sentenceorder"


def task_name(partition: Partition) -> str:
    return partition.task_name(METHOD)


def render_task_config(partition: Partition, *, include: str | None = None) -> str:
    """One task YAML; ``include`` the template's path (default: relative, for the shipped task directory)."""
    return seeded_task_yaml(METHOD, partition, include=include)


def shipped_task_configs() -> dict[str, str]:
    """Relative path under ``task_configs/sentenceorder/`` -> YAML text, for every registered local free-text
    partition (``run --reference-model`` and the audit with a reference read them)."""
    return {shipped_path(partition, task_name(partition)): render_task_config(partition)
            for partition in registered_partitions() if local_free_text(partition)}
