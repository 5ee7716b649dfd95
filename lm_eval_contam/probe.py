"""Glue for the wiring probe task (``task_configs/probe``)."""

from __future__ import annotations

import re
from typing import Any

import datasets

from lm_eval_contam import task_dir


def load_probe_dataset(**_metadata: Any) -> datasets.DatasetDict:
    """The shipped probe questions as a one-split DatasetDict (lm-eval's ``custom_dataset`` hook)."""
    path = task_dir() / "probe" / "probe.jsonl"
    return datasets.DatasetDict({"test": datasets.Dataset.from_json(str(path))})


def contains_answer(reply: str, answer: str) -> bool:
    """Whether ``answer`` occurs in ``reply`` as a whole word, ignoring case."""
    return re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", reply, flags=re.IGNORECASE) is not None


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return {"contains_answer": float(contains_answer(results[0], doc["answer"]))}
