"""The shipped sample partitions: registry, data, offline DCQ options and the generated lm-eval tasks."""

from __future__ import annotations

import json
from collections import Counter

import datasets
import pytest

import lm_eval_contam
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import (
    DATASETS,
    SAMPLE_DATASETS,
    Partition,
    dataset_spec,
    sample_data_dir,
    sample_partitions,
)
from lm_eval_contam.kit.instances import sample_instances
from lm_eval_contam.kit.quiz_options import options_for, read_options
from lm_eval_contam.methods.dcq.configs import sample_options_file

SAMPLE_PARTITIONS = [f"{key}:{split}" for key in ("toy_news", "toy_reviews", "toy_pairs", "toy_dialogues")
                     for split in ("train", "test")]
FIELDS = {
    "toy_news": {"text", "label"},
    "toy_reviews": {"text", "label"},
    "toy_pairs": {"sentence1", "sentence2", "label"},
    "toy_dialogues": {"dialogue", "summary"},
}
# Per-field word-count bounds the datasets were written to.
WORD_BOUNDS = {
    ("toy_reviews", "text"): (15, 35),
    ("toy_pairs", "sentence1"): (15, 30),
    ("toy_pairs", "sentence2"): (6, 15),
    ("toy_dialogues", "dialogue"): (30, 70),
    ("toy_dialogues", "summary"): (10, 25),
}


def test_sample_partitions_are_listed_in_registry_order() -> None:
    assert [partition.name for partition in sample_partitions()] == SAMPLE_PARTITIONS
    assert not set(SAMPLE_DATASETS) & set(DATASETS)
    assert [SAMPLE_DATASETS[key].display_name for key in FIELDS] == [
        "Toy News", "Toy Reviews", "Toy Pairs", "Toy Dialogues"]


@pytest.mark.parametrize("name", SAMPLE_PARTITIONS)
def test_sample_partition_rows(name: str) -> None:
    partition = Partition.parse(name)
    spec, rows = partition.dataset, partition.rows()
    assert len(rows) == 12
    assert all(set(row) == FIELDS[spec.key] for row in rows)
    assert len({json.dumps(row, sort_keys=True) for row in rows}) == 12
    if spec.label_field:
        counts = Counter(row[spec.label_field] for row in rows)
        assert set(counts) == set(range(len(spec.label_names)))
        assert len(set(counts.values())) == 1  # balanced
    for (key, column), (low, high) in WORD_BOUNDS.items():
        if key == spec.key:
            assert all(low <= len(row[column].split()) <= high for row in rows), column
    if spec.key == "toy_dialogues":
        for row in rows:
            turns = row["dialogue"].split("\n")
            assert 3 <= len(turns) <= 5
            assert all(turn.split(": ", 1)[0].isalpha() for turn in turns), turns


@pytest.mark.parametrize("key", list(FIELDS))
def test_splits_share_no_row(key: str) -> None:
    spec = dataset_spec(key)
    train, test = ({json.dumps(row, sort_keys=True) for row in spec.partition(split).rows()}
                   for split in ("train", "test"))
    assert not train & test


def test_sample_specs_follow_the_hub_datasets_of_their_type() -> None:
    pairs, rte = dataset_spec("toy_pairs"), dataset_spec("rte")
    assert (pairs.task_type, pairs.text_field, pairs.second_field, pairs.dcq_columns) == (
        rte.task_type, rte.text_field, rte.second_field, rte.dcq_columns)
    dialogues, samsum = dataset_spec("toy_dialogues"), dataset_spec("samsum")
    assert (dialogues.task_type, dialogues.text_field, dialogues.companion_field, dialogues.dcq_columns) == (
        "sum", "summary", "dialogue", ("summary",)) == (
        samsum.task_type, samsum.text_field, samsum.companion_field, samsum.dcq_columns)
    assert dataset_spec("toy_reviews").label_text(1) == "1 (positive)"
    assert dataset_spec("toy_pairs").label_text(1) == "1 (not_entailment)"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("toy_news", r"expected <dataset>:<split>"),
        (":train", r"expected <dataset>:<split>"),
        ("toy_news:", r"expected <dataset>:<split>"),
        ("toy_news:train:x", r"expected <dataset>:<split>"),
        ("toy_news:validation", r"Toy News has no audited split 'validation'; known: train, test"),
        ("nope:train", r"unknown dataset 'nope'; known: .*imdb.*toy_dialogues, toy_news, toy_pairs, toy_reviews"),
    ],
)
def test_parse_partition_errors(name: str, message: str) -> None:
    with pytest.raises(ContamError, match=message):
        Partition.parse(name)


def test_parse_partition_reads_hub_partitions_too() -> None:
    partition = Partition.parse("rte:validation")
    spec, split = partition.dataset, partition.split
    assert (spec.key, spec.hf_path, spec.hf_name, split) == ("rte", "nyu-mll/glue", "rte", "validation")


def test_hub_rows_come_from_load_dataset(monkeypatch) -> None:
    calls = []

    def fake_load_dataset(path, name, revision, split):
        calls.append((path, name, revision, split))
        return datasets.Dataset.from_list([{"sentence1": "a", "sentence2": "b", "label": 0}])

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    rows = Partition.parse("rte:train").rows()
    assert rows == [{"sentence1": "a", "sentence2": "b", "label": 0}]
    assert calls == [("nyu-mll/glue", "rte", None, "train")]


def test_sample_rows_reject_an_unknown_split() -> None:
    with pytest.raises(ContamError, match="Toy Pairs has no audited split 'dev'"):
        dataset_spec("toy_pairs").partition("dev")


@pytest.mark.parametrize("key", list(FIELDS))
def test_every_sample_row_has_valid_shipped_options(key: str) -> None:
    path = sample_data_dir() / sample_options_file(key)
    cache = read_options(path)  # re-validates every entry
    quizzed = set()
    for split in ("train", "test"):
        partition = dataset_spec(key).partition(split)
        instances = sample_instances(partition, partition.rows(), 100, seed=0)
        assert len(instances) == 12
        entries = options_for(instances, cache, cache_path=path, command="-")
        assert all(entry.generator == "offline" for entry in entries)
        quizzed |= {entry.key for entry in entries}
    assert quizzed == set(cache)  # no stray entries
    assert len(path.read_text().splitlines()) == 24


def test_dcq_options_cli_reads_a_sample_dataset_key(tmp_path, capsys) -> None:
    out = tmp_path / "options.jsonl"
    argv = ["dcq-options", "--dataset", "toy_reviews", "--split", "test", "--generator", "offline", "--out", str(out),
            "--no-progress"]
    assert cli_main(argv) == 0
    assert "Toy Reviews test: 12 instances, 0 already in" in capsys.readouterr().out
    shipped = read_options(sample_data_dir() / sample_options_file("toy_reviews"))
    written = read_options(out)
    assert len(written) == 12
    assert all(shipped[key].options == entry.options for key, entry in written.items())  # deterministic
    # An interrupted run keeps its finished chunks; a re-run computes only the rest.
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:8]) + "\n")
    assert cli_main(argv) == 0
    assert "12 instances, 8 already in" in capsys.readouterr().out
    assert out.read_text().splitlines()[:8] == lines[:8] and len(read_options(out)) == 12


@pytest.fixture(scope="module")
def task_manager():
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(lm_eval_contam.task_dir()), include_defaults=False)


def test_task_manager_lists_every_sample_task(task_manager) -> None:
    names = set(task_manager.all_tasks)
    expected = {
        name
        for partition in SAMPLE_PARTITIONS
        for key, split in [partition.split(":")]
        for name in (f"timetravel_{key}_{split}", f"timetravel_{key}_{split}_completion",
                     f"dcq_{key}_{split}", f"dcq_{key}_{split}_ll")
    }
    assert len(expected) == 32
    assert expected <= names
    assert {"timetravel_samples", "timetravel_samples_completion", "dcq_samples", "dcq_samples_gen",
            "dcq_samples_ll"} <= names
    assert not {name for name in names if "_local" in name}


def test_sample_tasks_build_with_every_row(task_manager) -> None:
    from lm_eval.tasks import get_task_dict

    tasks = get_task_dict(["timetravel_toy_pairs_test", "timetravel_toy_dialogues_train_completion",
                           "dcq_toy_reviews_train", "dcq_toy_dialogues_test_ll"], task_manager)
    docs = {name: list(task.eval_docs) for name, task in tasks.items()}
    assert {name: len(d) for name, d in docs.items()} == {
        "timetravel_toy_pairs_test": 12,
        "timetravel_toy_dialogues_train_completion": 12,
        "dcq_toy_reviews_train": 12,
        "dcq_toy_dialogues_test_ll": 12,
    }
    nli = docs["timetravel_toy_pairs_test"][0]
    assert "Toy Pairs" in nli["guided_prompt"] and nli["label"] in ("0 (entailment)", "1 (not_entailment)")
    quiz = docs["dcq_toy_dialogues_test_ll"][0]
    assert (quiz["dataset_name"], quiz["split"]) == ("Toy Dialogues", "test")
    assert quiz["instance"].startswith("summary: ") and len(quiz["options"]) == 4
