"""Sheet schema: shipped sheets load, generated items are seeded, each malformed field is named."""

from __future__ import annotations

import copy

import pytest
import yaml

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcr.configs import shipped_task_configs
from lm_eval_contam.methods.dcr.data import load_data_rows
from lm_eval_contam.methods.dcr.items import level_items, split_instance
from lm_eval_contam.methods.dcr.sheet import load_sheet, sheets_dir

SHIPPED = sorted(p.stem for p in sheets_dir().glob("*.yaml"))


def test_the_paper_benchmarks_are_shipped() -> None:
    assert {"sst2", "liar2", "gsm8k", "toy_sentiment"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_sheets_are_wired_to_their_task_configs(name, project_task_dir) -> None:
    sheet = load_sheet(name)
    folder = project_task_dir / "dcr" / sheet.benchmark
    group = yaml.safe_load((folder / f"_{sheet.group}.yaml").read_text())
    assert group["group"] == sheet.group and group["metadata"]["method"] == "dcr"
    assert group["task"] == [sheet.level_task(level) for level in (1, 2, 3, 4)]
    for level in (1, 2, 3, 4):
        task = yaml.safe_load((folder / f"{sheet.level_task(level)}.yaml").read_text())
        assert task["task"] == sheet.level_task(level)
        assert task["metadata"] == {"version": 1.0, "method": "dcr", "dcr_sheet": name, "dcr_level": level}
    for level in sheet.levels:
        for item in level.items:
            assert item.source.strip()


def test_generated_items_are_seeded_and_sized() -> None:
    sheet = load_sheet("toy_sentiment")
    rows = load_data_rows(sheet)
    l4 = level_items(sheet, 4, rows, seed=0)
    assert [i.item_id for i in l4] == [i.item_id for i in level_items(sheet, 4, rows, seed=0)]
    assert [i.item_id for i in l4] != [i.item_id for i in level_items(sheet, 4, rows, seed=1)]
    assert all(len(level_items(sheet, n, rows)) == sheet.level_size(n) for n in (1, 2, 3, 4))
    completion = next(i for i in level_items(sheet, 3, rows) if "completion" in i.item_id)
    assert completion.check.kind == "overlap" and completion.prompt.startswith(
        "This is a data entry from the ToySentiment dataset, please complete it: ")
    assert {i.check.label for i in l4} <= {"negative", "positive"}


BENCHMARK_SHEETS = ["sst2", "liar2", "gsm8k"]


def _stand_in_rows(sheet, count: int = 30) -> list[dict]:
    """Rows shaped like the benchmark's (its text and label fields), to exercise the generators offline."""
    data = sheet.data
    label = ((lambda i: i % len(data.label_names)) if data.label_names else (lambda i: f"so {i} #### {i}"))
    return [{data.text_field: f"stand-in row number {i} tells of a quiet morning walk beside the river",
             data.label_field: label(i)} for i in range(count)]


@pytest.mark.parametrize("name", BENCHMARK_SHEETS)
def test_sheets_for_the_papers_benchmarks_hold_twenty_items_per_level(name) -> None:
    sheet = load_sheet(name)
    assert sheet.items_per_level == (20, 20, 20, 20)  # the paper's N (Appendix B.3)
    for level in sheet.levels[:2]:  # L1/L2: written, sourced answer keys
        assert len(level.items) == 20 and not level.generators
        assert all(item.source.strip() for item in level.items)
        # A non-answer never counts as contamination.
        assert not any(item.check.evaluate(item.prompt, reply) for item in level.items for reply in ("", "I don't know."))
    for level in sheet.levels[2:]:  # L3/L4: only drawn from the benchmark's rows, never hand-written
        assert not level.items and sum(g.count for g in level.generators) == 20
    rows = _stand_in_rows(sheet)
    assert [len(level_items(sheet, n, rows)) for n in (1, 2, 3, 4)] == [20, 20, 20, 20]
    kinds = [item.item_id.split("-")[1] for item in level_items(sheet, 3, rows)]
    assert kinds.count("completion") == kinds.count("membership") == 10
    # Controlled (the default): every generated item has its control; the paper mode builds none.
    assert all(item.twin is not None for n in (3, 4) for item in level_items(sheet, n, rows))
    assert not any(item.twin for n in (3, 4) for item in level_items(sheet, n, rows, check_mode="paper"))


def test_liar2_sheet_and_task_share_the_authors_label_order() -> None:
    # label_map of github.com/chengxuphd/liar2 segmentation_experiments/5.1.LIAR2.py, in the paper's wording.
    order = ["pants-on-fire", "false", "mostly-false", "half-true", "mostly-true", "true"]
    task = yaml.safe_load((sheets_dir().parent / "benchmarks" / "liar2.yaml").read_text())
    assert list(load_sheet("liar2").data.label_names) == task["doc_to_choice"] == order


def test_liar2_plain_label_keys_ignore_the_compound_labels() -> None:
    items = {item.item_id: item for level in load_sheet("liar2").levels for item in level.items}
    most, least = items["liar2-l2-06"].check, items["liar2-l2-12"].check
    assert [most.evaluate("", r) for r in ("False.", "Mostly false.", "barely false", "mostly-false")] == [
        True, False, False, False]
    assert [least.evaluate("", r) for r in ('"True" (2,585).', "Mostly true", "half true")] == [True, False, False]


def test_split_instance() -> None:
    assert split_instance("a b c d e") == ("a b c", "d e")


def test_generated_task_configs_are_up_to_date(project_task_dir) -> None:
    for relative, text in shipped_task_configs().items():
        assert (project_task_dir / "dcr" / relative).read_text() == text, relative


def _toy() -> dict:
    return yaml.safe_load((sheets_dir() / "toy_sentiment.yaml").read_text())


def _set(raw: dict, path: list, value) -> dict:
    raw = copy.deepcopy(raw)
    target = raw
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return raw


_DELETE = object()
MALFORMED = [
    (["benchmark"], "SST 2!", "benchmark"),
    (["benchmark"], _DELETE, "benchmark"),
    (["name"], "", "name"),
    (["adjusts"], [], "adjusts"),
    (["adjusts"], [{"task": "x"}], "adjusts[0].metric"),
    (["items_per_level"], 0, "items_per_level"),
    (["items_per_level"], 5, "levels.l1"),
    (["items_per_level"], {"l1": 4, "l2": 4, "l3": 4}, "items_per_level.l4"),
    (["items_per_level"], {"l1": 4, "l2": 4, "l3": 4, "l4": 4, "l5": 1}, "items_per_level"),
    (["items_per_level"], {"l1": 4, "l2": 3, "l3": 4, "l4": 4}, "levels.l2"),
    (["levels", "l2", "items", 0, "control"], "ask about another dataset", "levels.l2.items[0].control"),
    (["levels", "l2", "items", 0, "control"], {"prompt": "How many sentences?"}, "levels.l2.items[0].control.source"),
    (["levels", "l2", "items", 0, "control"], {"prompt": "x", "source": "y", "check": {"kind": "number"}},
     "levels.l2.items[0].control.check"),
    (["levels", "l5"], {}, "levels"),
    (["levels", "l1", "items", 0, "prompt"], 42, "levels.l1.items[0].prompt"),
    (["levels", "l1", "items", 0, "source"], _DELETE, "levels.l1.items[0].source"),
    (["levels", "l1", "items", 1, "id"], "toy-l1-task", "levels.l1.items[1].id"),
    (["levels", "l1", "items", 0, "check"], {"kind": "regex", "pattern": "["}, "levels.l1.items[0].check.pattern"),
    (["levels", "l3", "generate", 0, "kind"], "paraphrase", "levels.l3.generate[0].kind"),
    (["levels", "l3", "generate", 0, "count"], "two", "levels.l3.generate[0].count"),
    (["levels", "l3", "generate", 0, "template"], "no placeholder", "levels.l3.generate[0].template"),
    (["data", "text_field"], _DELETE, "data.text_field"),
    (["data", "dataset_path"], "org/name", "data"),
    (["data", "label_names"], "positive", "data.label_names"),
]


@pytest.mark.parametrize(("path", "value", "field"), MALFORMED)
def test_malformed_field_is_named(tmp_path, path, value, field) -> None:
    sheet_file = tmp_path / "bad.yaml"
    raw = _set(_toy(), path, value)
    raw["data"]["data_files"] = str(sheets_dir().parent / "toy" / "toy_sentiment.jsonl")
    if path == ["data", "dataset_path"]:
        raw["data"]["dataset_path"] = value
    sheet_file.write_text(yaml.safe_dump(raw))
    with pytest.raises(ContamError) as error:
        load_sheet(sheet_file)
    assert str(sheet_file) in str(error.value)
    assert f"field '{field}'" in str(error.value)


def test_a_static_item_with_a_control_is_asked_twice_in_the_controlled_mode_only(tmp_path) -> None:
    raw = _toy()
    raw["data"]["data_files"] = str(sheets_dir().parent / "toy" / "toy_sentiment.jsonl")
    raw["items_per_level"] = {"l1": 4, "l2": 4, "l3": 4, "l4": 4}
    raw["levels"]["l2"]["items"][0]["control"] = {
        "prompt": "How many sentences does the QuilMarsh dataset contain?", "source": "a made-up dataset name"}
    sheet_file = tmp_path / "controlled.yaml"
    sheet_file.write_text(yaml.safe_dump(raw))
    sheet = load_sheet(sheet_file)
    assert sheet.items_per_level == (4, 4, 4, 4)
    item = sheet.levels[1].items[0]
    assert item.twin.prompt == "How many sentences does the QuilMarsh dataset contain?"
    assert item.twin.check == item.check and item.twin.source == "a made-up dataset name"
    assert level_items(sheet, 2, check_mode="controlled")[0].twin == item.twin
    assert level_items(sheet, 2, check_mode="paper")[0].twin is None
    assert all(i.twin is None for i in level_items(sheet, 2, check_mode="controlled")[1:])


def test_yaml_is_never_executed(tmp_path) -> None:
    sheet_file = tmp_path / "evil.yaml"
    sheet_file.write_text("benchmark: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(ContamError, match="not valid YAML"):
        load_sheet(sheet_file)


def test_unknown_sheet_name() -> None:
    with pytest.raises(ContamError, match="no shipped sheet"):
        load_sheet("no_such_benchmark")
