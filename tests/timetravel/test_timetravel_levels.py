"""Level and power of Time Travel's Alg. 1 tests under an exchangeable null (seeded Monte Carlo)."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.methods.timetravel import bootstrap_test, permutation_test


def level_bound(simulations: int, alpha: float = 0.05) -> float:
    """alpha plus 2.6 Monte-Carlo standard errors (one-sided, about 0.5 % false alarms)."""
    return alpha + 2.6 * np.sqrt(alpha * (1 - alpha) / simulations)


def rouge_like(rng: np.random.Generator, n: int) -> np.ndarray:
    """ROUGE-L-shaped scores (mostly low, a long right tail), rounded as the paper rounds them."""
    return np.round(rng.beta(0.5, 3, size=n), 2)


@pytest.mark.parametrize(("n", "simulations", "n_resamples"), [(10, 2000, 10_000), (12, 800, 10_000), (40, 1000, 999)])
def test_permutation_level_under_exchangeable_rouge(n: int, simulations: int, n_resamples: int) -> None:
    rng = np.random.default_rng(n)
    rejections = [permutation_test(rouge_like(rng, n), rouge_like(rng, n), seed=s, n_resamples=n_resamples).significant()
                  for s in range(simulations)]
    assert np.mean(rejections) <= level_bound(simulations)


def test_published_bootstrap_is_anti_conservative_at_n10() -> None:
    """Why the permutation variant exists: the paper's bootstrap rejects about 9 % at a nominal 5 % at n = 10."""
    rng = np.random.default_rng(10)
    simulations = 1000
    rate = np.mean([bootstrap_test(rouge_like(rng, 10), rouge_like(rng, 10), seed=s, n_resamples=2000).significant()
                    for s in range(simulations)])
    assert rate > level_bound(simulations)  # measured 0.094


def test_permutation_detects_a_clear_guided_advantage() -> None:
    rng = np.random.default_rng(0)
    general = rouge_like(rng, 10)
    result = permutation_test(np.clip(general + 0.3, 0, 1), general)
    assert result.pvalue == pytest.approx(1 / 1024) and result.significant()  # all 10 differences positive: exact


def test_permutation_test_on_one_pair_enumerates_its_two_sign_flips() -> None:
    assert permutation_test([0.5], [0.1]).pvalue == 0.5  # the observed and the flipped difference
    assert permutation_test([0.1], [0.5]).pvalue == 1.0
    assert permutation_test([0.5, 0.3], [0.1, 0.2]).pvalue == 0.25  # scipy's enumeration from two pairs on


def test_too_few_pairs_for_the_sign_flip_test_is_said_on_the_verdict() -> None:
    from lm_eval_contam.core.stats import sign_flip_caveats

    assert sign_flip_caveats(4) == ("4 instance(s): the smallest p a sign-flip test can give is 1/16 > 0.05, so it "
                                    "cannot flag; audit more instances",)
    assert sign_flip_caveats(5) == () and sign_flip_caveats(None) == ()  # 1/32 <= 0.05
