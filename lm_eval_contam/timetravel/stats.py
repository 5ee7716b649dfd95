"""Algorithm 1: does the guided completion overlap the reference more than the general one?

:func:`bootstrap_test` is the paper's test (kept as published); :func:`permutation_test`
is our exact sign-flip test of the same paired differences, whose level holds at small n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from lm_eval_contam.errors import ContamError
from lm_eval_contam.seeding import rng_for
from lm_eval_contam.stats import TestResult, finite_scores, percentile_interval


@dataclass(frozen=True)
class BootstrapResult(TestResult):
    """H1: mean guided > mean general. ``statistic`` is mean(guided) - mean(general);
    ``confidence_interval`` the percentile interval of the resampled statistic;
    ``significant`` the paper's rule, contaminated iff p <= 0.05."""

    n_resamples: int
    paired: bool


def bootstrap_test(
    guided: Sequence[float],
    general: Sequence[float],
    *,
    paired: bool = True,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> BootstrapResult:
    """Non-parametric bootstrap of mean(guided) - mean(general), vectorised.

    ``paired`` (default) resamples instance indices jointly, p = share of
    resamples whose mean difference is <= 0; this reproduces the paper's
    published p-values. ``paired=False`` resamples the two lists independently,
    as the released code does, with the same p (share of resamples where the
    guided mean does not exceed the general mean).
    """
    guided_scores = finite_scores(guided, "guided")
    general_scores = finite_scores(general, "general")
    if n_resamples < 1:
        raise ContamError(f"n_resamples must be >= 1, got {n_resamples!r}", field="n_resamples")
    rng = rng_for(seed, "timetravel-bootstrap", paired)
    if paired:
        if guided_scores.size != general_scores.size:
            raise ContamError(
                f"paired test needs equal lengths, got {guided_scores.size} guided and {general_scores.size} general",
                field="general",
            )
        differences = guided_scores - general_scores
        rows = rng.integers(0, differences.size, size=(n_resamples, differences.size))
        resampled = differences[rows].mean(axis=1)
    else:
        guided_rows = rng.integers(0, guided_scores.size, size=(n_resamples, guided_scores.size))
        general_rows = rng.integers(0, general_scores.size, size=(n_resamples, general_scores.size))
        resampled = guided_scores[guided_rows].mean(axis=1) - general_scores[general_rows].mean(axis=1)
    # Both variants: 1 - share of resamples where guided beats general.
    pvalue = float(np.mean(resampled <= 0))
    return BootstrapResult(
        statistic=float(guided_scores.mean() - general_scores.mean()),
        pvalue=pvalue,
        confidence_interval=percentile_interval(resampled, confidence_level),
        n_resamples=n_resamples,
        paired=paired,
    )


# Sign flips are enumerated exactly up to this many (2**16 = 65,536: n <= 16), else sampled.
EXACT_PERMUTATION_LIMIT = 100_000


@dataclass(frozen=True)
class PermutationResult(TestResult):
    """H0: guided and general ROUGE-L are exchangeable within each instance; H1: guided > general.

    ``statistic`` is the mean paired difference; ``confidence_interval`` is None (the
    test gives a p-value, not an interval); ``exact`` tells whether all 2**n sign
    flips were enumerated, else ``n_resamples`` seeded random flips were drawn.
    """

    exact: bool
    n_resamples: int


def permutation_test(
    guided: Sequence[float], general: Sequence[float], *, seed: int = 0, n_resamples: int = 10_000
) -> PermutationResult:
    """One-sided sign-flip permutation test of the paired differences guided - general (ours).

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
    result = stats.permutation_test(
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
