"""The one result shape for every statistic the project reports (scipy.stats style).

An :class:`Estimate` is a number with its interval (the DCQ range's upper bound,
the DCR Factor); a :class:`TestResult` adds the p-value of a stated test and the
decision ``significant(alpha)``. Every method's statistics subclass one of them,
so the report and the verdicts read ``statistic``, ``pvalue`` and
``confidence_interval`` the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lm_eval_contam.errors import ContamError

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


def percentile_interval(values: Sequence[float] | np.ndarray, confidence_level: float = 0.95) -> ConfidenceInterval:
    """The equal-tailed percentile interval of resampled statistics."""
    if not 0.0 < confidence_level < 1.0:
        raise ContamError(f"confidence level must lie in (0, 1), got {confidence_level!r}", field="confidence_level")
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(np.asarray(values, dtype=float), [tail, 1.0 - tail])
    return ConfidenceInterval(float(low), float(high), confidence_level)


def sign_flip_caveats(n: int | None) -> tuple[str, ...]:
    """Too few pairs for a sign-flip test to reach ALPHA (its smallest possible p is 2**-n): say so on the verdict."""
    if n is None or 2.0**-n <= ALPHA:
        return ()
    return (f"{n} instance(s): the smallest p a sign-flip test can give is 1/{2 ** n} > {ALPHA}, so it cannot flag; "
            "audit more instances",)


def finite_scores(values: Sequence[float], field: str) -> np.ndarray:
    """Scores for a test: a non-empty 1-D list of finite numbers, else an error naming ``field``."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ContamError(f"need a non-empty list of finite scores, got {list(values)!r}", field=field)
    return array
