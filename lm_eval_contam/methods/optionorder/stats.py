"""The option-order rank test (ours, after Ni et al.): is the original order more likely than its permutations?

Per item, the original order and ``m`` comparator orders are scored; ``rank`` is 1 when the original is the most
likely, ``m + 1`` when it is the least (ties broken at random, seeded). H0: the model never saw the item, and its
original order is one it could not tell from the admissible others, so the rank is uniform on 1..m+1 and ranks of
different items are independent. The statistic is the mean of ``u = (m + 1 - rank) / m`` (1: original on top); its
exact null distribution is the convolution of the items' discrete uniforms, so the p-value is exact at any n.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.relabelling import RelabellingResult, arrangement_test
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import TestResult


@dataclass(frozen=True)
class OrderRankResult(TestResult):
    """``statistic``: mean ``u`` (0.5 expected under H0); ``top_share``: items whose original order is the most
    likely (``1 / (m + 1)`` expected under H0); ``n``: items tested."""

    n: int
    top_share: float


def original_rank(original: float, comparators: Sequence[float], *, seed: int, identity: str) -> int:
    """1 + the comparators scored above the original, plus a seeded uniform share of the ties."""
    above = sum(score > original for score in comparators)
    ties = sum(score == original for score in comparators)
    return 1 + above + (int(rng_for(seed, "optionorder-ties", identity).integers(ties + 1)) if ties else 0)


def rank_test(ranks: Sequence[int], sizes: Sequence[int]) -> OrderRankResult:
    """One-sided exact test of the items' ranks (``sizes``: orders scored per item, m + 1 >= 2)."""
    if len(ranks) != len(sizes) or not ranks:
        raise ContamError(f"need one size per rank and at least one item, got {len(ranks)} and {len(sizes)}",
                          field="ranks")
    if any(size < 2 or not 1 <= rank <= size for rank, size in zip(ranks, sizes)):
        raise ContamError(f"ranks must lie in 1..size with size >= 2, got {list(zip(ranks, sizes))}", field="ranks")
    # u_i = k_i / m_i on a common grid of 1/L (L the lcm of the m_i): integers, so the convolution is exact.
    scale = math.lcm(*(size - 1 for size in sizes))
    distribution = np.array([1.0])
    observed = 0
    for rank, size in zip(ranks, sizes):
        m = size - 1
        step = scale // m
        item = np.zeros(scale + 1)
        item[::step] = 1.0 / size
        distribution = np.convolve(distribution, item)
        observed += (size - rank) * step
    pvalue = float(min(1.0, distribution[observed:].sum()))
    statistic = float(Fraction(observed, scale * len(ranks)))
    return OrderRankResult(statistic=statistic, pvalue=pvalue, confidence_interval=None, n=len(ranks),
                           top_share=sum(rank == 1 for rank in ranks) / len(ranks))


@dataclass(frozen=True)
class OrderStatistics:
    """A partition's option-order tests on one model's scores: the rank test (the original among ``orders``) and the
    arrangement test (the original's standardised score among every arrangement scored, :mod:`~.relabelling`)."""

    rank: OrderRankResult
    arrangement: RelabellingResult | None  # None where only the rank test's orders were scored


def arranged_scores(record: Mapping[str, Any], scores: Sequence[float] | None = None, *,
                    subset: str = "arranged") -> list[float]:
    """An item's scores (its own, or ``scores`` such as ``u``) of the arrangement tests' texts, the original first;
    ``subset`` "fixed": of the orders that keep the gold answer at its letter."""
    values = record["scores"] if scores is None else scores
    return [float(values[number]) for number in record[subset]]


def order_statistics(records: Sequence[Mapping[str, Any]], *, seed: int, name: str) -> OrderStatistics:
    arranged = [arranged_scores(record) for record in records if record["arranged"]]
    return OrderStatistics(rank_test([int(r["rank"]) for r in records], [int(r["orders"]) for r in records]),
                           arrangement_test(arranged, seed=seed, name=name) if arranged else None)
