"""Thin task YAMLs of the option-order test: one per multiple-choice partition."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.datafiles import data_lines
from lm_eval_contam.optionorder.orders import item_from_row
from lm_eval_contam.partitions import Partition

METHOD = "optionorder"
# A partition is multiple-choice when at least this share of its rows are items with two or more options.
MULTIPLE_CHOICE_SHARE = 0.5


def task_name(partition: Partition) -> str:
    return partition.task_name(METHOD)


def is_multiple_choice(rows: Sequence[Mapping[str, Any]], text_field: str) -> bool:
    """Whether most rows are multiple-choice items (a prompt listing its options, or a ``choices`` list)."""
    if not rows:
        return False
    items = sum(item_from_row(row, text_field) is not None for row in rows)
    return items >= MULTIPLE_CHOICE_SHARE * len(rows)


def render_task_config(partition: Partition, *, include: str, num_instances: int | None = None) -> str:
    metadata: dict[str, Any] = {"version": 1.0, "method": METHOD, **partition.dataset.task_metadata()}
    if num_instances is not None:
        metadata["num_instances"] = num_instances
    metadata["seed"] = 0
    lines = [
        "# Written by lm-eval-contam (lm_eval_contam/optionorder/configs.py).",
        f"include: {include}",
        f"task: {task_name(partition)}",
        *data_lines(partition),
        f"test_split: {partition.split}",
        "metadata:",
        *(f"  {key}: {json.dumps(value)}" for key, value in metadata.items()),
    ]
    return "\n".join(lines) + "\n"
