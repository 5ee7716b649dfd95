"""The control is a field of the partition card (issue 22, item 2): kind split / file / none and its source.

Nothing infers it from the number of splits: a card with splits besides the audited one names its control, or is
one line and exit 2 before anything is written. The likelihood modes run what the field allows, and their verdicts
name the control's kind and source.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lm_eval_contam.audit.own_data import OwnData, write_card
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.overlap import ControlOverlap
from lm_eval_contam.core.partitions import Control, Partition
from lm_eval_contam.methods.likelihood.configs import controlled_modes, render_task_config
from lm_eval_contam.methods.likelihood.verdicts import ComparisonEvidence

ROWS = [{"text": f"Note {i}: the exporter writes file number {i} before the importer reads it."} for i in range(6)]


def _card(tmp_path: Path, splits: tuple[str, ...], control: object = None) -> Path:
    """A card of ``splits`` (the first audited), each a small JSONL, with ``control`` when given."""
    for split in splits:
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    card = {"dataset_name": "Notes", "split": splits[0], "text_field": "text",
            "data_files": {split: f"{split}.jsonl" for split in splits},
            **({"control": control} if control is not None else {})}
    path = tmp_path / "card.yaml"
    path.write_text(yaml.safe_dump(card, sort_keys=False))
    return path


@pytest.mark.parametrize(("splits", "control", "message"), [
    (("test", "fresh", "old"), None, "the card has split(s) fresh, old besides 'test' and no `control` field"),
    (("test", "fresh"), None, "the card has split(s) fresh besides 'test' and no `control` field"),
    (("test", "fresh"), {"kind": "split", "source": "validation"},
     "the control's split 'validation' is not another split of the card (it has fresh)"),
    (("test",), {"kind": "split", "source": "test"}, "the control's split 'test' is not another split of the card"),
    (("test", "fresh"), {"kind": "file", "source": "fresh.jsonl"}, "kind file needs `split`"),
    (("test", "fresh"), {"kind": "maybe"}, "with kind split, file or none"),
    (("test", "fresh"), "fresh", "expected a mapping of kind, source, split"),
    (("test",), {"kind": "none", "source": "x"}, "kind none takes no source or split"),
])
def test_an_unclear_control_is_one_error_naming_the_card(tmp_path: Path, splits: tuple[str, ...], control: object,
                                                         message: str) -> None:
    path = _card(tmp_path, splits, control)
    with pytest.raises(ContamError) as error:
        Partition.from_card(path)
    text = str(error.value)
    assert text.startswith(f"{path}: field 'control': unclear control: ") and message in text and "\n" not in text


def test_the_card_names_the_control_and_the_modes_follow_it(tmp_path: Path) -> None:
    three = Partition.from_card(_card(tmp_path, ("test", "fresh", "old"), {"kind": "split", "source": "old"}))
    assert three.control == Control("split", "old", "old") == Control.of_split("old")
    assert controlled_modes(three) == ["control", "lift", "options"]  # three splits: the field decides, not the count
    text = render_task_config(three, "control")
    assert '  control: {"kind": "split", "source": "old"}' in text and "control_kind" not in text
    file = Partition.from_card(_card(tmp_path, ("test", "fresh"),
                                     {"kind": "file", "source": "/data/fresh.csv", "split": "fresh"}))
    assert file.control.describe() == "file /data/fresh.csv (as split fresh)"
    unnamed = Partition.from_card(_card(tmp_path, ("test", "fresh"), {"kind": "none"}))
    assert unnamed.control == Control() and controlled_modes(unnamed) == ["lift"]
    assert '  control: {"kind": "none"}' in render_task_config(unnamed, "lift")
    with pytest.raises(ContamError, match="has no control"):
        render_task_config(unnamed, "control")
    alone = Partition.from_card(_card(tmp_path, ("test",)))
    assert alone.control.kind == "none" and controlled_modes(alone) == ["lift"]


def test_registered_datasets_name_their_sibling_split_as_a_split_control() -> None:
    assert Partition.parse("toy_news:train").control == Control.of_split("test")
    assert Partition.parse("rte:validation").control == Control.of_split("train")
    assert controlled_modes(Partition.parse("imdb:test")) == ["control", "lift", "options"]


def test_the_task_yaml_carries_the_cards_control_and_the_evidence_names_it(tmp_path: Path) -> None:
    """Issue 50: one shape from the card to the verdicts: the task YAML's ``control`` is the card's mapping, read back
    by the card's own parser."""
    card = Partition.from_card(_card(tmp_path, ("test", "fresh"), {
        "kind": "file", "source": "/data/fresh.csv", "split": "fresh", "overlap": {"shared": 1, "near": 2, "rows": 6}}))
    text = render_task_config(card, "control")
    metadata = yaml.safe_load(text[text.index("metadata:"):])["metadata"]
    assert metadata["control"] == {"kind": "file", "source": "/data/fresh.csv", "split": "fresh",
                                   "overlap": {"shared": 1, "near": 2, "rows": 6}}
    control = Partition.from_task_metadata(metadata, "test").control
    assert control == card.control == Control("file", "/data/fresh.csv", "fresh",
                                              overlap=ControlOverlap(shared=1, rows=6, near=2))
    evidence = ComparisonEvidence("log-likelihood per byte", -1.0, -1.2, "control (Notes fresh)", 0.03,
                                  control=control.describe())
    assert evidence.facts()[-1] == ("control (kind, source)", "file /data/fresh.csv (as split fresh)")
    assert Partition.from_task_metadata({**metadata, "control": {"kind": "none"}}, "test").control == Control()


@pytest.mark.parametrize(("overlap", "message"), [
    ({"shared": 1, "rows": 6}, "expected the control's rows shared with the audited data, near copies of them and "
                               "all its rows, {shared: N, near: N, rows: N} with shared + near <= rows, got "),
    ({"shared": 4, "near": 3, "rows": 6}, "with shared + near <= rows"),
    ({"shared": True, "near": 0, "rows": 6}, "got {'shared': True"),
    ({"shared": 3, "near": 0, "rows": 6}, "control shares 3 of 6 rows (50%) with the audited data: a control sharing "
                                          "50% or more of its rows is the audited data"),
])
def test_a_cards_overlap_is_checked(tmp_path: Path, overlap: dict, message: str) -> None:
    path = _card(tmp_path, ("test", "fresh"), {"kind": "split", "source": "fresh", "overlap": overlap})
    with pytest.raises(ContamError) as error:
        Partition.from_card(path)
    assert str(error.value).startswith(f"{path}: field 'control.overlap': ") and message in str(error.value)


def test_own_data_writes_its_control_file_as_a_file_control(tmp_path: Path) -> None:
    source, fresh = tmp_path / "notes.jsonl", tmp_path / "fresh.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    fresh.write_text(json.dumps({"text": "A later note: the importer now reads archives as well."}) + "\n")
    card = write_card(OwnData(str(source), "test", "Notes", "text", control=Control("file", str(fresh), "fresh")),
                      tmp_path / "audit")
    assert yaml.safe_load(card.read_text())["control"] == {"kind": "file", "source": str(fresh), "split": "fresh",
                                                           "overlap": {"shared": 0, "near": 0, "rows": 1}}
    assert Partition.from_card(card).control == Control("file", str(fresh), "fresh", overlap=ControlOverlap(0, 1))


def test_audit_refuses_an_unclear_card_in_one_line_exit_2_nothing_written(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    card = _card(tmp_path, ("test", "fresh", "old"))
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--partitions", str(card), "--output_path",
                     str(out)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lm-eval-contam audit")]
    assert len(errors) == 1 and "field 'control': unclear control: the card has split(s) fresh, old" in errors[0]
    assert not out.exists()
