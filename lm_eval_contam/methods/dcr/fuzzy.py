"""The DCR Factor: the released Mamdani aggregator of Xu et al. (EMNLP 2025), two ways.

``dcr_factor_reference`` follows the authors' scikit-fuzzy code step by step and is
the definition. ``dcr_factor_many`` evaluates an (n, 4) array of score vectors at
once with the same floating-point operations in the same order (the centroid's
segment sums are accumulated left to right, as skfuzzy's loop does), so both give
bit-identical factors; the tests prove it on a grid.

The published behaviour is kept on purpose: a mean score below 0.02 gives 0, and
just above it the floor of every membership at ``0.1 * mean`` lifts the factor to
about 0.21, so the factor is not monotonic in the scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import skfuzzy as fuzz

from lm_eval_contam.core.errors import ContamError

UNIVERSE = np.linspace(0, 1, 101)
INPUT_TERMS = {
    "low": fuzz.trapmf(UNIVERSE, [0, 0, 0.1, 0.3]),
    "medium": fuzz.trapmf(UNIVERSE, [0.2, 0.4, 0.5, 0.6]),
    "high": fuzz.trapmf(UNIVERSE, [0.5, 0.8, 1.0, 1.0]),
}
OUTPUT_TERMS = {
    "negligible": fuzz.trapmf(UNIVERSE, [0, 0, 0.1, 0.3]),
    "minor": fuzz.trimf(UNIVERSE, [0.1, 0.3, 0.5]),
    "moderate": fuzz.trimf(UNIVERSE, [0.3, 0.5, 0.7]),
    "significant": fuzz.trimf(UNIVERSE, [0.5, 0.7, 0.9]),
    "severe": fuzz.trapmf(UNIVERSE, [0.7, 0.9, 1.0, 1.0]),
}
NEGLIGIBLE_MEAN = 0.02  # mean score below this is "randomness": factor 0
MIN_MEMBERSHIP = 0.001  # lower bound of m = max(0.001, mean)
FLOOR_FRACTION = 0.1  # every input membership is floored at 0.1 * m
SMOOTHING_PEAK = 0.06  # aggregate peak below this gets Negligible * m added
DECIMALS = 4


def validate_scores(scores: Sequence[float] | np.ndarray, *, field: str = "scores") -> np.ndarray:
    """An (n, 4) float array of finite scores, or ContamError naming the bad value."""
    array = np.asarray(scores, dtype=float) if not isinstance(scores, np.ndarray) else scores.astype(float)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 4:
        raise ContamError(f"expected four scores [S1, S2, S3, S4] per row, got shape {array.shape}", field=field)
    if not np.all(np.isfinite(array)):
        raise ContamError(f"scores must be finite numbers, got {array[~np.isfinite(array)][:4].tolist()}", field=field)
    return array


def dcr_factor_reference(scores: Sequence[float]) -> float:
    """The DCR Factor of one [S1, S2, S3, S4] with scikit-fuzzy, as the authors compute it."""
    (row,) = validate_scores(scores)
    inputs = [max(0.0, min(float(v), 1.0)) for v in row]
    min_memb = max(MIN_MEMBERSHIP, np.mean(inputs))
    if np.mean(inputs) < NEGLIGIBLE_MEAN:
        return 0.0
    # Python max of a numpy scalar and a float, exactly as released.
    mu = [
        {term: max(fuzz.interp_membership(UNIVERSE, mf, value), min_memb * FLOOR_FRACTION)
         for term, mf in INPUT_TERMS.items()}
        for value in inputs
    ]
    negligible = np.fmin(np.fmin(mu[0]["low"], mu[1]["low"]), np.fmin(mu[2]["low"], mu[3]["low"]))
    medium_mean = np.mean([level["medium"] for level in mu])
    aggregated = np.fmax.reduce([
        np.fmin(negligible, OUTPUT_TERMS["negligible"]),
        np.fmin(np.fmax(mu[2]["high"], mu[3]["high"]), OUTPUT_TERMS["severe"]),
        np.fmin(np.fmax(mu[0]["high"], mu[1]["high"]), OUTPUT_TERMS["significant"]),
        np.fmin(medium_mean, OUTPUT_TERMS["moderate"]),
        np.fmin(np.fmax(mu[0]["medium"], mu[1]["low"]), OUTPUT_TERMS["minor"]),
    ])
    if np.max(aggregated) < SMOOTHING_PEAK:
        aggregated += OUTPUT_TERMS["negligible"] * min_memb
    # The floor keeps every rule strength positive, so the area is never zero and
    # the released code's exception fallback is unreachable.
    factor = fuzz.defuzz(UNIVERSE, aggregated, "centroid")
    return float(round(max(min(factor, 1.0), 0.0), DECIMALS))


def dcr_factor_many(scores: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """DCR Factors of an (n, 4) array of score vectors, vectorised; equal to the reference."""
    inputs = np.clip(validate_scores(scores), 0.0, 1.0)
    # Sequential sums, as np.mean over a 4-element Python list does.
    mean = (((inputs[:, 0] + inputs[:, 1]) + inputs[:, 2]) + inputs[:, 3]) / 4.0
    min_memb = np.maximum(MIN_MEMBERSHIP, mean)
    floor = (min_memb * FLOOR_FRACTION)[:, None]
    mu = {term: np.maximum(np.interp(inputs, UNIVERSE, mf, left=0.0, right=0.0), floor)
          for term, mf in INPUT_TERMS.items()}
    low, medium, high = mu["low"], mu["medium"], mu["high"]
    negligible = np.fmin(np.fmin(low[:, 0], low[:, 1]), np.fmin(low[:, 2], low[:, 3]))
    medium_mean = (((medium[:, 0] + medium[:, 1]) + medium[:, 2]) + medium[:, 3]) / 4.0
    strengths = {
        "negligible": negligible,
        "severe": np.fmax(high[:, 2], high[:, 3]),
        "significant": np.fmax(high[:, 0], high[:, 1]),
        "moderate": medium_mean,
        "minor": np.fmax(medium[:, 0], low[:, 1]),
    }
    aggregated = np.fmax.reduce(
        [np.fmin(strengths[name][:, None], OUTPUT_TERMS[name][None, :]) for name in strengths]
    )
    smooth = aggregated.max(axis=1) < SMOOTHING_PEAK
    aggregated[smooth] += OUTPUT_TERMS["negligible"][None, :] * min_memb[smooth, None]
    factors = np.clip(centroid_many(UNIVERSE, aggregated), 0.0, 1.0)
    factors = np.round(factors, DECIMALS)
    factors[mean < NEGLIGIBLE_MEAN] = 0.0
    return factors


def centroid_many(x: np.ndarray, mfx: np.ndarray) -> np.ndarray:
    """skfuzzy's piecewise-linear centroid for each row of ``mfx``, same operations and order."""
    x1, x2 = x[:-1][None, :], x[1:][None, :]
    y1, y2 = mfx[:, :-1], mfx[:, 1:]
    width = x2 - x1
    with np.errstate(divide="ignore", invalid="ignore"):
        general_moment = (2.0 / 3.0 * width * (y2 + 0.5 * y1)) / (y1 + y2) + x1
    moment = np.where(
        y1 == y2, 0.5 * (x1 + x2),
        np.where(y1 == 0.0, 2.0 / 3.0 * width + x1,
                 np.where(y2 == 0.0, 1.0 / 3.0 * width + x1, general_moment)),
    )
    area = np.where(
        y1 == y2, width * y1,
        np.where(y1 == 0.0, 0.5 * width * y2,
                 np.where(y2 == 0.0, 0.5 * width * y1, 0.5 * width * (y1 + y2))),
    )
    skipped = (y1 == 0.0) & (y2 == 0.0)
    moment_area = np.where(skipped, 0.0, moment * area)
    area = np.where(skipped, 0.0, area)
    # np.add.accumulate sums strictly left to right, like skfuzzy's Python loop.
    sum_moment_area = np.add.accumulate(moment_area, axis=1)[:, -1]
    sum_area = np.add.accumulate(area, axis=1)[:, -1]
    return sum_moment_area / np.fmax(sum_area, np.finfo(float).eps)


def dcr_factor(scores: Sequence[float]) -> float:
    """The DCR Factor of one [S1, S2, S3, S4] (scores clipped to [0, 1])."""
    return dcr_factor_reference(scores)


def adjust(acc: float, factor: float) -> float:
    """Contamination-adjusted accuracy, ``acc * (1 - factor)`` (Eq. 4)."""
    if not (math.isfinite(acc) and math.isfinite(factor)):
        raise ContamError(f"acc and factor must be finite, got acc={acc!r}, factor={factor!r}", field="acc")
    return acc * (1.0 - factor)
