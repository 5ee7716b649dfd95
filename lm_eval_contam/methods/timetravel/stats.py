"""Algorithm 1: does the guided completion overlap the reference more than the general one?

:func:`bootstrap_test` is the paper's test (kept as published); :func:`permutation_test`
is our exact sign-flip test of the same paired differences, whose level holds at small n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import TestResult, finite_scores, percentile_interval


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
