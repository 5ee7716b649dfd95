"""The one partition concept every method, the injection kit and the report share.

A :class:`DatasetSpec` describes a dataset: where it lives (a Hub dataset, a
shipped sample or a user's files), how the papers name it in prompts, which
columns hold the text and how labels are written (``index (name)``, e.g.
``2 (Business)``). A :class:`Partition` is a dataset plus a split, named
``<dataset key>:<split>``. Every method's task YAML describes its partition with
the same metadata keys (:meth:`Partition.from_task_metadata`): ``dataset`` (a
registered key), or for one's own data ``dataset_name`` + ``data_files`` (split
-> JSONL) + ``text_field`` (default: the first of ``columns``) [+ ``task_type``, ``second_field``, ``label_field``,
``label_names``, ``columns``, ``companion_field``, ``key`` (the key in task names; default: the name's slug),
``sample`` (the number of instances in the shared sample the methods draw, at most, :func:`~lm_eval_contam.kit.instances.
sample_indices`; ``audit --tasks`` writes it: ``--sample``)]; a Hub
dataset of one's own gives ``hf_path`` [+ ``hf_name``] instead of ``data_files``. An lm-eval task audited with
``audit --tasks`` is one's own data too: its rendered docs are written as JSONL under the audit directory and
described by a card (``lm_eval_contam.audit.benchmark_partitions``). A *partition card* (:meth:`Partition.from_card`) is a YAML file with the same keys plus
``split`` and ``control`` (:class:`Control`: ``{kind: split, source: <split>}``, ``{kind: file, source: <file>, split:
<split>}`` or ``{kind: none}``; required when the card has splits besides ``split``; ``audit --tasks`` adds ``assumed:
true`` and ``lengths_pvalue`` to the task's own second split it chose, and the audit the control's ``overlap`` with the
audited rows it measured): the one way every command takes one's own data. A task YAML of a partition with a control
carries the same mapping as metadata ``control``, read by the same parser (:func:`card_control`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import task_dir
from lm_eval_contam.core.jsonl import read_jsonl_objects
from lm_eval_contam.core.overlap import CONTROL_OVERLAP_LIMIT, ControlOverlap

TaskType = Literal["cls", "nli", "sum", "xsum", "question"]
# lm-eval's output types the project audits (a benchmark's task, a method's applicability).
OUTPUT_TYPES = ("multiple_choice", "generate_until", "loglikelihood", "loglikelihood_rolling")
# The metadata keys that describe one's own data (beside `dataset` for a registered one).
USER_DATA_KEYS = ("dataset_name", "key", "data_files", "hf_path", "hf_name", "task_type", "text_field", "second_field",
                  "label_field", "label_names", "columns", "companion_field", "sample", "control_items",
                  "benchmark_output_type", "subtask_field")
CARD_SUFFIXES = (".yaml", ".yml")
ControlKind = Literal["split", "file", "none"]
CONTROL_KEYS = ("kind", "source", "split", "assumed", "lengths_pvalue", "overlap")
OVERLAP_KEYS = ("shared", "near", "rows")
SUBTASK_FIELD = "subtask"  # the column of a group's partition row naming the subtask it was drawn from


@dataclass(frozen=True)
class Control:
    """A partition's control: the likelihood modes' partition of the same distribution the model cannot have seen.

    ``split``: another split of the same dataset (``source``: its name); ``file``: a file of such rows (``source``: the
    file as the user gave it), read as the dataset's split ``split``; ``none``: no control (the likelihood modes
    compare nothing, only the lift mode is tested).

    ``assumed``: a split ``audit --tasks`` chose itself (the task's own second split, no flag given), assumed
    exchangeable with the audited one; ``lengths_pvalue`` then holds the two-sided Mann-Whitney p of the two splits'
    rendered docs' character lengths (:func:`~lm_eval_contam.core.stats.splits_differ_test`), which the verdicts read.
    ``overlap``: its rows that are audited rows, or near copies of one (:mod:`lm_eval_contam.core.overlap`), measured
    once per audit where the control is chosen; None where not measured (a registered dataset's sibling split).

    The one form of the control from the card to the verdicts: the card's ``control`` mapping (:meth:`card_fields`)
    is what every task YAML of the partition carries too (metadata ``control``), read back by :func:`card_control`.
    """

    kind: ControlKind = "none"
    source: str | None = None
    split: str | None = None  # the dataset split holding the control's rows (kind split: ``source`` itself)
    assumed: bool = False
    lengths_pvalue: float | None = None
    overlap: ControlOverlap | None = None

    @classmethod
    def of_split(cls, split: str) -> Control:
        return cls("split", split, split)

    def describe(self) -> str:
        """In words, for verdicts: ``split validation``, ``file fresh.jsonl (as split fresh)``, ``none``; a split
        chosen without a flag says what it rests on."""
        if self.kind == "file":
            return f"file {self.source} (as split {self.split})"
        if self.assumed:
            return (f"split {self.source}: the task's own {self.source} split, assumed exchangeable with the audited "
                    "split; a model trained on it loses power, never level")
        return f"split {self.source}" if self.kind == "split" else "none"

    def card_fields(self) -> dict[str, Any]:
        """The card's ``control`` field (and a task YAML's metadata ``control``)."""
        fields = {"kind": self.kind, "source": self.source, "split": self.split if self.kind == "file" else None,
                  "assumed": True if self.assumed else None, "lengths_pvalue": self.lengths_pvalue,
                  "overlap": self.overlap.fields() if self.overlap is not None else None}
        return {key: value for key, value in fields.items() if value is not None}


@dataclass(frozen=True)
class DatasetSpec:
    key: str  # used in task names, e.g. "ag_news"
    display_name: str  # as written in the papers' prompts, e.g. "AG News"
    hf_path: str | None  # None for local files (shipped samples, one's own data)
    hf_name: str | None
    task_type: TaskType
    splits: tuple[str, ...]  # the partitions the papers audit
    text_field: str  # the column split into first/second piece (sentence1 for NLI)
    second_field: str | None  # NLI only: the reference column (sentence2)
    label_field: str | None
    label_names: tuple[str, ...]  # index -> name; empty when unlabelled
    dcq_columns: tuple[str, ...]  # columns in the DCQ instance string, in order
    # The column injected beside text_field in contamination formats: a summary's
    # document, a question's answer; None for classification and NLI.
    companion_field: str | None = None
    # Local data only: split -> JSONL file (relative names resolve against the sample directory).
    data_files: Mapping[str, str] | None = field(default=None, hash=False)
    # Hub data only: the branch to load from, when the default one cannot load on today's `datasets`
    # (e.g. a repository that still ships only a loading script, whose parquet conversion is
    # refs/convert/parquet).
    hf_revision: str | None = None
    # split -> its control (a card's, or a registered dataset's sibling split); a split not named has none.
    controls: Mapping[str, Control] | None = field(default=None, hash=False, compare=False)
    # The number of instances every method but Time Travel draws unless its task says otherwise (at most, where it
    # asks fewer; instances.default_instances): a benchmark audited with --tasks is sampled at the size the validation
    # study measured (``audit --sample``).
    sample: int | None = None
    # The split-control test's items per side (every item up to it; ``audit --control-items``): its level is exact
    # when the two splits are exchangeable, at any size, so it is not held to ``sample``.
    control_items: int | None = None
    # A benchmark audited with --tasks: its task's lm-eval output_type. Its items' shape (multiple choice or free text)
    # whichever tests an audit runs on them, so each test's false-positive rate is read for that shape.
    benchmark_output_type: str | None = None
    # A group audited with --tasks: the column naming each row's subtask, whose proportions every sample keeps.
    # A card field, not a column name the samplers look for: one's own data may have a column called "subtask".
    subtask_field: str | None = None

    @property
    def labelled(self) -> bool:
        return self.task_type in ("cls", "nli") and self.label_field is not None

    def label_text(self, value: Any, source: str | None = None) -> str:
        """A label as the papers write it, ``index (name)``; a name is looked up, other values pass through."""
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ContamError(f"label {value!r} is neither an index nor a name", source=source,
                              field=self.label_field)
        if isinstance(value, int) and self.label_names:
            if not 0 <= value < len(self.label_names):
                raise ContamError(f"label {value!r} is outside 0..{len(self.label_names) - 1} for "
                                  f"{self.display_name}", source=source, field=self.label_field)
            return f"{value} ({self.label_names[value]})"
        if isinstance(value, str) and value in self.label_names:
            return f"{self.label_names.index(value)} ({value})"
        return str(value)

    def label_index(self, value: Any, source: str | None = None) -> int:
        """A label of a dataset with label names: a whole-number index into them, as the quiz and the injection
        formats write it (``index (name)``); a name or a number written as text is refused, naming the index."""
        names = ", ".join(f"{index} = {name}" for index, name in enumerate(self.label_names))
        if isinstance(value, bool) or not isinstance(value, int):
            hint = (f"; write {self.label_names.index(value)} for {value!r}" if value in self.label_names
                    else "; write it as a JSON number, not a string" if isinstance(value, str) and value.isdigit()
                    else "")
            raise ContamError(f"label {value!r} is not an index; expected a whole number indexing the label names "
                              f"({names}){hint}", source=source, field=self.label_field)
        self.label_text(value, source)  # the range check
        return value

    @property
    def registered(self) -> bool:
        """A dataset of the project's registry (the papers' Hub datasets and the shipped samples)."""
        return (DATASETS.get(self.key) or SAMPLE_DATASETS.get(self.key)) == self

    def task_metadata(self) -> dict[str, Any]:
        """The task-YAML metadata naming this dataset (the inverse of :func:`dataset_from_task_metadata`)."""
        if self.registered:
            return {"dataset": self.key}
        fields = {"dataset_name": self.display_name, "key": None if self.key == slug(self.display_name) else self.key,
                  "data_files": dict(self.data_files or {}),
                  "hf_path": self.hf_path, "hf_name": self.hf_name, "splits": list(self.splits) if self.hf_path else [],
                  "task_type": self.task_type, "text_field": self.text_field, "second_field": self.second_field,
                  "label_field": self.label_field, "label_names": list(self.label_names),
                  "columns": list(self.dcq_columns), "companion_field": self.companion_field, "sample": self.sample,
                  "control_items": self.control_items, "benchmark_output_type": self.benchmark_output_type,
                  "subtask_field": self.subtask_field}
        return {key: value for key, value in fields.items() if value not in (None, [])}

    def partition(self, split: str) -> Partition:
        if split not in self.splits:
            raise ContamError(f"{self.display_name} has no audited split {split!r}; known: {', '.join(self.splits)}",
                              field="split")
        return Partition(self, split)


@dataclass(frozen=True)
class HubRequest:
    """The arguments of ``datasets.load_dataset`` for one Hub split."""

    path: str  # the repository id
    name: str | None  # the configuration
    revision: str | None  # the branch; None: the repository's default
    split: str

    @property
    def source(self) -> str:
        """The repository as an error names it: ``id`` or ``id@revision``."""
        return f"{self.path}@{self.revision}" if self.revision else self.path


@dataclass(frozen=True)
class Partition:
    """One split of one dataset: what every method audits."""

    dataset: DatasetSpec
    split: str

    @property
    def name(self) -> str:
        """``<dataset key>:<split>``, as the CLI takes it."""
        return f"{self.dataset.key}:{self.split}"

    @property
    def label(self) -> str:
        """As the prompts name it, e.g. ``Toy News train``."""
        return f"{self.dataset.display_name} {self.split}"

    def label_text(self, value: Any, source: str | None = None) -> str:
        return self.dataset.label_text(value, source)

    @property
    def control(self) -> Control:
        """The partition's control, as its card (or the registry) says; ``none`` when it names none."""
        return (self.dataset.controls or {}).get(self.split, Control())

    def with_control(self, control: Control) -> Partition:
        """This partition with ``control`` as its control."""
        return Partition(replace(self.dataset, controls={**(self.dataset.controls or {}), self.split: control}),
                         self.split)

    def task_name(self, method: str, variant: str = "") -> str:
        """The lm-eval task auditing this partition with ``method`` (e.g. ``timetravel``) in ``variant``."""
        stem = f"{method}_{self.dataset.key}_{self.split}"
        return f"{stem}_{variant}" if variant else stem

    @property
    def hub_request(self) -> HubRequest | None:
        """What ``datasets.load_dataset`` is asked for to load this split (None for local data)."""
        spec = self.dataset
        if spec.hf_path is None:
            return None
        return HubRequest(spec.hf_path, spec.hf_name, spec.hf_revision, self.split)

    @property
    def data_file(self) -> Path | None:
        """The local JSONL of this split (None for a Hub dataset)."""
        files = self.dataset.data_files
        if files is None:
            return None
        if self.split not in files:
            raise ContamError(f"{self.dataset.display_name} has no data file for split {self.split!r}; "
                              f"data_files has {sorted(files)}", field="data_files")
        path = Path(files[self.split]).expanduser()
        return path if path.is_absolute() else sample_data_dir() / path

    def rows(self) -> list[dict]:
        """Every row of the partition: its local JSONL, else the Hub split."""
        request = self.hub_request
        if request is not None:
            import datasets  # slow import; only Hub partitions need it

            try:
                return datasets.load_dataset(request.path, request.name, revision=request.revision,
                                             split=request.split).to_list()
            # `datasets` raises OSError/ConnectionError offline, ValueError for an unknown split, RuntimeError for a
            # repository with only a loading script (4.0+), and its own errors besides: each is one line here.
            except Exception as error:
                first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise ContamError(f"cannot load the Hub dataset's split {self.split!r} ({first[:200]})",
                                  source=request.source, field="hf_path") from None
        path = self.data_file
        if not path.is_file():
            raise ContamError("data file not found", source=str(path), field="data_files")
        return read_jsonl_objects(path)

    @classmethod
    def parse(cls, name: str) -> Partition:
        """``"toy_news:train"`` -> the registered partition."""
        key, colon, split = name.partition(":")
        if not colon or not key or not split or ":" in split:
            raise ContamError(f"expected <dataset>:<split>, e.g. toy_news:train; got {name!r}", field="partition")
        return dataset_spec(key).partition(split)

    @classmethod
    def from_card(cls, path: str | Path) -> Partition:
        """The partition a card YAML describes: the task-metadata keys of one's own data plus ``split``."""
        import yaml

        source = Path(path)
        try:
            card = yaml.safe_load(source.read_text(encoding="utf-8"))
        except OSError as error:
            raise ContamError(f"cannot read the partition card ({error.strerror})", source=str(source)) from None
        except UnicodeDecodeError:
            raise ContamError("not UTF-8 text", source=str(source)) from None
        except yaml.YAMLError as error:
            raise ContamError(f"not YAML ({str(error).splitlines()[0]})", source=str(source)) from None
        return cls.from_card_fields(card, source)

    @classmethod
    def from_card_fields(cls, card: Any, source: Path) -> Partition:
        """The partition of a card's parsed fields; relative data files resolve against the card's folder."""
        if not isinstance(card, dict):
            raise ContamError("expected a mapping of partition fields", source=str(source))
        unknown = sorted(set(card) - {*USER_DATA_KEYS, "split", "splits", "control"})
        if unknown:
            raise ContamError(f"unknown field(s) {unknown}; known: split, control, {', '.join(USER_DATA_KEYS)}",
                              source=str(source), field=unknown[0])
        split = card.get("split")
        if not isinstance(split, str) or not split:
            raise ContamError(f"expected the split name, got {split!r}", source=str(source), field="split")
        metadata = {key: value for key, value in card.items() if key != "control"}
        metadata["config_source"] = str(source.resolve())
        if card.get("hf_path") and not card.get("splits"):
            metadata["splits"] = [split]
        dataset = dataset_from_task_metadata(metadata)
        control = card_control(card.get("control"), split, dataset.splits, str(source))
        return replace(dataset, controls={split: control}).partition(split)

    @classmethod
    def from_task_metadata(cls, metadata: Mapping[str, Any], split: str) -> Partition:
        """The partition a task audits: its YAML ``metadata`` (see the module docstring) and its test split; a
        ``control`` there (the card's mapping, :meth:`Control.card_fields`) is its control."""
        partition = dataset_from_task_metadata(metadata).partition(split)
        if metadata.get("control") is None:
            return partition
        return partition.with_control(card_control(metadata["control"], split, partition.dataset.splits,
                                                   metadata.get("config_source")))


def card_control(value: Any, split: str, splits: tuple[str, ...], source: str | None) -> Control:
    """A card's ``control`` field, checked against the card's splits; a card with splits besides the audited one must
    name its control (nothing guesses it from the number of splits)."""
    others = [name for name in splits if name != split]
    known = ", ".join(others) or "none"

    def unclear(why: str) -> ContamError:
        return ContamError(f"unclear control: {why}; give control: {{kind: split, source: <split>}}, {{kind: file, "
                           f"source: <file>, split: <split>}} or {{kind: none}}", source=source, field="control")

    if value is None:
        if others:
            raise unclear(f"the card has split(s) {known} besides {split!r} and no `control` field")
        return Control()
    if not isinstance(value, Mapping) or value.get("kind") not in get_args(ControlKind) or set(value) - {*CONTROL_KEYS}:
        raise unclear(f"expected a mapping of {', '.join(CONTROL_KEYS)} with kind split, file or none, got {value!r}")
    kind, given, rows_split = value["kind"], value.get("source"), value.get("split")
    if kind == "none":
        if set(value) - {"kind"}:
            raise unclear("kind none takes no source or split (nor assumed, lengths_pvalue, overlap)")
        return Control()
    if not isinstance(given, str) or not given:
        raise unclear(f"kind {kind} needs its source (a split name or a file)")
    if kind == "split":
        rows_split = rows_split or given
        if rows_split != given:
            raise unclear(f"kind split is its source split {given!r}, not {rows_split!r}")
    elif not isinstance(rows_split, str) or not rows_split:
        raise unclear("kind file needs `split`: the card's split its rows are read as")
    if rows_split not in others:
        raise unclear(f"the control's split {rows_split!r} is not another split of the card (it has {known})")
    assumed, lengths = value.get("assumed", False), value.get("lengths_pvalue")
    if not isinstance(assumed, bool) or (assumed and kind != "split"):
        raise unclear(f"assumed is true only for a split audit --tasks chose itself, got {assumed!r} with kind {kind}")
    if lengths is not None and (not assumed or isinstance(lengths, bool) or not isinstance(lengths, (int, float))
                                or not 0 <= lengths <= 1):
        raise unclear(f"lengths_pvalue is a p-value in [0, 1] of an assumed split, got {lengths!r}")
    overlap = value.get("overlap")
    return Control(kind, given, rows_split, assumed, None if lengths is None else float(lengths),
                   None if overlap is None else card_overlap(overlap, source))


def card_overlap(value: Any, source: str | None) -> ControlOverlap:
    """A card's ``control.overlap`` (``{shared, near, rows}``: counts of the control's rows), checked; a control that
    is half or more the audited data is none (:data:`~lm_eval_contam.core.overlap.CONTROL_OVERLAP_LIMIT`)."""
    counts = value if isinstance(value, Mapping) and set(value) == set(OVERLAP_KEYS) else {}
    if not counts or any(isinstance(count, bool) or not isinstance(count, int) or count < 0
                         for count in counts.values()) or counts["shared"] + counts["near"] > counts["rows"]:
        raise ContamError(f"expected the control's rows shared with the audited data, near copies of them and all "
                          f"its rows, {{shared: N, near: N, rows: N}} with shared + near <= rows, got {value!r}",
                          source=source, field="control.overlap")
    overlap = ControlOverlap(counts["shared"], counts["rows"], counts["near"])
    if overlap.share >= CONTROL_OVERLAP_LIMIT:
        raise ContamError(f"{overlap.describe()}: a control sharing {CONTROL_OVERLAP_LIMIT:.0%} or more of its rows "
                          "is the audited data", source=source, field="control.overlap")
    return overlap


def dataset_from_task_metadata(metadata: Mapping[str, Any]) -> DatasetSpec:
    """The dataset a task's ``metadata`` names: ``dataset`` (registered) or one's own data.

    Relative ``data_files`` resolve against the task YAML (lm-eval records it as
    ``metadata['config_source']``), never the working directory.
    """
    source = metadata.get("config_source")
    if metadata.get("dataset") is not None:
        return dataset_spec(str(metadata["dataset"]))
    hub = metadata.get("hf_path") is not None
    missing = [key for key in ("dataset_name", "splits" if hub else "data_files") if key not in metadata]
    if "text_field" not in metadata and not metadata.get("columns"):
        missing.append("text_field")
    if missing:
        raise ContamError(f"set `dataset` (a registered key) or {', '.join(missing)} in the task metadata",
                          source=source, field="metadata")
    task_type = metadata.get("task_type") or default_task_type(metadata)
    if task_type not in get_args(TaskType):
        raise ContamError(f"{task_type!r} is not one of {', '.join(get_args(TaskType))}", source=source,
                          field="task_type")
    if task_type == "nli" and not metadata.get("second_field"):
        raise ContamError("nli partitions need the reference column", source=source, field="second_field")
    output_type = metadata.get("benchmark_output_type")
    if output_type is not None and output_type not in OUTPUT_TYPES:
        raise ContamError(f"{output_type!r} is not one of {', '.join(OUTPUT_TYPES)}", source=source,
                          field="benchmark_output_type")
    subtask_field = metadata.get("subtask_field")
    if subtask_field is not None and (not isinstance(subtask_field, str) or not subtask_field):
        raise ContamError(f"expected a column name, got {subtask_field!r}", source=source, field="subtask_field")
    files = {} if hub else metadata["data_files"]
    if not hub and (not isinstance(files, Mapping) or not files):
        raise ContamError("expected a mapping split -> JSONL path", source=source, field="data_files")
    splits = tuple(str(split) for split in metadata["splits"]) if hub else tuple(files)
    if not splits:
        raise ContamError("expected at least one split", source=source, field="splits")
    label_field = metadata.get("label_field")
    text_field = str(metadata.get("text_field") or metadata["columns"][0])
    columns = metadata.get("columns") or [
        column for column in (text_field, metadata.get("second_field"), label_field) if column]
    key = metadata.get("key")
    if key is not None and (not isinstance(key, str) or slug(key) != key):
        raise ContamError(f"expected a lower-case key of letters, digits and '_', got {key!r}", source=source,
                          field="key")
    return DatasetSpec(
        key=key or slug(str(metadata["dataset_name"])), display_name=str(metadata["dataset_name"]),
        hf_path=metadata.get("hf_path"), hf_name=metadata.get("hf_name"), task_type=task_type, splits=splits,
        text_field=text_field,
        second_field=metadata.get("second_field"), label_field=label_field,
        label_names=tuple(str(name) for name in metadata.get("label_names") or ()),
        dcq_columns=tuple(str(column) for column in columns), companion_field=metadata.get("companion_field"),
        data_files=None if hub else {name: str(resolve_path(path, metadata)) for name, path in files.items()},
        sample=None if metadata.get("sample") is None else metadata_number(metadata, "sample", 0, minimum=1),
        control_items=(None if metadata.get("control_items") is None else
                       metadata_number(metadata, "control_items", 0, minimum=2)),
        benchmark_output_type=output_type, subtask_field=subtask_field,
    )


def metadata_number(metadata: Mapping[str, Any], key: str, default: float, *, kind: type = int,
                    minimum: float | None = None, maximum: float | None = None) -> Any:
    """A numeric task-metadata setting (``num_instances``, ``seed``, …), checked: a wrong type or range names the YAML."""
    value = metadata.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (kind is float or float(value).is_integer())
    if ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
        return kind(value)
    bounds = ", ".join(part for part in (f">= {minimum:g}" if minimum is not None else "",
                                         f"<= {maximum:g}" if maximum is not None else "") if part)
    expected = f"{'an integer' if kind is int else 'a number'}{' ' + bounds if bounds else ''}"
    raise ContamError(f"expected {expected}, got {value!r}", source=metadata.get("config_source"), field=key)


def metadata_flag(metadata: Mapping[str, Any], key: str, default: bool = False) -> bool:
    """A true/false task-metadata setting (``all_orders``, …), checked: anything else names the YAML."""
    value = metadata.get(key, default)
    if not isinstance(value, bool):
        raise ContamError(f"expected true or false, got {value!r}", source=metadata.get("config_source"), field=key)
    return value


def default_task_type(metadata: Mapping[str, Any]) -> str:
    """A pair of texts is NLI, a labelled text classification, anything else a summary-like text."""
    if metadata.get("second_field"):
        return "nli"
    return "cls" if metadata.get("label_field") else "sum"


def slug(name: str) -> str:
    """A task-name-safe key for a display name ("My Bench v2" -> "my_bench_v2")."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "data"


def resolve_path(path: str | Path, metadata: Mapping[str, Any]) -> Path:
    """``path`` as given if absolute (or with no YAML to anchor it), else relative to the task YAML.

    The YAML's path is made absolute here: lm-eval records it as the include path was written (relative to the working
    directory), and a relative data file would later be read under the shipped samples folder
    (:attr:`Partition.data_file`), a path the user never wrote."""
    candidate = Path(path).expanduser()
    source = metadata.get("config_source")
    if candidate.is_absolute() or not source or source == "inline":
        return candidate
    return Path(source).absolute().parent / candidate


def with_sibling_controls(spec: DatasetSpec) -> DatasetSpec:
    """A registered dataset of two splits, each the other's control: the papers' datasets and the shipped samples split
    one collection at random, so a model that saw neither scores both alike."""
    first, second = spec.splits
    return replace(spec, controls={first: Control.of_split(second), second: Control.of_split(first)})


DATASETS: dict[str, DatasetSpec] = {
    spec.key: with_sibling_controls(spec)
    for spec in (
        DatasetSpec("imdb", "IMDB", "stanfordnlp/imdb", None, "cls", ("train", "test"),
                    "text", None, "label", ("neg", "pos"), ("text", "label")),
        DatasetSpec("ag_news", "AG News", "fancyzhx/ag_news", None, "cls", ("train", "test"),
                    "text", None, "label", ("World", "Sports", "Business", "Sci/Tech"), ("text", "label")),
        DatasetSpec("yelp", "Yelp", "Yelp/yelp_review_full", None, "cls", ("train", "test"),
                    "text", None, "label", ("1 star", "2 star", "3 stars", "4 stars", "5 stars"), ("text", "label")),
        DatasetSpec("rte", "RTE", "nyu-mll/glue", "rte", "nli", ("train", "validation"),
                    "sentence1", "sentence2", "label", ("entailment", "not_entailment"),
                    ("sentence1", "sentence2", "label")),
        DatasetSpec("wnli", "WNLI", "nyu-mll/glue", "wnli", "nli", ("train", "validation"),
                    "sentence1", "sentence2", "label", ("not_entailment", "entailment"),
                    ("sentence1", "sentence2", "label")),
        # Samsung/samsum is gone from the Hub (404 since May 2025); this maintained copy has its columns and splits.
        DatasetSpec("samsum", "SAMSum", "knkarthick/samsum", None, "sum", ("train", "test"),
                    "summary", None, None, (), ("summary",), "dialogue"),
        # The main branch ships only a loading script, which `datasets` 4.0+ refuses; the Hub's parquet conversion loads.
        DatasetSpec("xsum", "XSum", "EdinburghNLP/xsum", None, "xsum", ("train", "test"),
                    "summary", None, None, (), ("summary",), "document", hf_revision="refs/convert/parquet"),
        DatasetSpec("gsm8k", "GSM8k", "openai/gsm8k", "main", "question", ("train", "test"),
                    "question", None, None, (), ("question",), "answer"),
    )
}


SAMPLES_DIR = "samples"  # under task_configs/


def _sample(key: str, display_name: str, task_type: TaskType, **columns: Any) -> DatasetSpec:
    splits = ("train", "test")
    return DatasetSpec(key, display_name, None, None, task_type, splits, **columns,
                       data_files={split: f"{key}_{split}.jsonl" for split in splits})


# Small datasets written for this project (12 rows per split), shipped so every
# method runs offline; their columns follow the Hub dataset of the same task type.
SAMPLE_DATASETS: dict[str, DatasetSpec] = {
    spec.key: with_sibling_controls(spec)
    for spec in (
        _sample("toy_news", "Toy News", "cls", text_field="text", second_field=None, label_field="label",
                label_names=("World", "Sports", "Business", "Science"), dcq_columns=("text", "label")),
        _sample("toy_reviews", "Toy Reviews", "cls", text_field="text", second_field=None, label_field="label",
                label_names=("negative", "positive"), dcq_columns=("text", "label")),
        _sample("toy_pairs", "Toy Pairs", "nli", text_field="sentence1", second_field="sentence2",
                label_field="label", label_names=("entailment", "not_entailment"),
                dcq_columns=("sentence1", "sentence2", "label")),
        _sample("toy_dialogues", "Toy Dialogues", "sum", text_field="summary", second_field=None, label_field=None,
                label_names=(), dcq_columns=("summary",), companion_field="dialogue"),
    )
}


def dataset_spec(key: str) -> DatasetSpec:
    """The Hub or sample dataset registered under ``key``."""
    spec = DATASETS.get(key) or SAMPLE_DATASETS.get(key)
    if spec is None:
        known = ", ".join(sorted({*DATASETS, *SAMPLE_DATASETS}))
        raise ContamError(f"unknown dataset {key!r}; known: {', '.join(known.split(', '))}", field="dataset")
    return spec


def resolve_partition(name: str) -> Partition:
    """A partition as the CLI names it: a card file (``*.yaml``), else ``<registered dataset>:<split>``."""
    if name.endswith(CARD_SUFFIXES):
        return Partition.from_card(name)
    return Partition.parse(name)


def sample_data_dir() -> Path:
    return task_dir() / SAMPLES_DIR


def sample_partitions() -> list[Partition]:
    """Every shipped sample partition, in registry order."""
    return [spec.partition(split) for spec in SAMPLE_DATASETS.values() for split in spec.splits]


def registered_partitions() -> list[Partition]:
    """Every registered partition: the papers' Hub datasets, then the shipped samples."""
    return [spec.partition(split) for spec in (*DATASETS.values(), *SAMPLE_DATASETS.values()) for split in spec.splits]


def local_free_text(partition: Partition) -> bool:
    """A local partition (a benchmark audited with --tasks, one's own data) whose rows have no choices: the free-text
    relabelling tests apply (multiple choice has the option-order tests, and the Hub datasets the papers audit keep
    their own methods)."""
    if partition.dataset.hf_path is not None:
        return False
    try:
        rows = partition.rows()
    except ContamError:
        return False  # an unreadable partition is reported by the methods that read it
    return bool(rows) and not any(len(row.get("choices") or []) >= 2 for row in rows)
