"""Manual checks: the DCR items of a run as a CSV for a person, and the filled CSV read back.

``dcr-export`` writes one :class:`CheckRow` per logged item with the automatic
result pre-filled (:func:`check_rows`, :func:`write_check_csv`); ``adjust
--check-csv`` reads the person's decisions (:func:`read_check_csv`) and turns them
into each sheet's per-level item results (:func:`level_items_by_sheet`).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from lm_eval_contam.dcr.checks import parse_check
from lm_eval_contam.errors import ContamError
from lm_eval_contam.jsonl import read_jsonl_objects
from lm_eval_contam.rundir import samples_file

CSV_COLUMNS = ("sheet", "task", "level", "item_id", "check_kind", "prompt", "response", "reference",
               "auto_result", "contaminated")
_TRUE = {"1", "yes", "y", "true"}
_FALSE = {"0", "no", "n", "false"}


@dataclass(frozen=True)
class CheckRow:
    """One prompt/response pair for a person; ``contaminated`` is what they decide."""

    sheet: str
    task: str
    level: int
    item_id: str
    check_kind: str
    prompt: str
    response: str
    reference: str
    auto_result: bool | None
    contaminated: bool | None


def _cell(value: bool | None) -> str:
    return "" if value is None else str(int(value))


def _parse_bool(text: str, *, source: str, field: str, blank_ok: bool) -> bool | None:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if blank_ok and not value:
        return None
    raise ContamError(f"expected 1/0 (or yes/no), got {text!r}", source=source, field=field)


def write_check_csv(rows: Iterable[CheckRow], path: str | Path) -> Path:
    """Write rows for manual checking; ``contaminated`` is pre-filled with the automatic result."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow([row.sheet, row.task, row.level, row.item_id, row.check_kind, row.prompt,
                             row.response, row.reference, _cell(row.auto_result), _cell(row.contaminated)])
    return path


def read_check_csv(path: str | Path) -> list[CheckRow]:
    """Read a filled check CSV; every ``contaminated`` cell must be 1/0 (yes/no)."""
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise ContamError("check CSV not found", source=source)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ContamError(f"missing column(s) {missing}", source=source, field="header")
        rows = []
        for number, record in enumerate(reader, start=2):
            where = f"row {number} {{}}"
            level_text = record["level"].strip()
            if level_text not in ("1", "2", "3", "4"):
                raise ContamError(f"level must be 1..4, got {level_text!r}", source=source,
                                  field=where.format("level"))
            contaminated = _parse_bool(record["contaminated"], source=source, field=where.format("contaminated"),
                                       blank_ok=False)
            rows.append(CheckRow(
                sheet=record["sheet"], task=record["task"], level=int(level_text), item_id=record["item_id"],
                check_kind=record["check_kind"], prompt=record["prompt"], response=record["response"],
                reference=record["reference"],
                auto_result=_parse_bool(record["auto_result"], source=source, field=where.format("auto_result"),
                                        blank_ok=True),
                contaminated=contaminated,
            ))
    if not rows:
        raise ContamError("the check CSV has no rows", source=source)
    return rows


def level_items_by_sheet(rows: Iterable[CheckRow]) -> dict[str, list[list[float]]]:
    """Per sheet, the four levels' item results (1.0 contaminated, 0.0 not) from filled rows."""
    by_sheet: dict[str, list[list[float]]] = {}
    for row in rows:
        levels = by_sheet.setdefault(row.sheet, [[], [], [], []])
        levels[row.level - 1].append(1.0 if row.contaminated else 0.0)
    return by_sheet


def _auto_result(sample: Mapping[str, object]) -> bool | None:
    # lm-eval logs the per-item metric; NaN (or no value) means the check was undetermined.
    value = sample.get("contaminated")
    return None if not isinstance(value, (int, float)) or math.isnan(value) else bool(value)


def check_rows(results_file: Path, level_tasks: Mapping[str, Mapping[int, str]]) -> list[CheckRow]:
    """One row per logged DCR item of the run behind ``results_file``: prompt, response, automatic result."""
    rows = []
    for sheet, tasks in sorted(level_tasks.items()):
        for level, task in sorted(tasks.items()):
            for sample in read_jsonl_objects(samples_file(results_file, task)):
                doc = sample["doc"]
                response = sample["filtered_resps"][0] if sample.get("filtered_resps") else sample["resps"][0][0]
                auto = _auto_result(sample)
                rows.append(CheckRow(
                    sheet=sheet, task=task, level=level, item_id=doc["item_id"],
                    check_kind=parse_check(json.loads(doc["check"])).kind, prompt=doc["prompt"],
                    response=response, reference=doc["reference"], auto_result=auto, contaminated=auto,
                ))
    return rows
