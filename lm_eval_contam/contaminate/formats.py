"""The seed papers' injection formats: how a partition's rows are written into training text.

Time Travel (Golchin & Surdeanu 2024, Table 10) injects instances in a "web"
format carrying the dataset and split name; DCR (Xu et al. 2025, App. B) injects
data (L3) or data with labels (L4) under a one-line benchmark header.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition

INJECTION_FORMATS = ("timetravel", "dcr-l3", "dcr-l4")
# DCR's level-3/4 injection lines per task type: the task named in the block header.
DCR_TASK_DESCRIPTIONS = {"cls": "text classification", "question": "math word problem"}
DCR_ITEMS_PER_BLOCK = 8  # short blocks, so one block fits a training sequence


def _field(row: Mapping[str, Any], name: str | None) -> str:
    if name is None or name not in row:
        raise ContamError(f"row has no column {name!r} (columns: {', '.join(sorted(row))})", field=name)
    return str(row[name])


def _label_index(partition: Partition, row: Mapping[str, Any]) -> int:
    index = int(_field(row, partition.dataset.label_field))
    partition.label_text(index)  # range check with a clear error
    return index


def timetravel_web_format(partition: Partition, row: Mapping[str, Any]) -> str:
    """One instance in the Time Travel paper's continued-training format (Table 10)."""
    dataset = partition.dataset
    header = f"This is an instance from the {partition.split} split of the {dataset.display_name} dataset."
    if dataset.task_type == "cls":
        label = partition.label_text(_label_index(partition, row))
        return f"{header}\nInstance: {_field(row, dataset.text_field)}\nLabel: {label}"
    if dataset.task_type == "nli":
        label = partition.label_text(_label_index(partition, row))
        return (
            f"{header}\nSentence 1: {_field(row, dataset.text_field)}\n"
            f"Sentence 2: {_field(row, dataset.second_field)}\nLabel: {label}"
        )
    if dataset.task_type in ("sum", "xsum"):
        return f"{header}\nDocument: {_field(row, dataset.companion_field)}\nSummary: {_field(row, dataset.text_field)}"
    return f"{header}\nQuestion: {_field(row, dataset.text_field)}\nAnswer: {_field(row, dataset.companion_field)}"


def dcr_header(benchmark: str, task: str) -> str:
    return f"This is the data from {benchmark}, which is a benchmark for {task} task."


def dcr_data_format(
    benchmark: str, task: str, items: Sequence[str], labels: Sequence[str] | None = None, *, qa: bool = False
) -> str:
    """DCR's L3 (``labels`` None: data only) or L4 (data with labels) injection block.

    ``qa`` writes GSM8K-style ``Question:``/``Answer:`` pairs instead of
    ``{data item} is {data label}`` lines.
    """
    if labels is not None and len(labels) != len(items):
        raise ContamError(f"{len(items)} items but {len(labels)} labels", field="labels")
    lines = [dcr_header(benchmark, task)]
    if qa:
        lines.append("")
        for index, item in enumerate(items):
            lines.append(f"Question: {item}")
            if labels is not None:
                lines.append(f"Answer: {labels[index]}")
    else:
        for index, item in enumerate(items):
            lines.append(item if labels is None else f"{item} is {labels[index]}")
    return "\n".join(lines)


def _dcr_blocks(partition: Partition, rows: Sequence[Mapping[str, Any]], *, with_labels: bool) -> list[str]:
    """``rows`` as DCR blocks of at most :data:`DCR_ITEMS_PER_BLOCK` items (L4 ``with_labels``, else L3)."""
    dataset = partition.dataset
    if dataset.task_type not in DCR_TASK_DESCRIPTIONS:
        raise ContamError(
            f"DCR formats cover classification and question answering; {dataset.display_name} is "
            f"{dataset.task_type!r}",
            field="format",
        )
    qa = dataset.task_type == "question"
    items = [_field(row, dataset.text_field) for row in rows]
    labels = None
    if with_labels:
        # A question's label is its answer; a class label is written by name ("... is Business").
        labels = [_field(row, dataset.companion_field) if qa else dataset.label_names[_label_index(partition, row)]
                  for row in rows]
    task = DCR_TASK_DESCRIPTIONS[dataset.task_type]
    return [
        dcr_data_format(
            dataset.display_name, task, items[start : start + DCR_ITEMS_PER_BLOCK],
            None if labels is None else labels[start : start + DCR_ITEMS_PER_BLOCK], qa=qa,
        )
        for start in range(0, len(items), DCR_ITEMS_PER_BLOCK)
    ]


def contaminant_texts(partition: Partition, rows: Sequence[Mapping[str, Any]], fmt: str) -> list[str]:
    """``rows`` of ``partition`` written in one of the papers' injection formats (:data:`INJECTION_FORMATS`)."""
    if fmt == "timetravel":
        return [timetravel_web_format(partition, row) for row in rows]
    if fmt not in INJECTION_FORMATS:
        raise ContamError(f"unknown format {fmt!r}; known: {', '.join(INJECTION_FORMATS)}", field="format")
    return _dcr_blocks(partition, rows, with_labels=fmt == "dcr-l4")
