"""From dataset rows to Time Travel docs: partition description, seeded sampling, pieces and prompts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, get_args

from tqdm import tqdm

from lm_eval_contam.errors import ContamError
from lm_eval_contam.partitions import TaskType
from lm_eval_contam.seeding import rng_for
from lm_eval_contam.timetravel.prompts import PromptStyle, render_prompt
from lm_eval_contam.timetravel.split import split_text

DEFAULT_NUM_INSTANCES = 10  # the paper's sample per partition


@dataclass(frozen=True)
class Partition:
    """What the prompts name and which columns hold the instance (task metadata in the YAMLs)."""

    dataset_name: str  # as written in prompts, e.g. "AG News"
    split_name: str  # e.g. "train", "test", "validation"
    task_type: str  # cls | nli | sum | xsum | question
    text_field: str  # the column that is cut (sentence1 for nli)
    second_field: str | None = None  # nli only: the reference column (sentence2)
    label_field: str | None = None
    label_names: tuple[str, ...] = ()

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], source: str) -> "Partition":
        known = {f.name for f in fields(cls)}
        values = {key: metadata[key] for key in known if metadata.get(key) is not None}
        for required in ("dataset_name", "split_name", "task_type", "text_field"):
            if required not in values:
                raise ContamError("missing in the task's metadata", source=source, field=required)
        if values["task_type"] not in get_args(TaskType):
            raise ContamError(
                f"{values['task_type']!r} is not one of {', '.join(get_args(TaskType))}", source=source, field="task_type"
            )
        if values["task_type"] == "nli" and "second_field" not in values:
            raise ContamError("nli partitions need the reference column", source=source, field="second_field")
        values["label_names"] = tuple(str(name) for name in values.get("label_names", ()))
        return cls(**values)

    @property
    def labelled(self) -> bool:
        return self.task_type in ("cls", "nli")


def label_text(value: Any, label_names: Sequence[str], source: str = "dataset") -> str:
    """A label as the paper writes it, ``index (name)``; a name is looked up, other values pass through."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ContamError(f"label {value!r} is neither an index nor a name", source=source, field="label")
    if isinstance(value, int) and label_names:
        if not 0 <= value < len(label_names):
            raise ContamError(f"label {value!r} is outside 0..{len(label_names) - 1}", source=source, field="label")
        return f"{value} ({label_names[value]})"
    if isinstance(value, str) and value in label_names:
        return f"{label_names.index(value)} ({value})"
    return str(value)


def build_doc(
    row: Mapping[str, Any], row_index: int, partition: Partition, *, seed: int, style: str
) -> dict[str, Any] | None:
    """One doc with both pieces and both prompts; ``None`` when the text cannot be cut."""
    source = f"{partition.dataset_name} {partition.split_name} row {row_index}"
    for column in (partition.text_field, partition.second_field, partition.label_field if partition.labelled else None):
        if column is not None and column not in row:
            raise ContamError(f"no such column; the row has {sorted(row)}", source=source, field=column)
    text = str(row[partition.text_field])
    if partition.task_type == "nli":
        first_piece, second_piece = text.strip(), str(row[partition.second_field]).strip()
        cut = {"split_unit": "sentence", "n_units": 2, "cut": 1, "drawn_fraction": None}
    else:
        split = split_text(text, seed=seed, identity=(partition.dataset_name, partition.split_name, row_index))
        if split is None:
            return None
        first_piece, second_piece = split.first_piece, split.second_piece
        cut = {"split_unit": split.unit, "n_units": split.n_units, "cut": split.cut, "drawn_fraction": split.drawn_fraction}
    prompt_fields = {"split_name": partition.split_name, "dataset_name": partition.dataset_name, "first_piece": first_piece}
    if partition.labelled and partition.label_field:
        prompt_fields["label"] = label_text(row[partition.label_field], partition.label_names, source)
    return {
        "row_index": row_index,
        "first_piece": first_piece,
        "reference": second_piece,
        "label": prompt_fields.get("label", ""),
        **cut,
        "guided_prompt": render_prompt("guided", partition.task_type, style, **prompt_fields),
        "general_prompt": render_prompt("general", partition.task_type, style, **prompt_fields),
    }


def sample_docs(
    rows: Sequence[Mapping[str, Any]],
    partition: Partition,
    *,
    num_instances: int = DEFAULT_NUM_INSTANCES,
    seed: int = 0,
    style: str = "instruct",
) -> list[dict[str, Any]]:
    """``num_instances`` docs in a seeded shuffle order, skipping rows too short to cut.

    The draw depends only on the seed, the partition's names and the row count,
    so every rerun and every data-parallel rank picks the same instances.
    """
    if style not in get_args(PromptStyle):
        raise ContamError(f"{style!r} is not one of {', '.join(get_args(PromptStyle))}", field="prompt_style")
    if num_instances < 1:
        raise ContamError(f"must be >= 1, got {num_instances!r}", field="num_instances")
    order = rng_for(seed, "timetravel-sample", partition.dataset_name, partition.split_name).permutation(len(rows))
    docs: list[dict[str, Any]] = []
    with tqdm(total=min(num_instances, len(rows)), desc=f"timetravel {partition.dataset_name} {partition.split_name}") as bar:
        for row_index in order:
            doc = build_doc(rows[int(row_index)], int(row_index), partition, seed=seed, style=style)
            if doc is not None:
                docs.append(doc)
                bar.update()
            if len(docs) == num_instances:
                break
    if not docs:
        raise ContamError("no row has text long enough to cut into two pieces", source=partition.dataset_name,
                          field=partition.text_field)
    return docs
