"""DCR verdicts from a results file written here, and their rendering."""

from __future__ import annotations

import json

import pytest

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.rundir import load_model_dir
from lm_eval_contam.core.stats import ConfidenceInterval
from lm_eval_contam.methods.dcr import report_section as renderer
from lm_eval_contam.methods.dcr.verdicts import CHECK_MODE_RULES, NULL, RULE, AdjustedMetric, DCREvidence, verdicts

LEVEL_TASKS = [f"dcr_toy_sentiment_l{n}" for n in (1, 2, 3, 4)]


def _results() -> dict:
    """What ``lm-eval-contam run`` saves for contam_toy_sentiment + dcr_toy_sentiment, plus an adjusted task
    (``adjust --sheet-scores --sheet elsewhere``) that no sheet of the run accounts for."""
    results = {
        "results": {
            "contam_toy_sentiment": {"alias": "contam_toy_sentiment", "acc,none": 0.9, "acc_stderr,none": 0.05,
                                     "acc_adj,none": 0.6, "acc_adj_stderr,none": 0.08, "dcr_factor,none": 0.3333,
                                     "dcr_factor_ci_low,none": 0.1, "dcr_factor_ci_high,none": 0.5},
            "dcr_toy_sentiment": {"alias": "dcr_toy_sentiment", "s1,none": 0.75, "s2,none": 0.25, "s3,none": 0.5,
                                  "s4,none": 0.0, "dcr_factor,none": 0.3333, "dcr_factor_stderr,none": 0.1,
                                  "dcr_factor_ci_low,none": 0.1, "dcr_factor_ci_high,none": 0.5,
                                  "check_mode,none": "controlled"},
            "other_bench": {"alias": "other_bench", "f1,none": 0.5, "f1_adj,none": 0.25, "f1_adj_stderr,none": "N/A",
                            "dcr_factor,none": 0.5, "dcr_factor_stderr,none": "N/A"},
        },
        "configs": {"contam_toy_sentiment": {"metadata": {"version": 1.0}},
                    "other_bench": {"metadata": {"version": 1.0}}},
        "n-samples": {"contam_toy_sentiment": {"original": 40, "effective": 40}},
        "group_subtasks": {"dcr_toy_sentiment": LEVEL_TASKS},
        "model_name": "tiny",
    }
    for level, (task, score) in enumerate(zip(LEVEL_TASKS, (0.75, 0.25, 0.5, 0.0)), start=1):
        results["results"][task] = {"alias": task, "contaminated,none": score, "unchecked,none": 0.0}
        if level >= 3:  # controlled levels also write their sign test
            results["results"][task]["advantage_pvalue,none"] = {3: 0.0625, 4: 1.0}[level]
        results["configs"][task] = {"metadata": {"version": 1.0, "method": "dcr", "dcr_sheet": "toy_sentiment",
                                                 "dcr_level": level, "check_mode": "controlled"}}
        results["n-samples"][task] = {"original": 4, "effective": 4}
    return results


@pytest.fixture
def model(tmp_path):
    directory = tmp_path / "tiny"
    directory.mkdir()
    (directory / "results_2024-01-01T00-00-00.000001.json").write_text(json.dumps(_results()))
    return load_model_dir(directory)


def test_one_verdict_per_sheet_and_one_per_unattributed_adjusted_task(model) -> None:
    interval = ConfidenceInterval(0.1, 0.5)
    acc = AdjustedMetric(task="contam_toy_sentiment", metric="acc", raw=0.9, raw_stderr=0.05, adjusted=0.6,
                         adjusted_stderr=0.08, factor=0.3333, factor_ci=interval)
    f1 = AdjustedMetric(task="other_bench", metric="f1", raw=0.5, raw_stderr=None, adjusted=0.25,
                        adjusted_stderr=None, factor=0.5, factor_ci=None)
    common = {"model": "tiny", "family": "dcr", "test": "dcr_factor", "title": "DCR Factor", "flagged": None,
              "pvalue": None, "null": NULL}
    assert verdicts(model) == [
        Verdict(partition="DCR sheet toy_sentiment", task="dcr_toy_sentiment", statistic=0.3333,
                confidence_interval=interval, n=16,
                rule=f"{RULE}; controlled checks: {CHECK_MODE_RULES['controlled']}",
                evidence=DCREvidence(sheet="toy_sentiment", level_scores=(0.75, 0.25, 0.5, 0.0), factor=0.3333,
                                     factor_ci=interval, adjusted=(acc,), check_mode="controlled",
                                     level_pvalues=(None, None, 0.0625, 1.0)), **common),
        Verdict(partition="DCR sheet unknown", task="other_bench", statistic=0.5, confidence_interval=None, n=None,
                rule=RULE, evidence=DCREvidence(sheet="unknown", level_scores=(None, None, None, None), factor=0.5,
                                                factor_ci=None, adjusted=(f1,)), **common),
    ]


def test_level_scores_fall_back_to_the_level_tasks_without_the_hook(tmp_path) -> None:
    results = _results()
    del results["results"]["dcr_toy_sentiment"], results["results"]["contam_toy_sentiment"]["acc_adj,none"]
    directory = tmp_path / "tiny"
    directory.mkdir()
    (directory / "results_2024-01-01T00-00-00.000001.json").write_text(json.dumps(results))
    first = verdicts(load_model_dir(directory))[0]
    assert first.evidence.level_scores == (0.75, 0.25, 0.5, 0.0)
    assert first.statistic is None and first.evidence.adjusted == ()
    assert first.evidence.check_mode == "controlled"  # what the level tasks recorded


def test_runs_without_a_recorded_check_mode_were_paper_checks(tmp_path) -> None:
    results = _results()
    del results["results"]["dcr_toy_sentiment"]["check_mode,none"]
    for task in LEVEL_TASKS:
        del results["configs"][task]["metadata"]["check_mode"]
    directory = tmp_path / "tiny"
    directory.mkdir()
    (directory / "results_2024-01-01T00-00-00.000001.json").write_text(json.dumps(results))
    first = verdicts(load_model_dir(directory))[0]
    assert first.evidence.check_mode == "paper" and "paper checks" in first.rule


def test_evidence_in_words(model) -> None:
    evidence = verdicts(model)[0].evidence
    assert evidence.facts() == [
        ("sheet", "toy_sentiment"),
        ("check mode", "controlled"),
        ("level scores S1–S4", "0.750, 0.250, 0.500, 0.000"),
        ("item vs control (sign test)", "L3 p = 0.062, L4 p = 1.000"),
        ("DCR Factor", "0.333 [0.100, 0.500] (95% CI)"),
        ("contam_toy_sentiment acc → acc_adj", "0.900 ± 0.050 → 0.600 ± 0.080"),
    ]
    assert evidence.summary() == "factor 0.333, acc_adj 0.600"


def test_renderers_show_the_numbers_and_escape_text(model) -> None:
    sheet, unknown = verdicts(model)
    page = renderer.html([sheet], lambda verdict: "d-anchor")
    assert '<h5 id="d-anchor">DCR — dcr_toy_sentiment (sheet toy_sentiment)</h5>' in page
    assert "DCR level scores S1–S4" in page and "raw vs DCR-adjusted" in page
    assert "<td>0.900 ± 0.050</td><td>0.600 ± 0.080</td>" in page
    assert "acc_adj = acc × (1 − factor)" in page
    assert "DCR level scores" not in renderer.html([unknown], lambda verdict: "x")  # no level scores to chart
    lines = renderer.markdown([sheet])
    assert "| 0.750 | 0.250 | 0.500 | 0.000 | 0.333 [0.100, 0.500] (95% CI) |" in lines
    assert "| contam_toy_sentiment | acc | 0.900 ± 0.050 | 0.600 ± 0.080 | 0.333 [0.100, 0.500] (95% CI) |" in lines
    hostile = Verdict(**{**sheet.__dict__, "task": "<script>"})
    assert "<script>" not in renderer.html([hostile], lambda verdict: "x")
    assert "<script>" not in "\n".join(renderer.markdown([hostile]))
