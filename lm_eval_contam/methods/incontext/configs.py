"""Thin task YAMLs of the in-context test: one per partition."""

from __future__ import annotations

from lm_eval_contam.core.partitions import Partition, registered_partitions
from lm_eval_contam.lmeval.task_yaml import seeded_task_yaml, shipped_path

METHOD = "incontext"


def task_name(partition: Partition) -> str:
    return partition.task_name(METHOD)


def render_task_config(partition: Partition, *, include: str | None = None) -> str:
    """One task YAML; ``include`` the template's path (default: relative, for the shipped task directory)."""
    sample = partition.dataset.hf_path is None
    return seeded_task_yaml(METHOD, partition, include=include, tag=["incontext_samples" if sample else "incontext"])


def shipped_task_configs() -> dict[str, str]:
    """Relative path under ``task_configs/incontext/`` -> YAML text, for every registered partition."""
    return {shipped_path(partition, task_name(partition)): render_task_config(partition)
            for partition in registered_partitions()}
