"""The DCQ range: both published worked checks, edge cases, interval and p-value."""

from __future__ import annotations

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcq import InstanceAnswers, estimate, estimate_from_counts
from lm_eval_contam.methods.dcq.chance import chance_test
from lm_eval_contam.methods.dcq.estimate import top_letter_share

GSM8K_BDQ = {"A": 44, "B": 2, "C": 1, "D": 1, "E": 52}
GSM8K_BCQ = {"B": 55, "C": 69, "D": 79}
SAMSUM_BDQ = {"A": 15, "B": 3, "C": 1, "D": 4, "E": 77}
SAMSUM_BCQ = {"A": 77, "B": 69, "C": 74, "D": 77}


def answers_from_counts(bdq_counts: dict[str, int], bcq_correct: dict[str, int], n: int) -> list[InstanceAnswers]:
    """Per-instance answers with exactly these marginals (BCQ misses answer "E")."""
    bdq = [letter for letter, count in bdq_counts.items() for _ in range(count)]
    bdq += [None] * (n - len(bdq))
    return [
        InstanceAnswers(bdq=bdq[i], bcq={p: (p if i < hits else "E") for p, hits in bcq_correct.items()})
        for i in range(n)
    ]


def percent(value: float) -> str:
    return f"{100 * value:.2f}"


@pytest.mark.parametrize("from_answers", [False, True])
def test_gsm8k_train_worked_check(from_answers: bool) -> None:
    result = (
        estimate(answers_from_counts(GSM8K_BDQ, GSM8K_BCQ, 100))
        if from_answers
        else estimate_from_counts(bdq_counts=GSM8K_BDQ, bcq_correct=GSM8K_BCQ, n=100)
    )
    assert (percent(result.min), percent(result.max)) == ("78.79", "79.00")
    assert result.non_preferred == ("B", "C", "D")
    assert result.ranking == ("D", "C", "B")
    assert result.kappa == pytest.approx(78 / 99)


@pytest.mark.parametrize("from_answers", [False, True])
def test_samsum_test_worked_check(from_answers: bool) -> None:
    result = (
        estimate(answers_from_counts(SAMSUM_BDQ, SAMSUM_BCQ, 100))
        if from_answers
        else estimate_from_counts(bdq_counts=SAMSUM_BDQ, bcq_correct=SAMSUM_BCQ, n=100)
    )
    assert (percent(result.min), percent(result.max)) == ("77.00", "77.00")
    assert result.non_preferred == ("A", "B", "C", "D")  # every position has < ceil(100/5) = 20 BDQ picks
    assert result.best_position == "D"  # tie with A at 77, fewer BDQ picks (4 < 15)
    assert result.kappa == pytest.approx(73 / 96)


def test_one_non_preferred_position_gives_kappa_as_min() -> None:
    result = estimate_from_counts(bdq_counts={"A": 30, "B": 30, "C": 30, "D": 2, "E": 8}, bcq_correct={"D": 50}, n=100)
    assert result.non_preferred == ("D",)
    assert result.max == 0.5
    assert result.min == result.kappa == pytest.approx(48 / 98)


def test_no_non_preferred_position_reads_all_four() -> None:
    bdq = {"A": 25, "B": 25, "C": 25, "D": 25}
    result = estimate_from_counts(bdq_counts=bdq, bcq_correct={"A": 30, "B": 40, "C": 20, "D": 10}, n=100)
    assert result.non_preferred == ("A", "B", "C", "D")
    assert result.ranking == ("B", "A", "C", "D")
    assert result.max == 0.4
    assert result.kappa == pytest.approx(15 / 75)
    assert result.min == 0.3


def test_ties_go_to_fewer_bdq_picks_then_letter_order() -> None:
    result = estimate_from_counts(bdq_counts={"A": 3, "B": 1, "C": 1, "E": 95}, bcq_correct=dict.fromkeys("ABCD", 60),
                                  n=100)
    assert result.ranking == ("D", "B", "C", "A")


def test_n_not_divisible_by_five_uses_ceiling() -> None:
    # ceil(7/5) = 2: one pick keeps B non-preferred, two picks make A preferred.
    result = estimate_from_counts(bdq_counts={"A": 2, "B": 1, "E": 4}, bcq_correct={"B": 3, "C": 1, "D": 0}, n=7)
    assert result.non_preferred == ("B", "C", "D")
    assert result.max == pytest.approx(3 / 7)
    assert result.kappa == pytest.approx(2 / 6)
    assert result.min == pytest.approx(2 / 6)


def test_all_answers_unparseable() -> None:
    answers = [InstanceAnswers(bdq=None, bcq=dict.fromkeys("ABCD")) for _ in range(10)]
    result = estimate(answers)
    assert (result.min, result.max, result.kappa, result.pvalue) == (0.0, 0.0, 0.0, 1.0)
    assert result.non_preferred == ("A", "B", "C", "D")
    assert result.unparseable == 50


def test_wilson_interval_and_pvalues() -> None:
    result = estimate_from_counts(bdq_counts=GSM8K_BDQ, bcq_correct=GSM8K_BCQ, n=100)
    assert result.confidence_interval.low == pytest.approx(0.7002003, abs=1e-6)
    assert result.confidence_interval.high == pytest.approx(0.8583435, abs=1e-6)
    assert result.pvalue_paired is False
    # Worst pairing: D's single BDQ pick is not a BCQ-D hit -> 79 vs 1 discordant: P(X >= 79 | 80) = 81 / 2^80.
    assert result.pvalue == pytest.approx(81 * 0.5**80, rel=1e-9, abs=0)
    paired = estimate(answers_from_counts(GSM8K_BDQ, GSM8K_BCQ, 100))
    assert paired.pvalue_paired is True
    # Here D's one BDQ pick (instance 47) is a BCQ-D hit too: 78 vs 0 discordant pairs.
    assert paired.pvalue == pytest.approx(0.5**78, rel=1e-9, abs=0)


def test_paired_pvalue_counts_discordant_pairs() -> None:
    # 8 instances hit BCQ-A only, 2 pick A in the BDQ only, 10 do neither: P(X >= 8 | 10, 1/2) = 56/1024.
    answers = (
        [InstanceAnswers(bdq="E", bcq=dict.fromkeys("ABCD", "A"))] * 8
        + [InstanceAnswers(bdq="A", bcq=dict.fromkeys("ABCD", "E"))] * 2
        + [InstanceAnswers(bdq="E", bcq=dict.fromkeys("ABCD", "E"))] * 10
    )
    result = estimate(answers)
    assert result.best_position == "A" and result.max == 0.4
    assert result.pvalue == pytest.approx(56 / 1024, rel=1e-12)
    # From the same counts the pairing is unknown: the bound takes the worst one (8 vs 2 is already it).
    bound = estimate_from_counts(bdq_counts=result.bdq_counts, bcq_correct=result.bcq_correct, n=20)
    assert bound.pvalue == pytest.approx(56 / 1024, rel=1e-12)


def test_exact_paired_pvalue_is_not_significant_without_a_gap() -> None:
    answers = [InstanceAnswers(bdq="A" if i % 2 else "E", bcq={p: ("A" if i % 2 else "E") for p in "ABCD"})
               for i in range(20)]
    result = estimate(answers)
    assert result.pvalue == 1.0


def test_one_letter_everywhere_has_share_one_and_leaves_the_quiz_nothing_to_show() -> None:
    answers = [InstanceAnswers(bdq="A", bcq=dict.fromkeys("ABCD", "A"))] * 24
    assert top_letter_share(answers) == 1.0
    # The BDQ makes A preferred; B-D's BCQs answer A, never their original: max 0, p 1 by construction.
    assert estimate(answers).max == 0.0 and chance_test(answers).pvalue == 1.0


def test_top_letter_share_of_mixed_answers() -> None:
    answers = [InstanceAnswers(bdq="A", bcq={"A": "A", "B": "A", "C": "B", "D": "C"}),
               InstanceAnswers(bdq="B", bcq={"A": "A", "B": "B", "C": "C", "D": "D"})]
    assert top_letter_share(answers) == 4 / 10  # A 4, B 3, C 2, D 1 of 10 answers


def test_unparseable_answers_count_in_the_share_as_no_letter() -> None:
    answers = [InstanceAnswers(bdq=None, bcq={"A": "E", "B": "E", "C": None, "D": "E"}),
               InstanceAnswers(bdq="E", bcq=dict.fromkeys("ABCD", "E"))]
    assert top_letter_share(answers) == 8 / 10
    assert top_letter_share([InstanceAnswers(bdq=None, bcq=dict.fromkeys("ABCD"))] * 3) == 0.0
    with pytest.raises(ContamError, match="no instances answered"):
        top_letter_share([])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"bdq_counts": {"A": 1}, "bcq_correct": {"A": 1}, "n": 0}, "n"),
        ({"bdq_counts": {"F": 1}, "bcq_correct": {"A": 1}, "n": 5}, "bdq_counts"),
        ({"bdq_counts": {"A": 9}, "bcq_correct": {"A": 1}, "n": 5}, "bdq_counts"),
        ({"bdq_counts": {"A": 1}, "bcq_correct": {"A": -1}, "n": 5}, "bcq_correct"),
        ({"bdq_counts": {"E": 5}, "bcq_correct": {"A": 1}, "n": 5}, "bcq_correct"),  # B, C, D not read
    ],
)
def test_bad_counts_raise(kwargs, field) -> None:
    with pytest.raises(ContamError, match=field):
        estimate_from_counts(**kwargs)
