"""Bad input on the command line: exit 2 with one line naming file, field and value, and no file written.

Covers ``adjust`` (--check-csv, --sheet-scores, --sheet), ``dcr-export --out``, model specs,
non-UTF-8 samples and Ctrl-C; a property test feeds random bad input to ``adjust``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lm_eval_contam.cli import main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.methods.dcr import dcr_factor
from lm_eval_contam.methods.dcr.hook import post_process_results

DATE = "2024-01-01T00-00-00"
LEVELS = [f"dcr_toy_sentiment_l{n}" for n in (1, 2, 3, 4)]
# One valid item id per level of the shipped toy sheet (static L1/L2, generated L3/L4).
ITEMS = [("toy-l1-task", 1), ("toy-l2-size", 2), ("l3-completion-3", 3), ("l4-association-0", 4)]
HEADER = "sheet,task,level,item_id,check_kind,prompt,response,reference,auto_result,contaminated"


def _run_dir(root: Path) -> Path:
    """A hooked DCR run (as tests/test_report.py's _dcr_results) with one logged sample per level."""
    results = {
        "results": {"contam_toy_sentiment": {"alias": "contam_toy_sentiment", "acc,none": 0.9, "acc_stderr,none": 0.03}},
        "configs": {"contam_toy_sentiment": {"metadata": {"version": 1.0}}},
        "n-samples": {}, "versions": {}, "group_subtasks": {"dcr_toy_sentiment": LEVELS},
        "config": {"model": "hf", "model_args": "pretrained=/m"}, "model_name": "/m",
    }
    run = root / "run"
    run.mkdir()
    for (item, level), task, score in zip(ITEMS, LEVELS, (0.7, 0.15, 0.5, 0.3)):
        results["results"][task] = {"alias": task, "contaminated,none": score, "unchecked,none": 0.0}
        results["configs"][task] = {"metadata": {"method": "dcr", "dcr_sheet": "toy_sentiment", "dcr_level": level}}
        results["n-samples"][task] = {"original": 20, "effective": 20}
        doc = {"item_id": item, "check": json.dumps({"kind": "manual"}), "prompt": "p", "reference": "r"}
        sample = {"doc": doc, "resps": [["resp"]], "filtered_resps": ["resp"], "contaminated": float("nan")}
        (run / f"samples_{task}_{DATE}.jsonl").write_text(json.dumps(sample) + "\n")
    (run / f"results_{DATE}.json").write_text(json.dumps(post_process_results(results)))
    return run


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _csv_text(rows: list[tuple[str, str, int, str]]) -> str:
    """rows of (sheet, item_id, level, contaminated)."""
    return "\n".join([HEADER] + [f"{sheet},dcr_toy_sentiment_l{level},{level},{item},manual,p,r,,,{mark}"
                                 for sheet, item, level, mark in rows]) + "\n"


VALID_ROWS = [("toy_sentiment", item, level, "1" if level in (1, 3) else "0") for item, level in ITEMS]


def _fails(capsys, argv: list[str], root: Path) -> str:
    """Run the CLI, assert exit 2, one stderr line and no file changed under root; return the line."""
    before = _snapshot(root)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert _snapshot(root) == before
    return err.strip()


@pytest.fixture
def run(tmp_path) -> Path:
    return _run_dir(tmp_path)


@pytest.mark.parametrize(("rows", "prefix", "expected"), [
    (VALID_ROWS + [VALID_ROWS[0]], "", "row 6 item_id': duplicate item 'toy-l1-task' of sheet 'toy_sentiment'"),
    (VALID_ROWS + [("toy_sentiment", "made-up", 2, "1")], "", "row 6 item_id': 'made-up' is not an item of sheet"),
    (VALID_ROWS + [("toy_sentiment", "toy-l1-labels", 4, "1")], "",
     "row 6 level': item 'toy-l1-labels' is an L1 item of sheet 'toy_sentiment', filed under level 4"),
    ([("nosuch", i, lv, m) for _, i, lv, m in VALID_ROWS], "", "row 2 sheet': unknown or unloadable DCR sheet 'nosuch'"),
    (VALID_ROWS[:1], "", "field 'level': sheet 'toy_sentiment' has no checked items on level(s) [2, 3, 4]"),
])
def test_adjust_rejects_bad_check_csv(run, tmp_path, capsys, rows, prefix, expected) -> None:
    path = tmp_path / "checks.csv"
    path.write_text(prefix + _csv_text(rows), encoding="utf-8")
    line = _fails(capsys, ["adjust", str(run), "--check-csv", str(path)], tmp_path)
    assert line.startswith(f"lm-eval-contam adjust: error: {path}: field '") and expected in line


def test_adjust_check_csv_non_utf8_names_the_file(run, tmp_path, capsys) -> None:
    path = tmp_path / "checks.csv"
    path.write_bytes(_csv_text(VALID_ROWS).encode().replace(b",p,r,", b",p,caf\xe9,", 1))
    line = _fails(capsys, ["adjust", str(run), "--check-csv", str(path)], tmp_path)
    assert line.startswith(f"lm-eval-contam adjust: error: {path}:2: not UTF-8 text")


def test_adjust_check_csv_with_excel_bom_gives_the_same_factor(run, tmp_path, capsys) -> None:
    plain, bom = tmp_path / "plain.csv", tmp_path / "bom.csv"
    plain.write_text(_csv_text(VALID_ROWS), encoding="utf-8")
    bom.write_text(_csv_text(VALID_ROWS), encoding="utf-8-sig")
    assert main(["adjust", str(run), "--check-csv", str(plain)]) == 0
    assert main(["adjust", str(run), "--check-csv", str(bom)]) == 0
    first = json.loads((run / f"results_{DATE}.dcr_adjusted.json").read_text())
    second = json.loads((run / f"results_{DATE}.dcr_adjusted.1.json").read_text())
    assert first == second
    assert first["results"]["dcr_toy_sentiment"]["dcr_factor,none"] == dcr_factor([1.0, 0.0, 1.0, 0.0])


@pytest.mark.parametrize(("text", "value"), [("70,13,50,28", "70.0"), ("1.5,0,0,0", "1.5"), ("0,0,-0.1,0", "-0.1"),
                                             ("0.1,0.2,0.3", "got 3 in '0.1,0.2,0.3'"), ("nan,0,0,0", "[nan]")])
def test_adjust_rejects_sheet_scores_outside_0_1(run, tmp_path, capsys, text, value) -> None:
    line = _fails(capsys, ["adjust", str(run), "--sheet-scores", text], tmp_path)
    assert line.startswith("lm-eval-contam adjust: error: field '--sheet-scores': ") and value in line


def test_sheet_scores_drop_the_runs_old_interval(run, capsys) -> None:
    original = json.loads((run / f"results_{DATE}.json").read_text())
    assert isinstance(original["results"]["dcr_toy_sentiment"]["dcr_factor_ci_low,none"], float)
    assert main(["adjust", str(run), "--sheet-scores", "0.7,0.13,0.5,0.28"]) == 0
    table = capsys.readouterr().out
    adjusted = json.loads((run / f"results_{DATE}.dcr_adjusted.json").read_text())
    for task in ("dcr_toy_sentiment", "contam_toy_sentiment"):
        row = adjusted["results"][task]
        assert row["dcr_factor,none"] == 0.4913
        assert [row[f"dcr_factor_{k},none"] for k in ("stderr", "ci_low", "ci_high")] == ["N/A"] * 3
    ci_rows = [line for line in table.splitlines() if "dcr_factor_ci_" in line]
    assert ci_rows and all("N/A" in line for line in ci_rows)


@pytest.mark.parametrize("sheet", ["no_such_sheet", "broken.yaml"])
def test_adjust_with_an_unloadable_sheet_is_an_error(run, tmp_path, capsys, sheet) -> None:
    (tmp_path / "broken.yaml").write_text("benchmark: [unclosed\n")
    ref = str(tmp_path / sheet) if sheet.endswith(".yaml") else sheet
    line = _fails(capsys, ["adjust", str(run), "--sheet-scores", "0.7,0.13,0.5,0.28", "--sheet", ref], tmp_path)
    assert line.startswith(f"lm-eval-contam adjust: error: {run / f'results_{DATE}.json'}: field '--sheet': "
                           f"DCR sheet {ref!r} could not be loaded")


def test_dcr_export_never_overwrites_without_force(run, tmp_path, capsys) -> None:
    out = tmp_path / "checks.csv"
    out.write_text("a person's decisions\n")
    line = _fails(capsys, ["dcr-export", str(run), "--out", str(out)], tmp_path)
    assert line == (f"lm-eval-contam dcr-export: error: {out}: field '--out': already exists (it may hold a "
                    f"person's decisions); use a new name or --force")
    assert main(["dcr-export", str(run), "--out", str(out), "--force"]) == 0
    assert out.read_text().startswith(HEADER) and len(out.read_text().splitlines()) == 5


def test_dcr_export_non_utf8_samples_names_file_and_line(run, tmp_path, capsys) -> None:
    samples = run / f"samples_{LEVELS[1]}_{DATE}.jsonl"
    samples.write_bytes(b"\n" + samples.read_bytes().replace(b'"p"', b'"\xff"'))
    line = _fails(capsys, ["dcr-export", str(run), "--out", str(tmp_path / "new.csv")], tmp_path)
    assert line.startswith(f"lm-eval-contam dcr-export: error: {samples}:2: not UTF-8 text")


@pytest.mark.parametrize(("spec", "expected"), [
    ("/nonexistent", "cannot load model spec '/nonexistent'"),
    ("./nope", "cannot load model spec './nope'"),
    ("hf:pretrained", "cannot load model spec 'hf:pretrained'"),
    ("hf:=x", "model_args entry '=x' is not key=value in model spec 'hf:=x'"),
    ("hf:pretrained=/m,dtype=float99", "dtype 'float99' is not a torch dtype"),
    ("vllm:pretrained=/m", "unknown lm-eval model backend 'vllm' (or its package is not installed) in model spec "
                           "'vllm:pretrained=/m'"),
])
def test_bad_model_specs_are_one_line_errors(monkeypatch, spec, expected) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pytest.importorskip("torch")
    try:
        import vllm  # noqa: F401
        if spec.startswith("vllm"):
            pytest.skip("vllm is installed")
    except ImportError:
        pass
    with pytest.raises(ContamError) as error:
        ModelSpec.parse(spec, device="cpu").build()
    message = str(error.value)
    assert message.startswith("field 'model': ") and expected in message and "\n" not in message


@pytest.fixture
def default_sigint():
    """Python's own Ctrl-C handler, as the command's process starts with; the CLI installs its flag only over that one,
    and a library an earlier test loaded in this process may have left another in place."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_is_one_line_and_exit_130(run, monkeypatch, capsys) -> None:
    import lm_eval_contam.cli.adjust as adjust_cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(adjust_cli, "_main", interrupted)
    assert main(["adjust", str(run)]) == 130
    assert capsys.readouterr().err == ("lm-eval-contam adjust: interrupted; finished work is saved (re-run the same "
                                       "command to resume)\n")


# --- property: random bad input never moves a number -------------------------------------------------------

_MARKS = st.one_of(st.sampled_from(["1", "0", "yes", "no", "Y", "true"]), st.sampled_from(["", "2", "maybe", "nan"]))
_ROW = st.tuples(st.sampled_from(["toy_sentiment", "toy_sentiment", "nosuch", ""]),
                 st.sampled_from([i for i, _ in ITEMS] + ["toy-l1-labels", "l3-membership-1", "l4-association-2",
                                                          "made-up", "l9-completion-1"]),
                 st.sampled_from([1, 2, 3, 4]), _MARKS)


def _expected_factor(rows: list[tuple[str, str, int, str]]) -> float:
    """What a valid CSV's decisions give, computed independently of the CLI."""
    levels: list[list[float]] = [[], [], [], []]
    for _, _, level, mark in rows:
        levels[level - 1].append(1.0 if mark.lower() in ("1", "yes", "y", "true") else 0.0)
    return dcr_factor([sum(v) / len(v) for v in levels])


def _adjust_once(argv_tail: list[str], write: dict[str, bytes]) -> tuple[int, str, dict | None]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = _run_dir(root)
        for name, data in write.items():
            (root / name).write_bytes(data)
        before = _snapshot(root)
        import contextlib
        import io
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(["adjust", str(run)] + [a.replace("{root}", tmp) for a in argv_tail])
        after = _snapshot(root)
        new = [name for name in after if name not in before]
        if code == 2:
            assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()
            assert after == before
            return code, err.getvalue(), None
        assert code == 0 and new == [f"run/results_{DATE}.dcr_adjusted.json"]
        assert {k: v for k, v in after.items() if k in before} == before
        return code, err.getvalue(), json.loads(after[new[0]])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marks=st.lists(_MARKS, min_size=4, max_size=4), extra=st.lists(_ROW, max_size=3), keep=st.integers(1, 4),
       bom=st.booleans(), junk=st.sampled_from([b"", b"", b"\xff", b"\x00"]))
@example(marks=["1", "0", "yes", "No"], extra=[], keep=4, bom=True, junk=b"")
@example(marks=["true", "n", "1", "0"], extra=[("toy_sentiment", "l3-membership-1", 3, "0")], keep=4, bom=False,
         junk=b"")
def test_random_check_csvs_never_move_a_number(marks, extra, keep, bom, junk) -> None:
    # A valid CSV (one item per level) with random marks, some levels dropped and random rows added.
    rows = [(sheet, item, level, mark) for (sheet, item, level, _), mark in zip(VALID_ROWS, marks)][:keep] + extra
    data = (("\ufeff" if bom else "") + _csv_text(rows)).encode("utf-8") + junk
    code, _, adjusted = _adjust_once(["--check-csv", "{root}/checks.csv"], {"checks.csv": data})
    if code == 0:
        assert not junk or junk == b"\x00"  # a NUL is valid UTF-8; it lands in a free-text cell at most
        factor = adjusted["results"]["dcr_toy_sentiment"]["dcr_factor,none"]
        assert factor == _expected_factor(rows)
        assert adjusted["results"]["contam_toy_sentiment"]["acc_adj,none"] == pytest.approx(0.9 * (1 - factor))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(alphabet="0123456789.,-+einfa _", max_size=24),
                      st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=5)
                      .map(lambda v: ",".join(map(repr, v)))))
@example(text="0.7,0.13,0.5,0.28")
@example(text=" 1, 0 ,0.5,1e-3")
@example(text="--")  # argparse drops a value of "--" and gave the command an empty list (a traceback, before)
def test_random_sheet_scores_never_move_a_number(text) -> None:
    code, _, adjusted = _adjust_once(["--sheet-scores=" + text], {})
    if code == 0:
        values = [float(part) for part in text.split(",")]
        assert len(values) == 4 and all(0.0 <= v <= 1.0 for v in values)
        assert adjusted["results"]["dcr_toy_sentiment"]["dcr_factor,none"] == dcr_factor(values)
        assert adjusted["results"]["dcr_toy_sentiment"]["dcr_factor_ci_low,none"] == "N/A"


def test_a_flag_given_double_dash_as_its_value_is_one_line_naming_the_flag(capsys) -> None:
    code, err, _ = _adjust_once(["--sheet-scores=--"], {})
    assert (code, err.strip()) == (2, "lm-eval-contam adjust: error: field '--sheet-scores': expected a value, got '--'")


def test_contaminate_refuses_a_folder_that_holds_something(tmp_path: Path, capsys) -> None:
    out = tmp_path / "model"
    out.mkdir()
    (out / "config.json").write_text('{"mine": true}')
    assert main(["contaminate", "--partition", "toy_news:train", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(out) in err[0] and "exists and is not an empty folder" in err[0]
    assert (out / "config.json").read_text() == '{"mine": true}'  # nothing written


# --- numbers read back (issue 30, item 2) -------------------------------------------------------------------------

def _with_value(run: Path, task: str, key: str, value) -> Path:
    """The run's results file with ``task``'s ``key`` set to ``value`` (an edited or damaged file)."""
    path = run / f"results_{DATE}.json"
    results = json.loads(path.read_text())
    results["results"].setdefault(task, {"alias": task})[key] = value
    results["n-samples"].setdefault(task, {"original": 16, "effective": 16})
    path.write_text(json.dumps(results))
    return path


@pytest.mark.parametrize(("task", "key", "value", "expected"), [
    ("incontext_toy", "incontext_pvalue,none", -0.2, "-0.2 is not a p-value (expected a number in [0, 1])"),
    ("incontext_toy", "incontext_pvalue,none", 1.7, "1.7 is not a p-value (expected a number in [0, 1])"),
    ("dcq_toy", "dcq_pvalue_null,none", 2, "2 is not a p-value (expected a number in [0, 1])"),
    ("dcq_toy", "dcq_max,none", 1.5, "1.5 is not a share (expected a number in [0, 1])"),
    ("dcq_toy", "dcq_kappa,none", -3.0, "-3.0 is not a kappa (expected a number in [-1, 1])"),
    ("order_toy", "order_items,none", 2.5, "2.5 is not a count (expected a non-negative whole number)"),
    ("tt_toy", "exact_matches,none", -1, "-1 is not a count (expected a non-negative whole number)"),
])
@pytest.mark.parametrize("command", ["report", "adjust"])
def test_report_and_adjust_refuse_an_impossible_number_read_back(run, tmp_path, capsys, command, task, key, value,
                                                                 expected) -> None:
    path = _with_value(run, task, key, value)
    line = _fails(capsys, [command, str(run)], tmp_path)
    assert line == f"lm-eval-contam {command}: error: {path}: field {key!r}: task {task}: {expected}"


@pytest.mark.parametrize("count", [-3, 2.5, True])
def test_report_refuses_an_instance_count_that_is_no_count(run, tmp_path, capsys, count) -> None:
    path = run / f"results_{DATE}.json"
    results = json.loads(path.read_text())
    results["n-samples"][LEVELS[0]]["effective"] = count
    path.write_text(json.dumps(results))
    line = _fails(capsys, ["report", str(run)], tmp_path)
    assert line == (f"lm-eval-contam report: error: {path}: field 'n-samples.effective': task {LEVELS[0]}: {count!r} is "
                    f"not a count (expected a non-negative whole number)")


def test_report_refuses_a_logged_sample_score_out_of_range(run, tmp_path, capsys) -> None:
    from lm_eval_contam.core.rundir import load_run

    samples = run / f"samples_{LEVELS[0]}_{DATE}.jsonl"
    sample = json.loads(samples.read_text())
    samples.write_text(json.dumps({**sample, "rougeL_guided": 1.25}) + "\n")
    model = load_run(run).models[0]
    with pytest.raises(ContamError) as error:
        model.samples(LEVELS[0])
    assert str(error.value) == (f"{samples}:1: field 'rougeL_guided': task {LEVELS[0]}: 1.25 is not a share (expected "
                                f"a number in [0, 1])")


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_while_the_parser_imports_is_one_line_and_exit_130(monkeypatch, capsys) -> None:
    """Issue 30, item 8: Ctrl-C in the first ~1.5 s (building the parser imports torch and lm-eval) printed a
    traceback."""
    import lm_eval_contam.cli as cli

    def interrupted_import():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted_import)
    assert main(["adjust", "x"]) == 130
    assert capsys.readouterr().err == ("lm-eval-contam: interrupted; finished work is saved (re-run the same command "
                                       "to resume)\n")


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_swallowed_by_an_import_still_stops_the_command(run, monkeypatch, capsys) -> None:
    """... or was swallowed by an import that catches everything, and the audit ran on."""
    import os
    import signal

    import lm_eval_contam.cli as cli
    import lm_eval_contam.cli.adjust as adjust_cli

    build = cli.build_parser
    ran = []

    def swallowing_import():
        try:
            os.kill(os.getpid(), signal.SIGINT)  # handled at the next bytecode, inside this try
            for _ in range(1000):
                pass
        except BaseException:  # noqa: BLE001 - what some imports do
            pass
        return build()

    monkeypatch.setattr(cli, "build_parser", swallowing_import)
    monkeypatch.setattr(adjust_cli, "_main", lambda args: ran.append(args) or 0)
    assert main(["adjust", str(run)]) == 130 and ran == []
    assert capsys.readouterr().err == ("lm-eval-contam adjust: interrupted; finished work is saved (re-run the same "
                                       "command to resume)\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back for whoever runs next
