"""How detection and false positives of a within-item relabelling test grow with the items per partition: the
validation study's partitions pooled, ``size`` at a time (ours; a power analysis, not a verdict).

A relabelling test's statistic is a sum over items, independent across items under its null
(:mod:`lm_eval_contam.relabelling`), so the test over a pool of partitions has statistic ``sum(T_i)``, null mean
``sum(E_i)`` and null variance ``sum(sd_i ** 2)``. The pooled p-value is the normal tail of that standardised sum
(pools of two or more partitions hold at least 40 items, where the sum of independent bounded terms is close to
normal); a single partition keeps its Monte-Carlo p, the one the study's rates count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scipy import stats

from lm_eval_contam.method_verdict import Verdict
from lm_eval_contam.nullstudy.design import Role
from lm_eval_contam.relabelling import RelabellingEvidence, RelabellingResult
from lm_eval_contam.stats import TestResult

POOL_SIZES = (1, 2, 4, 8)
POOLED_FILE = "pooled_power.md"  # in the study folder, beside validation_rates.md


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


def pooled_rates(labelled: Iterable[tuple[Verdict, Role, str]], tests: Sequence[str],
                 sizes: Sequence[int] = POOL_SIZES) -> list[PooledRate]:
    """Per test, model role and shape: how many pools of ``size`` partitions (same model, role and shape, in label
    order; a last pool of fewer left out) the pooled test flags at the level."""
    groups: dict[tuple[str, Role, str, str], list[tuple[str, RelabellingResult]]] = {}
    for verdict, role, shape in labelled:
        if verdict.test in tests and isinstance(verdict.evidence, RelabellingEvidence):
            groups.setdefault((verdict.test, role, shape, verdict.model), []).append(
                (verdict.partition, verdict.evidence.result))
    found = []
    for (test, role, shape, _), members in sorted(groups.items()):
        ordered = [result for _, result in sorted(members, key=lambda member: member[0])]
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
