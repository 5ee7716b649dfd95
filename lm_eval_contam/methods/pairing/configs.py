"""Thin task YAMLs of the pairing test: one per free-text partition."""

from __future__ import annotations

from collections.abc import Callable

from lm_eval_contam.core.partitions import Partition, registered_partitions
from lm_eval_contam.lmeval.task_yaml import seeded_task_yaml, shipped_path

METHOD = "pairing"


def task_name(partition: Partition) -> str:
    return partition.task_name(METHOD)


def render_task_config(partition: Partition, *, include: str | None = None) -> str:
    """One task YAML; ``include`` the template's path (default: relative, for the shipped task directory)."""
    return seeded_task_yaml(METHOD, partition, include=include)


def shipped_configs(applies: Callable[[Partition], bool]) -> dict[str, str]:
    """Relative path under ``task_configs/pairing/`` -> YAML text, for every registered partition it applies to."""
    return {shipped_path(partition, task_name(partition)): render_task_config(partition)
            for partition in registered_partitions() if applies(partition)}
