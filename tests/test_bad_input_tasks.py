"""Issue 51: the newest paths of ``audit --tasks`` (the task's own second split as the control, ``--control-data``,
groups, adapters) answer every input: bad input is one line, exit 2, nothing written (cache home included), and valid
input that broke (a control file, a task name with ':', Cyrillic names, a second split the template cannot render)
runs.

The cases run offline on local task YAMLs (tests/test_task_audit.py's, and the few written here) and the tiny model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_bad_input_audit import _audit, _refused
from test_task_audit import GEN_YAML, MC_YAML, SUBJECTS, _question, write_tasks

from lm_eval_contam import harness
from lm_eval_contam.audit.benchmark_partitions import derive_partitions, requested_control
from lm_eval_contam.cli import main
from lm_eval_contam.lmeval.benchmark_docs import load_tasks

# A template listing four options (the reordered score reorders them), for a second split whose rows have two.
FOUR_LISTED = 'doc_to_text: "Question: {{question}}\\nA. {{choices[0]}}\\nB. {{choices[1]}}\\nC. {{choices[2]}}\\n' \
              'D. {{choices[3]}}\\nAnswer:"'


def _mc_yaml(name: str, test: Path, validation: Path, *, text: str | None = None) -> str:
    """quiz_mc's YAML as task ``name`` (written as it is: a quoted name stays quoted) with a validation split."""
    yaml = MC_YAML.format(test=test, validation=validation).replace("task: quiz_mc", f"task: {name}")
    yaml = yaml.replace("test_split: test\n", "test_split: test\nvalidation_split: validation\n")
    return yaml if text is None else yaml.replace('doc_to_text: "Question: {{question}}\\nAnswer:"', text)


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = write_tasks(tmp_path_factory.mktemp("newest_paths"))
    data = tasks.parent / "data"
    test, validation = data / "test.jsonl", data / "validation.jsonl"
    one = data / "one_row.jsonl"
    one.write_text(json.dumps(_question(300, "lake")) + "\n")
    two = data / "two_choices.jsonl"
    two.write_text("".join(json.dumps({**_question(400 + i, subject), "choices": ["yes", "no"], "answer": 0}) + "\n"
                           for i, subject in enumerate(SUBJECTS)))
    (tasks / "quiz_one_row.yaml").write_text(_mc_yaml("quiz_one_row", test, one))
    (tasks / "quiz_four_listed.yaml").write_text(_mc_yaml("quiz_four_listed", test, two, text=FOUR_LISTED))
    (tasks / "quiz_colon.yaml").write_text(_mc_yaml('"my quiz: part 1"', test, validation, text=FOUR_LISTED))
    (tasks / "quiz_ru_questions.yaml").write_text(_mc_yaml("вопросы", test, validation, text=FOUR_LISTED))
    (tasks / "quiz_ru_answers.yaml").write_text(_mc_yaml("ответы", test, validation, text=FOUR_LISTED))
    (tasks / "quiz_gen_split.yaml").write_text(  # free text with a second split: a control the reference scores
        GEN_YAML.format(test=test).replace("quiz_gen", "quiz_gen_split")
        .replace(f"    test: {test}\n", f"    test: {test}\n    validation: {validation}\n")
        .replace("test_split: test\n", "test_split: test\nvalidation_split: validation\n"))
    (tasks / "quiz_outer.yaml").write_text("group: quiz_outer\ntask:\n  - quiz_group\n  - quiz_one_row\n")
    (tasks / "quiz_top.yaml").write_text("group: quiz_top\ntask:\n  - quiz_outer\n")  # quiz_group two levels down
    (tasks / "quiz_side.yaml").write_text("group: quiz_side\ntask:\n  - quiz_mc\n  - quiz_one_row\n")  # shares quiz_mc
    return tasks


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache home, under the test's folder: every refusal leaves it unwritten too."""
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _controls(task_dir: Path, name: str) -> dict[str, str | None]:
    """The statement of each partition derived from ``name`` with the default control (no model, nothing written)."""
    loaded = load_tasks([name], harness.task_manager((str(task_dir),), include_defaults=True))
    return {partition.label: partition.statement() for partition in derive_partitions(loaded, requested_control())}


def test_audit_tasks_with_control_data_runs_with_that_file_as_the_control(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, home: Path) -> None:
    """Group 1: every --control-data file was refused, the card check comparing the user's file with the rendered
    copy the audit writes of it."""
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text("".join(json.dumps(_question(200 + i, subject)) + "\n" for i, subject in enumerate(SUBJECTS)))
    out = tmp_path / "audit"
    assert main([*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc", "--control-data", str(fresh)),
                 "--methods", "likelihood", "--no-report", "--batch_size", "16"]) == 0
    verdicts = {verdict.test: verdict for verdict in collect(load_run(out)) if verdict.family == "likelihood"}
    controlled = verdicts["likelihood_control"]
    assert controlled.pvalue is not None and 0.0 <= controlled.pvalue <= 1.0
    assert "quiz_mc control" in controlled.null
    rendered = [json.loads(line)["text"] for line in (out / "data" / "task_quiz_mc_control.jsonl").read_text()
                .splitlines()]
    assert rendered == [f"Question: {_question(200 + i, s)['question']}\nAnswer:" for i, s in enumerate(SUBJECTS)]


def test_a_sample_of_one_is_refused_before_anything_is_written(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                               home: Path, capsys: pytest.CaptureFixture) -> None:
    """Group 2: --sample 1 reached scipy's permutation test with one observation, after every file was written."""
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_mc", "--sample",
                                   "1"), tmp_path)
    assert line == ("lm-eval-contam audit: error: field '--sample': got 1; expected a whole number of instances, 2 or "
                    "more (the tests compare samples of two or more; 0: the methods' own sample)")


def test_a_one_row_second_split_is_not_the_default_control_and_is_refused_when_named(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    """Group 2: a one-row second split was taken as the control and failed in the permutation test mid-run."""
    assert _controls(task_dir, "quiz_one_row") == {
        "quiz_one_row test": "quiz_one_row test: the task's validation split has 1 row; the tests compare samples of "
                             "2 or more: the with-control verdict is not computed"}
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_one_row",
                                   "--control-split", "validation"), tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_one_row: field '--control-split': the control has 1 row; the "
                    "tests compare samples of 2 or more: the with-control verdict cannot be computed")


def test_a_second_split_the_template_cannot_render_is_no_control_and_a_named_one_is_refused(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    """Group 2: a second split with 2 choices where the template lists 4 was a raw jinja2 UndefinedError, though the
    task itself runs (lm-eval never renders that split)."""
    why = "doc 0: task 'quiz_four_listed' cannot render it (UndefinedError: list object has no element 2)"
    assert _controls(task_dir, "quiz_four_listed") == {
        "quiz_four_listed test": f"quiz_four_listed test: the task's validation split cannot be a control ({why}): "
                                 "the with-control verdict is not computed"}
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_four_listed",
                                   "--control-split", "validation"), tmp_path)
    assert line == f"lm-eval-contam audit: error: quiz_four_listed validation: field '--control-split': {why}"


def test_a_task_name_with_a_colon_and_two_cyrillic_names_are_audited(tiny_model_dir: Path, task_dir: Path,
                                                                     tmp_path: Path, home: Path) -> None:
    """Groups 3 and 9: the reordered task's YAML named "my quiz: part 1" unquoted and failed to parse; two Cyrillic
    names were both keyed ``task_data``."""
    out = tmp_path / "audit"
    assert main([*_audit(tiny_model_dir, task_dir, out, "--tasks", "my quiz: part 1,вопросы,ответы"),
                 "--methods", "likelihood,reordered", "--no-report", "--batch_size", "16"]) == 0
    results = json.loads(max((out / "runs" / "tiny").rglob("results_*.json")).read_text())["results"]
    for name in ("my quiz: part 1", "вопросы", "ответы"):
        assert 0.0 <= results[name]["acc_reordered,none"] <= 1.0
    cards = sorted(path.name for path in (out / "partitions").iterdir())
    assert len(cards) == 3 and "task_my_quiz_part_1_test.yaml" in cards


def test_a_missing_peft_adapter_is_refused_before_anything_is_written(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    """Group 4: the spec check loaded pretrained, not peft; peft's ValueError came after 10 files were written."""
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_model.safetensors").write_bytes(b"")
    for adapter, why in (("MISSING", "ValueError: Can't find 'adapter_config.json' at 'MISSING'"),
                         (str(tmp_path / "adapter"), f"{tmp_path / 'adapter'} has no adapter_config.json")):
        spec = f"hf:pretrained={tiny_model_dir},peft={adapter}"
        line = _refused(capsys, ["audit", "--model", spec, "--label", "tiny", "--include_path", str(task_dir),
                                 "--tasks", "quiz_mc", "--output_path", str(tmp_path / "audit")], tmp_path)
        assert line == (f"lm-eval-contam audit: error: field 'model': cannot load model spec {spec!r}: peft={adapter}: "
                        f"{why}; expected a PEFT adapter folder (its adapter_config.json) or Hub id")


@pytest.mark.parametrize(("model", "why"), [
    ("{tmp}/adapter", "{tmp}/adapter has no config.json"),  # an adapter's weights without its config
    ("{tmp}/adapter/nope", "no such folder '{tmp}/adapter/nope'"),
])
def test_a_local_model_folder_that_cannot_load_is_named_not_the_hub(
        task_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture, model: str, why: str) -> None:
    """Group 8: an adapter folder without adapter_config.json said "You need to have sentencepiece or tiktoken
    installed"; a missing folder beside its parent said "couldn't connect to" the Hub."""
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_model.safetensors").write_bytes(b"")
    model, why = model.format(tmp=tmp_path), why.format(tmp=tmp_path)
    line = _refused(capsys, ["audit", "--model", model, "--label", "m", "--include_path", str(task_dir), "--tasks",
                             "quiz_mc", "--output_path", str(tmp_path / "audit")], tmp_path)
    assert line == (f"lm-eval-contam audit: error: field 'model': cannot load model spec {model!r}: {why}; expected an "
                    "HF model folder, a Hub id or <backend>:<key=value,...>")


@pytest.mark.parametrize("tasks", ["quiz_outer,quiz_group", "quiz_group,quiz_outer"])
def test_a_group_beside_a_group_nested_in_it_is_refused(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                        home: Path, capsys: pytest.CaptureFixture, tasks: str) -> None:
    """Group 4: --tasks G,G_inner wrote 28 files, then lm-eval's "Duplicate task" ValueError; --tasks G_inner,G (the
    nested group first) still did."""
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", tasks), tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_group: field '--tasks': its subtasks (quiz_mc, quiz_gen) are "
                    "already subtasks of group 'quiz_outer' (a group within it); give one of the two groups, not both")


@pytest.mark.parametrize(("tasks", "line"), [
    # nested two levels down, either order: the inner group is named, beside the outer one
    ("quiz_group,quiz_top", "quiz_group: field '--tasks': its subtasks (quiz_mc, quiz_gen) are already subtasks of "
                            "group 'quiz_top' (a group within it); give one of the two groups, not both"),
    ("quiz_top,quiz_group", "quiz_group: field '--tasks': its subtasks (quiz_mc, quiz_gen) are already subtasks of "
                            "group 'quiz_top' (a group within it); give one of the two groups, not both"),
    # a plain task reached through a group nested in the listed one, either order
    ("quiz_one_row,quiz_top", "quiz_one_row: field '--tasks': is already a subtask of group 'quiz_top'; give the group "
                              "or the task, not both"),
    ("quiz_top,quiz_gen", "quiz_gen: field '--tasks': is already a subtask of group 'quiz_top'; give the group or the "
                          "task, not both"),
    # two groups sharing a task, neither within the other (lm-eval's "Duplicate task 'quiz_mc'")
    ("quiz_side,quiz_group", "quiz_group: field '--tasks': shares subtask(s) quiz_mc with group 'quiz_side', and "
                             "lm-eval runs a task once per run; give groups that share no task"),
    ("quiz_outer,quiz_side", "quiz_side: field '--tasks': shares subtask(s) quiz_mc, quiz_one_row with group "
                             "'quiz_outer', and lm-eval runs a task once per run; give groups that share no task"),
])
def test_names_that_reach_one_task_twice_are_refused_in_any_order(task_dir: Path, tasks: str, line: str) -> None:
    """Group 4: any --tasks name that lm-eval would also reach through another listed group (a group nested at any
    depth, a task inside it, two groups sharing a task) is refused, whatever the order, before anything is written
    (the check runs on the loaded tasks; the CLI test above shows the exit and the empty folders)."""
    from lm_eval_contam.core.errors import ContamError
    from lm_eval_contam.core.input_checks import check_tasks_named_once

    loaded = load_tasks(tasks.split(","), harness.task_manager((str(task_dir),), include_defaults=True))
    with pytest.raises(ContamError) as refused:
        check_tasks_named_once(loaded)
    assert str(refused.value) == line


def test_console_lines_write_bidi_controls_out_as_the_report_does(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """Group 9: console lines printed U+202E raw (it reorders the rest of the line), the report escaped it."""
    named = tmp_path / "notes\u202etxt.yaml"
    named.write_text("mine\n")
    assert main(["audit", "--tasks", "quiz_mc", "--output_path", str(named)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}/notes[U+202E]txt.yaml: field '--output_path': exists and is not a directory" in err
    assert "\u202e" not in err


def test_a_keyboard_interrupt_in_a_finalizer_after_ctrl_c_prints_no_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Group 9: Ctrl-C printed "Exception ignored in: SqliteDict.__del__ ... KeyboardInterrupt" after the one line."""
    import gc
    import sys

    import lm_eval_contam.cli.audit as audit_command

    def interrupted(args, label):
        raise KeyboardInterrupt

    class ClosingCache:  # a finalizer that meets the interrupt, as lm-eval's SqliteDict cache does
        def __del__(self) -> None:
            raise KeyboardInterrupt

    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # restored after the test
    monkeypatch.setattr(audit_command, "check_args", interrupted)
    assert main(["audit", "--tasks", "quiz_mc", "--output_path", str(tmp_path / "audit")]) == 130
    cache = ClosingCache()
    del cache
    gc.collect()
    assert capsys.readouterr().err.splitlines() == [
        "lm-eval-contam audit: interrupted; finished work is saved (re-run the same command to resume)"]


def test_prompts_cut_to_the_window_are_a_caveat_on_the_benchmarks_score_not_only_a_console_line() -> None:
    """Group 9: the cut-prompt caveat was printed before the run and nowhere in report.md; it now rides with the
    benchmark's score (benchmark_scoring's caveats, which the report's first screen prints beside it)."""
    from lm_eval_contam.audit.job import benchmark_caveats
    from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, LoadedBenchmark
    from lm_eval_contam.lmeval.context_window import ModelWindow

    docs = {"quiz": (BenchmarkDoc("quiz", 0, "one two three four five six", "yes", ("yes",), "multiple_choice"),
                     BenchmarkDoc("quiz", 1, "one", "yes", ("yes", "no"), "multiple_choice"))}
    benchmark = LoadedBenchmark("quiz", (), {}, docs)
    assert benchmark_caveats({"quiz": benchmark}, ModelWindow(4, str.split)) == {"quiz": [
        "1 of 2 items have one choice: each counts as right by construction",
        "1 of 2 docs are longer than the audited model's window of 4 tokens (with their longest choice); lm-eval cuts "
        "them from the left, and the verdicts whose samples hold them say so"]}
    assert benchmark_caveats({"quiz": benchmark}) == {"quiz": [
        "1 of 2 items have one choice: each counts as right by construction"]}


def test_a_test_in_the_holm_set_with_no_measured_rate_is_not_said_to_drive(monkeypatch: pytest.MonkeyPatch) -> None:
    """Group 8: the report's tests on u read "role: drives the per-partition verdict (Holm)" above "measured
    false-positive rate: not measured", while the rule makes no call on such a test's p."""
    from types import SimpleNamespace

    from lm_eval_contam.report import layout

    verdict = SimpleNamespace(null="u is exchangeable", rule="p <= 0.05", partition="quiz_mc test")
    column = SimpleNamespace(verdicts=[verdict])
    monkeypatch.setattr(layout, "drives", lambda column, rows: True)  # in a partition's Holm set
    monkeypatch.setattr(layout, "rate_text", lambda verdict: layout.NOT_MEASURED)
    monkeypatch.setattr(layout, "detection_text", lambda verdict: layout.NOT_MEASURED)
    for measured, role in ((True, "drives the per-partition verdict (Holm)"),
                           (False, "in the per-partition verdict's Holm set, never driving it: its false-positive rate "
                                   "is not measured, so its p ≤ 0.05 makes no call")):
        monkeypatch.setattr(layout, "measured", lambda verdict, measured=measured: measured)
        rows = [SimpleNamespace(evidence=[(verdict, None)])]  # the partition's verdict reads it
        assert dict(layout.test_facts(column, rows))["role"] == role


def test_an_audit_folder_of_an_earlier_version_is_not_told_to_rerun_its_own_command(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    """Group 8: a folder of the previous version was told to "re-run its own command to resume it", which is what the
    user had just done; what it lacks is what this version records (here: the sample and the split control)."""
    out = tmp_path / "audit"
    out.mkdir()
    earlier = {"partitions": None, "tasks": ["quiz_mc"], "data": None, "control_split": None, "control_data": None,
               "dcr_sheet": None, "dcq_mode": "loglikelihood", "likelihood": True, "limit": None}
    (out / "audit.json").write_text(json.dumps({"version": 1, "models": [], "identity": earlier}))
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc"), tmp_path)
    assert line == (f"lm-eval-contam audit: error: {out}: field '--output_path': holds an audit of an earlier version "
                    "of lm-eval-contam (its audit.json records no 'sample', 'split_control'), which this version "
                    "cannot resume; give a new --output_path")


def test_reference_items_where_no_benchmark_gets_a_reordered_score_says_it_is_not_used(
        tiny_model_dir: Path, tiny_model_copy: Path, task_dir: Path, tmp_path: Path, home: Path,
        capsys: pytest.CaptureFixture) -> None:
    """Group 7: --reference-items 5 with no reordered score (a free-text benchmark) was ignored without a word."""
    assert main([*_audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_gen_split"), "--reference-model",
                 str(tiny_model_copy), "--reference-items", "5", "--methods", "likelihood,reordered", "--no-report",
                 "--batch_size", "16"]) == 0
    assert ("--reference-items 5 not used: no --tasks benchmark gets a reordered score (none is multiple choice with "
            "its options listed in its prompt)") in capsys.readouterr().out.splitlines()
