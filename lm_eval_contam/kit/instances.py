"""Which rows of a partition a method samples, and how an instance is written.

The quiz-sized sample (:func:`sample_indices`, :data:`DEFAULT_NUM_INSTANCES`) is shared: DCQ quizzes it, the
likelihood modes, the in-context and the option-order tests score it, the injection kit injects it. An instance's
text (:func:`instance_text`) is its text columns, one per line (an NLI pair is its two sentences).

An instance string is one ``"<column>: <value>"`` line per selected column joined
by newlines; a label column is written as the papers write labels,
``index (name)``, e.g. ``label: 1 (Sports)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition, metadata_number
from lm_eval_contam.core.seeding import proportional_shares, rng_for, stable_hash

DEFAULT_NUM_INSTANCES = 100


@dataclass(frozen=True)
class QuizInstance:
    """One instance string and the column whose line must survive perturbation unchanged."""

    text: str
    label_field: str | None = None

    @property
    def key(self) -> str:
        """The options-cache key: a stable hash of the instance string."""
        return instance_key(self.text)

    @property
    def label_line(self) -> str | None:
        return label_line(self.text, self.label_field)


def instance_key(text: str) -> str:
    return stable_hash(text)


def label_line(text: str, label_field: str | None) -> str | None:
    """The ``<label_field>: ...`` line of an instance string (None when unlabelled)."""
    if label_field is None:
        return None
    prefix = f"{label_field}: "
    return next((line for line in text.split("\n") if line.startswith(prefix)), None)


def quiz_label_field(partition: Partition) -> str | None:
    """The label column when the instance string shows it (its line must survive perturbation)."""
    dataset = partition.dataset
    return dataset.label_field if dataset.label_field in dataset.dcq_columns else None


def quiz_instance(partition: Partition, row: Mapping[str, object], *, source: str | None = None) -> QuizInstance:
    """One row as the quiz shows it: ``"<column>: <value>"`` lines, labels as ``index (name)``."""
    dataset, label_field = partition.dataset, quiz_label_field(partition)
    lines = []
    for column in dataset.dcq_columns:
        if column not in row:
            raise ContamError(f"row has no column {column!r}; it has {', '.join(map(str, row))}",
                              source=source, field=column)
        value = row[column]
        if column == label_field and dataset.label_names:
            value = partition.label_text(dataset.label_index(value, source), source)
        lines.append(f"{column}: {value}")
    return QuizInstance("\n".join(lines), label_field)


def text_columns(partition: Partition) -> tuple[str, ...]:
    """The columns whose text is scored: the DCQ instance's columns without the label (shared by many rows)."""
    dataset = partition.dataset
    return tuple(column for column in dataset.dcq_columns if column != dataset.label_field)


def instance_text(partition: Partition, row: Mapping[str, Any], *, source: str | None = None) -> str:
    """The row's text columns, one per line (an NLI pair is its two sentences)."""
    values = []
    for column in text_columns(partition):
        if column not in row:
            raise ContamError(f"no such column; the row has {sorted(row)}", source=source, field=column)
        values.append(str(row[column]))
    return "\n".join(values)


def sample_indices(partition: Partition, rows: Sequence[Mapping[str, object]], num_instances: int,
                   seed: int, *, capped: bool = True) -> list[int]:
    """``num_instances`` row indices of distinct instance texts drawn by a seeded shuffle (all when fewer), ascending;
    at most the dataset's ``sample`` (a benchmark audited with ``--tasks``: ``audit --sample``) unless not ``capped``.

    The shuffle walks the rows in a seeded order and keeps each instance text's first row: identical rows are one
    instance, never quizzed (or scored) as several. Without duplicates this is the first ``num_instances`` of the
    order, as it always was, so earlier samples and their numbers are unchanged. A card naming its rows' subtask
    (``subtask_field``: a group's) walks the order twice: first each subtask up to its quota
    (:func:`subtask_quotas`), then any row, where a subtask is short of distinct texts.
    """
    if num_instances < 1:
        raise ContamError(f"num_instances must be positive, got {num_instances}", field="num_instances")
    if capped:  # the split-control test is not held to the shared sample (its level holds at any size)
        num_instances = min(num_instances, partition.dataset.sample or num_instances)
    order = [int(index) for index in
             rng_for(seed, "dcq", partition.dataset.display_name, partition.split).permutation(len(rows))]
    field = partition.dataset.subtask_field
    quotas = subtask_quotas(rows, num_instances, seed, field) if field is not None else None
    kept: dict[str, int] = {}
    # A group's rows: its subtasks' quotas first, then (a subtask short of distinct texts) the rest fill the sample.
    for within_quotas in ((True, False) if quotas is not None else (False,)):
        for index in order:
            if len(kept) == num_instances:
                break
            subtask = str(rows[index].get(field))
            if within_quotas and quotas[subtask] == 0:
                continue
            text = quiz_instance(partition, rows[index]).text
            if text not in kept:
                kept[text] = index
                if within_quotas:
                    quotas[subtask] -= 1
    return sorted(kept.values())


def subtask_quotas(rows: Sequence[Mapping[str, object]], num_instances: int, seed: int,
                   field: str) -> dict[str, int]:
    """A group's partition (each row names its subtask in ``field``, the card's ``subtask_field``): how many of the
    sample each subtask gets, in proportion to its rows (largest remainder, equal remainders in a seeded order), so
    that a sample of the group, and of its control drawn in the same proportions, holds the subtasks as the group
    does."""
    missing = next((index for index, row in enumerate(rows) if field not in row), None)
    if missing is not None:
        raise ContamError(f"row {missing} has no {field!r}, the column the card names as its rows' subtask",
                          field="subtask_field")
    sizes = Counter(str(row[field]) for row in rows)
    ties = sorted(sizes, key=lambda name: stable_hash(seed, "sample-subtask", name))
    return proportional_shares(sizes, min(num_instances, len(rows)), ties)


def sample_instances(partition: Partition, rows: Sequence[Mapping[str, object]], num_instances: int,
                     seed: int) -> list[QuizInstance]:
    """The instances the quiz asks about, in ascending row order."""
    return [quiz_instance(partition, rows[i]) for i in sample_indices(partition, rows, num_instances, seed)]


def audited_rows(partition: Partition, rows: Sequence[Mapping[str, object]], *,
                 num_instances: int = DEFAULT_NUM_INSTANCES, seed: int = 0) -> list[int]:
    """The row indices the partition's DCQ task quizzes (its default ``num_instances`` and seed)."""
    return sample_indices(partition, rows, num_instances, seed)


def sampled_partition(metadata: Mapping[str, Any], split: str) -> dict[str, Any]:
    """What every partition-level test reads from its task's metadata: its ``partition`` (of ``split``), how many
    instances it samples (``num_instances``) and its ``seed``; a test's settings add their own beside them."""
    partition = Partition.from_task_metadata(metadata, split)
    return {"partition": partition, "num_instances": default_instances(partition, metadata),
            "seed": metadata_number(metadata, "seed", 0)}


@dataclass(frozen=True)
class OwnNumber:
    """The one number a partition-level test reads from its task metadata beside :func:`sampled_partition`'s, e.g.
    the pairing test's ``group_size``: its key (the settings' field too), default and bounds."""

    key: str
    default: int
    minimum: int
    maximum: int


Settings = TypeVar("Settings", bound="SampledSettings")


@dataclass(frozen=True)
class SampledSettings:
    """The settings of a partition-level test that reads what every one reads (:func:`sampled_partition`) and one
    number of its own: a subclass adds that number's field and names it in ``OWN`` (the in-context, pairing and
    sentence-order tests)."""

    partition: Partition
    num_instances: int
    seed: int
    OWN: ClassVar[OwnNumber]

    @classmethod
    def from_metadata(cls: type[Settings], metadata: Mapping[str, Any] | None, split: str) -> Settings:
        metadata, own = dict(metadata or {}), cls.OWN
        return cls(**sampled_partition(metadata, split),
                   **{own.key: metadata_number(metadata, own.key, own.default, minimum=own.minimum,
                                               maximum=own.maximum)})


def default_instances(partition: Partition, metadata: Mapping[str, Any]) -> int:
    """How many instances a test draws: its metadata's ``num_instances``; without one, the dataset's ``sample`` (a
    benchmark audited with ``--tasks``: ``audit --sample``, above the methods' default too) or the default, 100."""
    return metadata_number(metadata, "num_instances", partition.dataset.sample or DEFAULT_NUM_INSTANCES, minimum=1)
