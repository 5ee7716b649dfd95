"""The one partition concept: names, labels, task names and task-metadata partitions (registered or one's own)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition, dataset_spec, resolve_path, sample_partitions


@pytest.mark.parametrize(
    ("path", "metadata", "expected"),
    [
        ("/data/eval.jsonl", {"config_source": "/configs/tasks/my.yaml"}, "/data/eval.jsonl"),
        ("data/eval.jsonl", {"config_source": "/configs/tasks/my.yaml"}, "/configs/tasks/data/eval.jsonl"),
        ("../eval.jsonl", {"config_source": "/configs/tasks/my.yaml"}, "/configs/tasks/../eval.jsonl"),
        ("data/eval.jsonl", {"config_source": "inline"}, "data/eval.jsonl"),  # `--tasks` given as a dict
        ("data/eval.jsonl", {}, "data/eval.jsonl"),
        ("data/eval.jsonl", {"config_source": None}, "data/eval.jsonl"),
    ],
)
def test_resolve_path_anchors_relative_paths_at_the_task_yaml(path: str, metadata: dict, expected: str) -> None:
    assert resolve_path(path, metadata) == Path(expected)


def test_resolve_path_expands_the_home_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_path("~/eval.jsonl", {"config_source": "/configs/my.yaml"}) == tmp_path / "eval.jsonl"


def test_parse_names_and_labels_a_registered_partition() -> None:
    partition = Partition.parse("toy_news:train")
    assert partition == Partition(dataset_spec("toy_news"), "train")
    assert partition.name == "toy_news:train"
    assert partition.label == "Toy News train"
    assert Partition.parse("rte:validation").label == "RTE validation"


def test_task_names() -> None:
    partition = Partition.parse("ag_news:test")
    assert partition.task_name("timetravel") == "timetravel_ag_news_test"
    assert partition.task_name("timetravel", "completion") == "timetravel_ag_news_test_completion"
    assert partition.task_name("dcq", "ll") == "dcq_ag_news_test_ll"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("toy_news", "field 'partition': expected <dataset>:<split>, e.g. toy_news:train; got 'toy_news'"),
        ("toy_news:", "got 'toy_news:'"),
        (":train", "got ':train'"),
        ("toy_news:train:x", "got 'toy_news:train:x'"),
        ("nope:train", "field 'dataset': unknown dataset 'nope'; known: ag_news, gsm8k, imdb"),
        ("toy_news:dev", "field 'split': Toy News has no audited split 'dev'; known: train, test"),
    ],
)
def test_parse_errors_name_the_value(name: str, message: str) -> None:
    with pytest.raises(ContamError) as error:
        Partition.parse(name)
    assert message in str(error.value)


def test_label_text_of_an_index_and_a_name() -> None:
    partition = Partition.parse("ag_news:train")
    assert partition.label_text(2) == "2 (Business)"
    assert partition.label_text("Business") == "2 (Business)"
    assert partition.label_text("Politics") == "Politics"  # not a label name: passes through
    assert Partition.parse("gsm8k:test").label_text(3) == "3"  # unlabelled: passes through


@pytest.mark.parametrize(
    ("value", "message"),
    [(4, "label 4 is outside 0..3 for AG News"), (-1, "label -1 is outside 0..3 for AG News"),
     (True, "label True is neither an index nor a name"), (1.0, "label 1.0 is neither an index nor a name")],
)
def test_label_text_rejects_bad_labels(value: object, message: str) -> None:
    with pytest.raises(ContamError) as error:
        Partition.parse("ag_news:train").label_text(value, "rows.jsonl row 3")
    assert str(error.value) == f"rows.jsonl row 3: field 'label': {message}"


def test_from_task_metadata_with_a_registered_dataset() -> None:
    partition = Partition.from_task_metadata({"dataset": "ag_news", "config_source": "/x/task.yaml"}, "test")
    assert partition == Partition.parse("ag_news:test")
    with pytest.raises(ContamError, match="unknown dataset 'nope'"):
        Partition.from_task_metadata({"dataset": "nope"}, "test")
    with pytest.raises(ContamError, match="AG News has no audited split 'dev'"):
        Partition.from_task_metadata({"dataset": "ag_news"}, "dev")


def _own_metadata(config_source: Path, **overrides: object) -> dict:
    return {
        "dataset_name": "My Bench v2",
        "data_files": {"eval": "data/eval.jsonl"},
        "task_type": "cls",
        "text_field": "sentence",
        "label_field": "label",
        "label_names": ["no", "yes"],
        "config_source": str(config_source),
        **overrides,
    }


def test_from_task_metadata_with_ones_own_data(tmp_path: Path) -> None:
    yaml_file = tmp_path / "tasks" / "my_bench.yaml"
    data = yaml_file.parent / "data" / "eval.jsonl"
    data.parent.mkdir(parents=True)
    data.write_text(json.dumps({"sentence": "It works.", "label": 1}) + "\n")
    partition = Partition.from_task_metadata(_own_metadata(yaml_file), "eval")
    assert (partition.name, partition.label) == ("my_bench_v2:eval", "My Bench v2 eval")
    assert partition.task_name("dcq") == "dcq_my_bench_v2_eval"
    assert partition.data_file == data  # relative to the YAML, not the working directory
    assert partition.rows() == [{"sentence": "It works.", "label": 1}]
    assert partition.label_text(1) == "1 (yes)"
    dataset = partition.dataset
    assert dataset.hf_path is None and dataset.splits == ("eval",)
    assert dataset.dcq_columns == ("sentence", "label")  # default: the text, reference and label columns


def test_a_sample_cap_keeps_the_first_instances_of_the_same_seeded_draw(tmp_path: Path) -> None:
    from lm_eval_contam.kit.instances import sample_indices

    yaml_file = tmp_path / "my_bench.yaml"
    rows = [{"sentence": f"Row number {i}.", "label": i % 2} for i in range(40)]
    uncapped = Partition.from_task_metadata(_own_metadata(yaml_file), "eval")
    capped = Partition.from_task_metadata(_own_metadata(yaml_file, sample=6), "eval")
    assert capped.dataset.task_metadata()["sample"] == 6 and "sample" not in uncapped.dataset.task_metadata()
    # audit --tasks' cap: at most 6 of the 100 asked, the very six an uncapped draw of 6 gives (same seeded order).
    assert sample_indices(capped, rows, 100, 0) == sample_indices(uncapped, rows, 6, 0)
    assert len(sample_indices(uncapped, rows, 100, 0)) == 40 and len(sample_indices(capped, rows, 3, 0)) == 3
    with pytest.raises(ContamError, match=r"field 'sample'.*expected an integer >= 1, got 0"):
        Partition.from_task_metadata(_own_metadata(yaml_file, sample=0), "eval")


def test_from_task_metadata_keeps_absolute_data_files_and_explicit_columns(tmp_path: Path) -> None:
    data = tmp_path / "elsewhere.jsonl"
    metadata = _own_metadata(tmp_path / "tasks" / "my.yaml", data_files={"test": str(data)}, columns=["sentence"],
                             task_type="nli", second_field="hypothesis")
    partition = Partition.from_task_metadata(metadata, "test")
    assert partition.data_file == data
    assert partition.dataset.dcq_columns == ("sentence",)
    assert partition.dataset.second_field == "hypothesis"


@pytest.mark.parametrize(
    ("overrides", "split", "message"),
    [
        ({"data_files": None}, "eval", "field 'data_files': expected a mapping split -> JSONL path"),
        ({"data_files": {}}, "eval", "field 'data_files': expected a mapping split -> JSONL path"),
        ({"task_type": "regression"}, "eval", "field 'task_type': 'regression' is not one of cls, nli, sum, xsum"),
        ({"task_type": "nli"}, "eval", "field 'second_field': nli partitions need the reference column"),
        ({}, "test", "field 'split': My Bench v2 has no audited split 'test'; known: eval"),
    ],
)
def test_from_task_metadata_errors_name_the_field(tmp_path: Path, overrides: dict, split: str, message: str) -> None:
    yaml_file = tmp_path / "my.yaml"
    with pytest.raises(ContamError) as error:
        Partition.from_task_metadata(_own_metadata(yaml_file, **overrides), split)
    assert message in str(error.value)
    if split == "eval":
        assert str(error.value).startswith(f"{yaml_file}: ")


def test_from_task_metadata_names_the_missing_keys(tmp_path: Path) -> None:
    metadata = {"dataset_name": "B", "task_type": "cls", "config_source": str(tmp_path / "my.yaml")}
    with pytest.raises(ContamError) as error:
        Partition.from_task_metadata(metadata, "test")
    assert str(error.value) == (f"{tmp_path / 'my.yaml'}: field 'metadata': set `dataset` (a registered key) or "
                                "data_files, text_field in the task metadata")


def test_missing_data_file_is_named(tmp_path: Path) -> None:
    partition = Partition.from_task_metadata(_own_metadata(tmp_path / "my.yaml"), "eval")
    with pytest.raises(ContamError) as error:
        partition.rows()
    assert str(error.value) == f"{tmp_path / 'data' / 'eval.jsonl'}: field 'data_files': data file not found"


def test_sample_partitions_are_the_shipped_ones_in_registry_order() -> None:
    assert [partition.name for partition in sample_partitions()] == [
        "toy_news:train", "toy_news:test", "toy_reviews:train", "toy_reviews:test",
        "toy_pairs:train", "toy_pairs:test", "toy_dialogues:train", "toy_dialogues:test",
    ]
    assert all(len(partition.rows()) == 12 for partition in sample_partitions())


@pytest.mark.parametrize(("value", "message"), [
    ("ten", "expected an integer >= 1, got 'ten'"), (0, "expected an integer >= 1, got 0"),
    (2.5, "expected an integer >= 1, got 2.5"), (True, "expected an integer >= 1, got True"),
])
def test_numeric_task_settings_name_the_yaml_field_and_value(value, message) -> None:
    from lm_eval_contam.methods.dcq.task import DCQSettings
    from lm_eval_contam.methods.likelihood.task import LikelihoodSettings

    metadata = {"dataset": "toy_news", "num_instances": value, "config_source": "/tasks/dcq_x.yaml"}
    for settings in (DCQSettings, LikelihoodSettings):
        with pytest.raises(ContamError, match=rf"/tasks/dcq_x\.yaml.*num_instances.*{re.escape(message)}"):
            settings.from_metadata({**metadata, "control": {"kind": "split", "source": "test"}}, "train")
    assert DCQSettings.from_metadata({**metadata, "num_instances": 7.0}, "train").num_instances == 7


def test_a_true_or_false_setting_is_checked_and_names_the_yaml() -> None:
    from lm_eval_contam.core.partitions import metadata_flag

    assert metadata_flag({}, "all_orders") is False and metadata_flag({"all_orders": True}, "all_orders") is True
    with pytest.raises(ContamError, match=r"^/x/task\.yaml: field 'all_orders': expected true or false, got 'yes'$"):
        metadata_flag({"all_orders": "yes", "config_source": "/x/task.yaml"}, "all_orders")


def test_a_benchmark_sample_above_the_methods_default_is_drawn_whole(tmp_path: Path) -> None:
    """``audit --sample N`` is the number of instances the sampled tests read: a task that names no ``num_instances``
    draws 150 of 200 rows (the methods' own default, 100, was a silent cap), 24 at the default size, every row when
    fewer; a task that names its own keeps it."""
    from lm_eval_contam.kit.instances import sample_indices, sampled_partition

    rows = [{"sentence": f"Row number {index} of the benchmark, written out.", "label": 0} for index in range(200)]

    def drawn(sample: int | None, **metadata: int) -> int:
        own = _own_metadata(tmp_path / "my_bench.yaml", **({"sample": sample} if sample else {}))
        settings = sampled_partition({**own, **metadata}, "eval")
        return len(sample_indices(settings["partition"], rows, settings["num_instances"], settings["seed"]))

    assert [drawn(150), drawn(24), drawn(300), drawn(None), drawn(150, num_instances=40)] == [150, 24, 200, 100, 40]
