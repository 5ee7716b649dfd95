"""Algorithm 2: classify each guided completion as an exact, near-exact or inexact replica.

Judge A (:func:`classify_match`) is deterministic and needs no model. Judge B is
the paper's few-shot prompt (:data:`~lm_eval_contam.methods.timetravel.prompts.JUDGE_PROMPT`)
run on any model; :func:`parse_judge_b_match` reads its answer.

Judge A's rules, chosen by measurement on 75 labelled pairs (the paper's Figure 3,
Tables 7 and 11, and human-annotated completions from the released results;
``tests/data/timetravel_labelled_pairs.jsonl``, agreement 71/75):

- **exact**: equal after case-folding and dropping punctuation and whitespace runs.
- **near-exact**: same polarity (both or neither negated), and either
  (a) a close rephrasing: ROUGE-L F >= 1/2, and the reference's content words
  (stemmed, stop-words dropped) are >= 80 % recalled, and >= 55 % of the
  candidate's content words come from the reference; or
  (b) the whole reference reproduced in order (LCS recall 1) inside a longer
  candidate, for references of >= 8 tokens (the paper's "added details" case;
  shorter references are too generic to count).
- otherwise **inexact**.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from nltk.stem.porter import PorterStemmer
from rouge_score import tokenize

MatchClass = Literal["exact", "near_exact", "inexact"]
MATCH_CLASSES: tuple[MatchClass, ...] = ("exact", "near_exact", "inexact")

ROUGE_L_MIN = Fraction(1, 2)
CONTENT_RECALL_MIN = Fraction(4, 5)
CONTENT_PRECISION_MIN = Fraction(55, 100)
CONTAINED_REFERENCE_MIN_TOKENS = 8

# Function words: they carry order and grammar, not what the instance is about.
STOP_WORDS = frozenset(
    "a an the of to in on at by for with and or but is are was were be been being it its this that these those "
    "he she they them his her their him i we you our your as from into than then so do did does has have had "
    "will would shall should can could may might must s".split()
)
NEGATIONS = frozenset({"not", "no", "never", "nor", "t", "none", "nothing", "neither"})

_JUDGE_REPLY = re.compile(r"yes\s*\(\s*(exact|near[- ]exact)\s+match\s*\)", re.IGNORECASE)


@dataclass(frozen=True)
class Algorithm2Verdict:
    """Algorithm 2 over one partition's match classes."""

    exact_matches: int
    near_exact_matches: int

    @property
    def contaminated(self) -> bool:
        """The paper's rule: at least one exact or at least two near-exact matches."""
        return self.exact_matches >= 1 or self.near_exact_matches >= 2


def tokens(text: str) -> list[str]:
    """rouge-score's tokens: lower-cased alphanumeric runs (punctuation dropped)."""
    return tokenize.tokenize(text, None)


@functools.lru_cache(maxsize=1)
def _stemmer() -> PorterStemmer:
    return PorterStemmer()


def content_words(words: Iterable[str]) -> list[str]:
    stem = _stemmer().stem
    # Negations are compared separately (polarity), so they are not content either.
    return [stem(word) for word in words if word not in STOP_WORDS and word not in NEGATIONS]


def lcs_length(first: list[str], second: list[str]) -> int:
    previous = [0] * (len(second) + 1)
    for item in first:
        current = [0]
        for j, other in enumerate(second):
            current.append(previous[j] + 1 if item == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _negated(words: list[str]) -> bool:
    return any(word in NEGATIONS for word in words)


def _close_rephrasing(reference: list[str], candidate: list[str], lcs: int) -> bool:
    rouge_l_f = Fraction(2 * lcs, len(reference) + len(candidate))  # ROUGE-L F1, exactly
    reference_content = Counter(content_words(reference))
    candidate_content = Counter(content_words(candidate))
    if not reference_content or not candidate_content:
        return False
    shared = sum((reference_content & candidate_content).values())
    return (
        rouge_l_f >= ROUGE_L_MIN
        and Fraction(shared, sum(reference_content.values())) >= CONTENT_RECALL_MIN
        and Fraction(shared, sum(candidate_content.values())) >= CONTENT_PRECISION_MIN
    )


def classify_match(reference: str, candidate: str) -> MatchClass:
    """Judge A: ``"exact"``, ``"near_exact"`` or ``"inexact"`` (rules in the module doc)."""
    reference_tokens = tokens(reference)
    candidate_tokens = tokens(candidate)
    if not reference_tokens or not candidate_tokens:
        return "exact" if reference_tokens == candidate_tokens and reference.strip() == candidate.strip() else "inexact"
    if reference_tokens == candidate_tokens:
        return "exact"
    if _negated(reference_tokens) != _negated(candidate_tokens):
        return "inexact"
    lcs = lcs_length(reference_tokens, candidate_tokens)
    contains_reference = lcs == len(reference_tokens) and len(reference_tokens) >= CONTAINED_REFERENCE_MIN_TOKENS
    if contains_reference or _close_rephrasing(reference_tokens, candidate_tokens, lcs):
        return "near_exact"
    return "inexact"


def parse_judge_b_match(reply: str) -> MatchClass:
    """Judge B's answer: ``Yes (exact match)`` / ``Yes (near-exact match)``; anything else is inexact."""
    found = _JUDGE_REPLY.search(reply)
    if found is None:
        return "inexact"
    return "exact" if found.group(1).lower() == "exact" else "near_exact"


def algorithm2_verdict(classes: Iterable[str]) -> Algorithm2Verdict:
    counts = Counter(classes)
    return Algorithm2Verdict(exact_matches=counts["exact"], near_exact_matches=counts["near_exact"])
