"""Which rows of a partition the quiz asks about, and how an instance is written.

An instance string is one ``"<column>: <value>"`` line per selected column joined
by newlines; a label column is written as the papers write labels,
``index (name)``, e.g. ``label: 1 (Sports)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lm_eval_contam.errors import ContamError
from lm_eval_contam.partitions import DatasetSpec, partition_spec
from lm_eval_contam.seeding import rng_for, stable_hash

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


@dataclass(frozen=True)
class QuizPartition:
    """A partition as the quiz names it and the columns its instance strings show."""

    display_name: str  # as the quiz prompt names the dataset, e.g. "AG News"
    split: str  # as the quiz prompt names the split, e.g. "train"
    columns: tuple[str, ...]
    label_field: str | None = None
    label_names: tuple[str, ...] = ()

    # Same "index (name)" rendering as the shared registry (it reads only
    # display_name, label_field and label_names, which this class also has).
    label_text = DatasetSpec.label_text

    @classmethod
    def from_dataset(cls, key: str, split: str) -> QuizPartition:
        """A partition of the shared registry (``lm_eval_contam.partitions``: Hub or sample datasets)."""
        spec = partition_spec(key)
        if split not in spec.splits:
            raise ContamError(f"{spec.display_name} has no audited split {split!r}; known: {', '.join(spec.splits)}",
                              field="split")
        label_field = spec.label_field if spec.label_field in spec.dcq_columns else None
        return cls(spec.display_name, split, spec.dcq_columns, label_field, spec.label_names)

    def instance(self, row: Mapping[str, object], *, source: str | None = None) -> QuizInstance:
        lines = []
        for column in self.columns:
            if column not in row:
                raise ContamError(f"row has no column {column!r}; it has {', '.join(map(str, row))}",
                                  source=source, field=column)
            value = row[column]
            if column == self.label_field and self.label_names:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ContamError(f"label must be an integer index, got {value!r}", source=source, field=column)
                value = self.label_text(value)
            lines.append(f"{column}: {value}")
        return QuizInstance("\n".join(lines), self.label_field)

    def sample_indices(self, n_rows: int, num_instances: int, seed: int) -> list[int]:
        """``num_instances`` row indices drawn by a seeded shuffle (all rows when fewer), ascending."""
        if num_instances < 1:
            raise ContamError(f"num_instances must be positive, got {num_instances}", field="num_instances")
        order = rng_for(seed, "dcq", self.display_name, self.split).permutation(n_rows)
        return sorted(int(i) for i in order[:num_instances])

    def sample(self, rows: Sequence[Mapping[str, object]], num_instances: int, seed: int) -> list[QuizInstance]:
        """The instances the quiz asks about, in ascending row order."""
        return [self.instance(rows[i]) for i in self.sample_indices(len(rows), num_instances, seed)]
