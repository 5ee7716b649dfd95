"""Every Check kind on a positive and a negative response, the judge prompt, the CSV round trip."""

from __future__ import annotations

import csv

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcr import check_csv, check_spec, judge
from lm_eval_contam.methods.dcr.check_csv import CheckRow, level_items_by_sheet, read_check_csv, write_check_csv
from lm_eval_contam.methods.dcr.check_spec import parse_check

CASES = [
    ({"kind": "keywords", "any": ["Socher", "Stanford"]}, "It came from Stanford in 2013.", "It is a movie dataset."),
    ({"kind": "keywords", "all": ["positive", "negative"]}, "Positive and negative.", "Only positive."),
    ({"kind": "regex", "pattern": r"^\W*yes\b"}, "Yes, it is.", "No. yes-men aside"),
    ({"kind": "number", "value": 872, "tolerance": 0}, "The validation split has 872 sentences.", "About 900."),
    ({"kind": "number", "value": 67349, "tolerance": 0.01, "relative": True}, "Roughly 67.3k training rows.",
     "Around 60,000."),
    ({"kind": "overlap", "reference": "the sheets were stained", "threshold": 0.5}, "and the sheets were stained.",
     "the room was clean"),
    ({"kind": "label", "label": "false", "labels": ["pants-fire", "false", "mostly-false", "true"]},
     "False. It is not mostly-false.", "mostly-false, not false"),
]


@pytest.mark.parametrize(("spec", "positive", "negative"), CASES)
def test_check_kinds(spec, positive, negative) -> None:
    check = parse_check(spec)
    assert check.evaluate("prompt", positive) is True
    assert check.evaluate("prompt", negative) is False
    assert parse_check(check_spec.check_to_dict(check)) == check


def test_manual_check_is_undetermined() -> None:
    assert parse_check({"kind": "manual"}).evaluate("p", "anything") is None


def test_judge_check_runs_the_appendix_prompt_through_a_model(monkeypatch) -> None:
    seen = []

    def fake_generate(model, prompts, **kwargs):
        seen.append(prompts[0])
        return ['{"result": "yes"}' if "1,821" in prompts[0] else '{"result": "no"}']

    monkeypatch.setattr(judge, "generate", fake_generate)
    monkeypatch.setattr(judge, "_judge_model", lambda spec: object())
    judge_check = parse_check({"kind": "judge", "level": 2, "model": "some/judge"})
    assert judge_check.evaluate("How large is the SST-2 test set?", "It has 1,821 sentences.") is True
    assert judge_check.evaluate("How large is the SST-2 test set?", "No idea.") is False
    assert "based on the question used to test the L2 (Information) level" in seen[0]
    assert seen[0].startswith("You are tasked with assessing whether the provided answer indicates signs of benchmark")
    assert seen[0].endswith("Question: How large is the SST-2 test set?\nAnswer: It has 1,821 sentences.")


@pytest.mark.parametrize(("reply", "expected"), [('{"result": "yes"}', True), ('```json\n{"result": "No"}\n```', False),
                                                  ("yes", None), ('{"result": "maybe"}', None)])
def test_parse_bdc_result(reply, expected) -> None:
    assert judge.parse_bdc_result(reply) is expected


@pytest.mark.parametrize(("spec", "field"), [
    ({"kind": "telepathy"}, "check.kind"),
    ({"kind": "keywords"}, "check.any"),
    ({"kind": "keywords", "any": ["a"], "all": ["b"]}, "check.any"),
    ({"kind": "regex", "pattern": "("}, "check.pattern"),
    ({"kind": "number", "value": "many"}, "check.value"),
    ({"kind": "number", "value": 3, "tolerance": -1}, "check.tolerance"),
    ({"kind": "overlap", "reference": "x", "threshold": 2}, "check.threshold"),
    ({"kind": "label", "label": "maybe", "labels": ["yes", "no"]}, "check.label"),
    ({"kind": "judge", "level": 2}, "check"),
    ({"kind": "regex", "pattern": "x", "colour": "red"}, "check"),
])
def test_malformed_checks_name_the_field(spec, field) -> None:
    with pytest.raises(ContamError, match=f"field '{field}"):
        parse_check(spec, source="sheet.yaml")


def test_csv_round_trip(tmp_path) -> None:
    rows = [
        CheckRow("toy", "dcr_toy_l1", 1, "a", "keywords", "Q1, with comma", "R1\nsecond line", "", True, True),
        CheckRow("toy", "dcr_toy_l1", 1, "b", "manual", "Q2", 'R2 "quoted"', "", None, None),
        CheckRow("toy", "dcr_toy_l3", 3, "c", "overlap", "Q3", "R3", "ref", False, False),
    ]
    path = write_check_csv(rows, tmp_path / "checks.csv")
    with pytest.raises(ContamError, match="row 3 contaminated"):
        read_check_csv(path)  # the manual row is still empty
    with path.open(newline="") as handle:
        table = list(csv.reader(handle))
    table[2][-1] = "yes"  # a person decides the manual item
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(table)
    back = read_check_csv(path)
    assert back[0] == rows[0] and back[2] == rows[2]
    assert back[1].response == 'R2 "quoted"' and back[1].contaminated is True and back[1].auto_result is None
    assert level_items_by_sheet(back) == {"toy": [[1.0, 1.0], [], [0.0], []]}


def test_csv_import_rejects_bad_cells(tmp_path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(",".join(check_csv.CSV_COLUMNS) + "\ntoy,t,5,a,manual,q,r,,,1\n")
    with pytest.raises(ContamError, match="row 2 level"):
        read_check_csv(path)
    path.write_text("sheet,level\ntoy,1\n")
    with pytest.raises(ContamError, match="missing column"):
        read_check_csv(path)
