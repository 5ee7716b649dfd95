"""Each registered Hub dataset asks `datasets` for a repository, revision, configuration and splits that load today.

The Hub is unreachable here and in CI, so the facts are recorded in tests/data/hub_dataset_facts.json (with the
date): a spec that still names a repository gone from the Hub, a script-only revision (refused by `datasets` 4.0+),
an unknown configuration or split fails here, not for a user.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest
import yaml

from lm_eval_contam import task_dir
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import DATASETS, HubRequest, Partition, dataset_spec

FACTS = json.loads((Path(__file__).parent / "data" / "hub_dataset_facts.json").read_text())
REPOSITORIES: dict[str, Any] = FACTS["repositories"]
HUB_PARTITIONS = [spec.partition(split) for spec in DATASETS.values() for split in spec.splits]


def recorded_config(request: HubRequest) -> tuple[str, dict[str, Any]]:
    """The recorded configuration a request resolves to (``name=None``: the revision's only one)."""
    repository = REPOSITORIES[request.path]
    assert "gone" not in repository, f"{request.path} is gone from the Hub: {repository['gone']}"
    revision = repository["revisions"][request.revision or "main"]
    assert revision["format"] in FACTS["loadable_formats"], f"{request.source} ships a {revision['format']}"
    configs = revision["configs"]
    if request.name is None:
        assert len(configs) == 1, f"{request.source} has configurations {sorted(configs)}: name one"
        return next(iter(configs.items()))
    return request.name, configs[request.name]


def test_every_registered_hub_dataset_has_recorded_facts() -> None:
    assert {spec.hf_path for spec in DATASETS.values()} == {
        path for path, facts in REPOSITORIES.items() if "gone" not in facts}


@pytest.mark.parametrize("key", sorted(DATASETS))
def test_the_spec_requests_a_loadable_revision_configuration_splits_and_columns(key: str) -> None:
    spec = dataset_spec(key)
    for split in spec.splits:
        request = spec.partition(split).hub_request
        _, config = recorded_config(request)
        assert request.split in config["splits"]
    columns = {spec.text_field, spec.second_field, spec.label_field, spec.companion_field, *spec.dcq_columns} - {None}
    assert columns <= set(recorded_config(spec.partition(spec.splits[0]).hub_request)[1]["columns"])


@pytest.mark.parametrize(("key", "expected"), [
    ("imdb", ("stanfordnlp/imdb", None, None)),
    ("ag_news", ("fancyzhx/ag_news", None, None)),
    ("yelp", ("Yelp/yelp_review_full", None, None)),
    ("rte", ("nyu-mll/glue", "rte", None)),
    ("wnli", ("nyu-mll/glue", "wnli", None)),
    ("samsum", ("knkarthick/samsum", None, None)),
    ("xsum", ("EdinburghNLP/xsum", None, "refs/convert/parquet")),
    ("gsm8k", ("openai/gsm8k", "main", None)),
])
def test_the_papers_datasets_resolve_to_these_sources(key: str, expected: tuple) -> None:
    request = dataset_spec(key).partition(dataset_spec(key).splits[0]).hub_request
    assert (request.path, request.name, request.revision) == expected


@pytest.mark.parametrize("partition", HUB_PARTITIONS, ids=lambda partition: partition.name)
def test_rows_asks_datasets_for_exactly_the_request(partition: Partition, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple] = []

    def load_dataset(path: str, name: str | None = None, **kwargs: Any) -> datasets.Dataset:
        calls.append((path, name, kwargs))
        return datasets.Dataset.from_list([{"text": "a row"}])

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    assert partition.rows() == [{"text": "a row"}]
    request = partition.hub_request
    assert calls == [(request.path, request.name, {"revision": request.revision, "split": partition.split})]


@pytest.mark.parametrize("partition", HUB_PARTITIONS, ids=lambda partition: partition.name)
def test_every_generated_task_yaml_requests_the_same_source(partition: Partition) -> None:
    request = partition.hub_request
    expected = {"dataset_path": request.path, "dataset_name": request.name,
                "dataset_kwargs": {"revision": request.revision} if request.revision else None,
                "test_split": partition.split}
    yamls = [path for family in ("timetravel", "dcq", "likelihood")
             for path in (task_dir() / family).glob(f"{family}_{partition.dataset.key}_{partition.split}*.yaml")]
    assert len(yamls) == 7  # Time Travel instruct + completion, DCQ generate + loglikelihood, likelihood's 3 modes
    for path in yamls:
        config = yaml.safe_load(path.read_text())
        assert {key: config.get(key) for key in expected} == expected, path.name


def test_lm_eval_passes_the_revision_to_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    """lm-eval's own loading of a generated YAML (dataset_kwargs) asks for the parquet revision."""
    from lm_eval.tasks import TaskManager, get_task_dict

    calls: list[dict] = []

    def load_dataset(**kwargs: Any) -> datasets.DatasetDict:
        calls.append(kwargs)
        rows = [{"document": "A long article. It has sentences. Three of them.", "summary": "An article.", "id": "1"}]
        return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    get_task_dict(["timetravel_xsum_test"], TaskManager(include_path=str(task_dir()), include_defaults=False))
    assert calls == [{"path": "EdinburghNLP/xsum", "name": None, "revision": "refs/convert/parquet"}]


@pytest.mark.parametrize("error", [
    RuntimeError("Dataset scripts are no longer supported, but found xsum.py"),
    ConnectionError("Couldn't reach 'EdinburghNLP/xsum' on the Hub (OfflineModeIsEnabled)"),
    datasets.exceptions.DatasetNotFoundError("Revision 'refs/convert/parquet' doesn't exist for dataset"),
    KeyError("summary"),
])
def test_a_dataset_that_cannot_load_is_one_line_naming_it_and_the_reason(
        error: Exception, monkeypatch: pytest.MonkeyPatch) -> None:
    def load_dataset(*args: Any, **kwargs: Any) -> None:
        raise error

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    with pytest.raises(ContamError) as raised:
        Partition.parse("xsum:test").rows()
    assert str(raised.value) == (f"EdinburghNLP/xsum@refs/convert/parquet: field 'hf_path': "
                                 f"cannot load the Hub dataset's split 'test' ({error})")
