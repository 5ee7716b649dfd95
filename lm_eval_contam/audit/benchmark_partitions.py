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
schema (``--control-data``, split ``control``), rendered by the same templates. With neither, the task's own second
split (:func:`~lm_eval_contam.lmeval.benchmark_docs.second_split`: validation, then train, then fewshot) is the control,
assumed exchangeable with the audited split, once two checks allow it: it shares under half its rows with the audited
docs, and its rendered docs' character lengths do not differ from theirs (:func:`split_lengths_test`; a pair that
differs keeps its control, and the control tests read "not tested: the splits differ"). ``--no-split-control`` turns
this off. The card's ``control`` field says which (:class:`~lm_eval_contam.core.partitions.Control`: kind ``split``,
``file`` or ``none``, its source, and for the task's own split ``assumed`` and the lengths' p).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lm_eval_contam.audit.own_data import CARDS_DIR, DATA_DIR, write_new
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.formatting import p_equals
from lm_eval_contam.core.input_checks import check_control_overlap, too_few_rows
from lm_eval_contam.core.jsonl import jsonl_text, read_jsonl_objects
from lm_eval_contam.core.overlap import CONTROL_OVERLAP_LIMIT, control_overlap
from lm_eval_contam.core.partitions import SUBTASK_FIELD, Control, Partition, slug
from lm_eval_contam.core.seeding import proportional_shares, seeded_order, stable_hash
from lm_eval_contam.core.stats import SPLIT_CHECK_ALPHA, splits_differ, splits_differ_test
from lm_eval_contam.lmeval.benchmark_docs import (
    BenchmarkDoc,
    LoadedBenchmark,
    eval_split,
    rows_docs,
    second_split,
    split_docs,
)

KEY_PREFIX = "task_"  # benchmark partitions' keys never collide with the registered datasets' (e.g. gsm8k)
TEXT_FIELD, ANSWER_FIELD = "text", "answer"
CONTROL_DATA_SPLIT = "control"  # the split name of a --control-data file
# Instances per benchmark partition in the sample the methods draw (all but Time Travel's ten, the reordered score's
# every item and DCR's sheets): the validation study's partition size, so the power it measured is the power of the
# verdict computed; their own default (100) costs about four times as much on a large benchmark (docs/guide/cost.md).
# ``audit --sample N`` changes it; 0: no cap.
BENCHMARK_SAMPLE = 24
# Items per side the split-control tests compare (the likelihood control mode, and on u with a reference): every item
# of both splits up to this cap (a seeded sample of it from a larger split), not the methods' sample. Their level is
# exact whenever the two splits are exchangeable, at any size; the suite shows it at 24, 96, 384 and 2,000 per side
# (tests/test_split_label_level.py). One rolling pass per item per side: on a 1,000-item benchmark with a 1,000-item
# second split, 2.16 benchmarks' worth of tokens (docs/guide/cost.md). ``audit --control-items N`` changes it.
CONTROL_ITEMS = 2000


def requested_control(split: str | None = None, data: str | None = None, *, task_split: bool = True) -> Control | None:
    """The control ``--tasks`` asks for: a split of the task's dataset (``--control-split``), a JSONL file of its docs
    read as split ``control`` (``--control-data``), none (``--no-split-control``), or None: the task's own second
    split, chosen per task (:func:`task_split_control`)."""
    if split is not None and data is not None:
        raise ContamError("with --tasks give one control: --control-split (a split of the task's dataset) or "
                          "--control-data (a JSONL file of the task's docs)", field="--control-split")
    if split is not None:
        return Control.of_split(split)
    if data is not None:
        return Control("file", data, CONTROL_DATA_SPLIT)
    return None if task_split else Control()


NO_CONTROL = Control()  # --no-split-control: no control unless a flag names one
NO_SECOND_SPLIT = "no second split: the with-control verdict is not computed"


@dataclass(frozen=True)
class PartitionCardDraft:
    """One (sub)task's partition card before it is written: the rows and control the card and its data files will
    hold (nothing is written until every task of the audit is derived; core's Partition reads the card back)."""

    group: str  # the name given to --tasks (a plain task is its own group)
    task: str
    split: str  # the task's evaluation split
    rows: tuple[dict[str, Any], ...]
    # Its control (core's one control type: a split of the task's dataset, a --control-data file read as split
    # ``control``, or none) and its rendered rows.
    control: Control = Control()
    control_rows: tuple[dict[str, Any], ...] = ()
    sample: int | None = BENCHMARK_SAMPLE  # the card's ``sample`` (None: the methods' own sample sizes)
    control_items: int = CONTROL_ITEMS  # the card's ``control_items``: the split-control tests' items per side
    output_type: str | None = None  # the task's lm-eval output_type (the card's ``benchmark_output_type``)
    no_control: str | None = None  # why the task's own second split is not the control, when no flag named one
    # A group's partition (:func:`group_partition`): the subtasks its rows are drawn across (each row names its
    # ``subtask``); empty for a task's own.
    subtasks: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.task} {self.split}"

    def statement(self) -> str | None:
        """What the audit took as the control when no flag named one, in one line (None: a flag named it, or
        ``--no-split-control``)."""
        if self.no_control is not None:
            return f"{self.label}: {self.no_control}"
        if self.control.lengths_pvalue is None:
            return None
        lengths = f"character lengths: Mann-Whitney U {p_equals(self.control.lengths_pvalue)}"
        whose = "the subtasks'" if self.subtasks else "the task's"
        if splits_differ(self.control.lengths_pvalue):  # the whole splits' lengths: the items compared decide
            return (f"{self.label}: control: {whose} {self.control.split} split; its whole split differs from "
                    f"{self.split} ({lengths} <= {SPLIT_CHECK_ALPHA:g}): the control tests check the items they "
                    "compare first, and read \"not tested: the splits differ\" if those differ too")
        return (f"{self.label}: control: {whose} {self.control.split} split, assumed exchangeable with "
                f"{self.split}; a model trained on it loses power, never level ({lengths})")

    @property
    def key(self) -> str:
        """``task_<slug>``; a name with letters the slug drops (not ASCII, e.g. Cyrillic) gets its hash too, or two
        such tasks would both be ``task_data``."""
        dropped = any(char.isalnum() and not char.isascii() for char in self.task)
        return KEY_PREFIX + slug(self.task) + (f"_{stable_hash('benchmark-key', self.task)[:8]}" if dropped else "")

    def card(self, out_dir: Path) -> dict[str, Any]:
        """The partition card's fields (data files under ``out_dir``)."""
        # Relative to the card's folder (the card resolves them there): the audit directory can be moved or copied.
        cards = (out_dir / CARDS_DIR).resolve()
        splits = [self.split] + ([self.control.split] if self.control.split is not None else [])
        files = {split: os.path.relpath(data_path(out_dir, self.key, split), cards) for split in splits}
        return {"dataset_name": self.task, "key": self.key, "split": self.split, "data_files": files,
                "task_type": "question", "text_field": TEXT_FIELD, "label_field": ANSWER_FIELD,
                "columns": [TEXT_FIELD, ANSWER_FIELD], "companion_field": ANSWER_FIELD,
                **({"sample": self.sample} if self.sample is not None else {}),
                **({"control_items": self.control_items} if self.control.split is not None else {}),
                **({"benchmark_output_type": self.output_type} if self.output_type is not None else {}),
                **({"subtask_field": SUBTASK_FIELD} if self.subtasks else {}),
                **({"control": self.control.card_fields()} if self.control.split is not None else {})}


def data_path(out_dir: Path, key: str, split: str) -> Path:
    return (out_dir / DATA_DIR / f"{key}_{split}.jsonl").resolve()


def card_path(out_dir: Path, key: str, split: str) -> Path:
    return out_dir / CARDS_DIR / f"{key}_{split}.yaml"


def doc_row(doc: BenchmarkDoc) -> dict[str, Any]:
    """A rendered doc as a partition row."""
    return {TEXT_FIELD: doc.text, ANSWER_FIELD: doc.target, "choices": list(doc.choices), "doc_index": doc.index}


def split_lengths_test(texts: Sequence[str], control_texts: Sequence[str]) -> Any:
    """Whether two splits' rendered docs differ in length: the two-sided Mann-Whitney U test of their character
    lengths (:func:`~lm_eval_contam.core.stats.splits_differ_test`; H0: both splits' lengths are draws of one
    distribution, as two random splits of one pool are)."""
    return splits_differ_test([len(text) for text in texts], [len(text) for text in control_texts])


def derive_partition(group: str, name: str, task: Any, docs: Sequence[BenchmarkDoc],
                     control: Control | None = None, sample: int | None = BENCHMARK_SAMPLE,
                     control_items: int = CONTROL_ITEMS) -> PartitionCardDraft:
    """One (sub)task's partition from its rendered evaluation ``docs``, and its control's rows, rendered by the task's
    own templates; ``sample``: the card's cap on the methods' sample (None: none). ``control``: as
    :func:`requested_control` gives it (None: the task's own second split, :func:`task_split_control`)."""
    split = eval_split(task)
    rows = tuple(doc_row(doc) for doc in docs)
    output_type = docs[0].output_type if docs else None  # one task's docs share its output_type
    alone = PartitionCardDraft(group, name, split, rows, sample=sample, output_type=output_type,
                               control_items=control_items)
    if control is None or control.kind == "none":
        return task_split_control(alone, task) if control is None else alone
    if control.kind == "split":
        if control.split == split:
            raise ContamError(f"the control split must differ from the evaluated split {split!r}", source=name,
                              field="--control-split")
        docs = split_docs(name, task, str(control.split))
    else:
        path = Path(str(control.source)).expanduser()
        if path.suffix.lower() != ".jsonl" or not path.is_file():
            raise ContamError("expected an existing .jsonl file of the task's docs", source=str(control.source),
                              field="--control-data")
        docs = rows_docs(name, task, read_jsonl_objects(path), str(control.source))
        if control.split == split:
            raise ContamError(f"the task evaluates a split named {split!r}; use --control-split", source=name,
                              field="--control-data")

    control_rows = tuple(doc_row(doc) for doc in docs)
    field = "--control-split" if control.kind == "split" else "--control-data"
    few = too_few_rows(len(rows), f"the evaluated split {split!r}") or too_few_rows(len(control_rows), "the control")
    if few:
        raise ContamError(f"{few}: the with-control verdict cannot be computed", source=name, field=field)
    overlap = check_control_overlap([row[TEXT_FIELD] for row in rows], [row[TEXT_FIELD] for row in control_rows],
                                    source=name, field=field)
    return replace(alone, control=replace(control, overlap=overlap), control_rows=control_rows)


def assumed_split(split: str, texts: Sequence[str], control_texts: Sequence[str]) -> Control:
    """The task's own ``split`` taken as the control with no flag, with the lengths' test of the texts the control
    tests compare (:func:`split_lengths_test`) and their overlap (:func:`~lm_eval_contam.core.overlap.control_overlap`,
    measured once, here)."""
    return Control("split", split, split, assumed=True,
                   lengths_pvalue=float(split_lengths_test(texts, control_texts).pvalue),
                   overlap=control_overlap(texts, control_texts))


def task_split_control(partition: PartitionCardDraft, task: Any) -> PartitionCardDraft:
    """The partition with the task's own second split as its control (:func:`second_split`), drawn from the same pool
    by the benchmark's authors and assumed exchangeable with the audited split: a model trained on it scores both
    high and the control tests lose power, never level. Not taken, saying why (``no_control``), when the task names
    none, when its docs cannot be rendered, or when it shares half its rows or more with the audited docs (it is
    the audited data). Taken, it carries its lengths' test (:func:`split_lengths_test`): a pair that differs keeps the
    control on its card and reads "not tested: the splits differ" in the control tests' verdicts."""
    chosen = second_split(task)
    if chosen is None:
        return replace(partition, no_control=NO_SECOND_SPLIT)
    try:
        control_rows = tuple(doc_row(doc) for doc in split_docs(partition.task, task, chosen))
    except ContamError as error:
        return replace(partition, no_control=f"the task's {chosen} split cannot be a control ({error.reason}): the "
                                             "with-control verdict is not computed")
    few = too_few_rows(len(partition.rows), f"the task's {partition.split} split") or too_few_rows(
        len(control_rows), f"the task's {chosen} split")
    if few:
        return replace(partition, no_control=f"{few}: the with-control verdict is not computed")
    control = assumed_split(chosen, [row[TEXT_FIELD] for row in partition.rows],
                            [row[TEXT_FIELD] for row in control_rows])
    overlap = control.overlap
    if overlap is not None and overlap.share >= CONTROL_OVERLAP_LIMIT:
        return replace(partition, no_control=f"the task's {chosen} split is not a control ({overlap.describe()}, "
                                             f"{CONTROL_OVERLAP_LIMIT:.0%} or more): the with-control verdict is not "
                                             "computed")
    return replace(partition, control_rows=control_rows, control=control)


def group_rows(parts: Sequence[PartitionCardDraft], sample: int | None, ties: Sequence[str]) -> int:
    """How many rows a group's partition draws across its subtasks: its ``sample`` (None: every row); where every
    subtask has a control of one split name (the group's control), as many more as its split-control tests compare (up to ``control_items`` a side) while
    each subtask's share still fits its control split, so that both sides hold the subtasks in the same proportions
    (MMLU: about 1,120 rows a side, bound by college_chemistry's 8 validation rows beside its 100 test rows, where the
    sample alone compared 24)."""
    sizes = {part.task: len(part.rows) for part in parts}
    total = sum(sizes.values())
    wanted = total if sample is None else min(sample, total)
    if len({part.control.split for part in parts}) != 1 or parts[0].control.split is None or not total:
        return wanted  # no control for the group (group_partition: one split name for every subtask): no extra rows

    def fits(rows: int) -> bool:
        shares = proportional_shares(sizes, rows, ties)
        return all(shares[part.task] <= len(part.control_rows) for part in parts)

    # the largest size whose shares fit (largest remainder can move a share down as the size grows: step down)
    bound = min([parts[0].control_items, total] + [len(part.control_rows) * total // sizes[part.task]
                                                     for part in parts if sizes[part.task]])
    candidate = max(bound, wanted)
    while candidate > wanted and not fits(candidate):
        candidate -= 1
    return candidate


def group_partition(group: str, parts: Sequence[PartitionCardDraft], sample: int | None, *,
                    seed: int = 0) -> PartitionCardDraft:
    """One partition for a group's subtasks (``parts``, each derived with its control): :func:`group_rows` rows
    drawn across the subtasks in proportion to their sizes (largest remainder, equal remainders in a seeded order),
    each subtask's rows in an order seeded by ``seed`` and the row's identity (group, subtask, position); its control
    the same number of rows from each subtask's control, so both sides hold the subtasks in the same proportions.

    Its tests' verdicts describe the group: one sample, one set of tests, instead of one per subtask (docs/guide/cost.md).
    The control is the subtasks' when every subtask has one from the same split (or file), with the overlap of the two
    drawn sides, the rows the control tests compare; a control the audit chose itself (the task's own second split)
    carries their lengths' test too."""
    first = parts[0]
    sizes = {part.task: len(part.rows) for part in parts}
    ties = sorted(sizes, key=lambda name: stable_hash(seed, "benchmark-group", group, name))
    shares = proportional_shares(sizes, group_rows(parts, sample, ties), ties)

    def drawn(part: PartitionCardDraft, rows: Sequence[dict[str, Any]], side: str) -> list[dict[str, Any]]:
        order = seeded_order(len(rows), seed, "benchmark-group", group, side, part.task)
        return [{**rows[position], SUBTASK_FIELD: part.task} for position in sorted(order[: shares[part.task]])]

    rows = tuple(row for part in parts for row in drawn(part, part.rows, first.split))
    partition = PartitionCardDraft(first.group, group, first.split, rows, sample=sample, output_type=first.output_type,
                                   subtasks=tuple(sizes), control_items=first.control_items)
    without = next((part for part in parts if part.control.split is None), None)
    if without is not None:
        return replace(partition, no_control=without.no_control and f"subtask {without.task}: {without.no_control}")
    splits = sorted({str(part.control.split) for part in parts})
    if len(splits) > 1:
        return replace(partition, no_control=f"the subtasks' controls are different splits ({', '.join(splits)}): "
                                             "the with-control verdict is not computed")
    short = next((part for part in parts if len(part.control_rows) < shares[part.task]), None)
    if short is not None:  # fewer control rows of one subtask would weigh the sides' subtasks differently
        return replace(partition, no_control=(
            f"subtask {short.task}'s {short.control.split} split has {len(short.control_rows)} row(s), fewer than its "
            f"share of the group's sample ({shares[short.task]}): the control cannot hold the subtasks in the audited "
            "side's proportions, and the with-control verdict is not computed"))
    control_rows = tuple(row for part in parts for row in drawn(part, part.control_rows, str(part.control.split)))
    texts, control_texts = [row[TEXT_FIELD] for row in rows], [row[TEXT_FIELD] for row in control_rows]
    control = (assumed_split(str(first.control.source), texts, control_texts) if first.control.assumed
               else replace(first.control, overlap=control_overlap(texts, control_texts)))
    return replace(partition, control=control, control_rows=control_rows)


def groupable(parts: Sequence[PartitionCardDraft]) -> bool:
    """Whether a ``--tasks`` name's subtasks make one partition: a group of two or more subtasks with docs, all of
    one output type and evaluation split (a mixed group keeps one partition per subtask)."""
    return (len(parts) > 1 and all(part.rows for part in parts)
            and len({(part.output_type, part.split) for part in parts}) == 1)


def derive_partitions(loaded: Mapping[str, LoadedBenchmark], control: Control | None = None,
                      sample: int | None = BENCHMARK_SAMPLE, *, per_subtask: bool = False,
                      seed: int = 0, control_items: int = CONTROL_ITEMS) -> list[PartitionCardDraft]:
    """The partitions of :func:`~lm_eval_contam.lmeval.benchmark_docs.load_tasks`' result, in its order: a plain
    task's own; a group's one drawn across its subtasks (:func:`group_partition`), or with ``per_subtask`` (or a
    group that is not :func:`groupable`) one per subtask."""
    found = []
    for group, benchmark in loaded.items():
        parts = [derive_partition(group, name, task, benchmark.docs[name], control, sample, control_items)
                 for name, task in benchmark.items()]
        grouped = not per_subtask and groupable(parts)
        found += [group_partition(group, parts, sample, seed=seed)] if grouped else parts
    seen: dict[str, str] = {}
    for partition in found:
        other = seen.setdefault(partition.key, partition.task)
        if other != partition.task:
            raise ContamError(f"tasks {other!r} and {partition.task!r} map to the same partition key "
                              f"{partition.key!r}", source=partition.task, field="--tasks")
    unique: dict[tuple[str, str], PartitionCardDraft] = {}
    for partition in found:  # a task named alone and in a group is audited once, under the first name given
        unique.setdefault((partition.task, partition.split), partition)
    return list(unique.values())


def write_partition(partition: PartitionCardDraft, out_dir: Path) -> Path:
    """The partition's rows (and its control's) as JSONL and its card under ``out_dir``; the card's path.

    Files that exist with the same content are kept; with other content they stop the audit (nothing is overwritten).
    """
    import yaml

    card = partition.card(out_dir)
    path = card_path(out_dir, partition.key, partition.split)
    Partition.from_card_fields(card, path)  # the card is valid before anything is written
    write_new(data_path(out_dir, partition.key, partition.split), jsonl_text(partition.rows))
    if partition.control.split is not None:
        write_new(data_path(out_dir, partition.key, partition.control.split), jsonl_text(partition.control_rows))
    what = (f"{len(partition.rows)} rendered evaluation docs drawn across the {len(partition.subtasks)} subtasks of "
            f"lm-eval group {partition.task!r}" if partition.subtasks else
            f"the rendered evaluation docs of lm-eval task {partition.task!r} ({partition.group})")
    text = f"# Written by `lm-eval-contam audit --tasks`: {what}.\n" + yaml.safe_dump(card, sort_keys=False,
                                                                                     allow_unicode=True)
    return write_new(path, text)
