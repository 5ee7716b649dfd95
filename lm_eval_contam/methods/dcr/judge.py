"""The LLM judge of DCR's Check step: the paper's Appendix B.4 prompt and its JSON reply.

A judge check sends one prompt per item to any ``generation.ModelSpec`` and reads
``{"result": "yes"|"no"}``; any other reply is undetermined and left for a person.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from lm_eval_contam.lmeval.generation import ModelSpec, generate

LEVEL_NAMES = {1: "L1 (Semantic)", 2: "L2 (Information)", 3: "L3 (Data)", 4: "L4 (Label)"}

# Appendix B.4 of Xu et al. (2025), verbatim: the judge's system and user turns.
JUDGE_SYSTEM = (
    "You are tasked with assessing whether the provided answer indicates signs of benchmark data "
    "contamination (BDC) at one level specified in the four dimensions:\n\n"
    " L1 (Semantic): The model has been exposed to content that is semantically equivalent or closely "
    "related to the benchmark data, even if the exact wording differs.\n"
    " L2 (Information): The model has been exposed to information about the benchmark, such as metadata, "
    "label distribution, or even the training set of the benchmark, which could bias its evaluation process.\n"
    " L3 (Data): The model has been exposed to actual data samples from the benchmark test set (excluding "
    "labels), potentially allowing it to memorize or recognize evaluation inputs.\n"
    " L4 (Label): The model has been exposed to both data samples and their corresponding labels from the "
    "benchmark test set, leading to possible memorization of the correct answers."
)
JUDGE_USER = (
    'Return only the JSON object with the key "result", providing "yes" or "no" to indicate the presence '
    "or absence of BDC, respectively, based on the question used to test the {bdc_level} level and its "
    "corresponding answer. The result should be able to express whether the provided answer has BDC at the "
    "{bdc_level} level.\n\nQuestion: {question}\nAnswer: {answer}"
)


def judge_prompt(level: int, question: str, answer: str) -> str:
    """The B.4 judge prompt as one user turn (system text first: generation sends single user turns)."""
    user = JUDGE_USER.format(bdc_level=LEVEL_NAMES[level], question=question, answer=answer)
    return f"{JUDGE_SYSTEM}\n\n{user}"


def parse_bdc_result(reply: str) -> bool | None:
    """``{"result": "yes"}`` → True, ``"no"`` → False; anything else → None (left for a person)."""
    match = re.search(r"\{.*?\}", reply, flags=re.DOTALL)
    if match:
        try:
            result = json.loads(match.group(0)).get("result")
        except (json.JSONDecodeError, AttributeError):
            result = None
        if isinstance(result, str) and result.strip().lower() in ("yes", "no"):
            return result.strip().lower() == "yes"
    return None


@functools.lru_cache(maxsize=4)
def _judge_model(spec: str) -> Any:
    return ModelSpec.parse(spec).build()


def judge_response(model: str, level: int, question: str, answer: str) -> bool | None:
    """The judge's verdict on one response: True (contaminated), False, or None (undetermined)."""
    reply = generate(_judge_model(model), [judge_prompt(level, question, answer)], max_gen_toks=32)[0]
    return parse_bdc_result(reply)
