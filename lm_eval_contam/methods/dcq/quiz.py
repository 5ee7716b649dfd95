"""The five-choice quiz: prompt, BDQ/BCQ layouts and a strict answer parser.

Per instance five quizzes are issued: the Bias Detector Quiz (BDQ), whose options
A-D are the four perturbations in generated order (the original is absent, so E
is right), and one Bias Compensator Quiz (BCQ) per position p, which is the BDQ
layout with slot p replaced by the original (so p is right).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_contam.core.errors import ContamError

POSITIONS: tuple[str, ...] = ("A", "B", "C", "D")
LETTERS: tuple[str, ...] = (*POSITIONS, "E")
BDQ = "BDQ"
# The quiz names, in the order the task issues them per instance.
QUIZ_NAMES: tuple[str, ...] = (BDQ, *(f"BCQ-{p}" for p in POSITIONS))

# Verbatim from the official implementation; placeholders are filled by
# str.replace so braces inside instances are left alone.
QUIZ_PROMPT = """You are provided with a five-choice quiz. Your task is to CORRECTLY select the option that EXACTLY corresponds to an instance from the {split_name} split of the {dataset_name} dataset.

When selecting the option, you MUST ensure that you follow the following rules:
(1) You MUST ensure that you ONLY generate a single option letter as your answer.
(2) If you do not know the dataset or the correct answer, you MUST select option "E) None of the provided options."

Hint: While all the following options seem similar in terms of meaning, there is ONLY one option that reflects the EXACT WORDING with respect to the original instance.
---
A)
{option_a}

B)
{option_b}

C)
{option_c}

D)
{option_d}

E)
None of the provided options.
---
ANSWER:
"""


@dataclass(frozen=True)
class Quiz:
    """One quiz: its name ("BDQ" or "BCQ-A".."BCQ-D"), options A-D and the correct letter."""

    name: str
    options: tuple[str, str, str, str]
    answer: str


def bcq_name(position: str) -> str:
    return f"BCQ-{position}"


def build_quizzes(original: str, perturbations: Sequence[str]) -> tuple[Quiz, ...]:
    """The BDQ and the four BCQs of one instance, in ``QUIZ_NAMES`` order."""
    if len(perturbations) != len(POSITIONS):
        raise ContamError(f"a quiz needs four perturbations, got {len(perturbations)}", field="options")
    bdq_options = tuple(perturbations)
    quizzes = [Quiz(BDQ, bdq_options, "E")]  # type: ignore[arg-type]
    for slot, position in enumerate(POSITIONS):
        options = tuple(original if i == slot else option for i, option in enumerate(bdq_options))
        quizzes.append(Quiz(bcq_name(position), options, position))  # type: ignore[arg-type]
    return tuple(quizzes)


def quiz_prompt(options: Sequence[str], *, split_name: str, dataset_name: str) -> str:
    """The quiz prompt with options A-D filled in (ending "ANSWER:\n", as the official prompt)."""
    if len(options) != len(POSITIONS):
        raise ContamError(f"a quiz prompt needs four options, got {len(options)}", field="options")
    fields = {
        "{split_name}": split_name,
        "{dataset_name}": dataset_name,
        **{f"{{option_{p.lower()}}}": option for p, option in zip(POSITIONS, options)},
    }
    # One pass over the template so a value containing "{option_b}" is not re-substituted.
    pattern = re.compile("|".join(re.escape(name) for name in fields))
    return pattern.sub(lambda match: fields[match.group(0)], QUIZ_PROMPT)


# A reply is an answer only when, after an optional "Answer:"/"Option" lead-in, its
# first line is a single option letter, bare or wrapped as "(B)", or a letter followed
# by an option marker ("B)", "B.", "B:") and anything. "A dog ..." (an article) and
# "AB" are not.
_LEAD_IN = re.compile(r"^(?:the\s+)?(?:answer|option|choice)(?:\s+is)?\s*[:\-]?\s*", re.IGNORECASE)
_BARE = re.compile(r"^\(?([A-Ea-e])\)?[.:]?$")
_MARKED = re.compile(r"^\(?([A-Ea-e])(?:\)|\.|:)(?:\s|$)")


def parse_answer(text: str | None) -> str | None:
    """The option letter "A".."E" a reply gives, or None when it gives none unambiguously."""
    if text is None:
        return None
    reply = _LEAD_IN.sub("", text.strip(), count=1).strip()
    first_line = reply.split("\n", 1)[0].strip()
    match = _BARE.match(first_line) or _MARKED.match(first_line)
    return match.group(1).upper() if match else None


def letter_continuations(delimiter: str) -> tuple[str, ...]:
    """The five loglikelihood continuations: each letter after ``delimiter``.

    In loglikelihood mode the context ends at ``ANSWER:`` and the delimiter is " "
    (" A" is one token for byte-level BPE and SentencePiece tokenizers alike);
    under a chat template the context ends with the assistant header and the
    delimiter is "".
    """
    return tuple(f"{delimiter}{letter}" for letter in LETTERS)
