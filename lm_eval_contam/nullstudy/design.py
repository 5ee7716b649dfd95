"""The study's design: worlds (one model each), their datasets, and each partition's role.

A world is one tiny model trained from scratch on English background text plus the
train split of each of its *sibling* datasets, written in Time Travel's web format
(the dataset's name, split and instances). Its null partitions are the held-out
test splits of those datasets (the model learned the dataset's name and style, never
these instances) and both splits of its *unseen* datasets (never seen at all). The
injected train splits are audited too, as a check that the model did learn them;
they never count as null partitions.

What the studies derive from a partition lives here too: a study's audited partition with its role, shape and tasks
(:class:`StudyPartition`), and a multiple-choice partition run as a benchmark (:class:`McPartition`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from lm_eval_contam.core.partitions import Partition

# "filler": a partition audited on the validation study's filler-only fine-tune (never seen by it; the null of the
# reference-differenced tests); "author": one audited on its author fine-tune (never seen by it, though it learned
# the same authors' other split: their conventions).
Role = Literal["unseen", "sibling", "injected", "filler", "author"]
NULL_ROLES: tuple[Role, ...] = ("unseen", "sibling")
# What each null role's partitions are (the rates file's ``null``), and their short names in the README table.
ROLE_NULLS: dict[Role, str] = {
    "unseen": "a dataset the model never saw (neither split, nor its name)",
    "sibling": "the held-out split of a dataset whose other split the model was trained on, with the dataset's name "
               "(Time Travel's web format)",
}
ROLE_NAMES: dict[Role, str] = {"unseen": "unseen dataset", "sibling": "held-out sibling of an injected split",
                               "injected": "injected split (detection, not a null)",
                               "filler": "partition audited on the filler-only fine-tune",
                               "author": "partition audited on a fine-tune on its authors' other split"}


@dataclass(frozen=True)
class StudySettings:
    """The study's size; the defaults are the measured study's (about 45 minutes on 2 shared CPU cores)."""

    worlds: int = 2
    sibling_datasets: int = 12  # per world: train split injected, test split held out
    unseen_datasets: int = 8  # per world: neither split seen
    rows_per_split: int = 30
    background_texts: int = 60
    epochs: int = 6
    learning_rate: float = 3e-3
    n_layer: int = 2
    n_embd: int = 64
    vocab_size: int = 1000
    max_gen_toks: int = 32  # Time Travel completions (the tiny model's lines are short)
    batch_size: int = 16
    seed: int = 0

    @property
    def datasets_per_world(self) -> int:
        return self.sibling_datasets + self.unseen_datasets

    @property
    def null_partitions(self) -> int:
        return self.worlds * (self.sibling_datasets + 2 * self.unseen_datasets)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


# Settings for the test suite: one world with one sibling dataset (its injected train and held-out test split),
# a second of training.
QUICK = StudySettings(worlds=1, sibling_datasets=1, unseen_datasets=0, rows_per_split=10, background_texts=20,
                      epochs=1, n_layer=1, n_embd=32, vocab_size=400, max_gen_toks=2, batch_size=10)


@dataclass(frozen=True)
class StudyPartition:
    """One audited partition of the study: its role on the injected model, its shape, its tasks per pass;
    ``clean_only``: text written after the default model's training cutoff, audited on the clean model only."""

    partition: Partition
    role: Role
    shape: str
    tasks: Mapping[str, tuple[str, ...]]
    clean_only: bool = False


@dataclass(frozen=True)
class McPartition:
    """One multiple-choice partition as a benchmark: its task name, its role on the injected model, its shape and its
    rows (``prompt``: the item rendered as the study injected it / as ``audit --tasks`` shows an authored item)."""

    name: str
    role: Role
    shape: str
    rows: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class PartitionRole:
    world: int
    dataset_index: int
    split: str
    role: Role


def world_roles(settings: StudySettings, world: int) -> list[PartitionRole]:
    """Every audited partition of one world: siblings' train (injected) and test, unseen datasets' both splits."""
    first = world * settings.datasets_per_world
    roles = []
    for offset in range(settings.datasets_per_world):
        index = first + offset
        if offset < settings.sibling_datasets:
            roles += [PartitionRole(world, index, "train", "injected"), PartitionRole(world, index, "test", "sibling")]
        else:
            roles += [PartitionRole(world, index, split, "unseen") for split in ("train", "test")]
    return roles
