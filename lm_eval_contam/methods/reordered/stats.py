"""The reordered score, its paired interval and the exact test of the original order (pure).

Per item i: ``o_i`` is its 0/1 score in the original order, ``r_i`` the mean of its scores over its ``K_i``
reorderings (``r_i = o_i`` for an item kept in its original order, ``K_i = 0``), ``d_i = o_i - r_i``.

- ``acc_reordered`` = mean of ``r_i``; the gap = mean of ``d_i`` = the original-order accuracy minus ``acc_reordered``.
- Their 95 % intervals: percentile bootstrap over items (the same resampled items for both: paired), seeded.
- The p-value: H0 "the original order is exchangeable with the item's reorderings" (the model never saw which order is
  the benchmark's), independently across items. Under H0, given the multiset of an item's K_i + 1 scores, the original
  is any one of them with probability 1 / (K_i + 1); an item with ``s_i`` correct of ``K_i + 1`` then has
  ``o_i ~ Bernoulli(s_i / (K_i + 1))``, and the statistic ``T = sum d_i`` is a sum of independent scaled binomials,
  one per (K, s) type. Its null distribution is computed exactly (a convolution on the integer grid of
  ``lcm(K_i) * T``); the one-sided ``p = P(T >= t_observed)`` asks whether the original order scores above its
  reorderings, which is what a memorised answer position predicts. (A sign-flip test on ``d_i`` is exact only for
  K = 1: with K > 1 and one correct form of three, ``d_i`` is +1 with probability 1/3 and -1/2 with 2/3, not symmetric.)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import signal
from scipy import stats as scipy_stats

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import ConfidenceInterval, percentile_interval

N_RESAMPLES = 2000
BOOTSTRAP_CELLS = 4_000_000  # item draws held at once by the bootstrap (32 MB of indices)
# Above this many grid points per convolution the null distribution is convolved by FFT (its error, ~1e-15 of the
# largest probability, is far below any p-value the report prints).
DIRECT_CONVOLUTION = 200_000


@dataclass(frozen=True)
class ItemScores:
    """One item's 0/1 scores: ``original`` in the benchmark's order, ``reordered`` in each of its reorderings."""

    item: int
    original: float
    reordered: tuple[float, ...]

    @property
    def reordered_mean(self) -> float:
        return float(np.mean(self.reordered)) if self.reordered else self.original


@dataclass(frozen=True)
class ReorderedScore:
    """``original``: accuracy in the benchmark's order (as the reordered task scored it); ``reordered``:
    ``acc_reordered``; ``gap``: original - reordered; their paired 95 % bootstrap intervals; ``pvalue``: the exact
    one-sided test of H0 (original order exchangeable with the reorderings); ``n_items``, ``n_reordered`` (items with
    at least one reordering) and ``reorderings`` (the most per item)."""

    original: float
    reordered: float
    reordered_interval: ConfidenceInterval
    gap: float
    gap_interval: ConfidenceInterval
    pvalue: float
    n_items: int
    n_reordered: int
    reorderings: int


def item_scores(records: Iterable[Mapping[str, object]]) -> list[ItemScores]:
    """Group per-form records ``{"item", "order", "correct"}`` (order 0: the original) into items, by item index.

    Every item needs exactly one original-order record and distinct reordering numbers; anything else is a
    ContamError naming the item.
    """
    originals: dict[int, float] = {}
    others: dict[int, dict[int, float]] = {}
    for record in records:
        item, order, correct = int(record["item"]), int(record["order"]), float(record["correct"])  # type: ignore[arg-type]
        if correct not in (0.0, 1.0):
            raise ContamError(f"item {item}, order {order}: score {correct!r} is not 0 or 1", field="correct")
        if order == 0:
            if item in originals:
                raise ContamError(f"item {item} has two original-order records", field="order")
            originals[item] = correct
        else:
            forms = others.setdefault(item, {})
            if order in forms:
                raise ContamError(f"item {item} has two records of reordering {order}", field="order")
            forms[order] = correct
    orphans = sorted(set(others) - set(originals))
    if orphans:
        raise ContamError(f"item {orphans[0]} has reorderings but no original-order record", field="order")
    return [ItemScores(item, originals[item], tuple(others.get(item, {})[k] for k in sorted(others.get(item, {}))))
            for item in sorted(originals)]


def _scaled_binomial(count: int, success: float, step: int, offset: int) -> tuple[np.ndarray, int]:
    """The pmf of ``step * B - offset`` with ``B ~ Binomial(count, success)`` on an integer grid, and its first point."""
    pmf = scipy_stats.binom.pmf(np.arange(count + 1), count, success)
    grid = np.zeros(step * count + 1)
    grid[::step] = pmf
    return grid, -offset


def exchangeable_pvalue(items: Sequence[ItemScores]) -> float:
    """The exact one-sided p of ``T = sum_i (o_i - r_i)`` under H0 (see the module docstring): ``P(T >= t)``."""
    informative = [item for item in items if item.reordered]
    if not informative:
        return 1.0
    scale = math.lcm(*(len(item.reordered) for item in informative))
    observed = sum(round(scale * (item.original - item.reordered_mean)) for item in informative)
    types = Counter((len(item.reordered), int(item.original + sum(item.reordered))) for item in informative)
    pmf, start = np.ones(1), 0
    for (k, correct), count in sorted(types.items()):
        if correct in (0, k + 1):  # every form scores the same: the item adds 0 whatever its original is
            continue
        # scale * d_i = (scale / k) * ((k + 1) * o_i - s_i): a binomial count of originals that are correct, scaled
        part, first = _scaled_binomial(count, correct / (k + 1), (scale // k) * (k + 1), (scale // k) * correct * count)
        pmf = (np.convolve(pmf, part) if len(pmf) * len(part) <= DIRECT_CONVOLUTION
               else np.clip(signal.fftconvolve(pmf, part), 0.0, None))
        start += first
    index = observed - start
    if index <= 0:
        return 1.0
    return float(min(1.0, pmf[index:].sum())) if index < len(pmf) else 0.0


def _blocks(rows: int, columns: int) -> Iterable[tuple[int, int]]:
    """(start, stop) of row blocks of a ``rows`` x ``columns`` draw holding at most ``BOOTSTRAP_CELLS`` cells: memory
    bounded at any n (drawn block by block, a generator gives the same values as in one draw)."""
    chunk = max(1, BOOTSTRAP_CELLS // max(columns, 1))
    return ((start, min(rows, start + chunk)) for start in range(0, rows, chunk))


def _resampled_means(columns: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Each row of ``columns`` (one value per item) averaged over ``n_resamples`` bootstrap draws of the items, the
    same draw for every row (paired): shape (rows, n_resamples)."""
    found = np.empty((columns.shape[0], n_resamples))
    for start, stop in _blocks(n_resamples, columns.shape[1]):
        draws = rng.integers(columns.shape[1], size=(stop - start, columns.shape[1]))
        for row, values in enumerate(columns):
            found[row, start:stop] = values[draws].mean(axis=1)
    return found


def reordered_score(items: Sequence[ItemScores], *, n_resamples: int = N_RESAMPLES, seed: int = 0,
                    name: str = "") -> ReorderedScore:
    """acc_reordered, the gap, their paired bootstrap intervals (items resampled together) and the exact p."""
    if not items:
        raise ContamError("no items scored: no acc_reordered", source=name or None, field="items")
    if n_resamples < 1:
        raise ContamError(f"n_resamples is {n_resamples}; expected >= 1", field="n_resamples")
    original = np.array([item.original for item in items])
    reordered = np.array([item.reordered_mean for item in items])
    gaps = original - reordered
    resampled_scores, resampled_gaps = _resampled_means(np.stack([reordered, gaps]), n_resamples,
                                                        rng_for(seed, "reordered-bootstrap", name))
    return ReorderedScore(
        original=float(original.mean()), reordered=float(reordered.mean()),
        reordered_interval=percentile_interval(resampled_scores),
        gap=float(gaps.mean()), gap_interval=percentile_interval(resampled_gaps),
        pvalue=exchangeable_pvalue(items), n_items=len(items),
        n_reordered=sum(bool(item.reordered) for item in items),
        reorderings=max((len(item.reordered) for item in items), default=0))


SIGN_FLIPS = 10_000  # Monte Carlo sign flips of the reference-differenced gap's p


@dataclass(frozen=True)
class ReferenceGap:
    """The audited model's gap less the reference model's on the same items (paired per item): ``gap``, its 95 %
    bootstrap interval and a one-sided sign-flip p (H0: per item, the two models' gaps are exchangeable);
    ``n_items``: the items both scored."""

    gap: float
    gap_interval: ConfidenceInterval
    pvalue: float
    n_items: int


def reference_gap_score(items: Sequence[ItemScores], reference: Sequence[ItemScores], *,
                        n_resamples: int = N_RESAMPLES, sign_flips: int = SIGN_FLIPS, seed: int = 0,
                        name: str = "") -> ReferenceGap:
    """``d_i - d_ref_i`` averaged over the items both models scored (``d = original - mean of reorderings``): a
    position habit both models share cancels item by item. The interval resamples items; the p flips each item's
    sign at random (the models swapped on that item), ``(1 + #{flipped mean >= observed}) / (1 + sign_flips)``."""
    theirs = {item.item: item.original - item.reordered_mean for item in reference}
    shared = [item for item in items if item.item in theirs]
    if not shared:
        raise ContamError("no item scored by both the model and its reference", source=name or None, field="items")
    diffs = np.array([item.original - item.reordered_mean - theirs[item.item] for item in shared])
    observed = float(diffs.mean())
    resampled = _resampled_means(diffs[np.newaxis], n_resamples, rng_for(seed, "reordered-reference-bootstrap", name))
    signs_rng = rng_for(seed, "reordered-reference-signs", name)
    reached = sum(int(np.sum((signs_rng.choice((-1.0, 1.0), size=(stop - start, len(diffs))) * diffs).mean(axis=1)
                             >= observed - 1e-12)) for start, stop in _blocks(sign_flips, len(diffs)))
    return ReferenceGap(observed, percentile_interval(resampled[0]), float((1 + reached) / (1 + sign_flips)),
                        len(diffs))
