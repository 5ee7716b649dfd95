"""``audit --tasks``: lm-eval tasks over local JSONL audited as they are, offline, end to end (issue 19, items 1, 2, 4).

The tasks are written here: a multiple_choice task (``doc_to_target`` an index), a generate_until task (Jinja target),
and a group of both. The derived partitions' rows must equal the tasks' rendered docs exactly, and bad input (an
unknown task, a task with no docs, a group with a failing subtask) must end in one line naming the task, exit 2,
nothing written.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lm_eval_contam import harness
from lm_eval_contam.audit.benchmark_partitions import derive_partitions, requested_control
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.overlap import ControlOverlap, control_overlap
from lm_eval_contam.core.partitions import Control, Partition
from lm_eval_contam.core.registry import AuditedModel, registered_methods
from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, benchmark_docs, load_tasks
from lm_eval_contam.methods.dcr.sheet import load_sheet
from lm_eval_contam.verdicts.verdict import FREE_TEXT, MULTIPLE_CHOICE, methods_without_a_call

# The families whose task names the tests spell out; a method added later has tests of its own.
NAMED = ("timetravel", "dcq", "dcr", "likelihood", "incontext", "optionorder")
SUBJECTS = ["river", "mountain", "forest", "harbour", "village", "desert", "island", "valley", "castle", "market",
            "garden", "bridge", "library", "station"]


def _question(i: int, subject: str) -> dict:
    return {"question": f"The old {subject} near the northern road was rebuilt after the storm of year {1900 + i}. "
                        f"Which season did the workers finish the {subject}?",
            "choices": ["spring", "summer", "autumn", "winter"], "answer": i % 4,
            "solution": f"They finished the {subject} in the {['spring', 'summer', 'autumn', 'winter'][i % 4]}."}


MC_YAML = """task: quiz_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {test}
    validation: {validation}
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: answer
doc_to_choice: choices
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""

GEN_YAML = """task: quiz_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {test}
test_split: test
output_type: generate_until
doc_to_text: "Q: {{{{question}}}}\\nA:"
doc_to_target: "{{{{choices[answer]}}}}"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 4
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def write_tasks(root: Path) -> Path:
    """Task YAMLs over local JSONL under ``root/tasks`` (plus broken ones for the bad-input tests); the folder."""
    data, tasks = root / "data", root / "tasks"
    data.mkdir(parents=True)
    tasks.mkdir()
    for name, offset in (("test", 0), ("validation", 100)):
        (data / f"{name}.jsonl").write_text("".join(
            json.dumps(_question(offset + i, subject)) + "\n" for i, subject in enumerate(SUBJECTS)))
    (data / "empty.jsonl").write_text("")
    files = {"test": data / "test.jsonl", "validation": data / "validation.jsonl"}
    (tasks / "quiz_mc.yaml").write_text(MC_YAML.format(**files))
    (tasks / "quiz_gen.yaml").write_text(GEN_YAML.format(test=files["test"]))
    (tasks / "quiz_group.yaml").write_text("group: quiz_group\ntask:\n  - quiz_mc\n  - quiz_gen\n")
    (tasks / "quiz_empty.yaml").write_text(GEN_YAML.format(test=data / "empty.jsonl").replace("quiz_gen", "quiz_empty"))
    (tasks / "quiz_missing.yaml").write_text(
        GEN_YAML.format(test=data / "missing.jsonl").replace("quiz_gen", "quiz_missing"))
    (tasks / "broken_group.yaml").write_text("group: broken_group\ntask:\n  - quiz_mc\n  - quiz_missing\n")
    return tasks


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tasks(tmp_path_factory.mktemp("lm_eval_tasks"))


@pytest.fixture(scope="module")
def loaded(task_dir: Path) -> dict:
    return load_tasks(["quiz_group", "quiz_mc"], harness.task_manager((str(task_dir),), include_defaults=True))


def test_load_tasks_maps_groups_to_subtasks_and_a_task_to_itself(loaded: dict) -> None:
    assert {group: list(tasks) for group, tasks in loaded.items()} == {
        "quiz_group": ["quiz_mc", "quiz_gen"], "quiz_mc": ["quiz_mc"]}


def test_docs_are_rendered_with_the_tasks_own_templates(loaded: dict) -> None:
    mc = benchmark_docs("quiz_mc", loaded["quiz_mc"]["quiz_mc"])
    first = _question(0, "river")
    assert mc[0] == BenchmarkDoc(task="quiz_mc", index=0, text=f"Question: {first['question']}\nAnswer:",
                                 target="spring", choices=("spring", "summer", "autumn", "winter"),
                                 output_type="multiple_choice")
    assert [doc.target for doc in mc[:5]] == ["spring", "summer", "autumn", "winter", "spring"]
    gen = benchmark_docs("quiz_gen", loaded["quiz_group"]["quiz_gen"])
    second = _question(1, "mountain")
    assert gen[1] == BenchmarkDoc(task="quiz_gen", index=1, text=f"Q: {second['question']}\nA:", target="summer",
                                  choices=(), output_type="generate_until")
    assert len(mc) == len(gen) == len(SUBJECTS)


def _rendered_rows(docs: list[BenchmarkDoc]) -> list[dict]:
    return [{"text": doc.text, "answer": doc.target, "choices": list(doc.choices), "doc_index": doc.index}
            for doc in docs]


def test_a_partition_and_its_control_split_are_the_tasks_rendered_docs(loaded: dict, tmp_path: Path) -> None:
    from lm_eval_contam.audit.benchmark_partitions import write_partition
    from lm_eval_contam.lmeval.benchmark_docs import split_docs

    task = loaded["quiz_mc"]["quiz_mc"]
    [derived] = derive_partitions({"quiz_mc": loaded["quiz_mc"]}, requested_control(split="validation"))
    assert (derived.group, derived.task, derived.split, replace(derived.control, overlap=None)) == (
        "quiz_mc", "quiz_mc", "test", Control.of_split("validation"))
    assert derived.control.overlap == control_overlap([row["text"] for row in derived.rows],
                                                      [row["text"] for row in derived.control_rows])
    card = write_partition(derived, tmp_path)
    partition = Partition.from_card(card)
    assert (partition.name, partition.label, partition.dataset.splits) == (
        "task_quiz_mc:test", "quiz_mc test", ("test", "validation"))
    # The card keeps the task's output_type: its items' shape, whichever tests an audit runs on them.
    assert partition.dataset.benchmark_output_type == "multiple_choice"
    assert partition.rows() == _rendered_rows(benchmark_docs("quiz_mc", task))
    control = partition.dataset.partition("validation").rows()
    assert control == _rendered_rows(split_docs("quiz_mc", task, "validation"))
    assert control[0]["text"] == f"Question: {_question(100, 'river')['question']}\nAnswer:"
    # Written again with the same content: kept; nothing is overwritten.
    assert write_partition(derived, tmp_path) == card


def test_a_card_with_an_unknown_benchmark_output_type_is_refused_naming_the_field(tmp_path: Path) -> None:
    card = {"dataset_name": "quiz", "split": "test", "data_files": {"test": "test.jsonl"}, "text_field": "text",
            "benchmark_output_type": "essay"}
    with pytest.raises(ContamError) as raised:
        Partition.from_card_fields(card, tmp_path / "quiz.yaml")
    assert (raised.value.field, raised.value.reason) == (
        "benchmark_output_type",
        "'essay' is not one of multiple_choice, generate_until, loglikelihood, loglikelihood_rolling")


def test_the_card_names_its_control_kind_and_source(loaded: dict, tmp_path: Path) -> None:
    from lm_eval_contam.audit.benchmark_partitions import write_partition
    from lm_eval_contam.core.partitions import Control

    fresh = tmp_path / "fresh.jsonl"  # two rows: a control of one cannot be compared (the tests take two or more)
    fresh.write_text(json.dumps(_question(7, "orchard")) + "\n" + json.dumps(_question(8, "meadow")) + "\n")
    for control, expected in ((requested_control(split="validation"), Control.of_split("validation")),
                              (requested_control(data=str(fresh)), Control("file", str(fresh), "control")),
                              (None, Control())):
        [derived] = derive_partitions({"quiz_mc": loaded["quiz_mc"]}, control)
        read = Partition.from_card(write_partition(derived, tmp_path / expected.kind)).control
        assert read == derived.control and replace(read, overlap=None) == expected
        assert (read.overlap is None) == (expected.kind == "none")  # measured once, where the control was chosen


def test_a_control_file_is_rendered_by_the_tasks_templates(loaded: dict, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text(json.dumps(_question(7, "orchard")) + "\n" + json.dumps(_question(8, "meadow")) + "\n")
    [derived] = derive_partitions({"quiz_mc": loaded["quiz_mc"]}, requested_control(data=str(fresh)))
    assert derived.control == Control("file", str(fresh), "control", overlap=ControlOverlap(0, 2))
    assert derived.control_rows == tuple(
        {"text": f"Question: {_question(i, subject)['question']}\nAnswer:", "answer": answer,
         "choices": ["spring", "summer", "autumn", "winter"], "doc_index": index}
        for index, (i, subject, answer) in enumerate(((7, "orchard", "winter"), (8, "meadow", "spring"))))
    fresh.write_text(json.dumps({"prompt": "no question column"}) + "\n")
    with pytest.raises(ContamError, match=r"fresh\.jsonl:1.*--control-data.*cannot render it"):
        derive_partitions({"quiz_mc": loaded["quiz_mc"]}, requested_control(data=str(fresh)))


def test_a_control_split_every_subtask_lacks_names_the_subtask(loaded: dict) -> None:
    with pytest.raises(ContamError, match=r"^quiz_gen: field '--control-split': the task's dataset has no split "
                                          r"'validation'; it has test$"):
        derive_partitions(loaded, requested_control(split="validation"))
    with pytest.raises(ContamError, match="must differ from the evaluated split 'test'"):
        derive_partitions(loaded, requested_control(split="test"))
    with pytest.raises(ContamError, match="give one control"):
        requested_control("validation", "x.jsonl")


def _audit(tmp_path: Path, tiny_model_dir: Path, task_dir: Path, *extra: str) -> int:
    return cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(task_dir),
                     "--max_gen_toks", "4", "--batch_size", "14", "--output_path", str(tmp_path), *extra])


def test_audit_tasks_audits_a_group_per_subtask(tiny_model_dir: Path, task_dir: Path, loaded: dict, tmp_path: Path,
                                                capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect, partition_verdicts

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))  # where the benchmarks' DCR sheets are written
    assert _audit(tmp_path, tiny_model_dir, task_dir, "--tasks", "quiz_group") == 0
    audit = json.loads((tmp_path / "audit.json").read_text())
    # Cards are recorded relative to the audit directory (it can be moved or copied).
    assert audit["partitions"] == [f"partitions/task_{name}_test.yaml" for name in ("quiz_mc", "quiz_gen")]
    assert audit["settings"]["benchmark_tasks"] == ["quiz_group"]
    assert audit["settings"]["task_groups"] == [["quiz_group", "quiz_mc test"], ["quiz_group", "quiz_gen test"]]
    # quiz_mc's items share one answer set in a fixed order (the seasons): the option-order test is not planned.
    # Each card gets every registered method's tasks (report order) but those of the methods whose every test is
    # measured over its level (pairing: its p could make no call), the built-ins' by name; both tasks' items are one
    # template ("The old <subject> near the northern road..."): the in-context test's twins swap the same words in
    # most items, its null cannot hold there and it is not tested (issue 30, item 3).
    model = AuditedModel(chat=True, plain_text=True)
    assert methods_without_a_call() == ("pairing", "sentenceorder")
    per_task = [[task for spec in registered_methods() if spec.name not in methods_without_a_call()
                 for task in spec.task_names(Partition.from_card(tmp_path / card), model)
                 if not task.startswith("incontext_")] for card in audit["partitions"]]
    assert [[task for task in tasks if task.split("_", 1)[0] in NAMED] for tasks in per_task] == [
        [f"timetravel_task_{name}_test", f"timetravel_task_{name}_test_completion", f"dcq_task_{name}_test_ll",
         f"likelihood_task_{name}_test_lift"] for name in ("quiz_mc", "quiz_gen")]
    sheets = sorted((tmp_path / "home" / "dcr_task_sheets").glob("*/dcr_*_l[1-4].yaml"))
    tasks = audit["models"][0]["tasks"]
    planned = len(per_task[0]) + len(per_task[1]) + 1
    assert tasks[:planned] == [*per_task[0], *per_task[1], "quiz_group"]
    # One DCR sheet (4 levels) for the group, drawn across both subtasks (issue 42), not one per subtask.
    assert sorted(tasks[planned:]) == list(map(str, sheets)) and len(sheets) == 4
    (folder,) = {path.parent for path in sheets}
    sheet = load_sheet(folder / "sheet.yaml")
    assert (sheet.name, sheet.drawn_across) == ("quiz_group", ("quiz_mc", "quiz_gen"))
    for name in ("quiz_mc", "quiz_gen"):  # each partition's rows are its task's rendered docs, exactly
        card = Partition.from_card(tmp_path / "partitions" / f"task_{name}_test.yaml")
        assert card.rows() == _rendered_rows(benchmark_docs(name, loaded["quiz_group"][name]))
        assert card.dataset.sample == 24  # --sample's default: the validation study's partition size
    # The benchmark itself ran in the same call: its raw metrics sit in the results beside the audit's.
    results = json.loads(sorted((tmp_path / "runs" / "tiny").rglob("results_*.json"))[-1].read_text())["results"]
    assert 0.0 <= results["quiz_mc"]["acc,none"] <= 1.0 and results["quiz_gen"]["exact_match,none"] == 0.0
    # ... with the adjusted score and its interval beside each (the DCR hook; issue 19, item 3), by the group's factor.
    for task, metric in (("quiz_mc", "acc"), ("quiz_gen", "exact_match")):
        row = results[task]
        assert row["dcr_factor,none"] == results[sheet.group]["dcr_factor,none"]
        assert row[f"{metric}_adj,none"] == pytest.approx(row[f"{metric},none"] * (1 - row["dcr_factor,none"]))
        assert row[f"{metric}_adj_ci_low,none"] <= row[f"{metric}_adj,none"] <= row[f"{metric}_adj_ci_high,none"]
    verdicts = collect(load_run(tmp_path))
    # quiz_mc ran no multiple-choice-only test (its option order is not planned): its card still makes it multiple
    # choice, so its tests' rates are read for that shape.
    assert {v.partition: v.shape for v in verdicts if not v.partition.startswith("DCR sheet ")} == {
        "quiz_mc test": MULTIPLE_CHOICE, "quiz_gen test": FREE_TEXT}
    decisions = {v.partition: v.flagged for v in partition_verdicts(verdicts)}
    # An untrained model memorised nothing; the group's DCR sheet adds a partition whose factor decides nothing.
    assert {p: flagged for p, flagged in decisions.items() if not p.startswith("DCR sheet ")} == {
        "quiz_mc test": False, "quiz_gen test": False}
    assert [flagged for p, flagged in decisions.items() if p.startswith("DCR sheet ")] == [None]
    (dcr,) = [v for v in verdicts if v.family == "dcr"]
    assert ("factor of", "DCR factor of the group quiz_group, from one sheet drawn across its 2 subtasks") in \
        dcr.evidence.facts()
    # No control given: the lift mode is tested, the control and options modes say so and decide nothing.
    likelihood = {(v.partition, v.test): v for v in verdicts if v.family == "likelihood"}
    assert sorted(likelihood) == [(partition, method) for partition in ("quiz_gen test", "quiz_mc test")
                                  for method in ("likelihood_control", "likelihood_lift", "likelihood_options")]
    untested = likelihood[("quiz_mc test", "likelihood_control")]
    assert (untested.flagged, untested.pvalue, untested.evidence.summary()) == (None, None,
                                                                                 "no valid control: not tested")
    assert untested.null.startswith("none: quiz_mc test has no control partition")
    assert 0.0 <= likelihood[("quiz_mc test", "likelihood_lift")].pvalue <= 1.0
    assert "no valid control: not tested" in (tmp_path / "report.md").read_text()
    assert capsys.readouterr().out.splitlines()[-1] == "quiz_group (tiny): 0 of 2 partition(s) contaminated"


def test_a_negative_sample_is_refused_before_anything_is_written(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "audit"
    assert cli_main(["audit", "--tasks", "quiz_mc", "--sample", "-3", "--output_path", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "field '--sample': got -3; expected a whole number of instances, 2 or more (the tests compare samples of two or "
        "more; 0: the methods' own sample)")
    assert not out.exists()


def test_audit_tasks_with_a_control_split_runs_the_controlled_likelihood_modes(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    assert _audit(tmp_path, tiny_model_dir, task_dir, "--tasks", "quiz_mc", "--control-split", "validation",
                  "--no-report") == 0
    likelihood = {v.test: v for v in collect(load_run(tmp_path)) if v.family == "likelihood"}
    assert sorted(likelihood) == ["likelihood_control", "likelihood_control_zlib", "likelihood_lift",
                                  "likelihood_options"]
    control = likelihood["likelihood_control"]
    assert 0.0 <= control.pvalue <= 1.0 and control.n == 2 * len(SUBJECTS)
    # The verdict says which control it used, and its null names it.
    assert ("log-likelihood per byte, control (quiz_mc validation)",
            control.evidence.facts()[1][1]) == control.evidence.facts()[1]
    assert control.null == "the scores of quiz_mc test and of quiz_mc validation are exchangeable (the model saw both alike)"
    assert ("control (kind, source)", "split validation") in control.evidence.facts()  # the card's control field


@pytest.mark.parametrize(("tasks", "message"), [
    ("no_such_task", "no_such_task: field '--tasks': lm-eval does not know this task or group"),
    ("quiz_empty", "quiz_empty: field '--tasks': its evaluation split has no docs"),
    ("quiz_mc,broken_group", "broken_group: field '--tasks': subtask 'quiz_missing' of group 'broken_group': "
                             "lm-eval cannot load it (FileNotFoundError"),
])
def test_bad_tasks_are_one_line_naming_the_task_exit_2_nothing_written(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture, tasks: str,
        message: str) -> None:
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--include_path", str(task_dir), "--tasks", tasks,
                     "--output_path", str(out)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lm-eval-contam audit")]
    assert len(errors) == 1 and errors[0].startswith(f"lm-eval-contam audit: error: {message}")
    assert not out.exists()


def test_audit_tasks_builds_each_subtask_once_and_renders_each_doc_once(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One TaskManager per audit; the partitions, the DCR sheets and the evaluation take each benchmark task as it was
    built and each doc as it was rendered (issue 22, item 3)."""
    import datasets
    from lm_eval.tasks import TaskManager

    from lm_eval_contam.lmeval import benchmark_docs as rendering
    managers, builds, renders = Counter[str](), Counter[str](), Counter[str]()
    make_manager, load_dataset, render_doc = TaskManager.__init__, datasets.load_dataset, rendering.render_doc

    def counting_manager(self: TaskManager, *args: Any, **kwargs: Any) -> None:
        managers["made"] += 1
        make_manager(self, *args, **kwargs)

    def counting_load_dataset(*args: Any, **kwargs: Any) -> Any:
        files = kwargs.get("data_files") or {}
        if str(task_dir.parent / "data") in str(files):  # a quiz task is built: lm-eval loads its dataset
            builds["quiz_mc" if "validation" in files else "quiz_gen"] += 1  # only quiz_mc has a validation split
        return load_dataset(*args, **kwargs)

    def counting_render_doc(name: str, *args: Any) -> Any:
        renders[name] += 1
        return render_doc(name, *args)

    monkeypatch.setattr(TaskManager, "__init__", counting_manager)
    monkeypatch.setattr(datasets, "load_dataset", counting_load_dataset)
    monkeypatch.setattr(rendering, "render_doc", counting_render_doc)
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    assert _audit(tmp_path, tiny_model_dir, task_dir, "--tasks", "quiz_group", "--limit", "2", "--no-report") == 0
    assert managers == {"made": 1}
    assert builds == {"quiz_mc": 1, "quiz_gen": 1}
    assert renders == {"quiz_mc": len(SUBJECTS), "quiz_gen": len(SUBJECTS)}
    results = json.loads(sorted((tmp_path / "runs" / "tiny").rglob("results_*.json"))[-1].read_text())
    assert {"quiz_mc", "quiz_gen"} <= set(results["results"]) and "quiz_group" in results["group_subtasks"]
