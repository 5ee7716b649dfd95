"""The split-control study's benchmark scores (issue 49): the answer letters' log-likelihoods one pass per item gives,
as lm-eval's ``loglikelihood`` gives them for a one-token continuation, and the per-item statistics read off them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lm_eval_contam.nullstudy.corpus import MC_LETTERS
from lm_eval_contam.nullstudy.scoring import letter_loglikelihoods, load_scorer
from lm_eval_contam.nullstudy.split_control import letter_statistics


def test_the_letters_scores_are_each_continuations_log_likelihood(tiny_model_dir: Path) -> None:
    """One batched pass per prompt equals scoring prompt + letter whole and reading the letter's token (float32)."""
    import torch

    prompts = ["Which word fills the blank? A cat sat on the ___.\nA. mat\nB. sky\nC. sea\nD. car\nAnswer:",
               "Pick one.\nA. x\nB. y\nC. z\nD. w\nAnswer:"]
    found = letter_loglikelihoods(str(tiny_model_dir), prompts, MC_LETTERS, batch_size=2)
    model, tokenizer, prefix = load_scorer(str(tiny_model_dir))
    for prompt, row in zip(prompts, found):
        context = [prefix, *tokenizer(prompt, add_special_tokens=False)["input_ids"]]
        for letter, value in zip(MC_LETTERS, row):
            (token,) = tokenizer(f" {letter}", add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([[*context, token]])).logits[0, -2]
            assert value == pytest.approx(float(torch.log_softmax(logits.float(), -1)[token]), abs=1e-4)
    assert len({round(value, 4) for row in found for value in row}) > 1


def test_the_statistics_are_the_gold_letters_score_its_margin_and_acc() -> None:
    assert letter_statistics([-1.0, -0.5, -3.0, -2.0], 1) == {"gold_loglikelihood": -0.5, "gold_margin": 0.5,
                                                              "correct": 1.0}
    assert letter_statistics([-1.0, -0.5, -3.0, -2.0], 3) == {"gold_loglikelihood": -2.0, "gold_margin": -1.5,
                                                              "correct": 0.0}
    # a tie goes to the first of the likeliest letters, as lm-eval's argmax
    assert letter_statistics([-1.0, -1.0], 1)["correct"] == 0.0
    assert letter_statistics([-1.0, -1.0], 0)["correct"] == 1.0


def test_the_shipped_letter_rates_at_96_are_those_of_the_shipped_scores_and_below_per_byte() -> None:
    """``split_control_rates.json`` ``benchmark_scores`` at 96 (every item, one seeded verdict per pair) recomputed from
    the shipped letter scores; each letter statistic detects fewer of the 4 injected partitions than the per-byte
    score the audit keeps (4/4), with no more false positives."""
    import json

    from lm_eval_contam.nullstudy.split_control import LETTER_SCORES, letter_rates, scored_letters
    from lm_eval_contam.verdicts.detection_rates import SPLIT_CONTROL_RATES_FILE

    shipped = json.loads(SPLIT_CONTROL_RATES_FILE.read_text(encoding="utf-8"))
    found = letter_rates(scored_letters("clean"), scored_letters("injected"), sizes=(96,),
                         filler=scored_letters("filler"))
    assert {score: found[score]["96"] for score in LETTER_SCORES} == {
        score: shipped["benchmark_scores"][score]["96"] for score in LETTER_SCORES}
    per_byte = shipped["tests"]["likelihood_control"]["multiple choice"]["96"]
    assert per_byte["detection"]["seeded"]["flagged"] == 4
    for score in LETTER_SCORES:
        assert found[score]["96"]["detection"]["seeded"]["flagged"] < 4
        assert found[score]["96"]["false_positive_clean"]["seeded"]["flagged"] == 0
        assert found[score]["96"]["false_positive_filler"]["seeded"]["flagged"] == 0
