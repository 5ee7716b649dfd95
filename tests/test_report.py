"""The contamination report from a real lm-eval run (tiny offline model): verdicts, HTML, Markdown, CLI."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import lm_eval
import pytest

from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects as read_samples
from lm_eval_contam.core.method_verdict import DRIVES, Verdict
from lm_eval_contam.core.registry import registered_methods
from lm_eval_contam.core.rundir import load_run
from lm_eval_contam.methods.dcr.hook import post_process_results
from lm_eval_contam.methods.timetravel.judge_b import judge_samples, timetravel_rows, write_verdicts
from lm_eval_contam.report import build_report, write_report
from lm_eval_contam.report.html import render_html
from lm_eval_contam.report.markdown import render_markdown
from lm_eval_contam.reportkit import charts
from lm_eval_contam.reportkit.mdkit import md
from lm_eval_contam.verdicts.verdict import collect as verdicts

TT_TASK = "timetravel_toy_news_train"
DCQ_TASK = "dcq_toy_news_train_ll"
SCRIPT = "<script>alert(1)</script>"



@pytest.fixture(autouse=True)
def null_study_rates_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests give the report its rates; the validation study's clean-model rates stay out of them."""
    from lm_eval_contam.verdicts import verdict as verdict_module
    monkeypatch.setattr(verdict_module, "shipped_clean_model_rates", lambda: {})
    monkeypatch.setattr(verdict_module, "shipped_sibling_rates", lambda: {})

@pytest.fixture(scope="module")
def run_dir(tiny_model_dir, tmp_path_factory) -> Path:
    """lm-eval's own output files for one Time Travel and one DCQ task, plus a Judge B file beside them."""
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from lm_eval_contam import task_dir

    out = tmp_path_factory.mktemp("report_run") / "run"
    tracker = EvaluationTracker(output_path=str(out))
    results = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={tiny_model_dir},dtype=float32", tasks=[TT_TASK, DCQ_TASK],
        task_manager=TaskManager(include_path=[str(task_dir())], include_defaults=False), device="cpu",
        batch_size=8, limit=4, log_samples=True, evaluation_tracker=tracker, apply_chat_template=True,
        gen_kwargs="max_gen_toks=8",
    )
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    # A judge that calls every completion an exact match: Judge B flags the partition.
    (tt_samples,) = out.rglob(f"samples_{TT_TASK}_*.jsonl")
    verdict_rows = judge_samples(timetravel_rows(tt_samples), lambda prompts: ["Yes (exact match)"] * len(prompts))
    write_verdicts(tt_samples, verdict_rows, "always-exact")
    return out


@pytest.fixture
def run_copy(run_dir, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    return copy


def _results(run: Path) -> dict:
    (path,) = run.rglob("results_*.json")
    return json.loads(path.read_text())


def test_verdicts_carry_the_results_json_numbers(run_dir) -> None:
    saved = _results(run_dir)["results"]
    tt, dcq = saved[TT_TASK], saved[DCQ_TASK]
    found = {v.test: v for v in verdicts(load_run(run_dir))}
    assert sorted(found) == ["dcq_loglikelihood", "tt_alg1", "tt_alg1_permutation", "tt_alg2_judge_a", "tt_judge_b"]
    assert {v.partition for v in found.values()} == {"Toy News train"}
    assert len({v.model for v in found.values()}) == 1

    alg1 = found["tt_alg1"]
    assert alg1.pvalue == tt["alg1_pvalue,none"] and alg1.flagged == (tt["alg1_contaminated,none"] == 1.0)
    assert (alg1.evidence.rouge_guided, alg1.evidence.rouge_general) == (tt["rougeL_guided,none"],
                                                                         tt["rougeL_general,none"])
    assert alg1.n == 4 and alg1.variant == "instruct" and alg1.task == TT_TASK
    judge_a = found["tt_alg2_judge_a"]
    assert judge_a.flagged == (tt["alg2_contaminated,none"] == 1.0) and judge_a.pvalue is None
    assert (judge_a.evidence.exact_matches, judge_a.evidence.near_exact_matches) == (tt["exact_matches,none"],
                                                                                     tt["near_exact_matches,none"])
    judge_b = found["tt_judge_b"]
    assert judge_b.flagged and judge_b.evidence.exact_matches == 4
    assert judge_b.evidence.judge_model == "always-exact"

    quiz = found["dcq_loglikelihood"]
    assert quiz.pvalue == dcq["dcq_pvalue_null,none"] and quiz.flagged == (dcq["dcq_pvalue_null,none"] <= 0.05)
    assert quiz.evidence.mcnemar_pvalue == dcq["dcq_pvalue,none"]
    evidence = quiz.evidence
    assert (evidence.dcq_max, evidence.dcq_min, evidence.dcq_kappa) == (dcq["dcq_max,none"], dcq["dcq_min,none"],
                                                                        dcq["dcq_kappa,none"])
    assert (quiz.confidence_interval.low, quiz.confidence_interval.high) == (dcq["dcq_max_ci_low,none"],
                                                                             dcq["dcq_max_ci_high,none"])
    assert evidence.bdq_pick_rates == tuple(dcq[f"dcq_bdq_{x},none"] for x in "ABCDE")
    assert evidence.bcq_hit_rates == tuple(dcq[f"dcq_bcq_{x},none"] for x in "ABCD")
    assert sum(evidence.bdq_pick_rates) == pytest.approx(1.0)  # an argmax always names a letter


def test_per_instance_rows_come_from_the_samples(run_dir) -> None:
    report = build_report(run_dir)
    (alg1,) = [v for v in report.verdicts if v.test == "tt_alg1"]
    rows = alg1.evidence.instances
    assert alg1.task == TT_TASK and [row.doc_id for row in rows] == [0, 1, 2, 3]
    (samples_file,) = run_dir.rglob(f"samples_{TT_TASK}_*.jsonl")
    first = read_samples(samples_file)[0]
    assert rows[0].first_piece == first["doc"]["first_piece"] and rows[0].reference == first["doc"]["reference"]
    assert rows[0].guided == first["filtered_resps"][0].strip()
    assert rows[0].general == first["filtered_resps"][1].strip()
    assert rows[0].judge_a == first["exact_matches"]["match"] and rows[0].judge_b == "exact"


def test_html_is_self_contained_with_the_matrix_first_and_a_chart_each(run_dir, tmp_path) -> None:
    written = write_report(run_dir, out_dir=tmp_path)
    page = written.html_path.read_text()
    assert (page.index('<h2 id="matrix">') < page.index('<h2 id="cells">') < page.index('<h2 id="tests">')
            < page.index("<h2>Models</h2>") < page.index('<h2 id="details">'))
    matrix = page[page.index('<table class="matrix">'):]
    matrix = matrix[:matrix.index("</table>")]
    # One row (the tiny model on Toy News train): its verdict, then the two driving tests, then the three beside.
    assert matrix.count("<tr>") == 3 and '<td class="row">' in matrix and "<small>Toy News train</small>" in matrix
    assert re.findall(r'<th><a href="#(t-[^"]+)">', matrix) == [
        "t-tt-alg1-permutation-instruct", "t-dcq-loglikelihood", "t-tt-alg1-instruct", "t-tt-alg2-judge-a-instruct",
        "t-tt-judge-b-instruct"]
    assert '<th class="group" colspan="2">drive the verdict</th><th class="group" colspan="3">' in matrix
    assert matrix.count('<td class="hit aside"') == 1  # Judge B's flag; the untrained model fools nothing else
    assert matrix.count('<td class="miss aside"') == 1 and matrix.count("fired") == 0
    assert '<td class="verdict ok"' in matrix
    # Each test's statement once, each anchor the matrix links to present once.
    for anchor_id in re.findall(r'href="#([^"]+)"', matrix):
        assert page.count(f'id="{anchor_id}"') == 1, anchor_id
    # Charts: the ROUGE-L strip plot, the BDQ and the BCQ bars; each a well-formed standalone SVG.
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.DOTALL)
    assert len(svgs) == 3 and all(ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg" for svg in svgs)
    links = re.findall(r"""href\s*=\s*["']([^"']*)""", page, flags=re.IGNORECASE)
    assert links and all(link.startswith("#") for link in links)  # only jumps within the page
    assert not re.search(r"src\s*=|url\(|@import|<script|<link|<img|<iframe", page, flags=re.IGNORECASE)
    # Every table sits in its own scroll box, so none widens the page.
    assert page.count("<table") == len(re.findall(r'<div class="scroll[^"]*"><table', page))
    assert written.md_path.read_text().startswith("# Contamination report\n")


def test_model_output_is_escaped_in_html_and_markdown(run_copy, tmp_path) -> None:
    (samples_file,) = run_copy.rglob(f"samples_{TT_TASK}_*.jsonl")
    samples = read_samples(samples_file)
    samples[0]["filtered_resps"][0] = SCRIPT
    samples[1]["filtered_resps"][1] = "left | right\nnext line"
    samples_file.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    written = write_report(run_copy, out_dir=tmp_path)
    page, markdown = written.html_path.read_text(), written.md_path.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert "<script" not in page.lower() and "<script" not in markdown.lower()
    (row,) = [line for line in markdown.splitlines() if "left \\| right ⏎ next line" in line]
    header = next(line for line in markdown.splitlines() if line.startswith("| doc |"))
    assert row.count(" | ") == header.count(" | ")  # the pipe and newline stay inside their cell


def test_markdown_escaping() -> None:
    assert md("<b>a|b</b>\r\nc & `d`") == "&lt;b&gt;a\\|b&lt;/b&gt; ⏎ c &amp; \\`d\\`"


def test_cli_writes_both_files_into_the_run(run_copy, capsys) -> None:
    assert cli_main(["report", str(run_copy)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"wrote {run_copy / 'report.html'}", f"wrote {run_copy / 'report.md'}"]
    assert (run_copy / "report.html").stat().st_size > 0 and (run_copy / "report.md").stat().st_size > 0


def test_no_results_is_a_clear_error(tmp_path, capsys) -> None:
    assert cli_main(["report", str(tmp_path)]) == 2
    assert "no lm-eval results_*.json under this path" in capsys.readouterr().err
    with pytest.raises(ContamError, match="no such directory"):
        build_report(tmp_path / "missing")


def test_garbled_files_are_named(run_copy) -> None:
    (samples_file,) = run_copy.rglob(f"samples_{TT_TASK}_*.jsonl")
    samples_file.write_text('{"doc_id": 0}\nnot json\n')
    with pytest.raises(ContamError, match=re.escape(f"{samples_file}:2: not JSON")):
        build_report(run_copy)
    (results_file,) = run_copy.rglob("results_*.json")
    results_file.write_text("{")
    with pytest.raises(ContamError, match=re.escape(f"{results_file}: not valid JSON")):
        build_report(run_copy)


def test_later_results_file_wins_per_task(run_copy) -> None:
    (original,) = run_copy.rglob("results_*.json")
    later = json.loads(original.read_text())
    later["results"] = {TT_TASK: {**later["results"][TT_TASK], "alg1_pvalue,none": 0.01, "alg1_contaminated,none": 1.0}}
    later["configs"] = {TT_TASK: later["configs"][TT_TASK]}
    original.with_name("results_2999-01-01T00-00-00.000000.json").write_text(json.dumps(later))
    found = {v.test: v for v in verdicts(load_run(run_copy))}
    assert found["tt_alg1"].pvalue == 0.01 and found["tt_alg1"].flagged
    assert found["dcq_loglikelihood"].pvalue == _results_dcq_pvalue(original)
    # The samples stay paired with their task although the later file has none of its own.
    assert found["tt_judge_b"].flagged


def _results_dcq_pvalue(results_file: Path) -> float:
    return json.loads(results_file.read_text())["results"][DCQ_TASK]["dcq_pvalue_null,none"]


def test_samples_files_pair_with_their_exact_task(tmp_path) -> None:
    date = "2024-01-01T00-00-00.000001"
    model = tmp_path / "m"
    model.mkdir()
    results = {"results": {"dcq_x": {}, "dcq_x_ll": {}}, "configs": {}}
    (model / f"results_{date}.json").write_text(json.dumps(results))
    for task in ("dcq_x", "dcq_x_ll"):
        (model / f"samples_{task}_{date}.jsonl").write_text("")
    files = load_run(tmp_path).models[0].files
    assert files["dcq_x"].samples_file.name == f"samples_dcq_x_{date}.jsonl"
    assert files["dcq_x_ll"].samples_file.name == f"samples_dcq_x_ll_{date}.jsonl"


def test_audit_directory_labels_models_and_shows_injections(run_dir, tmp_path) -> None:
    for label in ("clean", "injected"):
        shutil.copytree(run_dir, tmp_path / "runs" / label)
    manifest = {"injected": {"sources": [{"partition": "toy_news:train", "format": "<web>", "rows": [0, 1, 2]}],
                             "num_texts": 3, "text_sha256": ["abc"]},
                "settings": {"epochs": 3, "learning_rate": 5e-5}, "corpus": {"contaminant_share": 0.05}}
    (tmp_path / "audit.json").write_text(json.dumps({
        "version": 1, "partitions": ["toy_news:train"], "settings": {"dcq_mode": "loglikelihood"}, "dcr": None,
        "models": [{"label": "clean", "model": "hf", "model_args": "pretrained=/m", "run_dir": "runs/clean",
                    "injection": None},
                   {"label": "injected", "model": "hf", "model_args": "pretrained=/m2", "run_dir": "runs/injected",
                    "injection": manifest}]}))
    report = build_report(tmp_path)
    assert [m.label for m in report.models] == ["clean", "injected"]
    assert [m.model for m in report.models] == ["hf pretrained=/m", "hf pretrained=/m2"]
    assert {v.model for v in report.verdicts} == {"clean", "injected"}
    page = render_html(report)
    assert ("injected: toy_news:train (&lt;web&gt; format, 3 rows) — 3 epochs, lr 5e-05, contaminant share 5%"
            in page)
    assert "abc" not in page
    (tmp_path / "audit.json").write_text(json.dumps({"models": [{"label": "x", "run_dir": "runs/none"}]}))
    with pytest.raises(ContamError, match=r"audit.json: field 'models\[0\].run_dir'"):
        build_report(tmp_path)


def _dcr_results() -> dict:
    """A results file as the DCR hook leaves it (see tests/dcr/test_hook_e2e.py)."""
    levels = [f"dcr_toy_sentiment_l{n}" for n in (1, 2, 3, 4)]
    results = {
        "results": {"contam_toy_sentiment": {"alias": "contam_toy_sentiment", "acc,none": 0.9, "acc_stderr,none": 0.03}},
        "configs": {"contam_toy_sentiment": {"metadata": {"version": 1.0}}},
        "n-samples": {}, "group_subtasks": {"dcr_toy_sentiment": levels},
        "config": {"model": "hf", "model_args": "pretrained=/m"}, "model_name": "/m",
    }
    for level, (task, score) in enumerate(zip(levels, (0.7, 0.15, 0.5, 0.3)), start=1):
        results["results"][task] = {"alias": task, "contaminated,none": score, "unchecked,none": 0.0}
        results["configs"][task] = {"metadata": {"method": "dcr", "dcr_sheet": "toy_sentiment", "dcr_level": level}}
        results["n-samples"][task] = {"original": 20, "effective": 20}
    return post_process_results(results)


def test_dcr_levels_factor_and_adjusted_accuracy(tmp_path) -> None:
    hooked = _dcr_results()
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "results_2024-01-01T00-00-00.json").write_text(json.dumps(hooked))
    report = build_report(tmp_path)
    (verdict,) = [v for v in report.verdicts if v.family == "dcr"]
    sheet = verdict.evidence
    group = hooked["results"]["dcr_toy_sentiment"]
    assert sheet.sheet == "toy_sentiment" and verdict.task == "dcr_toy_sentiment" and verdict.flagged is None
    assert sheet.level_scores == (0.7, 0.15, 0.5, 0.3) and sheet.factor == group["dcr_factor,none"]
    assert (sheet.factor_ci.low, sheet.factor_ci.high) == (group["dcr_factor_ci_low,none"],
                                                          group["dcr_factor_ci_high,none"])
    (adjusted,) = sheet.adjusted
    row = hooked["results"]["contam_toy_sentiment"]
    assert (adjusted.task, adjusted.metric, adjusted.raw) == ("contam_toy_sentiment", "acc", 0.9)
    assert adjusted.adjusted == row["acc_adj,none"] and adjusted.adjusted_stderr == row["acc_adj_stderr,none"]
    page = render_html(report)
    assert "DCR level scores S1–S4" in page and "raw vs DCR-adjusted" in page and len(re.findall("<svg", page)) == 2
    # It names the registered methods with a test that may drive a verdict, whichever they are.
    drivers = [spec.title for spec in registered_methods() if spec.tests_in_role(DRIVES)]
    assert drivers
    assert f"No partition-level test in this run ({'; '.join(drivers)}): nothing to decide." in page
    markdown = render_markdown(report)
    assert "##### DCR — dcr_toy_sentiment (sheet toy_sentiment)" in markdown and "| 0.700 | 0.150 | 0.500 | 0.300 |" in markdown


def test_line_chart_is_standalone_svg_with_escaped_text() -> None:
    svg = charts.line_chart([charts.LineSeries("<b>clean</b>", ((0, 0.1), (1, 0.4))),
                             charts.LineSeries("injected & co", ((0, 0.2), (1, 0.9)))],
                            title="detection <rate>", x_label="epochs", y_label="rate")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.find("{http://www.w3.org/2000/svg}title").text == "detection <rate>"
    assert "&lt;b&gt;clean&lt;/b&gt;" in svg and "<b>" not in svg
    assert len(root.findall("{http://www.w3.org/2000/svg}polyline")) == 2
    assert len(root.findall("{http://www.w3.org/2000/svg}circle")) == 4


def test_dense_line_chart_gets_ten_ticks_and_no_markers() -> None:
    points = tuple((i / 100, i / 200) for i in range(101))
    svg = charts.line_chart([charts.LineSeries("curve", points)], title="dense")
    assert svg.count("<circle") == 0 and svg.count("<polyline") == 1
    assert [t for t in ("0", "0.1", "0.5", "1") if f'text-anchor="middle">{t}</text>' in svg] == ["0", "0.1", "0.5", "1"]


class _Numbers:
    """Evidence with fixed words, for the per-partition table (which reads only the verdict's own fields)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def facts(self) -> list[tuple[str, str]]:
        return [("numbers", self.text)]

    def summary(self) -> str:
        return self.text


def _verdict(method: str, family: str, task: str, pvalue: float | None, flagged: bool, variant: str | None = None,
             title: str | None = None, summary: str = "") -> Verdict:
    return Verdict(model="m", partition="Toy News test", family=family, test=method, title=title or method,
                   task=task, flagged=flagged, statistic=None, pvalue=pvalue, confidence_interval=None, n=10,
                   null="no memory", rule="p <= 0.05", evidence=_Numbers(summary), variant=variant)


PARTITION_VERDICTS = [
    _verdict("tt_alg1", "timetravel", "tt_i", 0.01, True, "instruct", "Alg. 1", "p = 0.0100"),
    _verdict("tt_alg1_permutation", "timetravel", "tt_i", 0.03, True, "instruct", "Permutation"),
    _verdict("tt_alg1_permutation", "timetravel", "tt_c", 0.2, False, "completion", "Permutation"),
    _verdict("tt_styles_combined", "timetravel", "tt_i + tt_c", 0.06, False, None, "Both styles"),
    _verdict("tt_alg2_judge_a", "timetravel", "tt_i", None, False, "instruct", "Judge A", "0 exact, 1 near-exact"),
    _verdict("dcq_loglikelihood", "dcq", "dcq_ll", 0.004, True, None, "DCQ"),
    _verdict("likelihood_control", "likelihood", "lk", 0.02, True, "control", "Control"),
]


@pytest.fixture
def measured(monkeypatch):
    """Shipped rates for the tests that drive (a test with no measured rate does not; the others read "not
    measured"); no detection rates."""
    from lm_eval_contam.core.stats import ConfidenceInterval
    from lm_eval_contam.verdicts import detection_rates
    from lm_eval_contam.verdicts import verdict as verdict_module

    rates = {key: verdict_module.MeasuredRate(key, k, fp, fp / k, ConfidenceInterval(low, high), "unseen",
                                              "python scripts/null_study.py", "2026-11-23")
             for key, k, fp, low, high in (("dcq_loglikelihood", 56, 2, 0.0044, 0.1231),
                                           ("tt_styles_combined", 56, 4, 0.0198, 0.1731),
                                           ("likelihood_control:control", 56, 4, 0.0198, 0.1731),
                                           ("tt_alg1_permutation:instruct", 56, 0, 0.0, 0.0638),
                                           ("partition_combined", 56, 1, 0.0005, 0.0955),
                                           ("partition_combined_without_control", 56, 1, 0.0005, 0.0955))}
    monkeypatch.setattr(verdict_module, "shipped_rates", lambda: rates)
    monkeypatch.setattr(detection_rates, "shipped_detection", lambda: {})  # whatever the validation study shipped
    return rates


def test_matrix_shows_each_test_p_and_marks_what_drives_the_verdict(measured) -> None:
    from lm_eval_contam.report import markdown as markdown_report
    from lm_eval_contam.report.html import evidence_matrix
    from lm_eval_contam.report.model import Report

    report = Report(source=Path("/run"), models=(), verdicts=tuple(PARTITION_VERDICTS))
    (row,) = report.partitions
    # Calibrated tests only; the combined styles stand in for both permutation tests: Holm over 0.06, 0.004, 0.02.
    assert [(v.test, round(p, 6)) for v, p in row.evidence] == [
        ("tt_styles_combined", 0.06), ("dcq_loglikelihood", 0.012), ("likelihood_control", 0.04)]
    lines = markdown_report.evidence_matrix(report)
    assert lines[0] == ("| model / partition | verdict per partition | Both styles | DCQ | Control (control) "
                        "| _Alg. 1 (instruct)_ | _Permutation (instruct)_ | _Permutation (completion)_ "
                        "| _Judge A (instruct)_ |")
    assert lines[2] == ("| m / Toy News test | **CONTAMINATED** (Holm 0.0120) | 0.0600 | **0.0040** ⚑ | **0.0200** ⚑ "
                        "| _**0.0100**_ | _**0.0300**_ | _0.2000_ | _not flagged_ |")
    page = evidence_matrix(report)
    assert ('<th class="group" colspan="3">drive the verdict</th>'
            '<th class="group" colspan="4">shown beside, not driving</th>') in page
    assert ('<td class="verdict flag" title="Holm p = 0.0120; false-positive rate 1.8 % (1/56; 95 % CI 0.1–9.6 %)">'
            "contaminated<small>Holm 0.0120</small></td>") in page
    assert ('<td class="p2 fired" title="DCQ: p = 0.0040, Holm p = 0.0120; false-positive rate 3.6 % '
            '(2/56; 95 % CI 0.4–12.3 %)"><a href="#d-m-dcq-ll">0.0040</a></td>') in page
    assert ('<td class="p0" title="Both styles: p = 0.0600, Holm p = 0.0600; false-positive rate 7.1 % (4/56; 95 % CI '
            '2.0–17.3 %)">') in page
    assert ('<td class="p1 aside" title="Permutation (instruct): contaminated (); not driving: counted through the '
            'test that combines it with others"><a href="#d-m-tt-i">0.0300</a></td>') in page
    assert ('<td class="miss aside" title="Judge A (instruct): not flagged (0 exact, 1 near-exact)">'
            '<a href="#d-m-tt-i">not flagged</a></td>') in page
    assert '<th><a href="#t-likelihood-control-control">Control<small>control</small></a></th>' in page


def test_a_test_flagged_alone_but_not_after_holm_says_so_in_the_compact_table(measured) -> None:
    from lm_eval_contam.report import markdown as markdown_report
    from lm_eval_contam.report.model import Report

    # Holm over 0.03 and 0.5: the smaller is adjusted to 0.06, over the level (the partition is not flagged).
    verdicts = (_verdict("dcq_loglikelihood", "dcq", "dcq_ll", 0.03, True, None, "DCQ"),
                _verdict("likelihood_control", "likelihood", "lk", 0.5, False, "control", "Control"))
    lines = markdown_report.cell_table(Report(source=Path("/run"), models=(), verdicts=verdicts))
    assert lines[2:] == ["| m / Toy News test | DCQ |  | p = 0.0600 | p ≤ 0.05 alone; not after Holm |",
                         "| m / Toy News test | Control (control) |  | p = 0.5000 | not flagged |", ""]


def test_each_test_is_stated_once_with_its_role(measured, monkeypatch) -> None:
    from lm_eval_contam.report import markdown as markdown_report
    from lm_eval_contam.report.model import Report
    from lm_eval_contam.verdicts import detection_rates

    detected = detection_rates.parse_detection({
        "design": {"learning_rate": 5e-5, "epochs": 3, "share": 0.15}, "command": "python scripts/validation_study.py",
        "date": "2026-11-25", "methods": {"dcq_loglikelihood": {
            "detection": {"flagged": 5, "k": 8, "rate": 0.625, "ci": [0.2449, 0.9148]},
            "false_positive_held_out": None, "false_positive_clean": None}}})
    monkeypatch.setattr(detection_rates, "shipped_detection", lambda: detected)

    two_partitions = [*PARTITION_VERDICTS, *(replace(v, partition="Toy News train", null=f"{v.null} (train)")
                                             for v in PARTITION_VERDICTS)]
    lines = markdown_report.tests_section(Report(source=Path("/run"), models=(), verdicts=tuple(two_partitions)))
    dcq = lines.index("#### DCQ")
    assert lines[dcq:dcq + 7] == [
        "#### DCQ", "", "- role: drives the per-partition verdict (Holm)",
        "- null hypothesis: Toy News test: no memory; Toy News train: no memory (train)", "- rule: p &lt;= 0.05",
        "- measured false-positive rate: 3.6 % (2/56; 95 % CI 0.4–12.3 %)",
        "- detection measured by the validation study: detects 5/8 = 62 % (95 % CI 24–91 %) at the papers' strength "
        "(lr 5e-05, 3 epochs, 15 % share), on the default model"]
    assert lines.count("#### DCQ") == 1 and len([line for line in lines if line.startswith("#### ")]) == 1 + 7
    assert ("- role: shown beside the per-partition verdict, not driving it: the paper's own decision, shown unchanged"
            in lines[lines.index("#### Alg. 1 (instruct)"):])
    verdict = lines.index("#### Verdict per partition")
    assert lines[verdict + 4:verdict + 6] == [
        "- measured false-positive rate: 1.8 % (1/56; 95 % CI 0.1–9.6 %)",
        "- detection measured by the validation study: not measured"]
    assert lines.count("- detection measured by the validation study: not measured") == 1 + 6


def test_a_test_over_its_level_is_shown_beside_and_says_why(measured, monkeypatch) -> None:
    from lm_eval_contam.core.stats import ConfidenceInterval
    from lm_eval_contam.report import layout
    from lm_eval_contam.report.model import Report
    from lm_eval_contam.verdicts import verdict as verdict_module

    over = verdict_module.MeasuredRate("tt_alg1_permutation:completion", 56, 8, 8 / 56, ConfidenceInterval(0.064, 0.262),
                                       "unseen", "python scripts/null_study.py", "2026-11-23")
    monkeypatch.setattr(verdict_module, "shipped_rates", lambda: {**measured, over.key: over})
    report = Report(source=Path("/run"), models=(), verdicts=tuple(PARTITION_VERDICTS))
    columns = layout.test_columns(report.verdicts, report.partitions)
    (row,) = layout.matrix(report.partitions, columns)
    asides = {column.key: cell.aside for column, cell in zip(columns, row.cells)}
    # The completion style is over its level: the combination is dropped and the instruct test stands alone.
    assert asides == {
        "tt_alg1_permutation:instruct": None, "dcq_loglikelihood": None, "likelihood_control:control": None,
        "tt_alg1:instruct": "the paper's own decision, shown unchanged",
        "tt_alg1_permutation:completion": ("the null study measured it flagging never-seen partitions significantly "
                                           "more often than 0.05"),
        "tt_styles_combined": "it combines a test that is over its level; its other parts stand alone",
        "tt_alg2_judge_a:instruct": "the paper's own decision, shown unchanged"}
    (completion,) = [cell for column, cell in zip(columns, row.cells) if column.key == "tt_alg1_permutation:completion"]
    assert completion.tooltip() == ("Permutation (completion): not flagged (p = 0.2000); not driving: false-positive "
                                    "rate 14.3 % (8/56; 95 % CI 6.4–26.2 %) in the null study")


def test_a_p_from_a_test_that_cannot_drive_is_never_stated_as_contaminated(measured, monkeypatch, tmp_path) -> None:
    """A test over its measured level (the completion style here) or with no measured rate (the lift) keeps its p,
    but no line of the report, nor the demo's console, reads "contaminated" or "flagged by" for it."""
    from lm_eval_contam.cli import demo
    from lm_eval_contam.core.stats import ConfidenceInterval
    from lm_eval_contam.report import layout
    from lm_eval_contam.report import markdown as markdown_report
    from lm_eval_contam.report.model import Report
    from lm_eval_contam.reportkit import htmlkit, mdkit
    from lm_eval_contam.verdicts import verdict as verdict_module

    over = verdict_module.MeasuredRate("tt_alg1_permutation:completion", 56, 8, 8 / 56, ConfidenceInterval(0.064, 0.262),
                                       "unseen", "python scripts/null_study.py", "2026-11-23")
    monkeypatch.setattr(verdict_module, "shipped_rates", lambda: {**measured, over.key: over})
    completion = _verdict("tt_alg1_permutation", "timetravel", "tt_c", 0.001, True, "completion", "Permutation")
    lift = _verdict("likelihood_lift", "likelihood", "lk_lift", 0.002, True, "lift", "Lift")
    control = _verdict("likelihood_control", "likelihood", "lk", 0.5, False, "control", "Control")
    assert [verdict_module.stated_decision(v) for v in (completion, lift, control)] == [
        "p ≤ 0.05, no call: over its level", "p ≤ 0.05, no call: its false-positive rate is not measured",
        "not flagged"]
    assert mdkit.decision(completion) == "p ≤ 0.05, no call: over its level"
    assert htmlkit.badge(lift) == '<span class="badge none">p ≤ 0.05, no call: its false-positive rate is not measured</span>'
    report = Report(source=Path("/run"), models=(), verdicts=(completion, lift, control))
    assert markdown_report.cell_table(report)[2:5] == [
        "| m / Toy News test | Control (control) |  | p = 0.5000 | not flagged |",
        "| m / Toy News test | Permutation (completion) |  | not driving | p ≤ 0.05, no call: over its level |",
        "| m / Toy News test | Lift (lift) |  | not driving | p ≤ 0.05, no call: its false-positive rate is not "
        "measured |"]
    columns = layout.test_columns(report.verdicts, report.partitions)
    (row,) = layout.matrix(report.partitions, columns)
    assert [cell.tooltip() for cell in row.cells][1] == (
        "Permutation (completion): p ≤ 0.05, no call: over its level (p = 0.0010); not driving: false-positive rate "
        "14.3 % (8/56; 95 % CI 6.4–26.2 %) in the null study")
    monkeypatch.setattr(demo, "load_run", lambda out: None)
    monkeypatch.setattr(demo, "collect", lambda run: [completion, lift, control])
    assert demo.verdict_lines(tmp_path).splitlines()[-1] == (
        "  m / Toy News test (not injected): NOT FLAGGED (Holm p = 0.5000); flagged by: none; p ≤ 0.05 with no "
        "call: Permutation (completion) (over its level), Lift (lift) (its false-positive rate is not measured)")


def test_no_calibrated_test_leaves_the_partition_undecided(measured) -> None:
    from lm_eval_contam.report import markdown as markdown_report
    from lm_eval_contam.report.html import evidence_matrix
    from lm_eval_contam.report.model import Report

    papers_only = [v for v in PARTITION_VERDICTS if v.test in ("tt_alg1", "tt_alg2_judge_a")]
    report = Report(source=Path("/run"), models=(), verdicts=tuple(papers_only))
    lines = markdown_report.evidence_matrix(report)
    assert lines[0] == "| model / partition | verdict per partition | _Alg. 1 (instruct)_ | _Judge A (instruct)_ |"
    assert lines[2] == "| m / Toy News test | no calibrated evidence | _**0.0100**_ | _not flagged_ |"
    page = evidence_matrix(report)
    assert '<th class="group" colspan="2">shown beside, not driving</th></tr>' in page and "drive the verdict" not in page
    assert ('<td class="verdict undecided" title="no calibrated test ran">no calibrated evidence'
            "<small>no calibrated test</small></td>") in page


def test_each_measured_rate_is_stated_once_per_test(run_dir, measured, tmp_path) -> None:
    markdown = write_report(run_dir, out_dir=tmp_path).md_path.read_text()
    sections = ["## Evidence per partition and test", "## One line per cell",
                "## The tests: null hypothesis, rule, measured rates", "## Models", "## Details"]
    assert [markdown.index(section) for section in sections] == sorted(markdown.index(s) for s in sections)
    rate_facts = re.findall(r"measured false-positive rate: (not measured|[^)]*\))", markdown)
    assert len(rate_facts) == 1 + 5  # the per-partition verdict's, then one per test; none in the details
    assert rate_facts[0] == "1.8 % (1/56; 95 % CI 0.1–9.6 %)"
    assert rate_facts.count("3.6 % (2/56; 95 % CI 0.4–12.3 %)") == 1  # DCQ's
    assert rate_facts.count("0.0 % (0/56; 95 % CI 0.0–6.4 %)") == 1  # the instruct-style sign-flip test's
    assert rate_facts.count("not measured") == 3
    assert markdown.count("\n- null hypothesis: ") == 1 + 5 and markdown.count("\n- rule: ") == 1 + 5
    details = markdown[markdown.index("## Details"):]
    assert "caveat: run with --limit 4" in details
    assert "null hypothesis" not in details and "rule:" not in details


def test_a_partition_whose_option_order_test_is_over_its_level_is_still_multiple_choice() -> None:
    from lm_eval_contam.verdicts.detection_rates import partition_shape
    from lm_eval_contam.verdicts.verdict import PartitionVerdict

    lift = _verdict("likelihood_lift", "likelihood", "lk", 0.5, False, "lift", "Lift")
    order = _verdict("option_order", "optionorder", "oo", 0.5, False, None, "Option order")
    assert partition_shape(PartitionVerdict("m", "Quiz test", ((lift, 0.5),), (), over_level=(order,))) == \
        "multiple choice"
    assert partition_shape(PartitionVerdict("m", "Notes test", ((lift, 0.5),), ())) == "free text"


def test_the_report_names_the_methods_the_audit_left_out_and_why(measured) -> None:
    from lm_eval_contam.report.html import render_html
    from lm_eval_contam.report.markdown import render_markdown
    from lm_eval_contam.report.model import Report

    # (This module leaves the clean-model and sibling rates out, so only sentence order is over its level here.)
    audit = {"settings": {"skip_methods": ["likelihood", "sentenceorder"]}}
    report = Report(source=Path("/run"), models=(), verdicts=tuple(PARTITION_VERDICTS), audit=audit)
    line = ("Methods left out of this audit: likelihood (by --methods or --no-likelihood), sentenceorder (every test "
            "measured over its level; --methods runs it).")
    assert render_markdown(report).splitlines()[4] == f"_{line}_"
    assert f'<p class="note">{line}</p>' in render_html(report)
    assert "left out" not in render_markdown(Report(source=Path("/run"), models=(), verdicts=tuple(PARTITION_VERDICTS)))


# --- issue 41, part B ---------------------------------------------------------------------------------------------

def _benchmark_audit(root: Path, skip_methods: list[str]) -> Path:
    """An audit folder whose one model scored the benchmark quiz_small (lm-eval's row, its sample_len included) and no
    DCR sheet beside it."""
    run = root / "runs" / "m"
    run.mkdir(parents=True)
    (run / "results_2024-01-01T00-00-00.json").write_text(json.dumps({
        "results": {"quiz_small": {"alias": "quiz_small", "sample_len": 12, "acc,none": 0.5, "acc_stderr,none": 0.2}},
        "configs": {"quiz_small": {"task": "quiz_small"}}, "n-samples": {"quiz_small": {"original": 12, "effective": 12}},
        "benchmark_scoring": {"tasks": ["quiz_small"], "apply_chat_template": False, "limit": None,
                              "num_fewshot": {"quiz_small": 0}},
        "config": {"model": "hf", "model_args": "pretrained=/m"}, "model_name": "/m"}))
    (root / "audit.json").write_text(json.dumps({"settings": {"skip_methods": skip_methods},
                                                 "models": [{"label": "m", "run_dir": "runs/m"}]}))
    return root


def test_sample_len_in_a_benchmark_row_is_no_benchmark_score(tmp_path) -> None:
    from lm_eval_contam.report.layout import NO_ADJUSTMENT

    report = build_report(_benchmark_audit(tmp_path, []))
    first_screen = render_markdown(report).split("## Models")[0]
    assert "| sample_len |" not in first_screen and "<td>sample_len</td>" not in render_html(report)
    assert (f"| m | quiz_small | acc,none | 0.5000 (caveat: {NO_ADJUSTMENT}) | — | — | — | "
            f"no chat template, 0-shot, every doc |") in first_screen


def test_a_benchmark_of_an_audit_whose_methods_left_dcr_out_says_so(tmp_path) -> None:
    report = build_report(_benchmark_audit(tmp_path, ["dcr", "pairing"]))
    first_screen = render_markdown(report).split("## Models")[0]
    assert ("| m | quiz_small | acc,none | 0.5000 (caveat: no DCR-adjusted score: DCR was left out of this audit by "
            "--methods) | — | — | — |") in first_screen
    assert "no DCR sheet could be built" not in render_markdown(report) + render_html(report)


def test_bidi_controls_in_a_completion_are_written_out_in_html_and_markdown(run_copy, tmp_path) -> None:
    controls = "".join(chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
    (samples_file,) = run_copy.rglob(f"samples_{TT_TASK}_*.jsonl")
    samples = read_samples(samples_file)
    samples[0]["filtered_resps"][0] = f"\u202eflagged not{controls}"
    samples_file.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    written = write_report(run_copy, out_dir=tmp_path)
    page, markdown = written.html_path.read_text(), written.md_path.read_text()
    shown = ("[U+202E]flagged not[U+202A][U+202B][U+202C][U+202D][U+202E][U+2066][U+2067][U+2068][U+2069]")
    assert shown in page and shown in markdown
    assert not any(control in page or control in markdown for control in controls)
    assert md("a\u2067b") == "a[U+2067]b"


def test_another_models_results_file_in_a_models_folder_is_refused(tmp_path) -> None:
    """Issue 41: a results file of another model copied into a model's folder added its tasks (a partition) to this
    model's."""
    folder = tmp_path / "run" / "m"
    folder.mkdir(parents=True)
    for date, name, task in (("2024-01-01T00-00-00", "/m", "quiz_small"), ("2024-02-01T00-00-00", "/other", "quiz_b")):
        (folder / f"results_{date}.json").write_text(json.dumps({
            "results": {task: {"alias": task, "acc,none": 0.5}}, "configs": {task: {"task": task}},
            "n-samples": {task: {"original": 4, "effective": 4}},
            # the batch size differs between the runs of one model: not what tells them apart
            "config": {"model": "hf", "model_args": f"pretrained={name},batch_size={len(name)}"}, "model_name": name}))
    with pytest.raises(ContamError) as error:
        build_report(tmp_path / "run")
    assert str(error.value) == (f"{folder / 'results_2024-02-01T00-00-00.json'}: field 'model_name': the run of another "
                                f"model (hf /other) sits in the folder of hf /m (results_2024-01-01T00-00-00.json); its "
                                f"tasks would be read as that model's: move it to its own folder")
    (folder / "results_2024-02-01T00-00-00.json").write_text(
        (folder / "results_2024-02-01T00-00-00.json").read_text().replace("/other", "/m"))
    (model,) = build_report(tmp_path / "run").models
    assert sorted(model.results["results"]) == ["quiz_b", "quiz_small"]
