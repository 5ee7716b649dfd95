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
