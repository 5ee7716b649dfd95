"""Text utilities shared by the methods: ROUGE-L and normalisation."""

from __future__ import annotations

import functools
import re

from rouge_score import rouge_scorer


@functools.lru_cache(maxsize=1)
def _rouge_l_scorer() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l_f(reference: str, candidate: str) -> float:
    """ROUGE-L F-measure (rouge-score ``rougeL``, no stemmer), full precision."""
    return _rouge_l_scorer().score(reference, candidate)["rougeL"].fmeasure


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return re.sub(r"\s+", " ", text).strip()


# Unicode's bidirectional embedding, override and isolate controls. Unescaped in a report, one in a model's completion
# or a dataset's text reorders what follows it on the page (U+202E shows "flagged" as "deggalf"), hiding what it says.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def visible_bidi_controls(text: str) -> str:
    """``text`` with each bidi control (U+202A–U+202E, U+2066–U+2069) written out as ``[U+202E]``."""
    return _BIDI_CONTROLS.sub(lambda match: f"[U+{ord(match.group()):04X}]", text)
