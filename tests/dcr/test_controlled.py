"""Controlled L3/L4 checks: zero for memory-free responders, positive for item memory, level of the sign test.

Responders here are functions of the prompt, built by construction from the toy
benchmark (no model): "always yes", a task-competent responder that labels any
instance correctly (originals and twins alike, so it has ability but no item
memory), and a memoriser that knows the benchmark's own rows only. The level of
the controlled score under the no-memory null is checked by simulation.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.dcr.data import load_data_rows
from lm_eval_contam.methods.dcr.docs import item_record, item_to_doc
from lm_eval_contam.methods.dcr.items import gold_answer, level_items, split_instance
from lm_eval_contam.methods.dcr.level_score import twin_score
from lm_eval_contam.methods.dcr.results import scores_from_results
from lm_eval_contam.methods.dcr.sheet import load_sheet

SHEET = load_sheet("toy_sentiment")
ROWS = load_data_rows(SHEET)
MEMBERS = {row["text"]: gold_answer(SHEET.data, row, "toy") for row in ROWS}


def _docs(level: int, mode: str) -> list[dict]:
    return [item_to_doc(SHEET, item) for item in level_items(SHEET, level, ROWS, seed=0, check_mode=mode)]


def _instance(prompt: str) -> str:
    """The instance a generated prompt asks about (membership quotes it; association ends with "<text> is")."""
    quoted = re.search(r'Is the statement "(.*)" in ', prompt)
    if quoted:
        return quoted.group(1)
    return prompt.rsplit("Complete it: ", 1)[-1].removesuffix(" is")


def _level(level: int, mode: str, respond) -> tuple[float, float]:
    """(S, paper-style share on the originals) of one level under a responder (paper mode: S is that share)."""
    records = []
    for doc in _docs(level, mode):
        responses = [respond(doc["prompt"]), respond(doc["twin_prompt"]) if doc["twin_prompt"] else ""]
        records.append(item_record(doc, responses))
    score = twin_score(records)
    return score.statistic if mode == "controlled" else score.original_rate, score.original_rate


def always_yes(prompt: str) -> str:
    return "yes"


def always_positive(prompt: str) -> str:
    return "yes" if "Is the statement" in prompt else "positive"


@pytest.fixture(scope="module")
def twin_labels() -> dict[str, str]:
    """Every L4 twin's label: the original's (twins keep the label), for the task-competent responder."""
    labels = {}
    for doc in _docs(4, "controlled"):
        labels[_instance(doc["twin_prompt"])] = doc["reference"]
    return labels


def test_every_generated_item_has_a_twin_in_the_same_format() -> None:
    for level in (3, 4):
        for doc in _docs(level, "controlled"):
            assert doc["twin_prompt"] and doc["twin_prompt"] != doc["prompt"]
            assert len(doc["twin_prompt"].split()) == len(doc["prompt"].split())  # one synonym per word
            assert _instance(doc["twin_prompt"]) not in MEMBERS or "complete it:" in doc["prompt"]
            if level == 4:  # the twin keeps the label
                assert json_label(doc["twin_check"]) == json_label(doc["check"]) == doc["reference"]
    assert not any(doc["twin_prompt"] for level in (3, 4) for doc in _docs(level, "paper"))


def json_label(check_json: str) -> str:
    import json

    return json.loads(check_json)["label"]


@pytest.mark.parametrize("respond", [always_yes, always_positive])
def test_yes_bias_scores_zero_when_controlled_and_half_in_paper_mode(respond) -> None:
    s3, yes_rate = _level(3, "controlled", respond)
    assert s3 == 0.0 and yes_rate == 0.5  # the two membership items say yes, the two completions fail
    assert _level(3, "paper", respond)[0] == 0.5  # today's S3 for the same responder
    s4, _ = _level(4, "controlled", respond)
    paper_s4, _ = _level(4, "paper", respond)
    assert s4 == 0.0
    # The paper-mode L4 items are rows 2, 7, 11 and 13; only row 2 is positive.
    assert [doc["item_id"] for doc in _docs(4, "paper")] == [f"l4-association-{row}" for row in (2, 7, 11, 13)]
    expected = 0.0 if respond is always_yes else 0.25
    assert paper_s4 == expected


def test_task_competence_without_item_memory_scores_zero(twin_labels) -> None:
    def competent(prompt: str) -> str:  # labels any instance right, member or twin; says yes to membership
        if "Is the statement" in prompt:
            return "yes"
        if "please complete it: " in prompt:
            return "and then it ended."  # a fluent continuation, no memory of how the instance goes on
        instance = _instance(prompt)
        return MEMBERS.get(instance) or twin_labels[instance]

    assert _level(4, "paper", competent)[0] == 1.0  # the paper-style S4 discounts competence in full
    assert _level(4, "controlled", competent)[0] == 0.0
    assert _level(3, "controlled", competent)[0] == 0.0


def test_item_memory_scores_clearly_above_zero() -> None:
    seconds = {split_instance(text)[0]: split_instance(text)[1] for text in MEMBERS}

    def memoriser(prompt: str) -> str:  # knows the benchmark's rows with their labels, nothing else
        if "please complete it: " in prompt:
            return seconds.get(prompt.rsplit("please complete it: ", 1)[-1], "")
        instance = _instance(prompt)
        if "Is the statement" in prompt:
            return "yes" if instance in MEMBERS else "no"
        return MEMBERS.get(instance, "no idea")

    assert _level(3, "controlled", memoriser)[0] == 1.0
    assert _level(4, "controlled", memoriser)[0] == 1.0


def test_twin_score_on_known_records() -> None:
    records = [{"original": 1.0, "control": 0.0}] * 5 + [{"original": 0.0, "control": 1.0}] * 1 \
        + [{"original": 1.0, "control": 1.0}] * 2 + [{"original": None, "control": 0.0}] + [{"original": 1.0}]
    score = twin_score(records)
    assert score.n_items == 9  # the undetermined pair is left out; the uncontrolled item is a tie (no evidence)
    assert score.original_only == 5 / 9 and score.twin_only == 1 / 9
    assert score.statistic == pytest.approx(4 / 9)
    assert score.original_rate == 8 / 9 and score.twin_rate == 3 / 8
    assert score.pvalue == pytest.approx(sum(math.comb(6, k) for k in (5, 6)) / 2**6)  # 5 of 6 discordant pairs
    assert twin_score([{"original": 0.0, "control": 1.0}] * 3).statistic == 0.0  # floored
    assert math.isnan(twin_score([{"original": None}]).statistic)


@pytest.mark.parametrize("n_items", [10, 20, 40])
def test_no_memory_null_centres_the_score_at_zero_and_holds_the_level(n_items) -> None:
    """H0: item and control exchangeable. Each item has its own pass propensity (ability, yes-bias, difficulty);
    the original's and the control's results are independent draws of it."""
    simulations = 2000
    rng = rng_for(0, "dcr-null", n_items)
    differences, rejections, positive = [], 0, 0
    for _ in range(simulations):
        propensity = rng.beta(0.7, 0.7, size=n_items)
        original, control = (rng.random((2, n_items)) < propensity).astype(float)
        score = twin_score([{"original": o, "control": c} for o, c in zip(original, control)])
        differences.append(score.original_only - score.twin_only)
        rejections += score.significant(ALPHA)
        positive += score.statistic > 0
    spread = np.std(differences) / math.sqrt(simulations)
    assert abs(np.mean(differences)) < 3 * spread  # centred at 0
    rate = rejections / simulations
    assert rate <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / simulations)  # the sign test holds its level
    assert positive / simulations <= 0.5 + 3 * math.sqrt(0.25 / simulations)  # S > 0 at most half the time


def test_controlled_levels_give_the_factor_interval_their_signed_items() -> None:
    levels = [f"dcr_toy_sentiment_l{n}" for n in (1, 2, 3, 4)]
    results = {"results": {}, "configs": {}, "n-samples": {}}
    rows = [{"contaminated,none": 0.5, "unchecked,none": 0.0},
            {"contaminated,none": 0.25, "unchecked,none": 0.0},
            {"contaminated,none": 0.25, "unchecked,none": 0.0, "original_only,none": 0.5, "control_only,none": 0.25},
            {"contaminated,none": 0.0, "unchecked,none": 0.0, "original_only,none": 0.25, "control_only,none": 0.5}]
    for level, (task, row) in enumerate(zip(levels, rows), start=1):
        results["results"][task] = row
        results["configs"][task] = {"metadata": {"dcr_sheet": "toy_sentiment", "dcr_level": level,
                                                 "check_mode": "controlled"}}
        results["n-samples"][task] = {"effective": 4}
    (scores,) = scores_from_results(results)[0].values()
    assert scores.check_mode == "controlled"
    assert [sorted(items.tolist()) for items in scores.level_items] == [
        [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0], [-1.0, 0.0, 1.0, 1.0], [-1.0, -1.0, 0.0, 1.0]]
