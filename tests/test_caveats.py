"""A run made with lm-eval's --limit says so beside every verdict it gives (report and Markdown); so does a test run
on more instances than the validation study measured its rates on, and a quiz the model answered with one letter."""

from __future__ import annotations

import json
from pathlib import Path

from lm_eval_contam.report import build_report
from lm_eval_contam.report.html import render_html
from lm_eval_contam.report.markdown import render_markdown

DCQ = "dcq_toy_news_train_ll"


def _write_run(directory: Path, limit: int | None, instances: int = 12, **dcq_metrics: float) -> None:
    """A DCQ run's results; ``dcq_metrics`` replace or add metrics (the defaults are a run without
    dcq_top_letter_share, as runs made before it existed)."""
    metrics = {"dcq_pvalue": 0.3, "dcq_max": 0.1, "dcq_min": 0.0, "dcq_kappa": 0.0, "dcq_max_ci_low": 0.02,
               "dcq_max_ci_high": 0.3, "dcq_unparseable": 0.0, "dcq_pvalue_null": 0.4, "dcq_chance_max": 0.1,
               **{f"dcq_bdq_{x}": 0.2 for x in "ABCDE"}, **{f"dcq_bcq_{x}": 0.1 for x in "ABCD"}, **dcq_metrics}
    results = {"results": {DCQ: {f"{k},none": v for k, v in metrics.items()}},
               "configs": {DCQ: {"output_type": "loglikelihood", "test_split": "train",
                                 "metadata": {"method": "dcq", "dataset": "toy_news"}}},
               "n-samples": {DCQ: {"original": instances, "effective": limit or instances}},
               "config": {"model": "hf", "model_args": "pretrained=/m", "limit": limit}}
    directory.mkdir(parents=True)
    (directory / "results_2024-01-01T00-00-00.json").write_text(json.dumps(results))


def test_limit_is_a_caveat_on_every_verdict(tmp_path: Path) -> None:
    _write_run(tmp_path / "limited" / "m", limit=2)
    (verdict,) = build_report(tmp_path / "limited").verdicts
    assert verdict.caveats and verdict.caveats[0].startswith("run with --limit 2: lm-eval took the first instances")
    assert "caveat: run with --limit 2" in render_markdown(build_report(tmp_path / "limited"))
    assert "caveat: 1 (see details)" in render_html(build_report(tmp_path / "limited"))
    _write_run(tmp_path / "full" / "m", limit=None)
    (full,) = build_report(tmp_path / "full").verdicts
    assert full.caveats == ()


def test_a_test_on_more_instances_than_the_study_measured_says_its_rates_are_not_for_that_size(tmp_path: Path) -> None:
    # The shipped rates were measured on the validation study's partitions of 24 instances.
    _write_run(tmp_path / "at_24" / "m", limit=None, instances=24)
    (measured,) = build_report(tmp_path / "at_24").verdicts
    assert measured.caveats == ()
    _write_run(tmp_path / "at_40" / "m", limit=None, instances=40)
    (larger,) = build_report(tmp_path / "at_40").verdicts
    assert larger.caveats == ("tested on 40 instances; its false-positive rates were measured on partitions of 24, "
                              "and not at this size (the power quoted is a floor)",)
    assert "caveat: tested on 40 instances" in render_markdown(build_report(tmp_path / "at_40"))


def test_a_control_test_counts_both_sides_and_is_measured_at_the_size_it_was_tested_on() -> None:
    from dataclasses import replace

    from lm_eval_contam.core.method_verdict import Verdict
    from lm_eval_contam.verdicts.verdict import study_size_caveats

    # The split-control test's level is shown at 2,000 items a side (n 4,000: tests/test_split_label_level.py).
    control = Verdict(model="m", partition="p", family="likelihood", test="likelihood_control", title="t", task="t",
                      flagged=False, statistic=0.1, pvalue=0.4, confidence_interval=None, n=4000, null="", rule="",
                      evidence=None, variant="control")
    assert study_size_caveats(control) == ()
    assert study_size_caveats(replace(control, n=4002)) == (
        "tested on 4002 instances; its false-positive rates were measured on partitions of 4000, and not at this size "
        "(the power quoted is a floor)",)


ONE_LETTER = {"dcq_top_letter_share": 1.0, "dcq_pvalue_null": 1.0, "dcq_max": 0.0, "dcq_max_ci_low": 0.0,
              "dcq_max_ci_high": 0.24, "dcq_chance_max": 0.0,
              **{f"dcq_bdq_{x}": float(x == "A") for x in "ABCDE"}}


def _facts(verdict) -> dict[str, str]:
    return dict(verdict.evidence.facts())


def test_a_quiz_answered_with_one_letter_says_it_cannot_show_memory(tmp_path: Path) -> None:
    _write_run(tmp_path / "one_letter" / "m", limit=None, **ONE_LETTER)
    (verdict,) = build_report(tmp_path / "one_letter").verdicts
    assert verdict.caveats == (
        "the model answered every quiz with the same letter (A, 60 of 60 answers): a letter preference, not the "
        "options, decides its answers, so this quiz cannot show memory here (p = 1 by construction); generate mode "
        "with an instruct model (audit --dcq-mode generate), or a model without that preference, can",)
    # A caveat only: the decision and p stay the published procedure's.
    assert (verdict.flagged, verdict.pvalue) == (False, 1.0)
    assert _facts(verdict)["most common answer letter's share"] == "1.000"
    assert "caveat: the model answered every quiz with the same letter (A" in render_markdown(
        build_report(tmp_path / "one_letter"))


def test_a_quiz_not_all_one_letter_or_run_before_the_share_existed_has_no_such_caveat(tmp_path: Path) -> None:
    _write_run(tmp_path / "mixed" / "m", limit=None, **{**ONE_LETTER, "dcq_top_letter_share": 0.95})
    (mixed,) = build_report(tmp_path / "mixed").verdicts
    assert mixed.caveats == () and _facts(mixed)["most common answer letter's share"] == "0.950"
    _write_run(tmp_path / "old" / "m", limit=None)  # no dcq_top_letter_share in its results
    (old,) = build_report(tmp_path / "old").verdicts
    assert old.caveats == () and _facts(old)["most common answer letter's share"] == "n/a"
