"""One's own benchmark: partition cards from a data file, their checks, and `audit --data` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lm_eval_contam import task_dir
from lm_eval_contam.audit.own_data import OwnData, write_card, write_task_configs
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Control, Partition, resolve_partition
from lm_eval_contam.core.registry import AuditedModel, registered_methods

RELEASE_NOTES = task_dir() / "examples" / "release_notes.jsonl"
# The families whose task names the tests spell out; a method added later has tests of its own.
BUILTIN_FAMILIES = ("timetravel", "dcq", "dcr", "likelihood", "incontext", "optionorder")


def _own(source: Path | str, **fields) -> OwnData:
    return OwnData(**{"source": str(source), "split": "test", "name": "Release Notes", "text_field": "text",
                      "label_field": "label", "label_names": ("fix", "feature"), **fields})


def test_card_from_a_jsonl_file_is_the_partition_every_method_reads(tmp_path: Path) -> None:
    card = write_card(_own(RELEASE_NOTES), tmp_path)
    assert card == tmp_path / "partitions" / "release_notes_test.yaml"
    assert yaml.safe_load(card.read_text()) == {
        "dataset_name": "Release Notes", "split": "test", "text_field": "text",
        "data_files": {"test": str(RELEASE_NOTES.resolve())}, "label_field": "label", "label_names": ["fix", "feature"]}
    partition = resolve_partition(str(card))
    assert (partition.name, partition.label, partition.dataset.task_type) == ("release_notes:test", "Release Notes test", "cls")
    assert partition.label_text(1) == "1 (feature)" and len(partition.rows()) == 12
    assert write_card(_own(RELEASE_NOTES), tmp_path) == card  # the same card again: no change, no error
    with pytest.raises(ContamError, match="exists with other content"):
        write_card(_own(RELEASE_NOTES, label_names=("bug", "feature")), tmp_path)
    assert yaml.safe_load(card.read_text())["label_names"] == ["fix", "feature"]  # nothing overwritten


def test_csv_with_a_spreadsheet_bom_becomes_jsonl_with_integer_labels(tmp_path: Path) -> None:
    source = tmp_path / "bench.csv"
    source.write_bytes("\ufefftext,label\nA sentence about rain.,0\n\"Quoted, with a comma.\",1\n".encode())
    card = write_card(_own(source, name="My Bench"), tmp_path / "audit")
    rows = Partition.from_card(card).rows()
    assert rows == [{"text": "A sentence about rain.", "label": 0}, {"text": "Quoted, with a comma.", "label": 1}]


@pytest.mark.parametrize(("content", "message"), [
    ("", "no rows: the partition is empty"),
    ('{"text": "fine", "label": 0}\n{"body": "x", "label": 1}\n', r"bad\.jsonl:2.*text.*columns: body, label"),
    ('{"text": "fine", "label": 0}\n{"text": "  ", "label": 1}\n', r"bad\.jsonl:2.*text.*expected non-empty text"),
    ('{"text": "fine", "label": 7}\n', r"bad\.jsonl:1.*label.*outside 0\.\.1"),
    ('{"text": "fine"}\n', r"bad\.jsonl:1.*label.*no label column"),
])
def test_bad_rows_name_file_line_field_and_value(tmp_path: Path, content: str, message: str) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(content)
    with pytest.raises(ContamError, match=message):
        write_card(_own(source), tmp_path / "audit")
    assert not (tmp_path / "audit" / "partitions").exists()  # no card for data that failed its checks


def test_a_control_file_becomes_the_cards_second_split(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text('{"text": "A later note about the exporter.", "label": 1}\n')
    card = write_card(_own(RELEASE_NOTES, control=Control("file", str(fresh), "fresh")), tmp_path)
    partition = Partition.from_card(card)
    assert partition.dataset.splits == ("test", "fresh") and partition.split == "test"
    configs = sorted(path.name for path in write_task_configs(partition, tmp_path).iterdir())
    assert [name for name in configs if name.startswith("likelihood_")] == [
        "likelihood_release_notes_test.yaml", "likelihood_release_notes_test_lift.yaml",
        "likelihood_release_notes_test_options.yaml"]
    assert ('  control: {"kind": "file", "source": "%s", "split": "fresh", "overlap": {"shared": 0, "near": 0, '
            '"rows": 1}}' % fresh) in (tmp_path / "tasks" / "release_notes_test" / "likelihood_release_notes_test.yaml"
                                       ).read_text()
    with pytest.raises(ContamError, match="a control needs its own file and a split name"):
        write_card(_own(RELEASE_NOTES, control=Control("file", str(fresh), None)), tmp_path / "other")


def test_bad_sources_and_cards(tmp_path: Path) -> None:
    with pytest.raises(ContamError, match="data file not found"):
        write_card(_own(tmp_path / "missing.jsonl"), tmp_path)
    with pytest.raises(ContamError, match=r"expected a \.jsonl or \.csv file"):
        write_card(_own(tmp_path / "data.parquet"), tmp_path)
    (tmp_path / "latin1.csv").write_bytes("text,label\ncaf\xe9,0\n".encode("latin-1"))
    with pytest.raises(ContamError, match="not UTF-8"):
        write_card(_own(tmp_path / "latin1.csv"), tmp_path)
    card = tmp_path / "card.yaml"
    card.write_text("dataset_name: X\nsplit: test\ndata_files: {test: x.jsonl}\ntext_field: text\nlables: [a]\n")
    with pytest.raises(ContamError, match=r"card\.yaml.*unknown field\(s\) \['lables'\]"):
        Partition.from_card(card)


def test_a_hub_dataset_card_names_its_path_and_split(tmp_path: Path) -> None:
    card = write_card(_own("someone/bench", hf_name="main"), tmp_path)
    partition = Partition.from_card(card)
    assert (partition.dataset.hf_path, partition.dataset.hf_name, partition.dataset.splits) == (
        "someone/bench", "main", ("test",))
    configs = write_task_configs(partition, tmp_path)
    text = (configs / "timetravel_release_notes_test.yaml").read_text()
    assert "dataset_path: someone/bench\ndataset_name: main\ntest_split: test" in text
    assert '  hf_path: "someone/bench"' in text and '  splits: ["test"]' in text


def test_audit_data_runs_every_method_and_lists_instances_left_out_of_the_quiz(tiny_model_dir: Path,
                                                                               tmp_path: Path) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    fresh = tmp_path / "fresh.csv"  # the likelihood modes' control: notes of the same kind the model never saw
    fresh.write_text("text,label\n" + "".join(
        f"Version {i} fixes the export of reports with more than {i * 100} rows to the shared folder.,0\n"
        for i in range(1, 9)))
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(RELEASE_NOTES),
                     "--split", "test", "--name", "Release Notes", "--text-field", "text", "--label-field", "label",
                     "--label-names", "fix,feature", "--control-data", str(fresh), "--control-split", "fresh",
                     "--max_gen_toks", "4", "--batch_size", "12", "--output_path", str(tmp_path)]) == 0
    audit = json.loads((tmp_path / "audit.json").read_text())
    assert audit["partitions"] == ["partitions/release_notes_test.yaml"]  # relative: the directory can move
    model = audit["models"][0]
    # Every registered method's tasks for the card, in report order, but those whose every test is over its level
    # (pairing: left out unless --methods names it); the built-ins' by name.
    card = Partition.from_card(tmp_path / audit["partitions"][0])
    assert audit["settings"]["skip_methods"] == ["pairing", "sentenceorder"]
    assert model["tasks"] == [task for spec in registered_methods() if spec.name not in ("pairing", "sentenceorder")
                              for task in spec.task_names(card, AuditedModel(chat=True, plain_text=True))]
    assert [task for task in model["tasks"] if task.split("_", 1)[0] in BUILTIN_FAMILIES] == [
        "timetravel_release_notes_test", "timetravel_release_notes_test_completion", "dcq_release_notes_test_ll",
        "likelihood_release_notes_test", "likelihood_release_notes_test_lift", "likelihood_release_notes_test_options",
        "incontext_release_notes_test"]
    # The offline perturber cannot vary two of the twelve notes (one replaceable word each; the version line's
    # numbers may change): left out of the quiz and listed, never dropped silently.
    left_out = model["quiz_left_out"]["dcq_release_notes_test_ll"]
    assert [entry["instance"] for entry in left_out][-1] == (
        "text: Teams can now share saved filters, and each filter shows who created it and when it was last "
        "changed.\nlabel: 1 (feature)")
    assert len(left_out) == 2
    # 10 quizzable notes + the 8 control notes (the likelihood options mode scores the control's sample too).
    assert len((tmp_path / "dcq_options" / "release_notes_test.jsonl").read_text().splitlines()) == 10 + 8
    verdicts = {(v.test, v.variant): v for v in collect(load_run(tmp_path))}
    quiz = verdicts[("dcq_loglikelihood", None)]
    assert quiz.n == 10 and quiz.partition == "Release Notes test"
    assert quiz.caveats[0].startswith("2 sampled instance(s) left out of the quiz, no valid options could be made")
    assert verdicts[("tt_alg1", "completion")].n == 10  # the paper's sample size for any partition not shipped
    assert "left out of the quiz" in (tmp_path / "report.md").read_text()
    control = [v for v in verdicts.values() if v.family == "likelihood" and v.test == "likelihood_control"]
    assert len(control) == 1 and 0.0 <= control[0].pvalue <= 1.0


def test_a_bad_csv_row_names_its_csv_line_and_nothing_is_written(tmp_path: Path) -> None:
    source = tmp_path / "bench.csv"
    source.write_text("text,label\nA fine row.,0\nAnother fine row.,1\n ,0\n")
    with pytest.raises(ContamError, match=r"bench\.csv:4.*text.*expected non-empty text"):
        write_card(_own(source), tmp_path / "audit")
    assert not (tmp_path / "audit").exists()  # neither the card nor the converted rows


def test_an_unreachable_hub_dataset_is_a_one_line_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    partition = Partition.from_card(write_card(_own("someone/bench"), tmp_path))
    with pytest.raises(ContamError, match=r"someone/bench.*hf_path.*cannot load the Hub dataset's split 'test'"):
        partition.rows()
