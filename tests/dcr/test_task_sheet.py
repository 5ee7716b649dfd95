"""A DCR sheet built from an lm-eval task: its shape, the clean-model property, and acc_adj through `run`.

The clean-model property is checked on responders that are functions of the prompt
(no model): one that knows nothing of the benchmark answers an item and its control
alike, so every level scores 0 and the factor's interval is [0, 0]; one that
memorised the benchmark's name and rows gets a discount.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam.cli import main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcr import bootstrap_dcr_factor, dcr_factor
from lm_eval_contam.methods.dcr.benchmark_sheets import benchmark_tasks, write_sheet
from lm_eval_contam.methods.dcr.data import load_data_rows
from lm_eval_contam.methods.dcr.docs import item_record, item_to_doc
from lm_eval_contam.methods.dcr.items import level_items, split_instance
from lm_eval_contam.methods.dcr.level_score import twin_score
from lm_eval_contam.methods.dcr.schema import LEVELS
from lm_eval_contam.methods.dcr.sheet import load_sheet
from lm_eval_contam.methods.dcr.task_sheet import GSM8K_ANSWER, instance_texts, made_up_name, task_sheet, topic_words

SENTENCES = [
    ("The old library keeps rare maps of the northern coast", "true"),
    ("Most rivers flow uphill toward the distant mountains", "false"),
    ("A small garden needs water and bright sunlight to grow", "true"),
    ("The quiet village sells fresh bread every single morning", "true"),
    ("Heavy stones float easily on the surface of calm lakes", "false"),
    ("The brave sailor crossed the wide ocean in a tiny boat", "true"),
    ("Cold winter nights are usually warmer than summer days", "false"),
    ("The careful doctor examined the young patient with great care", "true"),
    ("Loud music helps every student sleep through the night", "false"),
    ("The green forest hides many animals among its tall trees", "true"),
    ("Dry sand becomes a strong bridge across deep rivers", "false"),
    ("The famous painter sold a bright picture to the museum", "true"),
]
CHOICES = ["false", "true"]


def _docs() -> list[dict]:
    return [{"text": f"{text}.\nQuestion: true or false?\nAnswer:", "target": label, "choices": CHOICES}
            for text, label in SENTENCES]


@pytest.fixture(scope="module")
def sheet_path(tmp_path_factory) -> Path:
    sheet, rows = task_sheet("toy_facts", _docs(), split="test", metrics=["acc", "acc_norm"], items_per_level=8)
    return write_sheet("toy_facts", sheet, rows, tmp_path_factory.mktemp("home"))[0].parent / "sheet.yaml"


def test_the_sheet_is_built_from_the_task_and_reads_back(sheet_path) -> None:
    sheet = load_sheet(sheet_path)
    assert sheet.benchmark == "task_toy_facts" and sheet.name == "toy_facts"
    assert [(t.task, t.metric) for t in sheet.adjusts] == [("toy_facts", "acc"), ("toy_facts", "acc_norm")]
    assert sheet.level_task(1) == "dcr_task_toy_facts_l1" and sheet.check_mode == "controlled"
    assert sheet.data.label_names == ("false", "true") and sheet.data.text_field == "text"
    assert sheet.items_per_level == (1, 2, 8, 8)
    fake = made_up_name("toy_facts", 0)
    for level in (1, 2):
        for item in sheet.levels[level - 1].items:
            assert "toy_facts" in item.prompt and fake not in item.prompt
            assert item.twin.prompt == item.prompt.replace("toy_facts", fake) and item.twin.check == item.check
    size, options = sheet.levels[1].items
    assert (size.check.value, size.check.tolerance, size.check.relative) == (12, 0.1, True)
    assert options.check.value == 2
    assert [(g.kind, g.count) for g in sheet.levels[2].generators] == [("completion", 3), ("membership", 5)]
    assert [(g.kind, g.count) for g in sheet.levels[3].generators] == [("association", 8)]
    assert load_data_rows(sheet)[0] == {"text": SENTENCES[0][0] + ".", "answer": "true"}  # without the template
    association = level_items(sheet, 4, load_data_rows(sheet))[0]
    assert association.prompt.startswith("This is a data entry from the toy_facts dataset and its label (false, true). "
                                         "Complete it: ") and association.prompt.endswith(". is")


def test_written_folders_are_named_by_content_and_never_overwritten(tmp_path) -> None:
    sheet, rows = task_sheet("toy_facts", _docs(), split="test", metrics=["acc"], items_per_level=8)
    first = write_sheet("toy_facts", sheet, rows, tmp_path)
    assert write_sheet("toy_facts", sheet, rows, tmp_path) == first
    other = write_sheet("toy_facts", sheet, rows[:-1], tmp_path)
    assert other[0].parent != first[0].parent and len(list(tmp_path.iterdir())) == 2
    assert [p.name for p in first] == [f"dcr_task_toy_facts_l{n}.yaml" for n in LEVELS]
    assert f"dcr_sheet: {first[0].parent / 'sheet.yaml'}\n" in first[2].read_text()


def test_answers_without_one_label_set_are_read_as_text() -> None:
    docs = [{"text": f"Question: {q} How many are left?\nAnswer:", "target": f"Some steps here.\n#### {a}",
             "choices": ()} for q, a in [("Anna buys seven green apples and eats two.", 5),
                                        ("The farmer owns twelve brown cows and sells four.", 8)]]
    sheet, rows = task_sheet("word_sums", docs, split="test", metrics=["exact_match"], items_per_level=2)
    assert sheet["data"]["answer_pattern"] == GSM8K_ANSWER and "label_names" not in sheet["data"]
    assert [item["id"] for item in sheet["levels"]["l2"]["items"]] == ["l2-size"]  # no answer options to count
    assert rows[1] == {"text": "The farmer owns twelve brown cows and sells four.", "answer": "Some steps here.\n#### 8"}


def test_the_rows_are_the_instances_without_the_template_every_doc_shares() -> None:
    assert instance_texts(["The cat sat.\nQuestion: true or false?\nAnswer:",
                           "Dogs bark.\nQuestion: true or false?\nAnswer:"]) == ["The cat sat.", "Dogs bark."]
    assert instance_texts(["Question: What is 2+2?\nAnswer:", "Question: Why is the sky blue?\nAnswer:"]) == [
        "What is 2+2?", "Why is the sky blue?"]
    assert instance_texts(["Q: one", "Q: one"]) == ["Q: one", "Q: one"]  # nothing differs: kept whole
    assert instance_texts(["Q: one", "Q: one two"]) == ["one", "one two"]  # cut at whitespace
    assert instance_texts(["A x B", "A B"]) == ["A x B", "A B"]  # the second would be left empty: kept whole


def test_names_and_topic_words() -> None:
    assert made_up_name("arc_easy", 0) == made_up_name("arc_easy", 0) != "arc_easy"
    assert [c.isalpha() for c in made_up_name("Mmlu-2", 3)] == [c.isalpha() for c in "Mmlu-2"]
    assert topic_words("The following are multiple choice questions about abstract algebra and rings.",
                       "mmlu_abstract_algebra") == ["rings"]


def test_a_task_without_anything_to_control_is_one_error_naming_it() -> None:
    with pytest.raises(ContamError, match="toy_numbers.*no controlled L4 item"):
        task_sheet("toy_numbers", [{"text": "12 34 56 78", "target": "1", "choices": ()}] * 3, split="test",
                   metrics=["acc"])
    with pytest.raises(ContamError, match="toy_facts.*nothing to adjust"):
        task_sheet("toy_facts", _docs(), split="test", metrics=[])


def test_the_run_builds_sheets_for_benchmarks_only() -> None:
    configs = {"contam_toy_sentiment": {"metadata": {"version": 1.0}},
               "dcr_toy_sentiment_l1": {"metadata": {"method": "dcr", "dcr_sheet": "toy_sentiment", "dcr_level": 1}},
               "timetravel_x": {"metadata": {"method": "timetravel"}},
               "contam_probe": {"metadata": {"version": 1.0, "dcr_adjust": False}},
               "arc_easy": {"task": "arc_easy"}}
    assert benchmark_tasks(configs) == ["arc_easy"]  # the toy task is the shipped sheet's; the others are ours


def _scores(sheet_path: Path, respond) -> list[list[float]]:
    """Each level's per-item results (original − control) under a responder."""
    sheet = load_sheet(sheet_path)
    rows = load_data_rows(sheet)
    levels = []
    for level in LEVELS:
        records = []
        for doc in (item_to_doc(sheet, item) for item in level_items(sheet, level, rows)):
            records.append(item_record(doc, [respond(doc["prompt"]), respond(doc["twin_prompt"])]))
        assert twin_score(records).n_items == sheet.level_size(level)
        levels.append([r["original"] - r.get("control", r["original"]) for r in records])
    return levels


def knows_nothing(prompt: str) -> str:
    """No memory of the benchmark: the same answer to every prompt."""
    return "yes, true, 10"


def memoriser(prompt: str) -> str:
    """Knows the benchmark's name and its rows, and nothing else."""
    if "toy_facts" not in prompt:
        return "no"
    if prompt.startswith(("Do you know", "How many examples")):
        return "yes, 12"
    for text, label in SENTENCES:
        doc = f"{text}."
        if prompt.endswith(f"{doc} is"):
            return label
        first, second = split_instance(doc)
        if prompt.endswith(first):
            return second
        if f'"{doc}"' in prompt:
            return "yes"
    return "no"


def test_a_model_that_never_saw_the_benchmark_gets_a_factor_interval_containing_zero(sheet_path) -> None:
    levels = _scores(sheet_path, knows_nothing)
    assert all(result == 0.0 for items in levels for result in items)
    bootstrap = bootstrap_dcr_factor(levels, n_resamples=2000)
    assert bootstrap.statistic == 0.0
    assert (bootstrap.confidence_interval.low, bootstrap.confidence_interval.high) == (0.0, 0.0)


def test_a_model_that_memorised_the_benchmark_gets_a_discount(sheet_path) -> None:
    levels = _scores(sheet_path, memoriser)
    scores = [max(0.0, sum(items) / len(items)) for items in levels]
    assert scores[0] == 1.0 and scores[1] == 0.5 and scores[2] == 1.0 and scores[3] == 1.0
    bootstrap = bootstrap_dcr_factor(levels, n_resamples=2000)
    assert bootstrap.statistic == dcr_factor(scores) > 0.5
    assert bootstrap.confidence_interval.low > 0.0


@pytest.mark.slow
def test_run_puts_acc_adj_with_its_interval_beside_acc_for_any_task(tiny_model_dir, tmp_path, capsys,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("DISABLE_MULTIPROC", "1")
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    data = tasks / "facts.jsonl"
    data.write_text("".join(json.dumps({"sentence": text, "label": CHOICES.index(label)}) + "\n"
                            for text, label in SENTENCES))
    (tasks / "toy_facts.yaml").write_text(
        "task: toy_facts\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
        f"    test: {data}\ntest_split: test\noutput_type: multiple_choice\n"
        'doc_to_text: "{{sentence}}.\\nQuestion: true or false?\\nAnswer:"\n'
        "doc_to_target: label\ndoc_to_choice: [\"false\", \"true\"]\n"
        "metric_list:\n  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n")
    out = tmp_path / "run"
    assert main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_model_dir},dtype=float32",
                 "--tasks", "toy_facts", "--include_path", str(tasks), "--device", "cpu", "--batch_size", "8",
                 "--output_path", str(out)]) == 0
    table = capsys.readouterr().out
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())
    levels = [f"dcr_task_toy_facts_l{n}" for n in LEVELS]
    assert {results["configs"][t]["metadata"]["check_mode"] for t in levels} == {"controlled"}
    (sheet,) = {results["configs"][t]["metadata"]["dcr_sheet"] for t in levels}
    assert Path(sheet).is_file() and Path(sheet).is_relative_to(tmp_path / "home" / "dcr_task_sheets")
    row = results["results"]["toy_facts"]
    factor = dcr_factor([results["results"][t]["contaminated,none"] for t in levels])
    assert row["dcr_factor,none"] == factor
    assert row["acc_adj,none"] == pytest.approx(row["acc,none"] * (1 - factor))
    assert row["acc_adj_ci_low,none"] <= row["acc_adj,none"] <= row["acc_adj_ci_high,none"]
    assert isinstance(row["acc_adj_stderr,none"], float)
    assert results["results"]["dcr_task_toy_facts"]["check_mode,none"] == "controlled"
    table_rows = {line.split("|")[5].strip() for line in table.splitlines() if line.count("|") > 8}
    assert {"acc", "acc_adj", "acc_adj_ci_low", "acc_adj_ci_high", "dcr_factor"} <= table_rows
