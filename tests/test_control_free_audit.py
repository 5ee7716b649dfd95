"""``audit --tasks`` on a multiple-choice benchmark with no control: the control-free tests run and decide (issue 24).

A local lm-eval task of items with item-specific options (ARC style: the choices are continuations) and another
whose items all share one answer set in a fixed order (seasons): the option-order test runs on the first and is not
planned on the second; the in-context test runs on both; the per-partition verdict is the one without a control and
says what its "not flagged" is worth. (Since issue 30 the in-context test is "not tested" on both: their rendered
items repeat the template's words, which the twins swap in nearly every item.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from question_mc_task import TASK_YAML

from lm_eval_contam.cli import main as cli_main

ITEMS = [("Which tool cuts wood?", ["saw", "spoon", "pillow", "kettle"], 0),
         ("Which animal lays eggs?", ["horse", "hen", "goat", "cow"], 1),
         ("Which metal is liquid at room temperature?", ["iron", "copper", "mercury", "tin"], 2),
         ("Which planet has rings you can see with a small telescope?", ["Mars", "Venus", "Mercury", "Saturn"], 3),
         ("Which instrument has keys and hammers?", ["piano", "flute", "drum", "harp"], 0),
         ("Which organ pumps blood?", ["lung", "heart", "liver", "kidney"], 1),
         ("Which gas do plants take in?", ["oxygen", "helium", "carbon dioxide", "neon"], 2),
         ("Which shape has three sides?", ["square", "circle", "pentagon", "triangle"], 3),
         ("Which season follows winter?", ["spring", "autumn", "monsoon", "dusk"], 0),
         ("Which bird cannot fly?", ["sparrow", "penguin", "eagle", "swallow"], 1),
         ("Which fruit is yellow when ripe?", ["cherry", "plum", "banana", "grape"], 2),
         ("Which ocean lies between Africa and Australia?", ["Arctic", "Atlantic", "Southern", "Indian"], 3)]


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("control_free")
    items = root / "items.jsonl"
    items.write_text("".join(json.dumps({"question": q, "choices": c, "answer": a}) + "\n" for q, c, a in ITEMS))
    seasons = root / "seasons.jsonl"
    seasons.write_text("".join(json.dumps({"question": f"In which season was record {i} set?",
                                           "choices": ["spring", "summer", "autumn", "winter"], "answer": i % 4}) + "\n"
                               for i in range(8)))
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / "items_mc.yaml").write_text(TASK_YAML.format(name="items_mc", data=items))
    (tasks / "seasons_mc.yaml").write_text(TASK_YAML.format(name="seasons_mc", data=seasons))
    return tasks


def test_audit_tasks_without_a_control_runs_the_control_free_tests(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect, partition_verdicts

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(task_dir),
                     "--tasks", "items_mc,seasons_mc", "--max_gen_toks", "4", "--batch_size", "16",
                     "--output_path", str(out)]) == 0
    tasks = json.loads((out / "audit.json").read_text())["models"][0]["tasks"]
    assert "optionorder_task_items_mc_test" in tasks
    # One answer set for every item, in the dataset's own order: no item the option-order test can use.
    assert "optionorder_task_seasons_mc_test" not in tasks
    # Both tasks render their items with "Question: ... Answer:": the twins swap those words in nearly every item, so
    # the in-context test's null cannot hold (issue 30, item 3): not tested on either, before the run.
    assert "incontext_task_items_mc_test" not in tasks and "incontext_task_seasons_mc_test" not in tasks

    verdicts = collect(load_run(out))
    order = next(v for v in verdicts if v.test == "option_order")
    assert (order.partition, order.n, order.evidence.orders) == ("items_mc test", len(ITEMS), 5)
    assert 0.0 < order.pvalue <= 1.0 and order.flagged == (order.pvalue <= 0.05)
    assert order.null.startswith("the model never saw these items")
    incontext = {v.partition: v for v in verdicts if v.test == "incontext_twin"}
    assert sorted(incontext) == ["items_mc test", "seasons_mc test"]
    assert all(v.pvalue is None and v.evidence.summary().startswith("not tested: the twins repeat their swaps")
               for v in incontext.values())

    rows = {row.partition: row for row in partition_verdicts(verdicts)}
    items = rows["items_mc test"]
    assert not items.with_control and items.test == "partition_combined_without_control"
    # The lift holds its level pooled (5/48 never-seen partitions) but flagged 3/8 fresh multiple-choice ones: on a
    # multiple-choice partition it is shown beside the verdict, not in it.
    assert {v.shape for v in verdicts if v.partition == "items_mc test" and v.pvalue is not None} == {"multiple choice"}
    assert "likelihood_lift" in {v.test for v in items.over_level}
    assert "likelihood_lift" not in {v.test for v, _ in items.evidence}
    # The rank test flags never-seen authored orders (the validation study's author fine-tune 3/8, the clean model
    # 6/16 fresh authored-order partitions): measured over its level, it is shown beside the verdict, not in it.
    assert "option_order" in {v.test for v in items.over_level}
    report = (out / "report.md").read_text()
    assert "Option-order test (ours, after Ni et al.)" in report and "In-context test (ours, after CoDeC)" in report
    printed = capsys.readouterr().out
    assert any(line.startswith("tiny / items_mc test: ") for line in printed.splitlines())
    if not items.flagged:  # a clean bill says what the verdict that was computed finds at the papers' strength
        assert "this verdict (without a control)" in next(
            line for line in printed.splitlines() if line.startswith("tiny / items_mc test: "))


NOUNS = ["bakery", "harbour", "museum", "library", "theatre", "stadium", "garden", "bridge", "market", "castle",
         "station", "school", "hospital", "factory", "chapel", "tower"]
TEMPLATED = {  # task -> (question template, the four choices every item shares): one replaceable word in every item
    "years_mc": ("In which year did the {noun} open?", ["1901", "1925", "1950", "1975"]),
    "colours_mc": ("What colour is the door of the {noun}?", ["red", "green", "blue", "white"]),
    "counts_mc": ("How many windows does the {noun} have?", ["two", "four", "six", "eight"]),
    "towns_mc": ("Which town built the first {noun}?", ["Leeds", "Bristol", "Oxford", "Bath"]),
}


def test_a_random_weight_model_on_templated_mc_partitions_is_not_flagged(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30, item 3: on templated items the twins swap the same word in every item (here the task's own
    'Question'/'Answer' and the template's words), so the in-context test's differences share one swap's effect and
    its sign-flip null cannot hold: an untrained model gave p <= 0.05 on 6 of 7 such partitions. The test says "not
    tested" there before the run, and no test flags the untrained model on any of them."""
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect, partition_verdicts

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name, (template, choices) in TEMPLATED.items():
        data = tmp_path / f"{name}.jsonl"
        data.write_text("".join(json.dumps({"question": template.format(noun=noun), "choices": choices,
                                            "answer": number % 4}) + "\n" for number, noun in enumerate(NOUNS)))
        (tasks / f"{name}.yaml").write_text(TASK_YAML.format(name=name, data=data))
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(tasks),
                     "--tasks", ",".join(TEMPLATED), "--max_gen_toks", "4", "--batch_size", "16", "--no-report",
                     "--output_path", str(out)]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if "incontext" in line and " not tested: " in line]
    assert len(printed) == len(TEMPLATED), printed
    assert all("the twins repeat their swaps across items" in line and "design effect" in line for line in printed)
    verdicts = collect(load_run(out))
    incontext = [v for v in verdicts if v.test == "incontext_twin"]
    assert len(incontext) == len(TEMPLATED) and all(v.flagged is None and v.pvalue is None for v in incontext)
    assert [v.test for v in verdicts if v.flagged] == []
    assert [row.partition for row in partition_verdicts(verdicts) if row.flagged] == []
