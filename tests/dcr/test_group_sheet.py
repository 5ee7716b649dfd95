"""One DCR sheet per lm-eval group (issue 42): a nested group of three local subtasks of 15, 10 and 5 docs gets one
sheet whose 20 rows are drawn across them in proportion to their sizes (10, 7, 3: largest remainder), and its one
factor adjusts every subtask's acc and both group rows; ``dcr_per_subtask: true`` gives each subtask its own sheet."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from question_mc_task import TASK_YAML

from lm_eval_contam import harness
from lm_eval_contam.lmeval.benchmark_docs import load_tasks
from lm_eval_contam.methods.dcr import dcr_factor
from lm_eval_contam.methods.dcr.benchmark_sheets import adjustment_tasks
from lm_eval_contam.methods.dcr.data import load_data_rows
from lm_eval_contam.methods.dcr.items import level_items
from lm_eval_contam.methods.dcr.sheet import load_sheet
from lm_eval_contam.methods.dcr.task_sheet import group_draw, instance_texts

SIZES = {"toy_alpha": 15, "toy_beta": 10, "toy_gamma": 5}
EXPECTED_DRAW = {"toy_alpha": 10, "toy_beta": 7, "toy_gamma": 3}  # 20 × 15/30, 20 × 10/30 = 6.67, 20 × 5/30 = 3.33
PLACES = ["river", "mountain", "forest", "harbour", "village", "desert", "island", "valley", "castle", "market",
          "garden", "bridge", "library", "station", "tower"]
SEASONS = ["spring", "summer", "autumn", "winter"]

# Nested like MMLU's (mmlu > mmlu_stem > mmlu_anatomy ...): toy_group > toy_inner > toy_beta, toy_gamma.
GROUP_YAML = """group: {group}
task: {tasks}
aggregate_metric_list:
  - metric: acc
    aggregation: mean
    weight_by_size: true
"""
GROUPS = {"toy_group": ["toy_alpha", "toy_inner"], "toy_inner": ["toy_beta", "toy_gamma"]}


def _question(subtask: str, i: int) -> dict:
    place = PLACES[i]
    return {"question": f"In the {subtask[4:]} story, the old {place} near the northern road was rebuilt after the "
                        f"great storm of year {1900 + i}. Which season did the tired workers finish the {place}?",
            "choices": SEASONS, "answer": i % 4}


@pytest.fixture(scope="module")
def task_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("group_tasks")
    for name, size in SIZES.items():
        data = folder / f"{name}.jsonl"
        data.write_text("".join(json.dumps(_question(name, i)) + "\n" for i in range(size)))
        (folder / f"{name}.yaml").write_text(TASK_YAML.format(name=name, data=data))
    for group, tasks in GROUPS.items():
        (folder / f"{group}.yaml").write_text(GROUP_YAML.format(group=group, tasks=json.dumps(tasks)))
    return folder


@pytest.fixture(scope="module")
def manager(task_folder: Path):
    return harness.task_manager((str(task_folder),), include_defaults=False)


@pytest.fixture(scope="module")
def group_sheet_yamls(manager, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return adjustment_tasks(["toy_group"], manager, {"seed": 0}, home=tmp_path_factory.mktemp("home"))


def test_a_group_gets_one_sheet_drawn_across_its_subtasks_in_proportion(group_sheet_yamls, manager) -> None:
    assert len(group_sheet_yamls) == 4  # one sheet: its four level tasks
    sheet_path = Path(group_sheet_yamls[0]).parent / "sheet.yaml"
    sheet = load_sheet(sheet_path)
    assert (sheet.benchmark, sheet.name, sheet.drawn_across) == ("task_toy_group", "toy_group", tuple(SIZES))
    assert sheet.scope == "DCR factor of the group toy_group, from one sheet drawn across its 3 subtasks"
    assert [(t.task, t.metric) for t in sheet.adjusts] == [(name, "acc") for name in (*SIZES, *GROUPS)]
    assert sheet.items_per_level == (1, 2, 20, 20)  # the size of one benchmark's sheet (L2: size and options)
    rows = load_data_rows(sheet)
    assert Counter(row["subtask"] for row in rows) == EXPECTED_DRAW
    docs = load_tasks(["toy_group"], manager)["toy_group"].docs
    for row in rows:  # each row is its subtask's doc without the subtask's template
        texts = instance_texts([doc.text for doc in docs[row["subtask"]]])
        assert (row["text"], row["answer"]) == (texts[row["doc_index"]], SEASONS[row["doc_index"] % 4])
    # L4 asks about every row; L3's completion and membership items are drawn from the same rows.
    l4 = level_items(sheet, 4, rows)
    assert Counter(rows[int(item.item_id.rsplit("-", 1)[1])]["subtask"] for item in l4) == EXPECTED_DRAW
    assert len(level_items(sheet, 3, rows)) == 20


def test_the_draw_is_seeded_by_the_docs_identity() -> None:
    docs = {name: [{"text": f"{name} doc {i} about the quiet harbour", "target": "yes"} for i in range(size)]
            for name, size in SIZES.items()}
    first = group_draw(docs, 20, seed=0, group="toy_group")
    assert {name: len(positions) for name, positions in first.items()} == EXPECTED_DRAW
    assert group_draw(docs, 20, seed=0, group="toy_group") == first
    assert group_draw(docs, 20, seed=1, group="toy_group") != first
    # A larger subtask list takes the same share of 20 (largest remainder, ties to the subtask listed first).
    even = {name: docs["toy_beta"] for name in ("a", "b", "c")}
    assert {name: len(positions) for name, positions in group_draw(even, 20, seed=0, group="g").items()} == {
        "a": 7, "b": 7, "c": 6}


def test_dcr_per_subtask_gives_each_subtask_its_own_sheet(manager, tmp_path: Path) -> None:
    yamls = adjustment_tasks(["toy_group"], manager, {"seed": 0, "dcr_per_subtask": True}, home=tmp_path)
    sheets = sorted({load_sheet(Path(path).parent / "sheet.yaml").name for path in yamls})
    assert len(yamls) == 12 and sheets == sorted(SIZES)


@pytest.mark.slow
def test_each_subtask_and_the_group_row_get_the_groups_factor(group_sheet_yamls, manager, tiny_model_dir,
                                                              monkeypatch) -> None:
    import lm_eval

    monkeypatch.setenv("DISABLE_MULTIPROC", "1")
    results = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={tiny_model_dir},dtype=float32",
                                      tasks=["toy_group", *group_sheet_yamls], task_manager=manager, device="cpu",
                                      batch_size=16, bootstrap_iters=0)
    harness.post_process(results)
    levels = [f"dcr_task_toy_group_l{level}" for level in (1, 2, 3, 4)]
    factor = dcr_factor([results["results"][task]["contaminated,none"] for task in levels])
    assert results["results"]["dcr_task_toy_group"]["dcr_factor,none"] == factor
    for task in (*SIZES, *GROUPS):
        row = results["results"][task]
        assert row["dcr_factor,none"] == factor
        assert row["acc_adj,none"] == pytest.approx(row["acc,none"] * (1 - factor))


def test_audit_dcr_per_subtask_hands_the_run_metadata_key_to_the_sheets() -> None:
    from lm_eval_contam.cli import build_parser
    from lm_eval_contam.cli.audit import settings_from_args

    def metadata(*flags: str) -> dict:
        args = build_parser().parse_args(["audit", "--tasks", "toy_group", *flags])
        return dict(settings_from_args(args).adjustment_metadata)

    assert metadata() == {}
    assert metadata("--dcr-per-subtask", "--reorderings", "2") == {"reorderings": 2, "dcr_per_subtask": True}
