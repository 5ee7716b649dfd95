"""The one check of the numbers read back from lm-eval's results and logged samples, by kind.

A number outside what its kind allows (a p of -0.2 would flag a partition and print "p < 0.0001", an ``acc`` of 1.5
or a DCR factor of 1.7 be printed as a result) comes from a damaged or edited file: it is refused where the file is
read (:mod:`lm_eval_contam.core.rundir`), never rendered. The kind is read from the metric's name (and, for the
likelihood modes' means, the task's method), in one table (:data:`NUMBER_KINDS`):

- a p-value (``p``, ``*_p``, any name holding ``pvalue``): in [0, 1];
- a bounded score: a metric of a known range (:data:`METRIC_RANGES`) and what DCR and the reordered score derive
  from it (``<metric>_adj``, ``<metric>_reordered``, their interval ends), in its range; a metric whose range is
  unknown is left alone;
- a gap between two such scores (``<metric>_reordered_gap``, within its width; less the reference's, twice it);
- a share or rate of the methods (DCQ's, the option-order test's, Time Travel's, DCR's level scores ``s1``-``s4``):
  in [0, 1]; a DCR factor: in [0, 1]; a kappa: in [-1, 1];
- a count (``sample_len``, the methods' item counts, ``truncated_docs``, ``n-samples``): a non-negative whole number;
- a log-likelihood statistic of the likelihood modes (the means they compare): a finite number;
- an interval (``<point>_ci_low`` / ``<point>_ci_high``): its ends ordered, and its point, when the row has it,
  between them.

In a results row a value of a known kind that is no number (a string ``"0.5"``), ±inf, or NaN where the kind has no
"not measured" reading is refused too. Standard errors are left alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Metrics whose values cannot leave their range, whatever the task. f1 is not among them: lm-eval's squadv2 reports
# it in percent (0-100), drop in [0, 1].
METRIC_RANGES: dict[str, tuple[float, float]] = {metric: (0.0, 1.0) for metric in ("acc", "acc_norm", "exact_match")}

LIKELIHOOD_METHOD = "likelihood"  # the method whose rows hold log-likelihood means (the task's metadata names it)


@dataclass(frozen=True)
class NumberKind:
    """A kind of number the report renders: its word, its range, and whether it is whole or may be NaN (a rate of no
    items, a p of a test that could not run: read as "not measured")."""

    word: str
    low: float
    high: float
    whole: bool = False
    may_be_nan: bool = False

    def expected(self) -> str:
        if self.whole:
            return "a non-negative whole number"
        if math.isinf(self.low) and math.isinf(self.high):
            return "a finite number"
        return f"a number in [{self.low:g}, {self.high:g}]"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` cannot be of this kind (None when it can)."""
        if isinstance(value, float) and math.isnan(value):
            return None if self.may_be_nan else f"nan is not a {self.word} (expected {self.expected()})"
        if not is_number(value) or not math.isfinite(value) or not self.low <= value <= self.high or (
                self.whole and value != int(value)):
            return f"{value!r} is not a {self.word} (expected {self.expected()})"
        return None


P_VALUE = NumberKind("p-value", 0.0, 1.0, may_be_nan=True)
SCORE = NumberKind("score", 0.0, 1.0)
SHARE = NumberKind("share", 0.0, 1.0, may_be_nan=True)
LEVEL_SCORE = NumberKind("DCR level score", 0.0, 1.0, may_be_nan=True)
DCR_FACTOR = NumberKind("DCR factor", 0.0, 1.0, may_be_nan=True)
KAPPA = NumberKind("kappa", -1.0, 1.0, may_be_nan=True)
COUNT = NumberKind("count", 0.0, math.inf, whole=True)
LOG_LIKELIHOOD = NumberKind("log-likelihood statistic", -math.inf, math.inf, may_be_nan=True)


def _gap(width: float, vs_reference: bool) -> NumberKind:
    return NumberKind("gap", -width * (2 if vs_reference else 1), width * (2 if vs_reference else 1))


_PVALUE = re.compile(r"p|.*_p|.*pvalue.*")
# The project's own shares and rates (DCQ's, the option-order test's, Time Travel's, the in-context score).
_SHARE = re.compile(r"dcq_(?:max|min|max_ci_low|max_ci_high|chance_max|unparseable|top_letter_share|bdq_.+|bcq_.+"
                    r"|non_preferred_.+)"
                    r"|order_(?:top_share|u_mean)|codec_score|rougeL_(?:guided|general)|alg[12]_contaminated")
_LEVEL_SCORE = re.compile(r"s[1-4]")
_DCR_FACTOR = re.compile(r"dcr_factor(?:_ci_low|_ci_high)?")
_COUNT = re.compile(r"sample_len|order_items|exact_matches|near_exact_matches|pairing_groups|sentence_order_items"
                    r"|truncated_docs|.+_reordered(?:_gap_vs_reference)?_items")
_KAPPA = re.compile(r"dcq_kappa")
# The likelihood modes' means and their differences, on the log-likelihood scale (any finite number).
_LOG_LIKELIHOOD = re.compile(r"(?:original|control)(?:_only)?|lift_(?:own|other)|(?:per_byte|zlib|gap)_(?:partition|control)")
# <metric><suffix>: a score on the metric's own scale (the DCR-adjusted score, the reordered one, their intervals).
_SAME_SCALE = re.compile(r"(?P<metric>.+?)_(?:adj|reordered|reordered_original)(?:_ci_low|_ci_high)?")
# The gap original - reordered (on the metric's scale, so within its width either way) and that gap less the reference
# model's (within twice its width).
_GAP = re.compile(r"(?P<metric>.+?)_reordered_gap(?P<vs>_vs_reference)?(?:_ci_low|_ci_high)?")
# A rounding margin for an interval's point: a mean and the quantile of equal resamples can differ in the last bit.
_TOLERANCE = 1e-9

# Every kind the report renders, found by the metric's name in this order (the first match is its kind); a name
# matching none (a benchmark metric of unknown range, a standard error) is left alone.
NUMBER_KINDS: tuple[tuple[re.Pattern[str], NumberKind], ...] = (
    (_PVALUE, P_VALUE), (_COUNT, COUNT), (_KAPPA, KAPPA), (_SHARE, SHARE), (_LEVEL_SCORE, LEVEL_SCORE),
    (_DCR_FACTOR, DCR_FACTOR))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def kind_of(metric: str, method: str | None = None) -> NumberKind | None:
    """The kind of ``metric`` (``method``: the task's, which tells the likelihood modes' means from DCR's rates of the
    same name), or None when its kind or range is unknown."""
    if metric.endswith("_stderr"):
        return None
    for pattern, kind in NUMBER_KINDS:
        if pattern.fullmatch(metric):
            return kind
    if metric in METRIC_RANGES:
        return SCORE
    gap = _GAP.fullmatch(metric)
    if gap and gap["metric"] in METRIC_RANGES:
        low, high = METRIC_RANGES[gap["metric"]]
        return _gap(high - low, bool(gap["vs"]))
    same = _SAME_SCALE.fullmatch(metric)
    if same and same["metric"] in METRIC_RANGES:
        return SCORE
    if method == LIKELIHOOD_METHOD and _LOG_LIKELIHOOD.fullmatch(metric):
        return LOG_LIKELIHOOD
    return None


def number_problem(metric: str, value: Any, method: str | None = None) -> str | None:
    """Why a number cannot be ``metric`` (None when it can, when the metric's kind is unknown, or when ``value`` is
    no number: a logged sample's record, which its reader checks)."""
    kind = kind_of(metric, method)
    if kind is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return kind.problem(value)


def row_value_problem(metric: str, value: Any, method: str | None = None) -> str | None:
    """Why a results row's ``value`` cannot be ``metric``: :func:`number_problem`, and a value of a known kind that is
    no number at all (a string, a list; null is a value not computed, read as missing)."""
    kind = kind_of(metric, method)
    if kind is None or value is None:
        return None
    return kind.problem(value)


def count_problem(value: Any) -> str | None:
    """Why ``value`` is no count (None when it is a non-negative whole number)."""
    return COUNT.problem(value)


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
