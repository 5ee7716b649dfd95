"""Bootstrap confidence intervals of the DCR Factor and of the adjusted accuracy.

Each level's checked items are resampled with replacement, independently per
level; every resample's four level scores go through the vectorised aggregator.
An item's result is 1 (contaminated) or 0 in the paper check mode, and original
minus control (1, 0 or -1) on a controlled level, whose score is the mean floored
at 0 (:mod:`lm_eval_contam.methods.dcr.level_score`); the floor changes no 1/0 level.
The adjusted accuracy's resamples pair each factor resample with a normal draw of
the raw accuracy (mean ``acc``, sd its standard error), because lm-eval reports
the benchmark as a mean and a standard error, not as items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from lm_eval_contam.core.errors import ContamError

# Metrics whose values cannot leave their range: their adjusted interval is clipped there (the normal draw of the raw
# metric can pass either end, e.g. an acc of 0.81 with a stderr of 0.1 drew an upper end of 1.0086).
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import ConfidenceInterval, Estimate, percentile_interval
from lm_eval_contam.methods.dcr.fuzzy import adjust, dcr_factor, dcr_factor_many

N_RESAMPLES = 10_000
CONFIDENCE_LEVEL = 0.95


@dataclass(frozen=True)
class FactorBootstrap(Estimate):
    """The DCR Factor of the observed level scores (``statistic``) and its percentile bootstrap interval."""

    confidence_interval: ConfidenceInterval
    level_scores: tuple[float, float, float, float]
    level_sizes: tuple[int, int, int, int]
    standard_error: float
    n_resamples: int
    # The n_resamples factors, for downstream intervals; an array has no equality, so it is not compared.
    resamples: np.ndarray = field(compare=False, repr=False)


@dataclass(frozen=True)
class AdjustedAccuracy(Estimate):
    """``acc * (1 - factor)`` (``statistic``), its standard error and, when the factor was bootstrapped, an interval."""

    standard_error: float | None


def bootstrap_dcr_factor(
    level_items: Sequence[Sequence[float]],
    *,
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = CONFIDENCE_LEVEL,
    seed: int = 0,
) -> FactorBootstrap:
    """Resample each level's per-item Check results (1 contaminated, 0 not; controlled: -1..1) and aggregate."""
    if len(level_items) != 4:
        raise ContamError(f"expected item results for 4 levels, got {len(level_items)}", field="level_items")
    if n_resamples < 1:
        raise ContamError(f"n_resamples must be positive, got {n_resamples!r}", field="n_resamples")
    arrays = [np.asarray(items, dtype=float) for items in level_items]
    for level, items in enumerate(arrays, start=1):
        if items.size == 0:
            raise ContamError(f"level L{level} has no checked items to resample", field=f"l{level}")
        if not np.all(np.isfinite(items)):
            raise ContamError(f"level L{level} has non-finite item results", field=f"l{level}")
    resampled_scores = np.empty((n_resamples, 4))
    for level, items in enumerate(arrays):
        rng = rng_for(seed, "dcr_bootstrap", level)
        picks = rng.integers(0, items.size, size=(n_resamples, items.size))
        resampled_scores[:, level] = np.maximum(items[picks].mean(axis=1), 0.0)
    factors = dcr_factor_many(resampled_scores)
    scores = tuple(max(float(items.mean()), 0.0) for items in arrays)
    return FactorBootstrap(
        statistic=dcr_factor(scores),
        confidence_interval=percentile_interval(factors, confidence_level),
        level_scores=scores,  # type: ignore[arg-type]
        level_sizes=tuple(int(items.size) for items in arrays),  # type: ignore[arg-type]
        standard_error=float(np.std(factors, ddof=1)) if n_resamples > 1 else 0.0,
        n_resamples=n_resamples,
        resamples=factors,
    )


def adjusted_accuracy(
    acc: float,
    acc_stderr: float | None,
    factor: float,
    factor_bootstrap: FactorBootstrap | None = None,
    *,
    seed: int = 0,
    value_range: tuple[float, float] | None = None,
) -> AdjustedAccuracy:
    """``acc * (1 - factor)``; its spread from the factor resamples and the accuracy's stderr.

    Without a bootstrap the factor is a fixed number, so the standard error is
    ``(1 - factor) * acc_stderr`` and there is no interval. ``value_range``: the metric's
    range (:data:`~lm_eval_contam.core.result_numbers.METRIC_RANGES`), to which the interval's ends are clipped.
    """
    value = adjust(acc, factor)
    if factor_bootstrap is None:
        stderr = None if acc_stderr is None else (1.0 - factor) * acc_stderr
        return AdjustedAccuracy(statistic=value, confidence_interval=None, standard_error=stderr)
    accuracy_draws = np.full(factor_bootstrap.n_resamples, float(acc))
    if acc_stderr is not None and math.isfinite(acc_stderr):
        noise = rng_for(seed, "dcr_bootstrap", "accuracy").standard_normal(factor_bootstrap.n_resamples)
        accuracy_draws = accuracy_draws + acc_stderr * noise
    draws = accuracy_draws * (1.0 - factor_bootstrap.resamples)
    stderr = float(np.std(draws, ddof=1)) if draws.size > 1 else 0.0
    interval = percentile_interval(draws, factor_bootstrap.confidence_interval.confidence_level)
    if value_range is not None:
        low, high = value_range
        interval = replace(interval, low=min(max(interval.low, low), high), high=min(max(interval.high, low), high))
    return AdjustedAccuracy(statistic=value, confidence_interval=interval, standard_error=stderr)
