"""Claims a control cannot carry (issue 51, group 7): a control smaller than the ones the quoted rates were measured
with gets a caveat naming both sizes, and a control holding near copies of audited items (the questions with their
options rotated, another year's copy with small edits) gets a note counting them. The overlap is measured once, when
the control is chosen, and the card carries it to the task YAMLs and the verdicts (issue 50)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lm_eval_contam.core.overlap import NEAR_COPY_JACCARD, ControlOverlap, control_overlap, near_copies
from lm_eval_contam.methods.likelihood.verdicts import control_size_caveats
from test_split_control import write_task

FRESH = Path(__file__).resolve().parents[1] / "lm_eval_contam" / "nullstudy" / "fresh"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FRESH / f"{name}.jsonl").read_text().splitlines()]


def _question(row: dict, rotation: int = 0) -> str:
    """A multiple-choice item as a task's template renders it, its options rotated by ``rotation``."""
    choices = row["choices"][rotation:] + row["choices"][:rotation]
    return "\n".join([f"Question: {row['question']}", *(f"{letter}. {choice}" for letter, choice in
                                                         zip("ABCD", choices)), "Answer:"])


def _edited(text: str) -> str:
    """Another year's copy: the year changed and one word replaced."""
    words = text.replace("2026", "2025", 1).split(" ")
    words[len(words) // 2] = "revised"
    return " ".join(words)


def test_near_copies_are_found_and_distinct_items_are_not() -> None:
    """The threshold's evidence: every rotated or edited copy of the study's fresh items is a near copy, and no
    item of a fresh split is one of its sibling split's (all 16 pairs, 24 + 24 items each)."""
    for name in ("mc_arith", "mc_civics", "mc_geo", "mc_reading", "mc_science", "mc_tech", "mc_vocab", "mc_everyday"):
        audited = [_question(row) for row in _rows(f"{name}_a")]
        assert near_copies(audited, [_question(row, 1) for row in _rows(f"{name}_a")]) == [True] * 24
        assert not any(near_copies(audited, [_question(row) for row in _rows(f"{name}_b")]))
    for name in ("council", "labnotes", "matches", "museum", "postmortems", "recalls", "recipes", "trails"):
        audited = [row["text"] for row in _rows(f"free_{name}_a")]
        assert near_copies(audited, [_edited(text) for text in audited]) == [True] * 24
        assert not any(near_copies(audited, [row["text"] for row in _rows(f"free_{name}_b")]))
    assert NEAR_COPY_JACCARD == 0.5


def test_the_overlap_counts_copies_and_near_copies_apart() -> None:
    audited = [row["text"] for row in _rows("free_labnotes_a")]
    control = [audited[0].upper(), *(_edited(text) for text in audited[1:4]),
               *(row["text"] for row in _rows("free_labnotes_b")[:6])]
    overlap = control_overlap(audited, control)
    assert overlap == ControlOverlap(shared=1, rows=10, near=3)
    assert overlap.describe() == "control shares 1 of 10 rows (10%) with the audited data"
    assert overlap.near_copies_note() == (
        "3 of 10 control items are near copies of audited items (their word pairs' Jaccard index >= 0.5): a model "
        "that saw the audited items may know these too, so the control tests lose power on them")
    assert ControlOverlap(shared=2, rows=10).near_copies_note() is None


def test_a_control_smaller_than_the_measured_ones_gets_the_size_caveat() -> None:
    caveat = ("compared with a control of 3 items (24 audited); the rates quoted were measured with controls of 24 "
              "items a side, so its power is below the detection rate quoted")
    assert control_size_caveats((24, 3), "free text", "likelihood_control") == (caveat,)
    # the zlib and options tests were measured on the same controls as the control mode
    assert control_size_caveats((24, 3), "free text", "likelihood_options") == (caveat,)
    assert control_size_caveats((2000, 70), "multiple choice", "likelihood_control") == (
        "compared with a control of 70 items (2000 audited); the rates quoted were measured with controls of 96 items "
        "a side, so its power is below the detection rate quoted",)
    assert control_size_caveats((24, 24), "free text", "likelihood_control") == ()
    assert control_size_caveats((2000, 50), "free text", "likelihood_control") == ()  # nearest measured: 24


def test_the_default_control_of_three_rows_and_one_of_near_copies_say_so_on_their_verdicts(
        tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3-row validation split taken as the default control, and one half made of another year's copies of the
    audited notes: each control verdict carries its caveat, and the card and the task YAML carry the overlap."""
    from lm_eval_contam.cli import main as cli_main
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    audited = [row["text"] for row in _rows("free_labnotes_a")]
    other = [row["text"] for row in _rows("free_labnotes_b")]
    for name, validation in (("notes_small", other[:3]), ("notes_copied", [*map(_edited, audited[:12]), *other[:12]])):
        write_task(tasks, name, {"test": audited, "validation": validation},
                   {"test_split": "test", "validation_split": "validation"})
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(tasks),
                     "--tasks", "notes_small,notes_copied", "--methods", "likelihood", "--sample", "8",
                     "--batch_size", "16", "--no-report", "--output_path", str(out)]) == 0
    card = yaml.safe_load((out / "partitions" / "task_notes_copied_test.yaml").read_text())
    assert card["control"]["overlap"] == {"shared": 0, "near": 12, "rows": 24}
    task_yaml = (out / "tasks" / "task_notes_copied_test" / "likelihood_task_notes_copied_test.yaml").read_text()
    assert '"overlap": {"shared": 0, "near": 12, "rows": 24}' in task_yaml
    verdicts = {(v.partition, v.test): v for v in collect(load_run(out)) if v.family == "likelihood"}
    near = ("12 of 24 control items are near copies of audited items (their word pairs' Jaccard index >= 0.5): a "
            "model that saw the audited items may know these too, so the control tests lose power on them")
    # the control mode compares every item (24 audited), the options mode the --sample of 8
    for test, audited_items in (("likelihood_control", 24), ("likelihood_control_zlib", 24),
                                ("likelihood_options", 8)):
        small = (f"compared with a control of 3 items ({audited_items} audited); the rates quoted were measured with "
                 "controls of 24 items a side, so its power is below the detection rate quoted")
        assert small in verdicts[("notes_small test", test)].caveats
        assert near in verdicts[("notes_copied test", test)].caveats
    for test in ("likelihood_control", "likelihood_control_zlib"):  # 24 control items compared: no size caveat
        assert not any(caveat.startswith("compared with a control") for caveat in
                       verdicts[("notes_copied test", test)].caveats)
    assert not any("near copies" in caveat for caveat in verdicts[("notes_small test", "likelihood_control")].caveats)
