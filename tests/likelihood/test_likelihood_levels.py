"""The likelihood modes' tests hold their level under their nulls (seeded simulations at alpha = 0.05)."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.likelihood import lift_test, two_sample_test

SIMULATIONS = 400
# Monte-Carlo allowance: three standard errors of a 5 % rate over SIMULATIONS runs.
TOLERANCE = 3 * (ALPHA * (1 - ALPHA) / SIMULATIONS) ** 0.5


def _rejection_rate(test, draw, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    return float(np.mean([test(*draw(rng, n), seed=k).significant(ALPHA) for k in range(SIMULATIONS)]))


def _exchangeable_groups(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    # Per-byte log-likelihoods of one distribution, skewed like real ones (a long tail of unlikely texts).
    scores = -2.0 - rng.gamma(2.0, 0.8, size=2 * n)
    return scores[:n], scores[n:]


def _symmetric_lifts(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    # Own and other lift exchangeable within an instance; instances differ (the dataset name lifts some a lot).
    base = rng.normal(0.05, 0.1, size=n)
    return base + rng.laplace(0, 0.05, size=n), base + rng.laplace(0, 0.05, size=n)


@pytest.mark.parametrize("n", [12, 40])
def test_two_sample_permutation_test_holds_its_level(n: int) -> None:
    rate = _rejection_rate(lambda x, y, seed: two_sample_test(x, y, seed=seed, n_resamples=199),
                           _exchangeable_groups, n, seed=n)
    print(f"n = {n}: rejection rate {rate:.3f}")
    assert rate <= ALPHA + TOLERANCE, rate


@pytest.mark.parametrize("n", [10, 12, 40])
def test_lift_sign_flip_test_holds_its_level(n: int) -> None:
    rate = _rejection_rate(lambda x, y, seed: lift_test(x, y, seed=seed, n_resamples=199), _symmetric_lifts, n, seed=n)
    print(f"n = {n}: rejection rate {rate:.3f}")
    assert rate <= ALPHA + TOLERANCE, rate


def test_two_sample_test_is_exact_when_the_relabellings_are_few() -> None:
    # 3 vs 3: 20 relabellings; the observed split is the most extreme of them, so p = 1/20.
    result = two_sample_test([3.0, 2.0, 1.5], [0.0, -1.0, 0.5])
    assert result.exact and result.pvalue == pytest.approx(1 / 20)
    assert result.statistic == pytest.approx(6.5 / 3 - (-0.5) / 3)
    assert (result.n_partition, result.n_control) == (3, 3)


def test_two_sample_test_detects_a_shift() -> None:
    rng = np.random.default_rng(1)
    partition, control = rng.normal(0.5, 1, size=40), rng.normal(0, 1, size=40)
    assert two_sample_test(partition, control).pvalue < 0.05


def test_partition_and_control_docs_alternate_so_a_limit_keeps_both_sides() -> None:
    from lm_eval_contam.methods.likelihood.task import interleave

    partition = [{"group": "partition", "i": i} for i in range(3)]
    control = [{"group": "control", "i": i} for i in range(2)]
    assert [(d["group"], d["i"]) for d in interleave([partition, control])] == [
        ("partition", 0), ("control", 0), ("partition", 1), ("control", 1), ("partition", 2)]
