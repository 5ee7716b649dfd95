"""Manual checks: the DCR items of a run as a CSV for a person, and the filled CSV read back.

``dcr-export`` writes one :class:`CheckRow` per logged item with the automatic
result pre-filled (for the item itself: a person judges the response as the
paper's Check does, so a controlled item's control is not exported) (:func:`logged_check_rows`, :func:`write_check_csv`); ``adjust
--check-csv`` reads the person's decisions (:func:`read_check_csv`) and turns them
into each sheet's per-level item results (:func:`level_items_by_sheet`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects, read_utf8
from lm_eval_contam.core.rundir import samples_file
from lm_eval_contam.lmeval.lm_eval_compat import logged_responses
from lm_eval_contam.methods.dcr.check_spec import parse_check
from lm_eval_contam.methods.dcr.schema import LEVELS, Sheet
from lm_eval_contam.methods.dcr.sheet import load_sheet

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


_GENERATED_ID = re.compile(r"^l(?P<level>[1-4])-(?P<kind>[a-z]+)-\d+$")


def _item_level(sheet: Sheet, item_id: str) -> int | None:
    """The level an item id belongs to in ``sheet`` (static ids, or ids its generators produce), else None."""
    for level in sheet.levels:
        if any(item.item_id == item_id for item in level.items):
            return level.number
    match = _GENERATED_ID.match(item_id)
    if match and match["kind"] in {g.kind for g in sheet.levels[int(match["level"]) - 1].generators}:
        return int(match["level"])
    return None


def read_check_csv(path: str | Path) -> list[CheckRow]:
    """Read a filled check CSV (UTF-8, with or without Excel's BOM); every ``contaminated`` cell must be 1/0.

    Row ``i`` of the result is line ``i + 2`` of the file; :func:`validate_check_rows` checks it against the sheets.
    """
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise ContamError("check CSV not found", source=source)
    reader = csv.DictReader(io.StringIO(read_utf8(path, bom=True), newline=""))
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ContamError(f"missing column(s) {missing}", source=source, field="header")
    rows = []
    for number, record in enumerate(reader, start=2):
        where = f"row {number} {{}}"
        if None in record or any(record[c] is None for c in CSV_COLUMNS):
            raise ContamError(f"expected {len(reader.fieldnames or [])} cells, got a row of another length",
                              source=source, field=where.format("columns"))
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


def validate_check_rows(rows: Sequence[CheckRow], *, source: str,
                        sheet_override: str | None = None) -> list[CheckRow]:
    """Rows as read by :func:`read_check_csv`, checked against their sheets (``sheet_override`` replaces the column).

    Every row must name a loadable sheet and an item id that sheet can produce, filed under that
    item's own level, once; every sheet must have checked items on all four levels.
    """
    sheets: dict[str, Sheet] = {}
    seen: dict[tuple[str, str], int] = {}
    counts: dict[tuple[str, int], int] = {}
    checked = []
    for number, row in enumerate(rows, start=2):
        def bad(field: str, message: str) -> ContamError:
            return ContamError(message, source=source, field=f"row {number} {field}")

        sheet_ref = sheet_override or row.sheet
        if sheet_ref not in sheets:
            try:
                sheets[sheet_ref] = load_sheet(sheet_ref)
            except ContamError as error:
                raise bad("sheet", f"unknown or unloadable DCR sheet {sheet_ref!r} ({error})") from None
        sheet = sheets[sheet_ref]
        own_level = _item_level(sheet, row.item_id)
        if own_level is None:
            raise bad("item_id", f"{row.item_id!r} is not an item of sheet {sheet_ref!r} (level {row.level})")
        if own_level != row.level:
            raise bad("level", f"item {row.item_id!r} is an L{own_level} item of sheet {sheet_ref!r}, filed under "
                               f"level {row.level}")
        if (sheet_ref, row.item_id) in seen:
            raise bad("item_id", f"duplicate item {row.item_id!r} of sheet {sheet_ref!r} (first on row "
                                 f"{seen[sheet_ref, row.item_id]})")
        seen[sheet_ref, row.item_id] = number
        counts[sheet_ref, row.level] = counts.get((sheet_ref, row.level), 0) + 1
        if counts[sheet_ref, row.level] > sheet.level_size(row.level):
            raise bad("level", f"more than the sheet's {sheet.level_size(row.level)} items on level {row.level} of "
                               f"{sheet_ref!r}")
        checked.append(replace(row, sheet=sheet_ref))
    for sheet_ref in sheets:
        empty = [level for level in LEVELS if (sheet_ref, level) not in counts]
        if empty:
            raise ContamError(f"sheet {sheet_ref!r} has no checked items on level(s) {empty}; the DCR Factor "
                              f"needs all four levels", source=source, field="level")
    return checked


def level_items_by_sheet(rows: Iterable[CheckRow]) -> dict[str, list[list[float]]]:
    """Per sheet, the four levels' item results (1.0 contaminated, 0.0 not) from filled rows."""
    by_sheet: dict[str, list[list[float]]] = {}
    for row in rows:
        levels = by_sheet.setdefault(row.sheet, [[], [], [], []])
        levels[row.level - 1].append(1.0 if row.contaminated else 0.0)
    return by_sheet


def _auto_result(sample: Mapping[str, object]) -> bool | None:
    # lm-eval logs the per-item metric: the Check's result, or on a controlled level the record of the original's
    # and the control's; NaN or None (or no value) means the check was undetermined.
    value = sample.get("contaminated")
    if isinstance(value, Mapping):
        value = value.get("original")
    return None if not isinstance(value, (int, float)) or math.isnan(value) else bool(value)


def logged_check_rows(results_file: Path, level_tasks: Mapping[str, Mapping[int, str]]) -> list[CheckRow]:
    """One row per logged DCR item of the run behind ``results_file``: prompt, response, automatic result."""
    rows = []
    for sheet, tasks in sorted(level_tasks.items()):
        for level, task in sorted(tasks.items()):
            for sample in read_jsonl_objects(samples_file(results_file, task)):
                doc = sample["doc"]
                response = logged_responses(sample)[0] if sample.get("filtered_resps") else sample["resps"][0][0]
                auto = _auto_result(sample)
                rows.append(CheckRow(
                    sheet=sheet, task=task, level=level, item_id=doc["item_id"],
                    check_kind=parse_check(json.loads(doc["check"])).kind, prompt=doc["prompt"],
                    response=response, reference=doc["reference"], auto_result=auto, contaminated=auto,
                ))
    return rows
