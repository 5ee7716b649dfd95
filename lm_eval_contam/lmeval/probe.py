"""Glue for the wiring probe task (``task_configs/probe``)."""

from __future__ import annotations

import re
from typing import Any


def contains_answer(reply: str, answer: str) -> bool:
    """Whether ``answer`` occurs in ``reply`` as a whole word, ignoring case."""
    return re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", reply, flags=re.IGNORECASE) is not None


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return {"contains_answer": float(contains_answer(results[0], doc["answer"]))}
