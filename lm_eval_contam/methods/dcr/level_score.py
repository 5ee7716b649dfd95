"""A controlled level's score S_i and its test, from each item's Check results on the original and its twin.

Per item the record is ``{"original": r, "control": r}`` with r = 1.0 (the Check
passed: "contaminated"), 0.0, or None (undetermined); the key ``"control"`` holds the item's twin's result (the name
logged samples carry; DCR's twin is no control partition), and an item without a twin (a sheet's static item) has
no ``"control"`` key.

S_i = max(0, mean over decided items of (original − twin)): the pass rate on
the originals minus the pass rate on their twins, floored at 0 like the paper's
scores, which never go below 0. An item without a twin (a static item the sheet
gives none) is its own twin: it adds no evidence (a tie, original − original = 0),
so general knowledge a sheet cannot control never counts as contamination.

The null hypothesis H0: the model holds no memory of the items, so an item's
original and its twin are exchangeable (the result pair (o, c) is distributed
as (c, o)). Under H0 the paired differences are symmetric about 0: the mean
difference is centred at 0, and among the m pairs whose results differ the number
where only the original passed is Binomial(m, 1/2). ``pvalue`` is that exact
one-sided sign (McNemar) test over the items that have a twin; the floor at 0
keeps S_i ≥ 0, so under H0 S_i is 0 in at least half of all runs, and positive
only by chance, by at most the noise of m discordant pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy.stats import binomtest

from lm_eval_contam.core.stats import TestResult

# The fewest decided items a controlled level needs before its score may move the DCR Factor: with n items the
# sign test's smallest p-value is 0.5**n (every original passing, no control), 0.031 at 5 and 0.0625 at 4, so a
# level of fewer than 5 items cannot tell memory from chance at 0.05 however its items come out.
MIN_LEVEL_ITEMS = 5


@dataclass(frozen=True)
class TwinScore(TestResult):
    """A controlled level's S_i (``statistic``), the sign test's ``pvalue``, and the rates behind them.

    ``original_only`` / ``twin_only``: the shares of decided items where only the original / only its twin
    passed (``statistic`` = max(0, original_only − twin_only)); ``n_items``: decided items.
    """

    original_rate: float
    twin_rate: float
    original_only: float
    twin_only: float
    n_items: int


def _result(record: Mapping[str, Any], key: str) -> float | None:
    value = record.get(key)
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def twin_score(records: Sequence[Mapping[str, Any]]) -> TwinScore:
    """S_i and its sign test from the level's per-item records (undetermined items are left out)."""
    pairs: list[tuple[float, float | None]] = []  # (original, twin or None when the item has none)
    for record in records:  # the record keeps the key "control" for the twin's result, as logged samples carry it
        original, twin = _result(record, "original"), _result(record, "control")
        if original is not None and (twin is not None or "control" not in record):
            pairs.append((original, twin))
    if not pairs:
        nan = math.nan
        return TwinScore(statistic=nan, confidence_interval=None, pvalue=nan, original_rate=nan,
                         twin_rate=nan, original_only=nan, twin_only=nan, n_items=0)
    n = len(pairs)
    twinned = [(original, twin) for original, twin in pairs if twin is not None]
    wins = sum(1 for original, twin in twinned if original > twin)
    losses = sum(1 for original, twin in twinned if twin > original)
    discordant = wins + losses
    pvalue = binomtest(wins, discordant, 0.5, alternative="greater").pvalue if discordant else 1.0
    return TwinScore(
        statistic=max(0.0, (wins - losses) / n),
        confidence_interval=None,
        pvalue=float(pvalue),
        original_rate=sum(original for original, _ in pairs) / n,
        twin_rate=(sum(twin for _, twin in twinned) / len(twinned)) if twinned else math.nan,
        original_only=wins / n,
        twin_only=losses / n,
        n_items=n,
    )
