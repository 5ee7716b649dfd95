"""`<metric>_adj` stays in the metric's range, and a controlled level of too few items does not move the factor.

The case of issue 23: a built sheet with 1 L1 and 2 L2 items, one L2 original passing against its control, gave
S2 = 0.5, a factor of 0.50 and acc 0.60 -> acc_adj 0.30. A level needs MIN_LEVEL_ITEMS (5) decided items: below that
its sign test cannot reach 0.05 whatever the items say. The paper's mode keeps every score.
"""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.core.result_numbers import METRIC_RANGES
from lm_eval_contam.methods.dcr.bootstrap import adjusted_accuracy, bootstrap_dcr_factor
from lm_eval_contam.methods.dcr.fuzzy import dcr_factor
from lm_eval_contam.methods.dcr.hook import apply_dcr, without_small_levels
from lm_eval_contam.methods.dcr.level_score import MIN_LEVEL_ITEMS
from lm_eval_contam.methods.dcr.results import SheetScores
from lm_eval_contam.methods.dcr.verdicts import too_few_items_caveats

TASK, GROUP = "contam_toy_sentiment", "dcr_toy_sentiment"  # the shipped toy sheet adjusts this task's acc


def _issue_case(check_mode: str) -> SheetScores:
    """1 L1 item (tie), 2 L2 items (one original passing, its control not), 20 L3 and 20 L4 ties."""
    items = (np.array([0.0]), np.array([1.0, 0.0]), np.zeros(20), np.zeros(20))
    return SheetScores("toy_sentiment", (0.0, 0.5, 0.0, 0.0), items, check_mode=check_mode)


def _results(acc: float, stderr: float) -> dict:
    return {"results": {TASK: {"alias": TASK, "acc,none": acc, "acc_stderr,none": stderr}}}


def test_the_minimum_is_the_fewest_items_whose_sign_test_can_reach_005() -> None:
    assert MIN_LEVEL_ITEMS == 5
    assert 0.5 ** MIN_LEVEL_ITEMS < 0.05 <= 0.5 ** (MIN_LEVEL_ITEMS - 1)


def test_one_passing_item_of_two_no_longer_halves_the_score() -> None:
    results = _results(0.6, 0.1)
    messages = apply_dcr(results, {"toy_sentiment": _issue_case("controlled")}, n_resamples=2000)
    row, group = results["results"][TASK], results["results"][GROUP]
    assert (group["s1,none"], group["s2,none"], group["s3,none"], group["s4,none"]) == (0.0, 0.0, 0.0, 0.0)
    assert group["too_few_items,none"] == "L1 (1 of 5), L2 (2 of 5)"
    assert row["dcr_factor,none"] == 0.0
    assert (row["dcr_factor_ci_low,none"], row["dcr_factor_ci_high,none"]) == (0.0, 0.0)
    assert row["acc_adj,none"] == 0.6
    assert messages == ["DCR sheet 'toy_sentiment': too few items at L1 (1 of 5), L2 (2 of 5): those levels add no "
                        "evidence"]
    assert too_few_items_caveats(group) == ("too few items at L1 (1 of 5), L2 (2 of 5): those levels add no "
                                            "evidence to the factor",)


def test_the_papers_mode_keeps_every_level_score() -> None:
    results = _results(0.6, 0.1)
    apply_dcr(results, {"toy_sentiment": _issue_case("paper")}, n_resamples=2000)
    row, group = results["results"][TASK], results["results"][GROUP]
    factor = dcr_factor([0.0, 0.5, 0.0, 0.0])
    assert group["s2,none"] == 0.5 and group["too_few_items,none"] == "none"
    assert row["dcr_factor,none"] == factor == 0.5
    assert row["acc_adj,none"] == pytest.approx(0.3)
    assert too_few_items_caveats(group) == ()


def test_a_level_with_enough_items_still_counts() -> None:
    items = (np.zeros(5), np.array([1.0, 1.0, 1.0, 0.0, 0.0]), np.zeros(20), np.zeros(20))
    scores = SheetScores("toy_sentiment", (0.0, 0.6, 0.0, 0.0), items, check_mode="controlled")
    assert without_small_levels(scores) == (scores, "")


def test_the_clean_model_keeps_its_score() -> None:
    results = _results(0.6, 0.1)
    clean = SheetScores("toy_sentiment", (0.0, 0.0, 0.0, 0.0),
                        (np.array([0.0]), np.zeros(2), np.zeros(20), np.zeros(20)), check_mode="controlled")
    apply_dcr(results, {"toy_sentiment": clean}, n_resamples=2000)
    assert results["results"][TASK]["acc_adj,none"] == 0.6
    assert results["results"][TASK]["dcr_factor,none"] == 0.0


def test_the_adjusted_interval_is_clipped_to_the_metrics_range() -> None:
    """acc 0.8125 with stderr 0.12 and no discount: the normal draws pass 1; acc cannot."""
    results = _results(0.8125, 0.12)
    clean = SheetScores("toy_sentiment", (0.0, 0.0, 0.0, 0.0), (np.zeros(5),) * 4, check_mode="controlled")
    apply_dcr(results, {"toy_sentiment": clean}, n_resamples=2000)
    row = results["results"][TASK]
    unclipped = adjusted_accuracy(0.8125, 0.12, 0.0, bootstrap_dcr_factor([np.zeros(5)] * 4, n_resamples=2000))
    assert unclipped.confidence_interval.high > 1.0  # the draw that used to be reported
    assert row["acc_adj_ci_high,none"] == 1.0
    assert row["acc_adj_ci_low,none"] == unclipped.confidence_interval.low


def test_only_metrics_of_a_known_range_are_clipped() -> None:
    # f1 is not: lm-eval's squadv2 reports it in percent.
    assert METRIC_RANGES == {"acc": (0.0, 1.0), "acc_norm": (0.0, 1.0), "exact_match": (0.0, 1.0)}
    bootstrap = bootstrap_dcr_factor([np.zeros(5)] * 4, n_resamples=2000)
    low_end = adjusted_accuracy(0.02, 0.05, 0.0, bootstrap, value_range=(0.0, 1.0))
    assert low_end.confidence_interval.low == 0.0
    assert adjusted_accuracy(0.02, 0.05, 0.0, bootstrap).confidence_interval.low < 0.0  # e.g. a score without one
