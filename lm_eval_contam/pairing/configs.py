"""Thin task YAMLs of the pairing test: one per free-text partition."""

from __future__ import annotations

import json
from typing import Any

from lm_eval_contam.datafiles import data_lines
from lm_eval_contam.partitions import Partition

METHOD = "pairing"


def task_name(partition: Partition) -> str:
    return partition.task_name(METHOD)


def render_task_config(partition: Partition, *, include: str) -> str:
    metadata: dict[str, Any] = {"version": 1.0, "method": METHOD, **partition.dataset.task_metadata()}
    metadata["seed"] = 0
    lines = [
        "# Written by lm-eval-contam (lm_eval_contam/pairing/configs.py).",
        f"include: {include}",
        f"task: {task_name(partition)}",
        *data_lines(partition),
        f"test_split: {partition.split}",
        "metadata:",
        *(f"  {key}: {json.dumps(value)}" for key, value in metadata.items()),
    ]
    return "\n".join(lines) + "\n"
