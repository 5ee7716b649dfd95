"""The validation study's pooled power analysis: pooled relabelling tests from each partition's result, exact."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.relabelling import RelabellingEvidence, RelabellingResult, arrangement_test
from lm_eval_contam.nullstudy.pooled_power import (
    HOLM_FIRST_STEP,
    markdown_table,
    partition_spreads,
    pooled_rates,
    pooled_test,
    projected_rates,
    projected_share,
    projected_table,
    spread_table,
)


def result(statistic: float, expected: float, sd: float, n: int = 24) -> RelabellingResult:
    return RelabellingResult(statistic=statistic, pvalue=0.5, confidence_interval=None, n=n, expected=expected,
                             null_sd=sd, draws=999, min_pvalue=0.001)


def test_the_pooled_test_standardises_the_summed_statistic_by_the_summed_null_variance() -> None:
    pooled = pooled_test([result(3.0, 1.0, 3.0), result(5.0, 2.0, 4.0)])
    assert pooled.statistic == pytest.approx(5 / 5) and pooled.pvalue == pytest.approx(stats.norm.sf(1.0))
    assert (pooled.n, pooled.partitions) == (48, 2)
    assert pooled_test([result(0.0, 0.0, 0.0), result(0.0, 0.0, 0.0)]).pvalue == 1.0  # no spread: nothing stands out
    alone = pooled_test([result(3.0, 1.0, 2.0)])  # one partition: its own Monte-Carlo p
    assert (alone.statistic, alone.pvalue, alone.partitions) == (1.0, 0.5, 1)


def test_pooling_two_partitions_agrees_with_the_monte_carlo_test_over_their_items_together() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    items = [list(rng.normal(size=6) + np.eye(6)[0] * 0.4) for _ in range(48)]
    separate = [arrangement_test(items[:24], draws=20_000, name="a"), arrangement_test(items[24:], draws=20_000,
                                                                                         name="b")]
    together = arrangement_test(items, draws=20_000, name="ab")
    pooled = pooled_test(separate)
    assert pooled.statistic == pytest.approx(together.standardised, abs=0.05)
    assert pooled.pvalue == pytest.approx(together.pvalue, abs=0.01)


def _verdict(test: str, partition: str, z: float) -> Verdict:
    single = RelabellingResult(statistic=z, pvalue=float(stats.norm.sf(z)), confidence_interval=None, n=24,
                               expected=0.0, null_sd=1.0, draws=999, min_pvalue=0.001)
    evidence = RelabellingEvidence("option orders", "u", "base", single, 24)
    return Verdict(model="injected", partition=partition, family="optionorder", test=test, title=test, task=partition,
                   flagged=None, statistic=z, pvalue=None, confidence_interval=None, n=24, null="", rule="",
                   evidence=evidence)


def test_pools_group_partitions_of_one_model_role_and_shape_in_label_order_and_count_the_flagged() -> None:
    zs = [1.2, 1.2, 1.2, 1.2, -3.0]
    labelled = [(_verdict("option_order_reference", f"P{i}", z), "injected", "multiple choice")
                for i, z in enumerate(zs)]
    labelled.append((_verdict("other_test", "P9", 9.0), "injected", "multiple choice"))
    rates = pooled_rates(labelled, ["option_order_reference"], sizes=(1, 2, 4, 8))
    # Alone each 1.2 < 1.645; two together 2.4 / sqrt(2) = 1.70; four 4.8 / 2 = 2.4; no pool of 8 from 5.
    assert [(rate.size, rate.items, rate.flagged, rate.pools) for rate in rates] == [(1, 24, 0, 5), (2, 48, 2, 2),
                                                                                   (4, 96, 1, 1)]
    assert 2.4 / math.sqrt(2) > stats.norm.isf(0.05)
    assert "| `option_order_reference` | injected | multiple choice | 2 | 48 | 2/2 | 1.7 1.7 |" in markdown_table(rates)


def test_the_projection_resamples_partitions_into_pools_and_counts_the_share_the_pooled_test_flags() -> None:
    strong, none = result(1.5, 0.0, 1.0), result(0.0, 0.0, 1.0)
    # Alone: each partition's own p (0.5 here: neither flags).
    assert projected_share([strong, none], 1) == 0.0
    # Pools of two drawn with replacement: {strong, strong} (1 in 4) has z = 3 / sqrt(2) = 2.12, over 1.645 but under
    # Holm's first step over four tests (z 2.24); the mixed pools (z 1.06) and {none, none} flag nothing.
    assert 1.645 < 3 / math.sqrt(2) < stats.norm.isf(HOLM_FIRST_STEP)
    assert projected_share([strong, none], 2, name="x") == pytest.approx(0.25, abs=0.01)
    assert projected_share([strong, none], 2, alpha=HOLM_FIRST_STEP, name="x") == 0.0
    # Seeded: the same share on every run.
    assert projected_share([strong, none], 2, name="x") == projected_share([strong, none], 2, name="x")


def test_only_injected_partitions_are_projected() -> None:
    labelled = [(_verdict("option_order_reference", f"P{i}", 3.0), role, "multiple choice")
                for i, role in enumerate(["injected", "injected", "filler", "sibling"])]
    [rate] = projected_rates(labelled, ["option_order_reference"], sizes=(1, 2))
    assert (rate.test, rate.shape, rate.partitions, rate.items) == ("option_order_reference", "multiple choice", 2, 24)
    # z = 3 alone (p 0.0013) and 3 * sqrt(2) pooled: every pool flags, at either level.
    assert rate.shares == ((1, 1.0, 1.0), (2, 1.0, 1.0))
    assert "| `option_order_reference` | multiple choice | 2 | 24 | 1: 100% (100%), 2: 100% (100%) |" in (
        projected_table([rate]))


def test_the_spread_of_partition_statistics_is_their_mean_sd_and_one_sample_t() -> None:
    labelled = [(_verdict("option_order_reference", f"P{i}", z), "filler", "multiple choice")
                for i, z in enumerate([-1.0, 0.0, 2.0, 3.0])]
    labelled.append((_verdict("option_order_reference", "Q", 5.0), "sibling", "multiple choice"))  # alone: no spread
    [spread] = partition_spreads(labelled, ["option_order_reference"])
    # Mean 1, SD sqrt(10 / 3), t = 1 / (SD / 2).
    assert (spread.role, spread.partitions, spread.mean, spread.slope) == ("filler", 4, 1.0, None)
    assert spread.sd == pytest.approx(math.sqrt(10 / 3)) and spread.t == pytest.approx(2 / math.sqrt(10 / 3))
    assert spread.pvalue == pytest.approx(2 * stats.t.sf(spread.t, 3))
    assert "| `option_order_reference` | filler | multiple choice | 4 | +1.00 | 1.83 | +1.10 |" in spread_table([spread])
