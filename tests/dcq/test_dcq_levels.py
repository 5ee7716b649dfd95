"""Level and power of our DCQ chance test (the whole published procedure simulated under no memory)."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.methods.dcq.chance import chance_test
from lm_eval_contam.methods.dcq.estimate import InstanceAnswers
from lm_eval_contam.methods.dcq.quiz import LETTERS, POSITIONS

GUESSERS = {"uniform": [0.2] * 5, "A/E-biased": [0.4, 0.1, 0.05, 0.05, 0.4], "B-biased": [0.1, 0.6, 0.1, 0.1, 0.1]}


def level_bound(simulations: int, alpha: float = 0.05) -> float:
    """alpha plus 2.6 Monte-Carlo standard errors (one-sided, about 0.5 % false alarms)."""
    return alpha + 2.6 * np.sqrt(alpha * (1 - alpha) / simulations)


def memory_free_answers(rng: np.random.Generator, n: int, letter_rates: list[float]) -> list[InstanceAnswers]:
    """Every quiz answered from the same letter distribution, whichever slot holds the original."""
    letters = rng.choice(list(LETTERS), size=(n, 1 + len(POSITIONS)), p=letter_rates)
    return [InstanceAnswers(bdq=str(row[0]), bcq=dict(zip(POSITIONS, map(str, row[1:])))) for row in letters]


@pytest.mark.parametrize("guesser", sorted(GUESSERS))
@pytest.mark.parametrize("n", [12, 40, 100])
def test_dcq_chance_test_level_for_memory_free_guessers(guesser: str, n: int) -> None:
    rng = np.random.default_rng(n)
    simulations = 300  # inner K = 200: the MC p of each run is itself valid, (1 + hits) / (1 + K)
    rejections = [chance_test(memory_free_answers(rng, n, GUESSERS[guesser]), n_simulations=200, seed=s).significant()
                  for s in range(simulations)]
    assert np.mean(rejections) <= level_bound(simulations)  # 0.05 + 2.6 * 0.0126 = 0.083


def test_dcq_chance_test_detects_a_model_that_recognises_originals() -> None:
    rng = np.random.default_rng(1)
    answers = memory_free_answers(rng, 40, GUESSERS["uniform"])
    # Half the instances memorised: BCQ-p picks the original in its slot p.
    memorised = [InstanceAnswers(bdq=a.bdq, bcq={p: p for p in POSITIONS}) if i % 2 else a
                 for i, a in enumerate(answers)]
    result = chance_test(memorised, seed=0)
    assert result.significant() and result.chance_max < 0.35 < result.statistic
