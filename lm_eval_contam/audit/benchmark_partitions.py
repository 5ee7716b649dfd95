"""A benchmark (an lm-eval task given to ``audit --tasks``) as a partition: its rendered evaluation docs, written
like one's own data.

``audit --tasks arc_easy,mmlu`` needs no column mapping: each (sub)task's evaluation docs are rendered with the
task's own templates (:mod:`lm_eval_contam.lmeval.benchmark_docs`) and become rows ``{"text", "answer", "choices",
"doc_index"}`` (text = ``doc_to_text`` as the model sees it, answer = the gold answer as text). Under the audit
directory they are written as ``data/<key>_<split>.jsonl`` with a partition card ``partitions/<key>_<split>.yaml``
(:class:`~lm_eval_contam.core.partitions.Partition`, key ``task_<task name>``), so every method reads them like one's
own data: Time Travel cuts ``text``; DCQ quizzes ``text`` + ``answer`` and keeps the answer line unperturbed; the
likelihood modes score ``text``.

A control (the likelihood modes' partition of the same distribution the model cannot have seen) is a second split
of the same card: another split of the task's dataset (``--control-split``) or a JSONL file of docs in the task's
schema (``--control-data``, split ``control``), rendered by the same templates. The card's ``control`` field says
which (:class:`~lm_eval_contam.core.partitions.Control`: kind ``split``, ``file`` or ``none``, and its source).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, LoadedBenchmark, eval_split, rows_docs, split_docs
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import check_control_overlap
from lm_eval_contam.core.jsonl import jsonl_text, read_jsonl_objects
from lm_eval_contam.audit.own_data import CARDS_DIR, DATA_DIR, write_new
from lm_eval_contam.core.partitions import Control, Partition, slug

KEY_PREFIX = "task_"  # benchmark partitions' keys never collide with the registered datasets' (e.g. gsm8k)
TEXT_FIELD, ANSWER_FIELD = "text", "answer"
CONTROL_DATA_SPLIT = "control"  # the split name of a --control-data file
# Instances per benchmark partition in the sample the methods draw (all but Time Travel's ten, the reordered score's
# every item and DCR's sheets): the validation study's partition size, so the power it measured is the power of the
# verdict computed; their own default (100) costs about four times as much on a large benchmark (docs/cost.md).
# ``audit --sample N`` changes it; 0: no cap.
BENCHMARK_SAMPLE = 24


@dataclass(frozen=True)
class BenchmarkControl:
    """Where a benchmark partition's control comes from: a split of the task's dataset, or a file of its docs."""

    split: str | None = None
    data: str | None = None

    def __post_init__(self) -> None:
        if self.split is not None and self.data is not None:
            raise ContamError("with --tasks give one control: --control-split (a split of the task's dataset) or "
                              "--control-data (a JSONL file of the task's docs)", field="--control-split")


@dataclass(frozen=True)
class BenchmarkPartition:
    """One (sub)task's derived partition, in memory: nothing is written until every task of the audit is derived."""

    group: str  # the name given to --tasks (a plain task is its own group)
    task: str
    split: str  # the task's evaluation split
    rows: tuple[dict[str, Any], ...]
    control_split: str | None = None
    control_rows: tuple[dict[str, Any], ...] = ()
    control_file: str | None = None  # --control-data as given (the control's source), when the control is a file
    sample: int | None = BENCHMARK_SAMPLE  # the card's ``sample`` (None: the methods' own sample sizes)
    output_type: str | None = None  # the task's lm-eval output_type (the card's ``benchmark_output_type``)

    @property
    def control(self) -> Control:
        if self.control_split is None:
            return Control()
        return Control("file", self.control_file, self.control_split) if self.control_file else Control.of_split(
            self.control_split)

    @property
    def key(self) -> str:
        return KEY_PREFIX + slug(self.task)

    def card(self, out_dir: Path) -> dict[str, Any]:
        """The partition card's fields (data files under ``out_dir``)."""
        # Relative to the card's folder (the card resolves them there): the audit directory can be moved or copied.
        cards = (out_dir / CARDS_DIR).resolve()
        splits = [self.split] + ([self.control_split] if self.control_split is not None else [])
        files = {split: os.path.relpath(data_path(out_dir, self.key, split), cards) for split in splits}
        return {"dataset_name": self.task, "key": self.key, "split": self.split, "data_files": files,
                "task_type": "question", "text_field": TEXT_FIELD, "label_field": ANSWER_FIELD,
                "columns": [TEXT_FIELD, ANSWER_FIELD], "companion_field": ANSWER_FIELD,
                **({"sample": self.sample} if self.sample is not None else {}),
                **({"benchmark_output_type": self.output_type} if self.output_type is not None else {}),
                **({"control": self.control.card_fields()} if self.control_split is not None else {})}


def data_path(out_dir: Path, key: str, split: str) -> Path:
    return (out_dir / DATA_DIR / f"{key}_{split}.jsonl").resolve()


def card_path(out_dir: Path, key: str, split: str) -> Path:
    return out_dir / CARDS_DIR / f"{key}_{split}.yaml"


def doc_row(doc: BenchmarkDoc) -> dict[str, Any]:
    """A rendered doc as a partition row."""
    return {TEXT_FIELD: doc.text, ANSWER_FIELD: doc.target, "choices": list(doc.choices), "doc_index": doc.index}


def derive_partition(group: str, name: str, task: Any, docs: Sequence[BenchmarkDoc],
                     control: BenchmarkControl | None = None, sample: int | None = BENCHMARK_SAMPLE) -> BenchmarkPartition:
    """One (sub)task's partition from its rendered evaluation ``docs``, and its control's rows, rendered by the task's
    own templates; ``sample``: the card's cap on the methods' sample (None: none)."""
    split = eval_split(task)
    rows = tuple(doc_row(doc) for doc in docs)
    output_type = docs[0].output_type if docs else None  # one task's docs share its output_type
    if control is None or (control.split is None and control.data is None):
        return BenchmarkPartition(group, name, split, rows, sample=sample, output_type=output_type)
    if control.split is not None:
        if control.split == split:
            raise ContamError(f"the control split must differ from the evaluated split {split!r}", source=name,
                              field="--control-split")
        docs = split_docs(name, task, control.split)
        control_split = control.split
    else:
        path = Path(str(control.data)).expanduser()
        if path.suffix.lower() != ".jsonl" or not path.is_file():
            raise ContamError("expected an existing .jsonl file of the task's docs", source=str(control.data),
                              field="--control-data")
        docs = rows_docs(name, task, read_jsonl_objects(path), str(control.data))
        control_split = CONTROL_DATA_SPLIT
        if control_split == split:
            raise ContamError(f"the task evaluates a split named {split!r}; use --control-split", source=name,
                              field="--control-data")

    control_rows = tuple(doc_row(doc) for doc in docs)
    check_control_overlap([row[TEXT_FIELD] for row in rows], [row[TEXT_FIELD] for row in control_rows], source=name,
                          field="--control-split" if control.split is not None else "--control-data")
    return BenchmarkPartition(group, name, split, rows, control_split, control_rows,
                              None if control.data is None else str(control.data), sample, output_type)


def derive_partitions(loaded: Mapping[str, LoadedBenchmark], control: BenchmarkControl | None = None,
                      sample: int | None = BENCHMARK_SAMPLE) -> list[BenchmarkPartition]:
    """Every subtask's partition of :func:`~lm_eval_contam.lmeval.benchmark_docs.load_tasks`' result, in its order."""
    found = [derive_partition(group, name, task, benchmark.docs[name], control, sample)
             for group, benchmark in loaded.items()
             for name, task in benchmark.items()]
    seen: dict[str, str] = {}
    for partition in found:
        other = seen.setdefault(partition.key, partition.task)
        if other != partition.task:
            raise ContamError(f"tasks {other!r} and {partition.task!r} map to the same partition key "
                              f"{partition.key!r}", source=partition.task, field="--tasks")
    unique: dict[tuple[str, str], BenchmarkPartition] = {}
    for partition in found:  # a task named alone and in a group is audited once, under the first name given
        unique.setdefault((partition.task, partition.split), partition)
    return list(unique.values())


def write_partition(partition: BenchmarkPartition, out_dir: Path) -> Path:
    """The partition's rows (and its control's) as JSONL and its card under ``out_dir``; the card's path.

    Files that exist with the same content are kept; with other content they stop the audit (nothing is overwritten).
    """
    import yaml

    card = partition.card(out_dir)
    path = card_path(out_dir, partition.key, partition.split)
    Partition.from_card_fields(card, path)  # the card is valid before anything is written
    write_new(data_path(out_dir, partition.key, partition.split), jsonl_text(partition.rows))
    if partition.control_split is not None:
        write_new(data_path(out_dir, partition.key, partition.control_split), jsonl_text(partition.control_rows))
    text = (f"# Written by `lm-eval-contam audit --tasks`: the rendered evaluation docs of lm-eval task "
            f"{partition.task!r} ({partition.group}).\n") + yaml.safe_dump(card, sort_keys=False, allow_unicode=True)
    return write_new(path, text)
