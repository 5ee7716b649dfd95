"""One's own benchmark in the audit: a data file (JSONL, CSV) or a Hub dataset becomes a partition card and task YAMLs.

``audit --data FILE --split NAME --name "Display Name" --text-field COL ...`` writes, under the audit directory,
``partitions/<key>_<split>.yaml`` (the card: the same keys every method's task metadata uses), the CSV's rows as
JSONL (``data/<key>_<split>.jsonl``; a JSONL file is read where it is), and one task YAML per method and variant
(``tasks/<key>_<split>/``), which include the installed templates by absolute path. Cards and data are never overwritten: such a
file that exists with other content stops the command and names it; the task YAMLs follow their card (rewritten
when it moved with a copied audit directory).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lm_eval_contam.core.audit_identity import AUDIT_ID_KEY, QUIZ_OPTIONS_DIR
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import check_control_overlap
from lm_eval_contam.core.install import task_dir
from lm_eval_contam.core.jsonl import jsonl_text
from lm_eval_contam.core.partitions import Control, Partition, slug
from lm_eval_contam.core.registry import RenderTarget, registered_methods
from lm_eval_contam.lmeval.task_yaml import with_metadata
from lm_eval_contam.methods.catalogue import load_methods

CARDS_DIR = "partitions"
DATA_DIR = "data"
TASKS_DIR = "tasks"


@dataclass(frozen=True)
class OwnData:
    """What the user says about their data on the command line."""

    source: str  # a .jsonl / .csv file, or a Hub dataset id
    split: str
    name: str  # as the prompts name the dataset
    text_field: str
    second_field: str | None = None
    label_field: str | None = None
    label_names: tuple[str, ...] = ()
    task_type: str | None = None
    hf_name: str | None = None  # a Hub dataset's configuration
    # A control partition of the same distribution (the likelihood modes compare against it): kind ``file``, its
    # source the file and its split the name the card gives it; kind ``none``: no control.
    control: Control = Control()

    @property
    def key(self) -> str:
        return slug(self.name)


def write_new(path: Path, text: str) -> Path:
    """Write ``text`` unless the file exists with other content (then refuse: nothing is overwritten)."""
    if path.is_file():
        if path.read_text(encoding="utf-8") == text:
            return path
        raise ContamError("exists with other content (from another --data or --name?); use a new --output_path "
                          "or remove it", source=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_derived(path: Path, text: str) -> Path:
    """Write a file derived from a card (a task YAML): it follows the card, so a copied audit directory re-runs."""
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:  # utf-8-sig: spreadsheets write a BOM
            reader = csv.DictReader(handle)
            rows = [dict(row) for row in reader]
    except UnicodeDecodeError as error:
        raise ContamError(f"not UTF-8 text (byte {error.start})", source=str(path)) from None
    except csv.Error as error:
        raise ContamError(f"not a CSV file ({error})", source=str(path)) from None
    for number, row in enumerate(rows, start=2):
        if None in row or None in row.values():
            raise ContamError("row has a different number of cells than the header", source=f"{path}:{number}")
    return [{column: _csv_value(value) for column, value in row.items()} for row in rows]


def _csv_value(value: str) -> Any:
    """CSV cells are text; a whole-number cell becomes an int so label indices read as indices."""
    stripped = value.strip()
    return int(stripped) if stripped.lstrip("-").isdigit() else value


@dataclass(frozen=True)
class SplitData:
    """Where one split of one's own data will be read from, and its rows when they are already in memory (a CSV)."""

    path: Path  # the JSONL the partition reads
    rows: list[dict[str, Any]] | None  # a CSV's rows, written to ``path`` only once every row passed its checks
    source: str  # the user's file, as errors name it


def split_data(own: OwnData, out_dir: Path, source: str, split: str) -> SplitData | None:
    """A data file's split (a CSV becomes JSONL under ``out_dir``), or None for a Hub dataset id."""
    path = Path(source).expanduser()
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        if path.exists() or suffix in (".json", ".tsv", ".parquet", ".txt"):
            raise ContamError("expected a .jsonl or .csv file (or a Hub dataset id)", source=source, field="--data")
        return None
    if not path.is_file():
        raise ContamError("data file not found", source=source, field="--data")
    if suffix == ".jsonl":
        return SplitData(path.resolve(), None, source)
    return SplitData((out_dir / DATA_DIR / f"{own.key}_{split}.jsonl").resolve(), _csv_rows(path), source)


def write_card(own: OwnData, out_dir: Path) -> Path:
    """The partition card for ``own`` under ``out_dir``; every row checked before anything is written."""
    control = own.control
    if control.kind != "none" and (not control.source or not control.split or control.split == own.split):
        raise ContamError("a control needs its own file and a split name other than the audited one",
                          field="--control-split")
    audited = split_data(own, out_dir, own.source, own.split)
    card: dict[str, Any] = {"dataset_name": own.name, "split": own.split, "text_field": own.text_field}
    splits = {own.split: audited}
    if audited is None:
        if control.source:
            raise ContamError("a Hub dataset's control is another of its splits: audit it as a card with `splits`",
                              field="--control-data")
        card.update({"hf_path": own.source, **({"hf_name": own.hf_name} if own.hf_name else {})})
    else:
        if control.source:
            control_data = split_data(own, out_dir, control.source, str(control.split))
            if control_data is None:
                raise ContamError("expected a .jsonl or .csv file", source=control.source, field="--control-data")
            splits[str(control.split)] = control_data
        # A file the audit writes is named relative to the card's folder: the directory stays relocatable.
        card["data_files"] = {name: _card_relative(data.path, out_dir) for name, data in splits.items()}
    optional = {"second_field": own.second_field, "label_field": own.label_field,
                "label_names": list(own.label_names), "task_type": own.task_type}
    card.update({key: value for key, value in optional.items() if value not in (None, [])})
    if control.source:  # a card of one split needs no control field: it has none
        card["control"] = control.card_fields()
    import yaml

    path = out_dir / CARDS_DIR / f"{own.key}_{own.split}.yaml"
    dataset = Partition.from_card_fields(card, path).dataset
    if audited is not None:
        for name, data in splits.items():
            partition = dataset.partition(name)
            if data.rows is None:
                check_partition_rows(partition, partition.rows(), data.source)
            else:
                check_partition_rows(partition, data.rows, data.source, first_line=2)
        if control.split is not None:  # measured once, here: the card carries it to the task YAMLs and the verdicts
            texts = {name: [str(row.get(own.text_field)) for row in (data.rows if data.rows is not None
                                                                        else dataset.partition(name).rows())]
                     for name, data in splits.items()}
            overlap = check_control_overlap(texts[own.split], texts[control.split], source=control.source or "",
                                            field="--control-data")
            card["control"] = replace(control, overlap=overlap).card_fields()
        for data in splits.values():
            if data.rows is not None:
                write_new(data.path, jsonl_text(data.rows))
    text = "# Written by `lm-eval-contam audit --data`; every method reads its partition from here.\n" + yaml.safe_dump(
        card, sort_keys=False, allow_unicode=True)
    return write_new(path, text)


def _card_relative(path: Path, out_dir: Path) -> str:
    """A file the audit writes (a CSV's JSONL) relative to the cards' folder; the user's own file as it is."""
    import os

    if path.is_relative_to((out_dir / DATA_DIR).resolve()):
        return os.path.relpath(path, (out_dir / CARDS_DIR).resolve())
    return str(path)


def check_partition_rows(partition: Partition, rows: Sequence[Mapping[str, Any]], source: str,
                         first_line: int = 1) -> None:
    """Every row has the partition's columns, with text where text is expected and a known label.

    Errors name ``source`` and the row's line there (a CSV's first row is line 2, under its header).
    """
    spec = partition.dataset
    if not rows:
        raise ContamError("no rows: the partition is empty", source=source)
    text_fields = [field for field in (spec.text_field, spec.second_field) if field]
    for number, row in enumerate(rows, start=first_line):
        where = f"{source}:{number}"
        if spec.subtask_field and spec.subtask_field not in row:  # the samples' strata (the card's subtask_field)
            raise ContamError(f"no {spec.subtask_field!r}, the column the card names as its rows' subtask; columns: "
                              f"{', '.join(row)}", source=where, field="subtask_field")
        for field in text_fields:
            value = row.get(field)
            if not isinstance(value, str) or not value.strip():
                raise ContamError(f"expected non-empty text, got {value!r}"
                                  + ("" if field in row else f"; columns: {', '.join(row)}"), source=where, field=field)
        if spec.label_field:
            if spec.label_field not in row:
                raise ContamError(f"no label column; columns: {', '.join(row)}", source=where, field=spec.label_field)
            # With label names, the quiz and the injection formats need an index (a name would fail after writing).
            if spec.label_names:
                spec.label_index(row[spec.label_field], source=where)
            else:
                partition.label_text(row[spec.label_field], source=where)


def write_task_configs(partition: Partition, out_dir: Path, *, reference: bool = False,
                       audit_id: str | None = None) -> Path:
    """Every registered method's task YAMLs (``MethodSpec.render_task_configs``) for a card's partition, under
    ``out_dir/tasks/<key>_<split>``; the directory. The methods that read quiz options share one options file;
    ``reference``: a reference model scores the tasks too (:attr:`RenderTarget.reference`); ``audit_id``: the audit's
    id (``audit.json``), added to every YAML's metadata, so lm-eval records it in the results (the report refuses
    results of another audit by it)."""
    name = f"{partition.dataset.key}_{partition.split}"
    directory = out_dir / TASKS_DIR / name
    target = RenderTarget(templates=task_dir(), options_path=(out_dir / QUIZ_OPTIONS_DIR / f"{name}.jsonl").resolve(),
                          reference=reference)
    load_methods()
    for spec in registered_methods():
        for task, text in spec.render_task_configs(partition, target).items():
            write_derived(directory / f"{task}.yaml", text if audit_id is None
                          else with_metadata(text, AUDIT_ID_KEY, audit_id))
    return directory
