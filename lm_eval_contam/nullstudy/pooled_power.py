"""How detection and false positives of a within-item relabelling test grow with the items per partition: the
validation study's partitions pooled, ``size`` at a time (ours; a power analysis, not a verdict).

A relabelling test's statistic is a sum over items, independent across items under its null
(:mod:`lm_eval_contam.core.relabelling`), so the test over a pool of partitions has statistic ``sum(T_i)``, null mean
``sum(E_i)`` and null variance ``sum(sd_i ** 2)``. The pooled p-value is the normal tail of that standardised sum
(pools of two or more partitions hold at least 40 items, where the sum of independent bounded terms is close to
normal); a single partition keeps its Monte-Carlo p, the one the study's rates count.

Eight injected partitions make few pools of many. :func:`projected_rates` reads them as a sample of what a test sees
per injected partition: pools of ``size`` partitions drawn with replacement, the share of them the pooled test flags.
A projection of the detection at ``size`` times the items, under the assumption that a larger partition's items are
like these; it measures nothing the study did not score. Null partitions are not projected: resampling carries their
sample's chance mean forward as if it were a drift (on items whose option order was drawn at random, a model that
never saw them cannot tell the original order, and the test's level holds at any size by construction).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.relabelling import RelabellingEvidence, RelabellingResult
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import ALPHA, TestResult
from lm_eval_contam.nullstudy.design import Role

POOL_SIZES = (1, 2, 4, 8)
POOLED_FILE = "pooled_power.md"  # in the study folder, beside validation_rates.md
PROJECTION_DRAWS = 20_000  # resampled pools per size: the share's standard error is under 0.004
# The smallest p the verdict with a reference needs on multiple choice: Holm's first step over its four tests (the
# three option-order tests on u and the in-context test).
HOLM_FIRST_STEP = ALPHA / 4


@dataclass(frozen=True)
class PooledResult(TestResult):
    """``statistic``: the pool's standardised sum (null SDs above its null mean); ``n``: items pooled."""

    n: int
    partitions: int


def pooled_test(results: Sequence[RelabellingResult]) -> PooledResult:
    """One-sided test over the partitions' items together, from each partition's relabelling result (one partition:
    its own Monte-Carlo p, as the study's per-partition rates count it)."""
    if len(results) == 1:
        (result,) = results
        return PooledResult(statistic=result.standardised, pvalue=result.pvalue, confidence_interval=None, n=result.n,
                            partitions=1)
    spread = math.sqrt(sum(result.null_sd ** 2 for result in results))
    excess = sum(result.statistic - result.expected for result in results)
    z = excess / spread if spread > 0 else 0.0
    return PooledResult(statistic=z, pvalue=float(stats.norm.sf(z)) if spread > 0 else 1.0, confidence_interval=None,
                        n=sum(result.n for result in results), partitions=len(results))


@dataclass(frozen=True)
class PooledRate:
    test: str
    role: Role
    shape: str
    size: int  # partitions per pool
    items: int  # items per pool (the smallest)
    flagged: int
    pools: int
    statistics: tuple[float, ...]  # each pool's standardised statistic (null SDs above its null mean), in order


def projected_share(results: Sequence[RelabellingResult], size: int, *, alpha: float = ALPHA, seed: int = 0,
                    name: str = "", draws: int = PROJECTION_DRAWS) -> float:
    """The share of pools of ``size`` partitions, drawn with replacement from ``results``, that :func:`pooled_test`
    flags at ``alpha`` (``size`` 1: each partition's own p, exactly)."""
    if size == 1:
        return sum(result.significant(alpha) for result in results) / len(results)
    excess = np.array([result.statistic - result.expected for result in results])
    variance = np.array([result.null_sd ** 2 for result in results])
    drawn = rng_for(seed, "projected pools", name, size).integers(len(results), size=(draws, size))
    spread = np.sqrt(variance[drawn].sum(axis=1))
    z = np.divide(excess[drawn].sum(axis=1), spread, out=np.zeros(draws), where=spread > 0)
    return float(np.mean((stats.norm.sf(z) <= alpha) & (spread > 0)))


@dataclass(frozen=True)
class ProjectedRate:
    """A test's projected detection on one shape's injected partitions."""

    test: str
    shape: str
    partitions: int  # the partitions resampled
    items: int  # items per partition (the smallest)
    shares: tuple[tuple[int, float, float], ...]  # (partitions per pool, share flagged at ALPHA, at HOLM_FIRST_STEP)


def _evidence_groups(labelled: Iterable[tuple[Verdict, Role, str]],
                    tests: Sequence[str]) -> list[tuple[tuple[str, Role, str], list[RelabellingEvidence]]]:
    """Each (test, role, shape, model)'s relabelling evidence, in partition-label order."""
    groups: dict[tuple[str, Role, str, str], list[tuple[str, RelabellingEvidence]]] = {}
    for verdict, role, shape in labelled:
        if verdict.test in tests and isinstance(verdict.evidence, RelabellingEvidence):
            groups.setdefault((verdict.test, role, shape, verdict.model), []).append(
                (verdict.partition, verdict.evidence))
    return [((test, role, shape), [evidence for _, evidence in sorted(members, key=lambda member: member[0])])
            for (test, role, shape, _), members in sorted(groups.items())]


def _groups(labelled: Iterable[tuple[Verdict, Role, str]],
            tests: Sequence[str]) -> list[tuple[tuple[str, Role, str], list[RelabellingResult]]]:
    """Each (test, role, shape, model)'s relabelling results, in partition-label order."""
    return [(key, [evidence.result for evidence in found]) for key, found in _evidence_groups(labelled, tests)]


@dataclass(frozen=True)
class PartitionSpread:
    """How one test's standardised statistic spreads over one role and shape's partitions: under its exact null each
    is about standard normal, so a mean away from 0 (the one-sample t) is a shift the null does not explain."""

    test: str
    role: Role
    shape: str
    partitions: int
    mean: float
    sd: float
    t: float
    pvalue: float  # two-sided, of the one-sample t
    slope: float | None  # residualised scores: the mean slope taken out


def partition_spreads(labelled: Iterable[tuple[Verdict, Role, str]], tests: Sequence[str]) -> list[PartitionSpread]:
    """Per test, model role and shape (two partitions or more): the mean, SD and one-sample t of the partitions'
    standardised statistics."""
    found = []
    for (test, role, shape), evidence in _evidence_groups(labelled, tests):
        z = np.array([item.result.standardised for item in evidence])
        if len(z) < 2:
            continue
        tested = stats.ttest_1samp(z, 0.0)
        slopes = [item.slope for item in evidence if item.slope is not None]
        found.append(PartitionSpread(test, role, shape, len(z), float(z.mean()), float(z.std(ddof=1)),
                                     float(tested.statistic), float(tested.pvalue),
                                     float(np.mean(slopes)) if slopes else None))
    return found


def spread_table(spreads: Sequence[PartitionSpread]) -> str:
    lines = ["| test | model: partitions | shape | partitions | mean z | SD | one-sample t | p (two-sided) | mean slope "
             "taken out |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| `{item.test}` | {item.role} | {item.shape} | {item.partitions} | {item.mean:+.2f} | {item.sd:.2f} | "
              f"{item.t:+.2f} | {item.pvalue:.3f} | " + ("—" if item.slope is None else f"{item.slope:+.2f}") + " |"
              for item in spreads]
    return "\n".join(lines) + "\n"


def projected_rates(labelled: Iterable[tuple[Verdict, Role, str]], tests: Sequence[str],
                    sizes: Sequence[int] = POOL_SIZES) -> list[ProjectedRate]:
    """Per test and shape, on the injected partitions: :func:`projected_share` at each pool size, at ALPHA and at
    HOLM_FIRST_STEP."""
    return [ProjectedRate(test, shape, len(results), min(result.n for result in results),
                          tuple((size, *(projected_share(results, size, alpha=alpha, name=f"{test}|{shape}")
                                         for alpha in (ALPHA, HOLM_FIRST_STEP)))
                                for size in sizes))
            for (test, role, shape), results in _groups(labelled, tests) if role == "injected"]


def pooled_rates(labelled: Iterable[tuple[Verdict, Role, str]], tests: Sequence[str],
                 sizes: Sequence[int] = POOL_SIZES) -> list[PooledRate]:
    """Per test, model role and shape: how many pools of ``size`` partitions (same model, role and shape, in label
    order; a last pool of fewer left out) the pooled test flags at the level."""
    found = []
    for (test, role, shape), ordered in _groups(labelled, tests):
        for size in sizes:
            pools = [ordered[start:start + size] for start in range(0, len(ordered) - size + 1, size)]
            if not pools:
                continue
            results = [pooled_test(pool) for pool in pools]
            found.append(PooledRate(test, role, shape, size, min(result.n for result in results),
                                    sum(result.significant() for result in results), len(results),
                                    tuple(result.statistic for result in results)))
    return found


def markdown_table(rates: Sequence[PooledRate]) -> str:
    lines = ["| test | model: partitions | shape | partitions pooled | items per pool | flagged | z of each pool |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| `{rate.test}` | {rate.role} | {rate.shape} | {rate.size} | {rate.items} | {rate.flagged}/{rate.pools} | "
              + " ".join(f"{z:.1f}" for z in rate.statistics) + " |" for rate in rates]
    return "\n".join(lines) + "\n"


def projected_table(rates: Sequence[ProjectedRate]) -> str:
    lines = ["| test | shape | injected partitions resampled | items per partition | share of resampled pools flagged "
             f"at p <= {ALPHA:g} (at p <= {HOLM_FIRST_STEP:.4f}), by partitions per pool |", "|---|---|---|---|---|"]
    lines += [f"| `{rate.test}` | {rate.shape} | {rate.partitions} | {rate.items} | "
              + ", ".join(f"{size}: {share:.0%} ({holm:.0%})" for size, share, holm in rate.shares) + " |"
              for rate in rates]
    return "\n".join(lines) + "\n"
