"""Bad input to ``audit`` (and ``run``, ``dcq-options``): one line naming the input, the field and what is expected,
exit 2, and nothing written (issue 23, items 1-3 and 8).

Every case runs offline on local task YAMLs (tests/test_task_audit.py's) and the tiny model; each asserts the exact
message, the exit status and that the folder it may write into is unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_task_audit import MC_YAML, write_tasks

from lm_eval_contam.cli import main


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = write_tasks(tmp_path_factory.mktemp("bad_input_tasks"))
    (tasks / "quiz_broken.yaml").write_text("task: quiz_broken\ndataset_path: json\ndoc_to_text: [unclosed\n")
    # quiz_mc's items with their gold choice alone: every item has one choice.
    rows = [json.loads(line) for line in (tasks.parent / "data" / "test.jsonl").read_text().splitlines()]
    one = tasks.parent / "data" / "one_choice.jsonl"
    one.write_text("".join(json.dumps({**row, "choices": [row["choices"][row["answer"]]], "answer": 0}) + "\n"
                           for row in rows))
    (tasks / "quiz_one.yaml").write_text((tasks / "quiz_mc.yaml").read_text().replace("quiz_mc", "quiz_one").replace(
        str(tasks.parent / "data" / "test.jsonl"), str(one)))
    return tasks


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _refused(capsys: pytest.CaptureFixture, argv: list[str], root: Path) -> str:
    """Run the CLI: exit 2, one error line, no traceback, nothing under ``root`` created or changed; the line."""
    before = _snapshot(root)
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("lm-eval-contam ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert _snapshot(root) == before
    return lines[0]


def _audit(tiny_model_dir: Path, task_dir: Path, out: Path, *extra: str) -> list[str]:
    return ["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(task_dir),
            "--output_path", str(out), *extra]


@pytest.mark.parametrize(("spec", "expected"), [
    ("{tmp}/missing_model", "cannot load model spec '{tmp}/missing_model': no such folder '{tmp}/missing_model'"),
    ("hf:", "cannot load model spec 'hf:': OSError: "),
    ("hf:pretrained", "cannot load model spec 'hf:pretrained': OSError: "),
    ("vllm:pretrained=/m", "unknown lm-eval model backend 'vllm' (or its package is not installed) in model spec "
                           "'vllm:pretrained=/m' (ModuleNotFoundError"),
])
def test_audit_refuses_a_bad_model_spec(tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
                                        spec: str, expected: str) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if spec.startswith("vllm"):
        pytest.importorskip("torch")
        try:
            import vllm  # noqa: F401
            pytest.skip("vllm is installed")
        except ImportError:
            pass
    spec, expected = spec.format(tmp=tmp_path), expected.format(tmp=tmp_path)
    line = _refused(capsys, ["audit", "--model", spec, "--label", "m", "--partitions", "toy_news:train",
                             "--output_path", str(tmp_path / "audit")], tmp_path)
    assert line.startswith(f"lm-eval-contam audit: error: field 'model': {expected}")
    if not spec.startswith("vllm"):
        assert line.endswith("; expected an HF model folder, a Hub id or <backend>:<key=value,...>")


def test_audit_refuses_a_group_and_one_of_its_subtasks(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_group,quiz_mc"),
                    tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_mc: field '--tasks': is already a subtask of group "
                    "'quiz_group'; give the group or the task, not both")


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_audit_refuses_a_limit_below_one(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture, limit: str) -> None:
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_mc",
                                   "--limit", limit), tmp_path)
    assert line == (f"lm-eval-contam audit: error: field '--limit': got {limit}; expected a whole number of docs per "
                    f"task >= 1 (or leave it out)")


def test_audit_refuses_an_output_path_that_is_a_file(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "audit"
    out.write_text("my notes\n")
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc"), tmp_path)
    assert line == (f"lm-eval-contam audit: error: {out}: field '--output_path': exists and is not a directory; "
                    f"expected an audit directory (new or existing)")


@pytest.mark.parametrize(("flag", "value"), [("--tasks", " , "), ("--partitions", ",")])
def test_audit_refuses_an_empty_list_instead_of_auditing_the_defaults(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture, flag: str,
        value: str) -> None:
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", flag, value), tmp_path)
    assert line == (f"lm-eval-contam audit: error: field '{flag}': got {value!r}; expected one or more "
                    f"comma-separated names")


@pytest.mark.parametrize(("flag", "value"), [("--control-split", "validation"), ("--control-data", "fresh.jsonl")])
def test_audit_refuses_a_control_with_only_partitions(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture, flag: str, value: str) -> None:
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--partitions", "toy_news:train",
                                   flag, value), tmp_path)
    assert line == (f"lm-eval-contam audit: error: field '{flag}': a control goes with --tasks or --data; a "
                    f"--partitions partition's control is its registered sibling split, so this flag would be ignored")


def test_audit_names_the_broken_yaml_of_a_task(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_broken"), tmp_path)
    assert line.startswith(f"lm-eval-contam audit: error: quiz_broken: field '--tasks': "
                           f"{task_dir / 'quiz_broken.yaml'}: not valid YAML (")


def test_audit_refuses_a_missing_include_path(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "no_tasks_here"
    line = _refused(capsys, _audit(tiny_model_dir, missing, tmp_path / "audit", "--tasks", "quiz_mc"), tmp_path)
    assert line == (f"lm-eval-contam audit: error: {missing}: field '--include_path': no such directory; expected a "
                    f"folder of lm-eval task YAMLs")


def test_audit_refuses_a_card_whose_data_file_is_empty(tiny_model_dir: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    card = tmp_path / "mine.yaml"
    card.write_text("dataset_name: Mine\nsplit: test\ntext_field: text\ndata_files:\n  test: empty.jsonl\n")
    out = tmp_path / "audit"
    out.mkdir()
    line = _refused(capsys, ["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--partitions", str(card),
                             "--output_path", str(out)], tmp_path)
    assert line == f"lm-eval-contam audit: error: {tmp_path / 'empty.jsonl'}: no rows: the partition is empty"


@pytest.mark.parametrize(("metadata", "expected"), [
    ('{"seed": "abc"}', "field '--metadata': 'seed' is 'abc'; expected a whole number"),
    ('{"dcr_adjust": "false"}', "field '--metadata': 'dcr_adjust' is 'false'; expected true or false (JSON booleans, "
                                "not strings)"),
    ('{"seed": 1', "field '--metadata': Invalid JSON: {\"seed\": 1. Hint: Use double quotes for JSON strings; "
                   "expected a JSON object or key=value pairs"),
])
def test_run_refuses_bad_metadata(tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                  metadata: str, expected: str) -> None:
    line = _refused(capsys, ["run", "--model", "hf", "--model_args", f"pretrained={tiny_model_dir}", "--tasks",
                             "timetravel_toy_news_train", "--output_path", str(tmp_path / "out"), "--metadata",
                             metadata], tmp_path)
    assert line == f"lm-eval-contam run: error: {expected}"


def test_dcq_options_refuses_an_empty_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    line = _refused(capsys, ["dcq-options", "--dataset", str(empty), "--split", "test", "--dataset-name", "Mine",
                             "--columns", "text", "--generator", "offline", "--out", str(tmp_path / "options.jsonl")],
                    tmp_path)
    assert line == f"lm-eval-contam dcq-options: error: {empty}: field '--dataset': no rows: the partition is empty"


def _latest_results(out: Path) -> dict:
    return json.loads(sorted((out / "runs" / "tiny").rglob("results_*.json"))[-1].read_text())


def test_benchmark_is_scored_as_plain_lm_eval_and_the_directory_belongs_to_one_audit(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import lm_eval
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    argv = [*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc"), "--batch_size", "14", "--no-report"]
    assert main(argv) == 0
    audited = _latest_results(out)
    # The tiny model has a chat template (the audit's prompts use it); the benchmark is scored as lm_eval scores it.
    plain = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={tiny_model_dir}", tasks=["quiz_mc"],
                                    task_manager=TaskManager(include_path=[str(task_dir)], include_defaults=False),
                                    device="cpu", batch_size=14, log_samples=True)
    assert audited["results"]["quiz_mc"]["acc,none"] == plain["results"]["quiz_mc"]["acc,none"]
    # The same requests, prompt for prompt (an untrained model may score a chat-templated prompt alike).
    logged = sorted((out / "runs" / "tiny").rglob("samples_quiz_mc_*.jsonl"))[-1].read_text().splitlines()
    requests = {row["doc_id"]: [tuple(args.values()) for args in row["arguments"].values()]
                for row in map(json.loads, logged)}
    assert requests == {row["doc_id"]: [tuple(args) for args in row["arguments"]] for row in plain["samples"]["quiz_mc"]}
    scoring = {"tasks": ["quiz_mc"], "model": "hf", "model_args": f"pretrained={tiny_model_dir}",
               "apply_chat_template": False, "limit": None, "num_fewshot": {"quiz_mc": 0}}
    assert audited["benchmark_scoring"] == scoring
    audit = json.loads((out / "audit.json").read_text())
    assert audit["models"][0]["benchmark_scoring"] == scoring
    capsys.readouterr()

    # Another audit into the same directory, or another model under the used label: refused, nothing written.
    line = _refused(capsys, [*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_gen"), "--no-report"], tmp_path)
    assert line == (f"lm-eval-contam audit: error: {out}: field '--output_path': holds another audit (tasks "
                    f"['quiz_mc'] -> ['quiz_gen']); re-run its own command to resume it, or give a new --output_path")
    line = _refused(capsys, [*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc", "--control-split",
                                     "validation"), "--no-report"], tmp_path)
    assert line.startswith(f"lm-eval-contam audit: error: {out}: field '--output_path': holds another audit "
                           f"(control_split None -> 'validation')")
    other = f"hf:pretrained={tiny_model_dir},dtype=float32"
    line = _refused(capsys, ["audit", "--model", other, "--label", "tiny", "--include_path", str(task_dir),
                             "--output_path", str(out), "--tasks", "quiz_mc", "--no-report"], tmp_path)
    assert line == (f"lm-eval-contam audit: error: {out}: field '--label': label 'tiny' is model "
                    f"hf:pretrained={tiny_model_dir} in this audit, not hf:pretrained={tiny_model_dir},dtype=float32; "
                    f"give another --label")

    # A copied directory is the same audit: the same command re-runs there with the original gone.
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    shutil.rmtree(out)
    assert main([*_audit(tiny_model_dir, task_dir, copy, "--tasks", "quiz_mc"), "--batch_size", "14",
                 "--no-report"]) == 0
    assert _latest_results(copy)["results"]["quiz_mc"]["acc,none"] == audited["results"]["quiz_mc"]["acc,none"]
    assert not out.exists()


def test_the_reports_first_screen_shows_each_benchmarks_score_and_adjusted_score(tmp_path: Path) -> None:
    from test_bad_input_cli import _run_dir

    from lm_eval_contam.report import build_report
    from lm_eval_contam.report.html import render_html
    from lm_eval_contam.report.markdown import render_markdown

    run = _run_dir(tmp_path)
    results_file = next(run.glob("results_*.json"))
    results = json.loads(results_file.read_text())
    row = results["results"]["contam_toy_sentiment"]
    results["benchmark_scoring"] = {"tasks": ["contam_toy_sentiment"], "apply_chat_template": False, "limit": None,
                                    "num_fewshot": {"contam_toy_sentiment": 0}}
    results_file.write_text(json.dumps(results))
    report = build_report(run)
    adjusted = (f"{row['acc_adj,none']:.4f} (95 % CI {row['acc_adj_ci_low,none']:.4f}–"
                f"{row['acc_adj_ci_high,none']:.4f})")
    markdown = render_markdown(report)
    first_screen = markdown.split("## Models")[0]
    # No reordered score: the task's options are not listed in its prompt (reordered.md).
    assert (f"| {report.models[0].label} | contam_toy_sentiment | acc,none | 0.9000 | {adjusted} | — | — | no chat "
            f"template, 0-shot, every doc |") in first_screen
    html = render_html(report)
    assert html.index('id="benchmarks"') < html.index("<h2>Models</h2>") and "0.9000" in html


OVERLAP_TAIL = ("; expected a control the model cannot have seen, sharing under 50% of its rows with the audited data "
                "(the same data can never differ from itself)")


def test_a_control_that_is_the_audited_task_data_is_refused(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    same = task_dir.parent / "data" / "test.jsonl"
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_mc",
                                   "--control-data", str(same)), tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_mc: field '--control-data': 14 of the control's 14 rows (100%) "
                    "are audited rows" + OVERLAP_TAIL)
    # Issue 30, item 8: a lower-cased copy of the audited data passed the check.
    lowered = tmp_path / "lowered.jsonl"
    lowered.write_text(same.read_text().lower())
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_mc",
                                   "--control-data", str(lowered)), tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_mc: field '--control-data': 14 of the control's 14 rows (100%) "
                    "are audited rows" + OVERLAP_TAIL)


def test_a_control_file_overlapping_ones_own_data_is_refused_below_the_share_accepted(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from lm_eval_contam.core.input_checks import ControlOverlap, check_control_overlap

    rows = [{"text": f"Release {n} of the exporter fixed the {word} bug in the parser."} for n, word in
            enumerate(["first", "second", "third", "fourth"])]
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(json.dumps(row) + "\n" for row in rows))
    control = tmp_path / "control.jsonl"
    control.write_text("".join(json.dumps(row) + "\n" for row in rows[:2]) + '{"text": "A later note."}\n')
    line = _refused(capsys, ["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(mine),
                             "--split", "test", "--name", "Mine", "--text-field", "text", "--control-data",
                             str(control), "--control-split", "later", "--output_path", str(tmp_path / "audit")],
                    tmp_path)
    assert line == (f"lm-eval-contam audit: error: {control}: field '--control-data': 2 of the control's 3 rows (67%) "
                    f"are audited rows" + OVERLAP_TAIL)
    below = check_control_overlap(["a b", "c"], ["a  b", "d", "e"], source="x", field="f")
    assert below == ControlOverlap(shared=1, rows=3) and below.share == pytest.approx(1 / 3)
    assert below.describe() == "control shares 1 of 3 rows (33%) with the audited data"


@pytest.mark.parametrize(("label", "hint"), [("fix", "write 0 for 'fix'"),
                                             ("1", "write it as a JSON number, not a string"),
                                             ("bug", None)])
def test_a_label_that_is_text_where_the_label_names_need_an_index_is_refused_before_writing(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture, label: str, hint: str | None) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text(json.dumps({"text": "Release 1 fixed the parser.", "label": 0}) + "\n"
                     + json.dumps({"text": "Release 2 added the exporter.", "label": label}) + "\n")
    line = _refused(capsys, ["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(notes),
                             "--split", "test", "--name", "Notes", "--text-field", "text", "--label-field", "label",
                             "--label-names", "fix,feature", "--output_path", str(tmp_path / "audit")], tmp_path)
    assert line == (f"lm-eval-contam audit: error: {notes}:2: field 'label': label {label!r} is not an index; expected "
                    f"a whole number indexing the label names (0 = fix, 1 = feature)" + (f"; {hint}" if hint else ""))
    assert not (tmp_path / "audit").exists()


def test_an_interrupted_first_run_leaves_its_identity_so_no_other_audit_mixes_with_its_files(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import lm_eval_contam.cli.audit as audit_command

    out = tmp_path / "audit"

    def interrupted_run(model, label, out_dir, settings, loaded=None, *, reference=None):  # cache, then Ctrl-C
        (out_dir / "cache").mkdir(exist_ok=True)
        (out_dir / "cache" / f"{label}_rank0.db").write_bytes(b"answers of the first run")
        raise KeyboardInterrupt

    monkeypatch.setattr(audit_command, "run_model", interrupted_run)  # the name the command calls
    argv = [*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc"), "--no-report"]
    assert main(argv) == 130
    # The card and rows written before the run, and the cache, lie beside the identity written before them.
    assert {path.name for path in out.iterdir()} == {"audit.json", "partitions", "data", "cache"}
    recorded = json.loads((out / "audit.json").read_text())
    assert (recorded["identity"]["tasks"], recorded["labels"]) == (["quiz_mc"], {"tiny": f"hf:pretrained={tiny_model_dir}"})
    capsys.readouterr()

    line = _refused(capsys, [*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_gen"), "--no-report"], tmp_path)
    assert line == (f"lm-eval-contam audit: error: {out}: field '--output_path': holds another audit (tasks "
                    f"['quiz_mc'] -> ['quiz_gen']); re-run its own command to resume it, or give a new --output_path")
    other = f"hf:pretrained={tiny_model_dir},dtype=float32"
    line = _refused(capsys, ["audit", "--model", other, "--label", "tiny", "--include_path", str(task_dir),
                             "--output_path", str(out), "--tasks", "quiz_mc", "--no-report"], tmp_path)
    assert line == (f"lm-eval-contam audit: error: {out}: field '--label': label 'tiny' is model "
                    f"hf:pretrained={tiny_model_dir} in this audit, not {other}; give another --label")
    assert main(argv) == 130  # the same command is the same audit: it resumes (here: is interrupted again)


def test_a_refused_command_takes_back_the_identity_it_wrote(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    from lm_eval_contam.core.audit_identity import AUDIT_FILE

    out = tmp_path / "audit"
    out.mkdir()
    (out / "notes.txt").write_text("the user's own file\n")
    # The model's own check passes, so the refusal comes after the identity was recorded: it is taken back.
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, out, "--tasks", "no_such_task"), tmp_path)
    assert line == ("lm-eval-contam audit: error: no_such_task: field '--tasks': lm-eval does not know this task or "
                    "group (check the name and --include_path)")
    assert not (out / AUDIT_FILE).exists()


def test_a_control_sharing_a_few_rows_with_the_audited_data_says_so_in_the_likelihood_evidence(
        tiny_model_dir: Path, tmp_path: Path) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    notes = [f"Release {n} of the exporter fixed the {word} bug in the parser that reads old files." for n, word in
             enumerate(["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"])]
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(json.dumps({"text": note}) + "\n" for note in notes))
    later = [f"Version {n} exports reports with more than {n * 100} rows to the shared folder." for n in range(1, 8)]
    control = tmp_path / "later.jsonl"
    control.write_text("".join(json.dumps({"text": text}) + "\n" for text in [*later, notes[0]]))
    out = tmp_path / "audit"
    assert main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(mine), "--split", "test",
                 "--name", "Mine", "--text-field", "text", "--control-data", str(control), "--control-split", "later",
                 "--max_gen_toks", "4", "--batch_size", "16", "--output_path", str(out)]) == 0
    shared = "control shares 1 of 8 rows (12%) with the audited data"
    facts = {verdict.test: dict(verdict.evidence.facts()) for verdict in collect(load_run(out))
             if verdict.family == "likelihood"}
    assert {method: found.get("control overlap") for method, found in facts.items()} == {
        "likelihood_control": shared, "likelihood_control_zlib": shared, "likelihood_options": shared,
        "likelihood_lift": None}
    assert f"control overlap: {shared}" in (out / "report.md").read_text()


def test_a_one_choice_benchmark_carries_its_caveat_beside_its_score(tiny_model_dir: Path, task_dir: Path,
                                                                  tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert main([*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_one"), "--max_gen_toks", "4",
                 "--batch_size", "14"]) == 0
    caveat = "every item has one choice: acc is 1 by construction"
    assert f"caveat: benchmark quiz_one: {caveat}" in capsys.readouterr().out.splitlines()
    results = _latest_results(out)
    assert results["results"]["quiz_one"]["acc,none"] == 1.0
    assert results["benchmark_scoring"]["caveats"] == {"quiz_one": [caveat]}
    first_screen = (out / "report.md").read_text().split("## Models")[0]
    assert f"| tiny | quiz_one | acc,none | 1.0000 (caveat: {caveat}) |" in first_screen
    assert f"1.0000 (caveat: {caveat})" in (out / "report.html").read_text()


def test_items_with_one_choice_among_others_are_counted_in_the_caveat() -> None:
    from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, single_choice_caveat

    def doc(choices: tuple[str, ...], output_type: str = "multiple_choice") -> BenchmarkDoc:
        return BenchmarkDoc(task="t", index=0, text="Q?", target=choices[0] if choices else "a", choices=choices,
                            output_type=output_type)

    two, one = doc(("yes", "no")), doc(("yes",))
    assert single_choice_caveat([one, two, one, two]) == ("2 of 4 items have one choice: each counts as right by "
                                                          "construction")
    assert single_choice_caveat([one, one]) == "every item has one choice: acc is 1 by construction"
    assert single_choice_caveat([two, doc((), "generate_until")]) is None


def test_a_refusal_before_the_model_answers_takes_back_the_cards_and_task_files(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal once the partition cards and task YAMLs exist (e.g. an API model that cannot score log-likelihoods)
    leaves the directory as it was: new, it is gone; an existing one keeps only its own files."""
    import lm_eval_contam.audit.job as audit_module
    from lm_eval_contam.core.errors import ContamError

    written: list[str] = []

    def refuse(model, tasks, manager) -> None:
        written.extend(sorted(path.name for path in out.rglob("*.yaml")))
        raise ContamError("cannot score log-likelihoods here", field="model")

    monkeypatch.setattr(audit_module.harness, "check_model_can_run", refuse)
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))  # no DCR sheet is written there first either
    out = tmp_path / "audit"
    line = _refused(capsys, [*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc")], tmp_path)
    assert line == "lm-eval-contam audit: error: field 'model': cannot score log-likelihoods here"
    assert "incontext_task_quiz_mc_test.yaml" in written and not out.exists()
    out.mkdir()
    (out / "notes.txt").write_text("the user's own file\n")
    _refused(capsys, [*_audit(tiny_model_dir, task_dir, out, "--tasks", "quiz_mc")], tmp_path)
    assert [path.name for path in out.iterdir()] == ["notes.txt"]


def test_another_model_under_the_same_label_after_audit_json_is_lost_gets_its_own_request_cache(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30, item 1: lm-eval keys its request cache by request only; a cache named by the label alone answered
    model B with model A's log-likelihoods once audit.json was removed. Each model now has a cache of its own."""
    from conftest import TINY_CORPUS

    from lm_eval_contam.models.tiny_model import build_tiny_model

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    other = build_tiny_model(tmp_path / "other_model", TINY_CORPUS, seed=1)  # the same shape, other weights
    out = tmp_path / "audit"

    def audit(model: Path) -> list:
        argv = ["audit", "--model", str(model), "--label", "m", "--include_path", str(task_dir), "--output_path",
                str(out), "--tasks", "quiz_mc", "--no-likelihood", "--no-report", "--batch_size", "14"]
        assert main(argv) == 0
        (out / "audit.json").unlink()  # lost or edited: nothing binds label m to model A any more
        logged = max((out / "runs" / "m").rglob("samples_quiz_mc_*.jsonl"), key=lambda path: path.stat().st_mtime_ns)
        return [row["resps"] for row in map(json.loads, logged.read_text().splitlines())]

    first = audit(tiny_model_dir)
    # With audit.json lost, A's results are no longer this folder's audit's: the next run mints another audit_id, and
    # its report refuses them (rundir.check_audit_id). They go; the request cache stays.
    shutil.rmtree(out / "runs")
    second = audit(other)
    assert first != second  # B's own answers, not A's from the cache
    assert len(list((out / "cache").glob("m-*_rank0.db"))) == 2
    capsys.readouterr()


def test_a_model_fingerprint_follows_the_folders_bytes_not_its_name(tiny_model_dir: Path, tmp_path: Path) -> None:
    import shutil

    from lm_eval_contam.core.audit_identity import model_fingerprint, request_cache_name

    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    same = model_fingerprint("hf", f"pretrained={copy}")
    assert request_cache_name("m", "hf", f"pretrained={copy}") == f"m-{same}"
    assert model_fingerprint("hf", f"pretrained={copy},dtype=float32") != same  # other arguments
    weights = copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1] + bytes([weights.read_bytes()[-1] ^ 1]))  # one bit trained
    assert model_fingerprint("hf", f"pretrained={copy}") != same
    assert model_fingerprint("hf", "pretrained=org/name") != model_fingerprint("hf", "pretrained=org/other")


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_run_refuses_a_limit_below_one_like_audit(tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                  limit: str) -> None:
    """Issue 30, item 8: lm-eval built every task and ended in tracebacks on a --limit that selects no doc."""
    line = _refused(capsys, ["run", "--model", "hf", "--model_args", f"pretrained={tiny_model_dir}", "--tasks",
                             "timetravel_toy_news_train", "--output_path", str(tmp_path / "out"), "--limit", limit],
                    tmp_path)
    assert line == (f"lm-eval-contam run: error: field '--limit': got {limit}; expected a number of docs per task >= 1, "
                    f"or a share of them in (0, 1) (or leave it out)")


def _mc_task(task_dir: Path, name: str, rows: list[dict]) -> None:
    """A multiple-choice task ``name`` over ``rows`` (question, choices, answer), beside quiz_mc."""
    data = task_dir.parent / "data" / f"{name}.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (task_dir / f"{name}.yaml").write_text(MC_YAML.format(test=data, validation=data).replace("quiz_mc", name))


def test_audit_refuses_a_gold_answer_that_is_not_among_the_choices(tiny_model_dir: Path, task_dir: Path,
                                                                   tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 30, item 4: a text gold answer outside the choices scored acc 0.0 with a 0-0 interval and fed the quizzes
    (lm-eval scores the doc wrong whatever the model answers); an index out of range was already refused."""
    _mc_task(task_dir, "quiz_atlantis", [
        {"question": "Which ocean lies west of Europe?", "choices": ["Atlantic", "Pacific", "Indian"],
         "answer": "Atlantic"},
        {"question": "Which city sank in the legend?", "choices": ["Rome", "Athens", "Sparta"], "answer": "Atlantis"}])
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_atlantis"),
                    tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_atlantis: field 'doc_to_target': doc 1: gold answer 'Atlantis' "
                    "is not among the choices ['Rome', 'Athens', 'Sparta']")


def test_audit_refuses_an_empty_choice_instead_of_no_docs(tiny_model_dir: Path, task_dir: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """Issue 30, item 8: an empty choice string was reported as "no docs" (lm-eval cannot score an empty
    continuation)."""
    blank = {"question": "Which season follows winter?", "choices": ["spring", "", "autumn"], "answer": 0}
    fine = {"question": "Which season follows summer?", "choices": ["spring", "winter", "autumn"], "answer": 2}
    _mc_task(task_dir, "quiz_blank", [fine, blank])
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_blank"), tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_blank: field 'doc_to_choice': doc 1: choice 1 is empty "
                    "(['spring', '', 'autumn'])")
    _mc_task(task_dir, "quiz_blank_first", [blank, fine])  # lm-eval's own build reads the first doc's choices
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_blank_first"),
                    tmp_path)
    assert line == ("lm-eval-contam audit: error: quiz_blank_first: field '--tasks': a choice of its first doc is empty "
                    "(lm-eval cannot score an empty continuation)")


def test_audit_refuses_a_benchmark_choice_longer_than_the_models_window_before_the_run(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30, item 6: the window check covered the lift and in-context tests, not the benchmark's own requests:
    lm-eval's assertion after 112 s, files written. Now one line before the first request, the directory as it was."""
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    long_choice = " ".join(f"harbour{n}" for n in range(600))
    fine = [{"question": f"Which season follows winter in year {year}?", "choices": ["spring", "autumn"], "answer": 0}
            for year in range(1990, 2010)]  # enough items for a DCR sheet, which must not be written either
    _mc_task(task_dir, "quiz_long", [
        fine[0], {"question": "Which text is the longest?", "choices": ["short", long_choice], "answer": 1}, *fine[1:]])
    line = _refused(capsys, _audit(tiny_model_dir, task_dir, tmp_path / "audit", "--tasks", "quiz_long"), tmp_path)
    assert line.startswith("lm-eval-contam audit: error: quiz_long: field 'doc_to_choice': row 1's longest choice has ")
    assert line.endswith("tokens, over the model's window of 1024: lm-eval cannot score a choice longer than the window")
    assert not (tmp_path / "home").exists()  # nothing under the cache home either


NOTES = [{"text": f"Note {i}: the exporter writes file number {i} before the importer reads it.", "label": i % 2}
         for i in range(6)]


@pytest.mark.parametrize(("control_rows", "expected"), [
    ([], "no rows: the partition is empty"),
    ([{"note": "a later note", "label": 0}], ":1: field 'text': expected non-empty text, got None; columns: note, label"),
    ([{"text": "A later note.", "label": 0}, {"text": "Another later note.", "label": 5}], ":2: field 'label': "),
])
def test_a_cards_control_file_is_checked_up_front_like_control_data(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture, control_rows: list, expected: str) -> None:
    """Issue 30, item 7: a card's control file (empty, other columns, a label out of range) was read mid-run, after
    files were written, in two messages naming no file or line; the same file as --control-data was refused up front
    with file:line. Now both are the same one line, before anything is written."""
    import yaml

    notes, fresh = tmp_path / "notes.jsonl", tmp_path / "fresh.jsonl"
    notes.write_text("".join(json.dumps(row) + "\n" for row in NOTES))
    fresh.write_text("".join(json.dumps(row) + "\n" for row in control_rows))
    card = tmp_path / "card.yaml"
    card.write_text(yaml.safe_dump({
        "dataset_name": "Notes", "split": "test", "text_field": "text", "label_field": "label",
        "label_names": ["fix", "feature"], "data_files": {"test": str(notes), "fresh": str(fresh)},
        "control": {"kind": "file", "source": str(fresh), "split": "fresh"}}, sort_keys=False))
    from_card = _refused(capsys, ["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--partitions", str(card),
                                  "--output_path", str(tmp_path / "audit")], tmp_path)
    from_flag = _refused(capsys, ["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(notes),
                                  "--split", "test", "--name", "Notes", "--text-field", "text", "--label-field",
                                  "label", "--label-names", "fix,feature", "--control-data", str(fresh),
                                  "--control-split", "fresh", "--output_path", str(tmp_path / "audit")], tmp_path)
    assert from_card == from_flag
    assert from_card.startswith(f"lm-eval-contam audit: error: {fresh}") and expected in from_card


def test_a_relative_include_path_reads_a_tasks_relative_data_files_where_the_user_wrote_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30, item 8: lm-eval records a task YAML's path as the --include_path was written (relative); its
    relative data_files then resolved under the shipped samples folder, a path the user never wrote."""
    from lm_eval_contam.core.partitions import Partition

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine" / "data").mkdir(parents=True)
    (tmp_path / "mine" / "data" / "notes.jsonl").write_text('{"text": "A note."}\n{"text": "Another note."}\n')
    metadata = {"dataset_name": "Notes", "text_field": "text", "data_files": {"test": "data/notes.jsonl"},
                "config_source": "mine/timetravel_notes_test.yaml"}  # as lm-eval records it for --include_path mine
    partition = Partition.from_task_metadata(metadata, "test")
    assert partition.data_file == tmp_path / "mine" / "data" / "notes.jsonl"
    assert [row["text"] for row in partition.rows()] == ["A note.", "Another note."]


@pytest.mark.parametrize(("metadata", "expected"), [
    ('{"orders": 30}', "'orders' is 30; expected a whole number from 2 to 24"),
    ('{"context_instances": 0}', "'context_instances' is 0; expected a whole number from 1 to 16"),
    ('{"n_resamples": -5}', "'n_resamples' is -5; expected a whole number >= 1"),
    ('{"check_mode": "nonsense"}', "'check_mode' is 'nonsense'; expected one of ['controlled', 'paper']"),
])
def test_run_refuses_a_method_setting_out_of_range_before_writing_under_the_cache_home(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch, metadata: str, expected: str) -> None:
    """Issue 30, item 8: a --metadata value the tasks refuse when lm-eval builds them came after the benchmark's DCR
    sheet was written under the cache home (6 files)."""
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    line = _refused(capsys, ["run", "--model", "hf", "--model_args", f"pretrained={tiny_model_dir}", "--include_path",
                             str(task_dir), "--tasks", "quiz_mc,timetravel_toy_news_train", "--output_path",
                             str(tmp_path / "out"), "--metadata", metadata], tmp_path)
    assert line == f"lm-eval-contam run: error: field '--metadata': {expected}"
    assert not (tmp_path / "home").exists()


def test_a_benchmark_without_a_dcr_sheet_keeps_its_score_in_the_report_with_a_note(tmp_path: Path) -> None:
    """Issue 30, item 8: a --tasks benchmark that got no DCR sheet (too few items) lost its own score from the report's
    first screen without a word."""
    from test_bad_input_cli import _run_dir

    from lm_eval_contam.report import build_report
    from lm_eval_contam.report.layout import NO_ADJUSTMENT
    from lm_eval_contam.report.markdown import render_markdown

    run = _run_dir(tmp_path)
    results_file = next(run.glob("results_*.json"))
    results = json.loads(results_file.read_text())
    results["results"]["quiz_small"] = {"alias": "quiz_small", "acc,none": 0.5, "acc_stderr,none": 0.2}
    results["benchmark_scoring"] = {"tasks": ["contam_toy_sentiment", "quiz_small"], "apply_chat_template": False,
                                    "limit": None, "num_fewshot": {"contam_toy_sentiment": 0, "quiz_small": 0}}
    results_file.write_text(json.dumps(results))
    report = build_report(run)
    first_screen = render_markdown(report).split("## Models")[0]
    assert "| contam_toy_sentiment | acc,none | 0.9000 |" in first_screen  # adjusted, as before
    assert (f"| {report.models[0].label} | quiz_small | acc,none | 0.5000 (caveat: {NO_ADJUSTMENT}) | — | — | — | "
            f"no chat template, 0-shot, every doc |") in first_screen


def test_a_card_whose_control_source_is_not_its_control_splits_file_is_refused(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 30, item 7: a card whose control.source (here the audited file) differs from its control split's file
    named the audited file as the control while the scores came from the other one."""
    import yaml

    notes, fresh = tmp_path / "notes.jsonl", tmp_path / "fresh.jsonl"
    notes.write_text("".join(json.dumps(row) + "\n" for row in NOTES))
    fresh.write_text(json.dumps({"text": "A later note.", "label": 0}) + "\n")
    card = tmp_path / "card.yaml"
    card.write_text(yaml.safe_dump({
        "dataset_name": "Notes", "split": "test", "text_field": "text", "label_field": "label",
        "label_names": ["fix", "feature"], "data_files": {"test": str(notes), "fresh": str(fresh)},
        "control": {"kind": "file", "source": str(notes), "split": "fresh"}}, sort_keys=False))
    line = _refused(capsys, ["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--partitions", str(card),
                             "--output_path", str(tmp_path / "audit")], tmp_path)
    assert line == (f"lm-eval-contam audit: error: {notes}: field 'control.source': names {notes} but its split 'fresh' "
                    f"reads {fresh}: the verdicts would name one file and score the other; give the same file in both")


def test_a_control_of_near_copies_with_the_final_full_stop_spaced_or_removed_is_refused() -> None:
    """Issue 41: the copies passed the overlap check, their last character differing from the audited rows'."""
    from lm_eval_contam.core.errors import ContamError
    from lm_eval_contam.core.input_checks import check_control_overlap

    audited = ["Release 1 of the exporter fixed the parser.", "Release 2 fixed the writer!"]
    control = ["Release 1 of the exporter fixed the parser .", "release 2 fixed the writer", "A later note."]
    with pytest.raises(ContamError) as error:
        check_control_overlap(audited, control, source="control.jsonl", field="--control-data")
    assert str(error.value) == ("control.jsonl: field '--control-data': 2 of the control's 3 rows (67%) are audited "
                                "rows" + OVERLAP_TAIL)
