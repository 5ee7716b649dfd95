"""Bad DCR input fails at load with file, field and value (issue "Bad input never moves a number")."""

from __future__ import annotations

from pathlib import Path

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects
from lm_eval_contam.methods.dcr.check_csv import read_check_csv, validate_check_rows
from lm_eval_contam.methods.dcr.sheet import load_sheet, sheets_dir

TOY = (sheets_dir() / "toy_sentiment.yaml").read_text(encoding="utf-8")


def _sheet(tmp_path: Path, old: str, new: str) -> Path:
    assert old in TOY
    path = tmp_path / "bad.yaml"
    # data_files is relative to the sheet: point it back at the shipped toy data.
    text = TOY.replace(old, new).replace("../toy/toy_sentiment.jsonl",
                                         str(sheets_dir().parent / "toy" / "toy_sentiment.jsonl"))
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("old", "new", "field", "value"), [
    ("any: [positive, negative, opinion, emotion]", "any: positive",
     "levels.l1.items[0].check.any", "expected a list, got 'positive'"),
    ('pattern: "lm[- ]eval[- ]contam"}', 'pattern: "lm[- ]eval[- ]contam", ignore_case: "no"}',
     "levels.l2.items[3].check.ignore_case", "expected true or false, got 'no'"),
    ("{kind: membership, count: 2}", "{kind: membership, count: 2, template: 'Is {text} in {name.__class__}?'}",
     "levels.l3.generate[1].template", "'name.__class__'"),
    ("{kind: membership, count: 2}", "{kind: membership, count: 2, template: 'Is {text} in { ?'}",
     "levels.l3.generate[1].template", "not a valid template"),
])
def test_sheet_fields_of_the_wrong_type_fail_at_load(tmp_path, old, new, field, value) -> None:
    path = _sheet(tmp_path, old, new)
    with pytest.raises(ContamError) as error:
        load_sheet(path)
    message = str(error.value)
    assert message.startswith(f"{path.resolve()}: field '{field}': ") and value in message and "\n" not in message


def test_shipped_toy_sheet_still_loads() -> None:
    assert load_sheet("toy_sentiment").levels[2].generators[1].kind == "membership"


def test_non_utf8_jsonl_names_file_and_line(tmp_path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "caf\xe9"}\n')
    with pytest.raises(ContamError, match=rf"^{path}:2: not UTF-8 text \(byte b'\\xe9'"):
        read_jsonl_objects(path)


HEADER = "sheet,task,level,item_id,check_kind,prompt,response,reference,auto_result,contaminated\n"
VALID = [("toy-l1-task", 1), ("toy-l2-size", 2), ("l3-completion-3", 3), ("l4-association-0", 4)]


def _csv(tmp_path: Path, items: list[tuple[str, int]], *, sheet: str = "toy_sentiment", prefix: bytes = b"") -> Path:
    path = tmp_path / "checks.csv"
    lines = [f"{sheet},dcr_toy_sentiment_l{level},{level},{item},keywords,p,r,,1,1\n" for item, level in items]
    path.write_bytes(prefix + (HEADER + "".join(lines)).encode("utf-8"))
    return path


def _validate(path: Path):
    return validate_check_rows(read_check_csv(path), source=str(path))


@pytest.mark.parametrize(("items", "sheet", "match"), [
    (VALID + [("toy-l1-task", 1)], "toy_sentiment",
     "row 6 item_id': duplicate item 'toy-l1-task' of sheet 'toy_sentiment' (first on row 2)"),
    (VALID + [("toy-l9-nope", 2)], "toy_sentiment", "row 6 item_id': 'toy-l9-nope' is not an item of sheet"),
    (VALID + [("l3-association-1", 3)], "toy_sentiment", "row 6 item_id': 'l3-association-1' is not an item"),
    (VALID + [("toy-l1-labels", 4)], "toy_sentiment",
     "row 6 level': item 'toy-l1-labels' is an L1 item of sheet 'toy_sentiment', filed under level 4"),
    (VALID + [("l3-membership-2", 4)], "toy_sentiment", "row 6 level': item 'l3-membership-2' is an L3 item"),
    (VALID, "no_such_sheet", "row 2 sheet': unknown or unloadable DCR sheet 'no_such_sheet'"),
    ([("toy-l1-task", 1), ("toy-l1-labels", 1)], "toy_sentiment",
     "field 'level': sheet 'toy_sentiment' has no checked items on level(s) [2, 3, 4]"),
])
def test_check_csv_rows_are_validated_against_the_sheet(tmp_path, items, sheet, match) -> None:
    path = _csv(tmp_path, items, sheet=sheet)
    with pytest.raises(ContamError) as error:
        _validate(path)
    assert str(error.value).startswith(f"{path}: field 'row" if "row" in match else f"{path}: field 'level'")
    assert match in str(error.value) and "\n" not in str(error.value)


def test_check_csv_with_excel_bom_parses_like_without(tmp_path) -> None:
    plain = _validate(_csv(tmp_path, VALID))
    assert _validate(_csv(tmp_path, VALID, prefix=b"\xef\xbb\xbf")) == plain and len(plain) == 4


def test_check_csv_with_non_utf8_bytes_names_the_file(tmp_path) -> None:
    path = _csv(tmp_path, VALID)
    path.write_bytes(path.read_bytes().replace(b",p,r,", b",p,caf\xe9,", 1))
    with pytest.raises(ContamError, match=rf"^{path}:2: not UTF-8 text"):
        read_check_csv(path)
