"""Thin task YAMLs of the option-order test: one per multiple-choice partition."""

from __future__ import annotations

from typing import Any

from lm_eval_contam.partitions import Partition
from lm_eval_contam.task_yaml import thin_task_yaml

METHOD = "optionorder"


def task_name(partition: Partition) -> str:
    return partition.task_name(METHOD)


def render_task_config(partition: Partition, *, include: str, all_orders: bool = False) -> str:
    """The partition's task YAML; ``all_orders``: every admissible order per item, which the arrangement tests read
    (a reference model's run: the tests on u), not only the rank test's five."""
    metadata: dict[str, Any] = {"version": 1.0, "method": METHOD, **partition.dataset.task_metadata()}
    metadata["seed"] = 0
    metadata["all_orders"] = all_orders
    return thin_task_yaml(header="# Written by lm-eval-contam (lm_eval_contam/optionorder/configs.py).",
                          include=include, task=task_name(partition), partition=partition, metadata=metadata)
