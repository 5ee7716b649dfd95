"""The offline perturber gives four distinct options whenever the text allows (issue 23 item 6).

A 12-item multiple-choice task of one-line questions had "options C and D are identical" for every instance: the
seeded synonym draws collide when a line has one or two replaceable words. Numbers now join the words when the draws
collide, and the options are the variants with the fewest changes; only a text with fewer than four variants in all
gets none. Every instance the draws already served keeps its options (the measured studies' options stay).
"""

from __future__ import annotations

import json

from lm_eval_contam import task_dir
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.wordnet import load_wordnet
from lm_eval_contam.kit.instances import QuizInstance, sample_instances
from lm_eval_contam.kit.perturb import _drawn_options, number_slots, perturb, substitution_slots
from lm_eval_contam.kit.quiz_options import validate_options

ONE_LINE_QUESTIONS = [QuizInstance(f"text: What is {a} plus {b}?\nanswer: {a + b}", "answer")
                      for a, b in zip(range(2, 14), range(13, 1, -1))]


def test_one_line_questions_that_collided_now_get_four_distinct_valid_options() -> None:
    wordnet = load_wordnet()
    drawn = [_drawn_options(i, substitution_slots(i, wordnet), seed=0, attempt=1, rate=0.3) for i in ONE_LINE_QUESTIONS]
    # The failure, every instance: "plus" is the one replaceable word, so all four draws are one text.
    assert all("options C and D are identical" in validate_options(i, options)
               for i, options in zip(ONE_LINE_QUESTIONS, drawn))
    assert all(validate_options(i, perturb(i, seed=0)) == [] for i in ONE_LINE_QUESTIONS)


def test_the_fewest_change_variants_in_seeded_order() -> None:
    instance = QuizInstance("text: What is 7 plus 5?\nanswer: 12", "answer")
    assert perturb(instance, seed=0) == ("text: What is 8 plus 5?\nanswer: 12", "text: What is 2 plus 5?\nanswer: 12",
                                         "text: What is 1 plus 5?\nanswer: 12", "text: What is 6 plus 5?\nanswer: 12")
    assert perturb(instance, seed=0) == perturb(instance, seed=0)
    assert perturb(instance, seed=0, attempt=2) != perturb(instance, seed=0)


def test_numbers_keep_their_digit_count_and_the_label_line() -> None:
    instance = QuizInstance("text: In 1066 about 7 ships, v1.2 and 3.5 stay\nanswer: 1066", "answer")
    slots = number_slots(instance)
    assert [instance.text[slot.start:slot.end] for slot in slots] == ["1066", "7"]
    assert slots[0].synonyms == ("1065", "1067", "1064", "1068", "1063", "1069", "1062", "1070")
    assert slots[1].synonyms == ("6", "8", "5", "9", "4", "3", "2", "1")


def test_a_text_with_fewer_than_four_variants_gets_none() -> None:
    # "red" has one single-word synonym ("redness"); "planet" none: one variant in all.
    assert perturb(QuizInstance("text: Which planet is red?\nanswer: Mars", "answer"), seed=0) is None
    assert perturb(QuizInstance("text: the of and"), seed=0) is None


def test_instances_the_draws_served_keep_their_options() -> None:
    wordnet = load_wordnet()
    for key in ("toy_news", "toy_reviews", "toy_pairs", "toy_dialogues"):
        partition = Partition.parse(f"{key}:train")
        rows = [json.loads(line) for line in (task_dir() / f"samples/{key}_train.jsonl").read_text().splitlines()]
        for instance in sample_instances(partition, rows, 100, seed=0):
            drawn = _drawn_options(instance, substitution_slots(instance, wordnet), seed=0, attempt=1, rate=0.3)
            if validate_options(instance, drawn) == []:
                assert perturb(instance, seed=0) == drawn, instance.text
