"""A valid significance test for the DCQ range's ``max`` (ours): the whole procedure simulated under no memory.

The published procedure picks p* after seeing the BCQ hits (the best of up to
four non-preferred positions), so a McNemar test at p* as if p* were fixed in
advance rejects a memory-free guesser far more often than 5 %. Here the whole
procedure (non-preferred positions from the BDQ, p* = the position with the most
BCQ hits, ``max`` = its hit rate) is re-run on partitions drawn under the null.

Null (no memory): a model that cannot tell the original from its perturbations
answers every quiz from the same letter distribution: its answers depend on the
quiz layout (five slots), not on which slot holds the original. So the BDQ picks
of the n instances are Multinomial(n, pi) and the BCQ-p hits Binomial(n, pi_p),
independent across quizzes. pi is estimated under that null:

* BDQ: the observed BDQ frequencies of A..E and of unparseable replies (the
  procedure reads its non-preferred positions from these counts);
* pi_p for BCQ-p: the share of answers "p" over the 4n quizzes whose slot p does
  NOT hold the original (the BDQ and BCQ-q, q != p). Under the null every quiz has
  the same pi, so these estimate pi_p from four times the data of BCQ-p alone, and
  a model that does remember the original cannot inflate its own null: hits in
  BCQ-p never enter pi_p.

p = (1 + #{simulated max >= observed max}) / (K + 1); the mean simulated ``max``
is the chance level, what a memory-free model with the same BDQ picks scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import TestResult
from lm_eval_contam.methods.dcq.estimate import InstanceAnswers, preferred_threshold
from lm_eval_contam.methods.dcq.quiz import LETTERS, POSITIONS

DEFAULT_SIMULATIONS = 2_000


@dataclass(frozen=True)
class ChanceTestResult(TestResult):
    """``statistic`` is the observed ``max``; ``pvalue`` the Monte-Carlo p of the whole procedure under no memory.

    ``confidence_interval`` is None (a test, not an interval); ``chance_max`` is
    the mean ``max`` of the simulated memory-free partitions.
    """

    chance_max: float
    n_simulations: int

    @property
    def above_chance(self) -> float:
        return self.statistic - self.chance_max


def null_letter_rates(answers: Sequence[InstanceAnswers]) -> tuple[np.ndarray, np.ndarray]:
    """(BDQ rates of A..E then unparseable, BCQ-p hit rate pi_p of A..D) estimated under the null (module docstring)."""
    n = len(answers)
    bdq = np.array([sum(a.bdq == letter for a in answers) for letter in LETTERS], dtype=float)
    bdq_rates = np.append(bdq, n - bdq.sum()) / n
    hit_rates = np.array([
        (bdq[slot] + sum(a.bcq[q] == p for a in answers for q in POSITIONS if q != p)) / (len(POSITIONS) * n)
        for slot, p in enumerate(POSITIONS)
    ])
    return bdq_rates, hit_rates


def simulated_max(bdq_counts: np.ndarray, bcq_hits: np.ndarray, n: int) -> np.ndarray:
    """The published ``max`` of many partitions at once: the most BCQ hits among non-preferred positions, over n.

    ``bdq_counts`` (K, 4) BDQ picks of A..D, ``bcq_hits`` (K, 4) BCQ-A..D hits. As in
    :func:`~lm_eval_contam.methods.dcq.estimate.non_preferred_positions`, when no position is
    non-preferred all four are; the tie-break of p* does not change the ``max``.
    """
    non_preferred = bdq_counts < preferred_threshold(n)
    non_preferred[~non_preferred.any(axis=1)] = True
    return np.where(non_preferred, bcq_hits, -1).max(axis=1) / n


def chance_test(
    answers: Sequence[InstanceAnswers], *, n_simulations: int = DEFAULT_SIMULATIONS, seed: int = 0
) -> ChanceTestResult:
    """Monte-Carlo test of the observed ``max`` against memory-free partitions of the same n (module docstring).

    ``answers`` must carry BCQ answers for all four positions (as the task issues them).
    """
    if not answers:
        raise ContamError("no instances answered", field="answers")
    if n_simulations < 1:
        raise ContamError(f"n_simulations must be >= 1, got {n_simulations!r}", field="n_simulations")
    if any(set(a.bcq) != set(POSITIONS) for a in answers):
        raise ContamError("the chance test needs BCQ answers for all of A-D on every instance", field="answers")
    n = len(answers)
    bdq_counts = np.array([[sum(a.bdq == p for a in answers) for p in POSITIONS]])
    bcq_hits = np.array([[sum(a.bcq[p] == p for a in answers) for p in POSITIONS]])
    observed = float(simulated_max(bdq_counts, bcq_hits, n)[0])
    bdq_rates, hit_rates = null_letter_rates(answers)
    rng = rng_for(seed, "dcq-chance", n)
    null_bdq = rng.multinomial(n, bdq_rates, size=n_simulations)[:, : len(POSITIONS)]
    null_hits = rng.binomial(n, hit_rates, size=(n_simulations, len(POSITIONS)))
    null_max = simulated_max(null_bdq, null_hits, n)
    at_least = int(np.sum(null_max >= observed))  # both are hits / n, computed alike: ties compare equal
    return ChanceTestResult(
        statistic=observed,
        confidence_interval=None,
        pvalue=(1 + at_least) / (n_simulations + 1),
        chance_max=float(null_max.mean()),
        n_simulations=n_simulations,
    )
