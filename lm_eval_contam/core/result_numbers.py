"""The one check of the numbers read back from lm-eval's results and logged samples, by kind.

A number outside what its kind allows (a p of -0.2 would flag a partition and print "p < 0.0001", an ``acc`` of 1.5
or a DCR factor of 1.7 be printed as a result) comes from a damaged or edited file: it is refused where the file is
read (:mod:`lm_eval_contam.core.rundir`), never rendered. The kind is read from the metric's name:

- a p-value (``p``, ``*_p``, any name holding ``pvalue``): in [0, 1];
- a bounded score: a metric of a known range (:data:`METRIC_RANGES`) and what DCR and the reordered score derive
  from it (``<metric>_adj``, ``<metric>_reordered``, their interval ends; the gaps between two such scores), a DCR
  factor, the methods' shares and rates: in their range; a metric whose range is unknown is left alone;
- a kappa: in [-1, 1];
- a count (``sample_len``, the methods' item counts, ``n-samples``): a non-negative whole number;
- an interval (``<point>_ci_low`` / ``<point>_ci_high``): its ends ordered, and its point, when the row has it,
  between them.

Standard errors and values that are no number at all are left to the reader that needs them
(``ModelResults.number`` refuses a missing one there).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

# Metrics whose values cannot leave their range, whatever the task. f1 is not among them: lm-eval's squadv2 reports
# it in percent (0-100), drop in [0, 1].
METRIC_RANGES: dict[str, tuple[float, float]] = {metric: (0.0, 1.0) for metric in ("acc", "acc_norm", "exact_match")}

_UNIT = (0.0, 1.0)
_PVALUE = re.compile(r"p|.*_p|.*pvalue.*")
# The project's own shares and rates (DCQ's, the option-order test's, Time Travel's, the in-context score).
_SHARE = re.compile(r"dcq_(?:max|min|max_ci_low|max_ci_high|chance_max|unparseable|bdq_.+|bcq_.+|non_preferred_.+)"
                    r"|order_(?:top_share|u_mean)|codec_score|rougeL_(?:guided|general)|alg[12]_contaminated")
_DCR_FACTOR = re.compile(r"dcr_factor(?:_ci_low|_ci_high)?")
_COUNT = frozenset({"sample_len", "order_items", "exact_matches", "near_exact_matches", "pairing_groups",
                    "sentence_order_items"})
_KAPPA = frozenset({"dcq_kappa"})
# <metric><suffix>: a score on the metric's own scale (the DCR-adjusted score, the reordered one, their intervals).
_SAME_SCALE = re.compile(r"(?P<metric>.+?)_(?:adj|reordered|reordered_original)(?:_ci_low|_ci_high)?")
# The gap original - reordered (on the metric's scale, so within its width either way) and that gap less the reference
# model's (within twice its width).
_GAP = re.compile(r"(?P<metric>.+?)_reordered_gap(?P<vs>_vs_reference)?(?:_ci_low|_ci_high)?")
# A rounding margin for an interval's point: a mean and the quantile of equal resamples can differ in the last bit.
_TOLERANCE = 1e-9


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _range_of(metric: str) -> tuple[tuple[float, float], str] | None:
    """The range of a bounded score (and the word for it), or None when the metric's range is unknown."""
    if metric in METRIC_RANGES:
        return METRIC_RANGES[metric], "score"
    if _SHARE.fullmatch(metric):
        return _UNIT, "share"
    if _DCR_FACTOR.fullmatch(metric):
        return _UNIT, "DCR factor"
    gap = _GAP.fullmatch(metric)
    if gap and gap["metric"] in METRIC_RANGES:
        low, high = METRIC_RANGES[gap["metric"]]
        width = (high - low) * (2 if gap["vs"] else 1)
        return (-width, width), "gap"
    same = _SAME_SCALE.fullmatch(metric)
    if same and same["metric"] in METRIC_RANGES:
        return METRIC_RANGES[same["metric"]], "score"
    return None


def number_problem(metric: str, value: Any) -> str | None:
    """Why ``value`` cannot be ``metric`` (None when it can, when the metric's range is unknown, or when it is no
    number to check)."""
    if not is_number(value) or metric.endswith("_stderr"):
        return None
    if _PVALUE.fullmatch(metric):
        if not 0.0 <= value <= 1.0:
            return f"{value!r} is not a p-value (expected a number in [0, 1])"
        return None
    if metric in _COUNT:
        return count_problem(value)
    if metric in _KAPPA and not -1.0 <= value <= 1.0:
        return f"{value!r} is not a kappa (expected a number in [-1, 1])"
    bounded = _range_of(metric)
    if bounded is not None and not bounded[0][0] <= value <= bounded[0][1]:
        (low, high), word = bounded
        return f"{value!r} is not a {word} (expected a number in [{low:g}, {high:g}])"
    return None


def count_problem(value: Any) -> str | None:
    """Why ``value`` is no count (None when it is a non-negative whole number)."""
    if not is_number(value) or not math.isfinite(value) or value < 0 or value != int(value):
        return f"{value!r} is not a count (expected a non-negative whole number)"
    return None


def interval_problems(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(field, why)`` for each interval of a results row (``<point>_ci_low,<filter>`` and ``_ci_high``) whose ends are
    out of order or leave out their point."""
    found = []
    for key, low in row.items():
        name, comma, filtered = str(key).partition(",")
        if not name.endswith("_ci_low") or not is_number(low):
            continue
        point_name = name.removesuffix("_ci_low")
        high_key = f"{point_name}_ci_high{comma}{filtered}"
        high, point = row.get(high_key), row.get(f"{point_name}{comma}{filtered}")
        if not is_number(high):
            continue
        if low > high:
            found.append((key, f"the interval of {point_name} runs from {low!r} down to {high!r} ({high_key})"))
        elif is_number(point) and not low - _TOLERANCE <= point <= high + _TOLERANCE:
            found.append((f"{point_name}{comma}{filtered}",
                          f"{point_name} {point!r} lies outside its own interval [{low!r}, {high!r}]"))
    return found
