"""The DCQ contamination range, exactly as the official implementation computes it.

n instances; b_x = BDQ picks of letter x; position x in A-D is *non-preferred*
iff b_x < ceil(n/5) (none qualifies -> all four). c_p = BCQ-p picks of p.
Non-preferred positions are ordered by c_p descending, ties by lower b_p (then
letter order); p* is the first and p2 the second:

    max   = c_{p*} / n
    kappa = (c_{p*} - b_{p*}) / (n - b_{p*})
    min   = max(kappa, c_{p2} / n)      (kappa when only one position qualifies)

Beyond the paper: a Wilson interval for ``max`` and a one-sided exact McNemar
test that p* is picked more often in BCQ-p* than in the BDQ (paired over
instances). From counts alone the pairing is unknown, so
:func:`estimate_from_counts` reports the largest McNemar p-value over every
pairing the counts allow (a conservative bound); :func:`estimate` pairs exactly.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.stats import ConfidenceInterval, TestResult
from lm_eval_contam.methods.dcq.quiz import LETTERS, POSITIONS


@dataclass(frozen=True)
class InstanceAnswers:
    """One instance's parsed quiz answers: the BDQ letter and the letter of each BCQ read (None = unparseable)."""

    bdq: str | None
    bcq: Mapping[str, str | None]


@dataclass(frozen=True)
class DCQEstimate(TestResult):
    """The contamination range [min, max] of one partition, with its evidence.

    ``statistic`` is ``max`` (the paper's upper bound) and ``confidence_interval``
    its Wilson interval. Fractions are in [0, 1]. ``non_preferred`` lists the
    non-preferred positions in letter order, ``ranking`` the same positions in the
    order the estimate reads them (p* first). ``pvalue_paired`` tells whether
    ``pvalue`` is the exact paired McNemar p-value (per-instance answers) or its
    conservative bound from counts.
    """

    min: float
    kappa: float
    non_preferred: tuple[str, ...]
    ranking: tuple[str, ...]
    best_position: str
    n: int
    bdq_counts: Mapping[str, int]
    bcq_correct: Mapping[str, int]
    pvalue_paired: bool
    unparseable: int = 0  # replies (over all quizzes) that gave no letter

    @property
    def max(self) -> float:
        return self.statistic


def preferred_threshold(n: int) -> int:
    """A position is non-preferred when the BDQ picks it fewer than ceil(n/5) times."""
    return math.ceil(n / 5)


def non_preferred_positions(bdq_counts: Mapping[str, int], n: int) -> tuple[str, ...]:
    threshold = preferred_threshold(n)
    chosen = tuple(p for p in POSITIONS if bdq_counts.get(p, 0) < threshold)
    return chosen or POSITIONS


def rank_positions(
    positions: Sequence[str], bdq_counts: Mapping[str, int], bcq_correct: Mapping[str, int]
) -> tuple[str, ...]:
    """Positions by BCQ hits descending, ties by fewer BDQ picks, then letter order."""
    return tuple(sorted(positions, key=lambda p: (-bcq_correct[p], bdq_counts.get(p, 0), p)))


def wilson_interval(successes: int, n: int, confidence_level: float = 0.95) -> ConfidenceInterval:
    interval = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence_level, method="wilson")
    return ConfidenceInterval(float(interval.low), float(interval.high), confidence_level)


def mcnemar_one_sided(bcq_only: int, bdq_only: int) -> float:
    """P(X >= bcq_only), X ~ Binomial(bcq_only + bdq_only, 1/2): exact one-sided McNemar."""
    discordant = bcq_only + bdq_only
    if discordant == 0:
        return 1.0
    return float(stats.binom.sf(bcq_only - 1, discordant, 0.5))


def mcnemar_bound_from_counts(hits: int, bdq_picks: int, n: int) -> float:
    """The largest one-sided McNemar p-value over all pairings of ``hits`` BCQ hits with ``bdq_picks`` BDQ picks."""
    both = np.arange(max(0, hits + bdq_picks - n), min(hits, bdq_picks) + 1)
    bcq_only, bdq_only = hits - both, bdq_picks - both
    discordant = bcq_only + bdq_only
    pvalues = np.where(discordant == 0, 1.0, stats.binom.sf(bcq_only - 1, np.maximum(discordant, 1), 0.5))
    return float(pvalues.max())


def _check_counts(bdq_counts: Mapping[str, int], bcq_correct: Mapping[str, int], n: int) -> None:
    if not isinstance(n, int) or n < 1:
        raise ContamError(f"n must be a positive integer, got {n!r}", field="n")
    for name, counts, letters in (("bdq_counts", bdq_counts, LETTERS), ("bcq_correct", bcq_correct, POSITIONS)):
        for letter, count in counts.items():
            if letter not in letters:
                raise ContamError(f"unknown letter {letter!r}; expected one of {', '.join(letters)}", field=name)
            if not isinstance(count, (int, np.integer)) or not 0 <= count <= n:
                raise ContamError(f"count for {letter!r} must be an integer in 0..{n}, got {count!r}", field=name)
    if sum(bdq_counts.values()) > n:
        raise ContamError(f"BDQ picks sum to {sum(bdq_counts.values())} > n = {n}", field="bdq_counts")


def _range(
    bdq_counts: Mapping[str, int], bcq_correct: Mapping[str, int], n: int
) -> tuple[tuple[str, ...], tuple[str, ...], float, float, float]:
    non_preferred = non_preferred_positions(bdq_counts, n)
    missing = [p for p in non_preferred if p not in bcq_correct]
    if missing:
        raise ContamError(
            f"no BCQ results for non-preferred position(s) {', '.join(missing)}", field="bcq_correct"
        )
    ranking = rank_positions(non_preferred, bdq_counts, bcq_correct)
    best = ranking[0]
    b_best = bdq_counts.get(best, 0)
    upper = bcq_correct[best] / n
    kappa = (bcq_correct[best] - b_best) / (n - b_best)
    lower = max(kappa, bcq_correct[ranking[1]] / n) if len(ranking) > 1 else kappa
    return non_preferred, ranking, lower, upper, kappa


def estimate_from_counts(
    *,
    bdq_counts: Mapping[str, int],
    bcq_correct: Mapping[str, int],
    n: int,
    confidence_level: float = 0.95,
    unparseable: int = 0,
) -> DCQEstimate:
    """The DCQ range from BDQ pick counts (over "A".."E") and BCQ hit counts of the positions read.

    ``bcq_correct`` must cover every non-preferred position; BDQ replies that gave
    no letter are simply absent from ``bdq_counts`` and still count in ``n``.
    """
    _check_counts(bdq_counts, bcq_correct, n)
    bdq = {letter: int(bdq_counts.get(letter, 0)) for letter in LETTERS}
    bcq = {p: int(count) for p, count in bcq_correct.items()}
    non_preferred, ranking, lower, upper, kappa = _range(bdq, bcq, n)
    best = ranking[0]
    return DCQEstimate(
        min=lower,
        statistic=upper,
        kappa=kappa,
        non_preferred=non_preferred,
        ranking=ranking,
        best_position=best,
        n=n,
        bdq_counts=bdq,
        bcq_correct=bcq,
        confidence_interval=wilson_interval(bcq[best], n, confidence_level),
        pvalue=mcnemar_bound_from_counts(bcq[best], bdq[best], n),
        pvalue_paired=False,
        unparseable=unparseable,
    )


def estimate(answers: Sequence[InstanceAnswers], *, confidence_level: float = 0.95) -> DCQEstimate:
    """The DCQ range from per-instance answers, with the exact paired McNemar p-value.

    Every instance must carry BCQ answers for the same positions; a None answer
    (unparseable reply) counts as wrong and stays in n.
    """
    if not answers:
        raise ContamError("no instances answered", field="answers")
    positions = set(answers[0].bcq)
    for index, answer in enumerate(answers):
        if set(answer.bcq) != positions:
            raise ContamError(
                f"instance {index} has BCQ positions {sorted(answer.bcq)}, expected {sorted(positions)}",
                field="answers",
            )
        for letter in (answer.bdq, *answer.bcq.values()):
            if letter is not None and letter not in LETTERS:
                raise ContamError(f"instance {index}: answer {letter!r} is not a letter A-E", field="answers")
    n = len(answers)
    bdq_counts = {letter: sum(a.bdq == letter for a in answers) for letter in LETTERS}
    bcq_correct = {p: sum(a.bcq[p] == p for a in answers) for p in sorted(positions)}
    unparseable = sum(a.bdq is None for a in answers) + sum(v is None for a in answers for v in a.bcq.values())
    counted = estimate_from_counts(
        bdq_counts=bdq_counts,
        bcq_correct=bcq_correct,
        n=n,
        confidence_level=confidence_level,
        unparseable=unparseable,
    )
    best = counted.best_position
    bcq_only = sum(a.bcq[best] == best and a.bdq != best for a in answers)
    bdq_only = sum(a.bcq[best] != best and a.bdq == best for a in answers)
    return dataclasses.replace(counted, pvalue=mcnemar_one_sided(bcq_only, bdq_only), pvalue_paired=True)


def top_letter_share(answers: Sequence[InstanceAnswers]) -> float:
    """The share of all answers (every BDQ and BCQ read) that are the single most common letter.

    An unparseable answer counts in the denominator, as no letter. At 1.0 every quiz got the same letter: only the BCQ
    holding the original in that letter's slot can hit (none for E), and the BDQ, picking it every time, makes that slot
    preferred, so ``max`` is 0 and the chance test's p is 1 whatever the model remembers.
    """
    if not answers:
        raise ContamError("no instances answered", field="answers")
    letters = [letter for answer in answers for letter in (answer.bdq, *answer.bcq.values())]
    counts = Counter(letter for letter in letters if letter is not None)
    return max(counts.values(), default=0) / len(letters)
