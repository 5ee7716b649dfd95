"""Quiz prompt, BDQ/BCQ layouts and the strict answer parser."""

from __future__ import annotations

import pytest

from lm_eval_contam.methods.dcq import parse_answer
from lm_eval_contam.methods.dcq.quiz import QUIZ_NAMES, build_quizzes, letter_continuations, quiz_prompt

EXPECTED_PROMPT = (
    "You are provided with a five-choice quiz. Your task is to CORRECTLY select the option that EXACTLY "
    "corresponds to an instance from the train split of the AG News dataset.\n"
    "\n"
    "When selecting the option, you MUST ensure that you follow the following rules:\n"
    "(1) You MUST ensure that you ONLY generate a single option letter as your answer.\n"
    '(2) If you do not know the dataset or the correct answer, you MUST select option "E) None of the provided '
    'options."\n'
    "\n"
    "Hint: While all the following options seem similar in terms of meaning, there is ONLY one option that "
    "reflects the EXACT WORDING with respect to the original instance.\n"
    "---\n"
    "A)\none {option_b}\n"
    "\n"
    "B)\ntwo\n"
    "\n"
    "C)\nthree\n"
    "\n"
    "D)\nfour\n"
    "\n"
    "E)\nNone of the provided options.\n"
    "---\n"
    "ANSWER:\n"
)


def test_quiz_prompt_renders_byte_for_byte() -> None:
    # "{option_b}" inside an option must stay literal: placeholders are filled in one pass.
    prompt = quiz_prompt(["one {option_b}", "two", "three", "four"], split_name="train", dataset_name="AG News")
    assert prompt == EXPECTED_PROMPT


def test_bdq_and_bcq_layouts() -> None:
    quizzes = build_quizzes("ORIG", ["p1", "p2", "p3", "p4"])
    assert [q.name for q in quizzes] == list(QUIZ_NAMES) == ["BDQ", "BCQ-A", "BCQ-B", "BCQ-C", "BCQ-D"]
    assert [(q.options, q.answer) for q in quizzes] == [
        (("p1", "p2", "p3", "p4"), "E"),
        (("ORIG", "p2", "p3", "p4"), "A"),
        (("p1", "ORIG", "p3", "p4"), "B"),
        (("p1", "p2", "ORIG", "p4"), "C"),
        (("p1", "p2", "p3", "ORIG"), "D"),
    ]


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("A", "A"), ("B", "B"), ("C", "C"), ("D", "D"), ("E", "E"),
        (" C\n", "C"),
        ("a", "A"),
        ("d", "D"),
        ("(B)", "B"),
        ("B)", "B"),
        ("Answer: C", "C"),
        ("ANSWER: d", "D"),
        ("The answer is E", "E"),
        ("E) None of the provided options.", "E"),
        ("A.", "A"),
        ("B\nBecause it matches the wording.", "B"),
        ("", None),
        ("   ", None),
        (None, None),
        ("AB", None),
        ("A or B", None),
        ("A/B", None),
        ("A dog runs in the park.", None),
        ("a quiz is hard", None),
        ("F", None),
        ("The", None),
    ],
)
def test_parse_answer(reply, letter) -> None:
    assert parse_answer(reply) == letter


def test_letter_continuations() -> None:
    assert letter_continuations(" ") == (" A", " B", " C", " D", " E")
    assert letter_continuations("") == ("A", "B", "C", "D", "E")
