"""Thin task YAMLs of the option-order test: one per multiple-choice partition."""

from __future__ import annotations

from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.lmeval.task_yaml import seeded_task_yaml

METHOD = "optionorder"


def task_name(partition: Partition) -> str:
    return partition.task_name(METHOD)


def render_task_config(partition: Partition, *, include: str, all_orders: bool = False) -> str:
    """The partition's task YAML; ``all_orders``: every admissible order per item, which the arrangement tests read
    (a reference model's run: the tests on u), not only the rank test's five."""
    return seeded_task_yaml(METHOD, partition, include=include, settings={"all_orders": all_orders},
                            header="# Written by lm-eval-contam (lm_eval_contam/methods/optionorder/configs.py).")
