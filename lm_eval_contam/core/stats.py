"""The one result shape for every statistic the project reports (scipy.stats style).

An :class:`Estimate` is a number with its interval (the DCQ range's upper bound,
the DCR Factor); a :class:`TestResult` adds the p-value of a stated test and the
decision ``significant(alpha)``. Every method's statistics subclass one of them,
so the report and the verdicts read ``statistic``, ``pvalue`` and
``confidence_interval`` the same way everywhere. Tests several methods share live
here too: :func:`permutation_test` (the paired sign-flip test of Time Travel and
the likelihood lift mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for

ALPHA = 0.05  # the significance level of every verdict (the papers' 0.05)


@dataclass(frozen=True)
class ConfidenceInterval:
    low: float
    high: float
    confidence_level: float = 0.95


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its confidence interval (``None`` when none could be computed)."""

    statistic: float
    confidence_interval: ConfidenceInterval | None


@dataclass(frozen=True)
class TestResult(Estimate):
    """An estimate with the p-value of a one-sided test; ``significant`` is the decision rule."""

    pvalue: float

    def significant(self, alpha: float = ALPHA) -> bool:
        """Reject the null when p <= alpha (the papers' rule)."""
        return self.pvalue <= alpha


# The level of the check that two splits of one task are comparable (audit --tasks' default control): its own stated
# alpha, the verdicts'.
SPLIT_CHECK_ALPHA = ALPHA


def splits_differ_test(first: Sequence[float], second: Sequence[float], *, alternative: str = "two-sided") -> Any:
    """Mann-Whitney U test of two splits' per-text values (character lengths, a reference model's log-likelihood per
    byte): H0, the two are samples of one distribution, as two random splits of one pool are; two-sided, or
    ``alternative="greater"``: ``first`` higher. scipy's result (``statistic``: U of ``first``, ``pvalue``); every
    value must be finite and each side non-empty."""
    x, y = finite_scores(first, "first split"), finite_scores(second, "second split")
    return scipy_stats.mannwhitneyu(x, y, alternative=alternative)


def splits_differ(pvalue: float) -> bool:
    """The comparability check rejects: two splits differ at ``SPLIT_CHECK_ALPHA``."""
    return float(pvalue) <= SPLIT_CHECK_ALPHA


def percentile_interval(values: Sequence[float] | np.ndarray, confidence_level: float = 0.95) -> ConfidenceInterval:
    """The equal-tailed percentile interval of resampled statistics."""
    if not 0.0 < confidence_level < 1.0:
        raise ContamError(f"confidence level must lie in (0, 1), got {confidence_level!r}", field="confidence_level")
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(np.asarray(values, dtype=float), [tail, 1.0 - tail])
    return ConfidenceInterval(float(low), float(high), confidence_level)


def sign_flip_caveats(n: int | None) -> tuple[str, ...]:
    """Too few pairs for a sign-flip test to reach ALPHA (its smallest possible p is 2**-n): say so on the verdict.
    n = 1 is said once for every verdict (``method_verdict.single_instance_caveats``), not twice."""
    if n is None or n == 1 or 2.0**-n <= ALPHA:
        return ()
    return (f"{n} instance(s): the smallest p a sign-flip test can give is 1/{2 ** n} > {ALPHA}, so it cannot flag; "
            "audit more instances",)


def finite_scores(values: Sequence[float], field: str) -> np.ndarray:
    """Scores for a test: a non-empty 1-D list of finite numbers, else an error naming ``field``."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ContamError(f"need a non-empty list of finite scores, got {list(values)!r}", field=field)
    return array


# Sign flips are enumerated exactly up to this many (2**16 = 65,536: n <= 16), else sampled.
EXACT_PERMUTATION_LIMIT = 100_000


@dataclass(frozen=True)
class PermutationResult(TestResult):
    """H0: the paired scores are exchangeable within each pair (Time Travel: guided and general ROUGE-L; the
    likelihood lift mode: own and other lift); H1: the first scores higher.

    ``statistic`` is the mean paired difference; ``confidence_interval`` is None (the
    test gives a p-value, not an interval); ``exact`` tells whether all 2**n sign
    flips were enumerated, else ``n_resamples`` seeded random flips were drawn.
    """

    exact: bool
    n_resamples: int


def permutation_test(
    guided: Sequence[float], general: Sequence[float], *, seed: int = 0, n_resamples: int = 10_000
) -> PermutationResult:
    """One-sided sign-flip permutation test of the paired differences guided - general (ours; Time Travel's
    Algorithm 1 and the likelihood lift mode).

    Unlike the bootstrap, its level holds at the paper's n = 10: under H0 every
    sign flip of the differences is equally likely, so P(p <= alpha) <= alpha.
    Exact when 2**n <= 100,000, else Monte Carlo with p = (1 + hits) / (1 + resamples).
    """
    guided_scores = finite_scores(guided, "guided")
    general_scores = finite_scores(general, "general")
    if guided_scores.size != general_scores.size:
        raise ContamError(
            f"paired test needs equal lengths, got {guided_scores.size} guided and {general_scores.size} general",
            field="general",
        )
    if n_resamples < 1:
        raise ContamError(f"n_resamples must be >= 1, got {n_resamples!r}", field="n_resamples")
    flips = 2**guided_scores.size
    exact = flips <= EXACT_PERMUTATION_LIMIT
    if guided_scores.size == 1:  # scipy needs two pairs; one pair's two sign flips are enumerated here
        difference = float(guided_scores[0] - general_scores[0])
        return PermutationResult(statistic=difference, pvalue=1.0 if difference <= 0 else 0.5,
                                 confidence_interval=None, exact=True, n_resamples=2)
    # scipy enumerates every permutation when n_resamples covers them all.
    result = scipy_stats.permutation_test(
        (guided_scores, general_scores),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        alternative="greater",
        vectorized=True,
        n_resamples=flips if exact else n_resamples,
        rng=rng_for(seed, "timetravel-permutation"),
    )
    return PermutationResult(
        statistic=float(np.mean(guided_scores - general_scores)),
        pvalue=float(result.pvalue),
        confidence_interval=None,
        exact=exact,
        n_resamples=flips if exact else n_resamples,
    )
