"""The order-pool study (issue 49 item 4): its scorer gives the numbers lm-eval's rolling scoring gives, its docs are
the audit's own, and the option-order tests on u hold (or not) their level at 24, 96 and 384 items as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from lm_eval_contam.kit.option_items import item_from_row
from lm_eval_contam.methods.optionorder.orders import DEFAULT_ARRANGEMENTS, DEFAULT_ORDERS
from lm_eval_contam.methods.optionorder.task import item_doc
from lm_eval_contam.nullstudy.scoring import (
    grouped_rolling_loglikelihoods,
    load_scorer,
    rolling_loglikelihoods,
    shared_prefix,
)
from lm_eval_contam.nullstudy.validation import render_question


def test_the_shared_prefix_is_cut_after_the_last_whole_shared_line() -> None:
    assert shared_prefix(["Q?\nA. x\nB. y\nAnswer:", "Q?\nA. y\nB. x\nAnswer:"]) == "Q?\n"
    assert shared_prefix(["Q1?\nA. x", "Q2?\nA. x"]) == ""
    assert shared_prefix(["same\n", "same\n"]) == "same\n"


def test_scoring_shared_lines_once_gives_each_whole_texts_score(tiny_model_dir: Path) -> None:
    """One item in every order the audit scores: the grouped pass equals scoring each text whole (float32 noise)."""
    item = item_from_row({"text": render_question("Which city is the capital of France?",
                                                  ["Paris", "Rome", "Madrid", "Berlin"]),
                          "choices": ["Paris", "Rome", "Madrid", "Berlin"]})
    doc = item_doc(item, "pool:0", 0, orders=DEFAULT_ORDERS, arrangements=DEFAULT_ARRANGEMENTS, seed=0,
                   all_orders=True)
    # 24 orders less the alphabetical one (deliberate: never scored); the 3! = 6 that keep Paris at A, the original first
    assert doc is not None and len(doc["texts"]) == 23 and doc["fixed"] == [0, 3, 9, 11, 19, 20]
    whole = rolling_loglikelihoods(str(tiny_model_dir), doc["texts"], batch_size=24)
    model, tokenizer, prefix = load_scorer(str(tiny_model_dir))
    grouped = grouped_rolling_loglikelihoods(model, tokenizer, prefix, doc["texts"])
    assert grouped == pytest.approx(whole, abs=1e-3)
    assert len(set(round(value, 3) for value in whole)) > 1  # the orders do score differently


def test_the_shipped_rates_are_those_of_the_shipped_scores() -> None:
    """Every number of ``verdicts/order_pool_rates.json`` recomputed from the shipped per-item scores (no model)."""
    import json

    from lm_eval_contam.nullstudy.order_pool import pool_rates, rates_document, scored
    from lm_eval_contam.verdicts.verdict import ORDER_POOL_RATES_FILE

    shipped = json.loads(ORDER_POOL_RATES_FILE.read_text(encoding="utf-8"))
    null, reference, filler = scored("null"), scored("reference"), scored("filler")
    assert len(null) == len(reference) == len(filler) == 768
    recomputed = rates_document(pool_rates(null, reference), command=shipped["command"], date=shipped["date"],
                                clean=pool_rates(reference, None), filler=pool_rates(filler, reference))
    assert recomputed == {key: value for key, value in shipped.items() if key != "detection"}


def test_on_the_filler_only_fine_tune_the_tests_on_u_hold_at_every_size_and_the_stricter_null_decides() -> None:
    """The design's null (a fine-tune on filler alone, no multiple-choice item): the three tests on u flag at most 3 %
    of draws at 24, 96 and 384 on both halves, the residualised one included, which the injected fine-tune's null
    (other multiple-choice items learned) puts over its level. A call needs both: the residualised and answer-kept
    tests still make none."""
    import json

    from lm_eval_contam.verdicts.verdict import ORDER_POOL_RATES_FILE, key_over_level, shipped_pool_filler_rates

    shipped = json.loads(ORDER_POOL_RATES_FILE.read_text(encoding="utf-8"))
    for test in ("option_order_reference", "option_order_reference_fixed_answer",
                 "option_order_reference_residualised"):
        for half in ("authored", "random", "both"):
            for size, entry in shipped["filler_sizes"][test][half].items():
                if "over_draws" in entry:
                    assert entry["over_draws"]["rate"] <= 0.03, (test, half, size)
                else:  # the half whole: one partition
                    assert entry["pvalue"] > 0.5, (test, half, size)
    assert shipped["sizes"]["option_order_reference_residualised"]["authored"]["96"]["over_draws"]["rate"] == 0.325
    filler = shipped_pool_filler_rates()
    assert {key for key in filler if key_over_level(key, filler)} == {
        "option_order", "option_order@fresh multiple choice", "option_order_arrangement",
        "option_order_arrangement@fresh multiple choice"}  # the authors' order, on the model's own log p
    assert key_over_level("option_order_reference_residualised")  # every shipped source: the injected null's


def test_the_shipped_detection_at_96_is_that_of_the_injected_items_scores() -> None:
    """``detection`` at 96 (each injected partition whole) recomputed from the shipped scores of the split study's
    injected items by its fine-tune and its reference (no model)."""
    import json

    from lm_eval_contam.nullstudy.order_pool import detection_rates, scored
    from lm_eval_contam.verdicts.verdict import ORDER_POOL_RATES_FILE

    shipped = json.loads(ORDER_POOL_RATES_FILE.read_text(encoding="utf-8"))["detection"]
    injected, reference = (scored(label, prefix="order_injected") for label in ("injected", "reference"))
    assert len(injected) == len(reference) == 384
    found = detection_rates(injected, reference, sizes=(96,))
    assert {test: sizes["96"] for test, sizes in found.items()} == {test: sizes["96"] for test, sizes in shipped.items()}
    # as the validation study reports them: the driving test finds 2 of the 4 injected partitions at 96
    assert {test: sizes["96"]["seeded"]["flagged"] for test, sizes in found.items()} == {
        "option_order_reference": 2, "option_order_reference_fixed_answer": 2, "option_order_reference_residualised": 4,
        "option_order": 3, "option_order_arrangement": 4}


def test_a_test_that_drifts_on_never_seen_items_makes_no_call_and_one_that_holds_still_drives() -> None:
    """On the pool's authored half the residualised test flags 33 of 200 24-item draws (its interval above 5 %) and
    the answer-kept test 19 of 200: both are over their level for any multiple-choice verdict. Option order on u
    (15 of 200) is not; on the random-order half (the null exact by construction) none is."""
    from lm_eval_contam.verdicts.verdict import key_over_level, shape_key, shipped_pool_rates

    rates = shipped_pool_rates()
    authored = {test: rates[shape_key(test, "fresh multiple choice")].false_positives
                for test in ("option_order_reference", "option_order_reference_fixed_answer",
                             "option_order_reference_residualised")}
    assert authored == {"option_order_reference": 15, "option_order_reference_fixed_answer": 19,
                        "option_order_reference_residualised": 33}
    over = {key for key in rates if key_over_level(key, rates)}
    assert over == {"option_order_reference_residualised", "option_order_reference_fixed_answer@fresh multiple choice",
                    "option_order_reference_residualised@fresh multiple choice",
                    # the tests on the model's own log p: the authors' order is the likelier one (below)
                    "option_order", "option_order@fresh multiple choice", "option_order_arrangement",
                    "option_order_arrangement@fresh multiple choice"}


def test_the_tests_on_log_p_hold_on_random_orders_and_drift_with_size_on_authored_ones() -> None:
    """Without a reference the option-order tests read the model's own log p. On the pool's random-order half (the
    null exact by construction) they hold their level at 24 and 96 on both models; on its authored half the authors'
    order is the likelier one to a model that never saw the items, and more items find it more often: the rank test
    flags 41 % of 24-item draws on the clean model and 81 % at 96 (every 384-item half: p < 0.0001), so a verdict on
    authored items cannot rest on them (both are over their level; the injected items, in random order, are 3/4 and
    4/4 at 96)."""
    import json

    from lm_eval_contam.verdicts.verdict import ORDER_POOL_RATES_FILE

    shipped = json.loads(ORDER_POOL_RATES_FILE.read_text(encoding="utf-8"))
    for sizes in (shipped["sizes"], shipped["clean_model_sizes"]):
        for test in ("option_order", "option_order_arrangement"):
            for size in ("24", "96"):
                random = sizes[test]["random"][size]["over_draws"]
                assert random["rate"] <= 0.05 and random["ci"][0] <= 0.05  # not over its level
                assert sizes[test]["authored"][size]["over_draws"]["ci"][0] > 0.3
            assert sizes[test]["authored"]["96"]["over_draws"]["rate"] > sizes[test]["authored"]["24"]["over_draws"]["rate"]
    clean = shipped["clean_model_sizes"]["option_order"]["authored"]
    assert (clean["24"]["over_draws"]["rate"], clean["96"]["over_draws"]["rate"]) == (0.41, 0.81)
    assert clean["384"]["pvalue"] < 0.0001


def test_a_test_on_u_is_shown_with_the_rate_that_decides_it_not_as_unmeasured() -> None:
    """Issue 51 group 8: the tests on u read "measured false-positive rate: not measured" though studies of fine-tunes
    measured them. Over its level: the rate that puts it there; else the highest of those studies' rates."""
    from types import SimpleNamespace

    from lm_eval_contam.report.layout import rate_text

    def shown(test: str) -> str:
        return rate_text(SimpleNamespace(test=test, variant=None, shape="multiple choice"))

    assert shown("option_order_reference_residualised") == (
        "12.0 % (24/200; 95 % CI 7.8–17.3 %) in the order-pool study (24-item draws from 768 never-seen "
        "multiple-choice items, a fine-tune of the default model against its reference)")
    assert shown("option_order_reference") == (
        "12.5 % (1/8; 95 % CI 0.3–52.6 %) in the validation study (never-seen natural-text partitions, a fine-tune on "
        "the same authors' other split against its reference)")
