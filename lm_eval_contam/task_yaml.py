"""The one renderer of thin task YAMLs: a method's template included, the task named, its partition and metadata.

Every method's ``configs.py`` says what goes into its YAMLs (tags, settings, metadata) and renders them here, for
the files it ships (``MethodSpec.shipped_task_configs``: relative ``include``, under ``samples/`` for the shipped
sample datasets) and for a card partition (``MethodSpec.render_task_configs``: the installed template's path).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam import TEMPLATE
from lm_eval_contam.datafiles import data_lines
from lm_eval_contam.partitions import Partition


class Verbatim(str):
    """A metadata value written as it is (a bare YAML scalar), not JSON-quoted."""


def shipped_include(partition: Partition) -> str:
    """The template's path relative to a shipped YAML (sample datasets' YAMLs sit one folder down, in samples/)."""
    return ("../" if partition.dataset.hf_path is None else "") + TEMPLATE


def shipped_path(partition: Partition, task: str) -> str:
    """Where a shipped YAML goes under task_configs/<method>/: the sample datasets' under samples/."""
    return f"{'samples/' if partition.dataset.hf_path is None else ''}{task}.yaml"


def _metadata_value(value: Any) -> str:
    return str(value) if isinstance(value, Verbatim) else json.dumps(value)


def thin_task_yaml(*, header: str, include: str, task: str, metadata: Mapping[str, Any],
                   tag: str | Sequence[str] | None = None, partition: Partition | None = None,
                   settings: Sequence[str] = ()) -> str:
    """One task YAML: ``header`` (comment lines), the template it includes, the task's name, its ``tag`` (a name or
    a list), how it loads ``partition`` and which split it tests, its own ``settings`` (YAML lines), and its
    ``metadata`` (JSON-quoted values, :class:`Verbatim` ones bare)."""
    lines = [*header.splitlines(), f"include: {include}", f"task: {task}"]
    if tag is not None:
        lines.append(f"tag: {tag}" if isinstance(tag, str) else f"tag: [{', '.join(tag)}]")
    if partition is not None:
        lines += [*data_lines(partition), f"test_split: {partition.split}"]
    lines += [*settings, "metadata:", *(f"  {key}: {_metadata_value(value)}" for key, value in metadata.items())]
    return "\n".join(lines) + "\n"
