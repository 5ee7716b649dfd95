"""The option-order test: items read from rendered benchmark docs, admissible orders, the exact rank test."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.optionorder import comparator_orders, item_from_row, original_rank, rank_test, render
from lm_eval_contam.methods.optionorder.orders import deliberate, positional_reason

SIMULATIONS = 1000
MMLU_STYLE = {"text": "Which gas do plants take in?\nA. Oxygen\nB. Carbon dioxide\nC. Helium\nD. Neon\nAnswer:",
              "answer": "B", "choices": ["A", "B", "C", "D"]}
ARC_STYLE = {"text": "Question: Which gas do plants take in?\nAnswer:", "answer": "carbon dioxide",
             "choices": ["oxygen", "carbon dioxide", "helium", "neon"]}


def test_listed_options_are_read_from_the_prompt_and_reordered_in_place() -> None:
    item = item_from_row(MMLU_STYLE)
    assert item is not None and item.listed
    assert item.options == ("Oxygen", "Carbon dioxide", "Helium", "Neon")
    assert render(item, (0, 1, 2, 3)) == MMLU_STYLE["text"]
    assert render(item, (3, 2, 1, 0)) == ("Which gas do plants take in?\nA. Neon\nB. Helium\nC. Carbon dioxide\n"
                                          "D. Oxygen\nAnswer:")


def test_continuation_choices_are_listed_after_the_prompt() -> None:
    item = item_from_row(ARC_STYLE)
    assert item is not None and not item.listed
    assert render(item, (1, 0, 2, 3)) == (ARC_STYLE["text"] + "\nA. carbon dioxide\nB. oxygen\nC. helium\nD. neon")


@pytest.mark.parametrize("row", [
    {"text": "Is the sky blue?", "choices": ["yes"]},                       # one choice
    {"text": "Pick one", "choices": ["A", "B", "C"]},                       # letters only, none listed
    {"text": "Pick one", "choices": ["same", "same"]},                      # identical choices
    {"text": "Free text with no options at all."},
])
def test_rows_that_are_not_items(row: dict) -> None:
    assert item_from_row(row) is None


def test_orders_made_on_purpose_are_recognised() -> None:
    assert positional_reason(["red", "blue", "All of the above"]) == "option 'All of the above' refers to other options"
    assert positional_reason(["red", "Both A and B", "blue"]) is not None
    assert positional_reason(["red", "blue", "above average"]) is None
    assert deliberate(["2", "4", "8", "16"]) and deliberate(["$30", "$20", "$10"]) and deliberate(["ant", "bee", "cat"])
    assert not deliberate(["4", "2", "8", "16"]) and not deliberate(["bee", "ant", "cat"]) and not deliberate(["b", "a"])


def test_comparator_orders_are_admissible_distinct_and_seeded() -> None:
    item = item_from_row({"text": "Q", "choices": ["1", "3", "2", "4"]})
    assert item is not None
    orders = comparator_orders(item, orders=5, seed=0, identity="Quiz test:7")
    assert len(orders) == 4 and len(set(orders)) == 4 and (0, 1, 2, 3) not in orders
    assert not any(deliberate([item.options[i] for i in order]) for order in orders)
    assert orders == comparator_orders(item, orders=5, seed=0, identity="Quiz test:7")
    assert orders != comparator_orders(item, orders=5, seed=0, identity="Quiz test:8")
    two = item_from_row({"text": "Q", "choices": ["left", "right"]})
    assert comparator_orders(two, orders=5, seed=0, identity="x") == [(1, 0)]  # all there is


def test_rank_test_exact_values() -> None:
    all_first = rank_test([1] * 10, [5] * 10)
    assert all_first.pvalue == pytest.approx(0.2 ** 10) and all_first.statistic == 1.0 and all_first.top_share == 1.0
    # Items of 2 and 5 orders: u = 1 and 3/4; P(U1 + U2 >= 1.75) = P(U1 = 1) P(U2 >= 3/4) = 0.5 * 0.4.
    mixed = rank_test([1, 2], [2, 5])
    assert mixed.pvalue == pytest.approx(0.2) and mixed.statistic == pytest.approx(0.875) and mixed.n == 2
    assert rank_test([5, 5, 5], [5, 5, 5]).pvalue == pytest.approx(1.0)
    with pytest.raises(ContamError):
        rank_test([6], [5])


def test_the_cannot_flag_caveat_uses_each_items_own_number_of_orders() -> None:
    from lm_eval_contam.methods.optionorder.verdicts import smallest_pvalue

    # Items of 2, 2 and 3 orders, every original first: the test's smallest p is 1/12 > 0.05 (not 3 ** -3 < 0.05).
    assert smallest_pvalue([2, 2, 3]) == pytest.approx(rank_test([1, 1, 1], [2, 2, 3]).pvalue) == pytest.approx(1 / 12)
    assert smallest_pvalue([5] * 10) == pytest.approx(rank_test([1] * 10, [5] * 10).pvalue)


def test_ties_are_broken_at_random_within_the_tied_places() -> None:
    ranks = {original_rank(1.0, [1.0, 1.0, 0.0, 2.0], seed=0, identity=str(i)) for i in range(50)}
    assert ranks == {2, 3, 4}


def test_rank_test_holds_its_level_when_orders_are_exchangeable() -> None:
    # The null by construction: each item's scores are fixed per order; the original is a uniform draw among its
    # admissible orders, the comparators a uniform draw of the rest (what comparator_orders does).
    rng = np.random.default_rng(0)
    pvalues = []
    for simulation in range(SIMULATIONS):
        ranks, sizes = [], []
        for _ in range(12):
            options = int(rng.integers(2, 5))
            orders = list(itertools.permutations(range(options)))
            scores = dict(zip(orders, rng.normal(size=len(orders)).round(1)))  # rounded: ties happen
            original = orders[int(rng.integers(len(orders)))]
            others = [order for order in orders if order != original]
            picked = [others[int(i)] for i in rng.choice(len(others), size=min(4, len(others)), replace=False)]
            ranks.append(original_rank(scores[original], [scores[p] for p in picked], seed=simulation,
                                       identity=str(len(ranks))))
            sizes.append(len(picked) + 1)
        pvalues.append(rank_test(ranks, sizes).pvalue)
    rate = float(np.mean(np.array(pvalues) <= ALPHA))
    assert rate <= ALPHA + 3 * (ALPHA * (1 - ALPHA) / SIMULATIONS) ** 0.5, rate
    assert rate >= 0.015, rate  # exact, not conservative to uselessness


def test_rank_test_detects_an_original_order_the_model_prefers() -> None:
    rng = np.random.default_rng(1)
    ranks = [1 if rng.random() < 0.6 else int(rng.integers(1, 6)) for _ in range(24)]
    assert rank_test(ranks, [5] * 24).significant(ALPHA)


def test_arrangement_orders_are_every_admissible_order_of_four_options() -> None:
    from lm_eval_contam.methods.optionorder.orders import arrangement_orders

    item = item_from_row(MMLU_STYLE)
    orders = arrangement_orders(item, arrangements=24, seed=0, identity="Quiz test:7")
    everything = [o for o in itertools.permutations(range(4)) if o != (0, 1, 2, 3)]
    admissible = [o for o in everything if not deliberate([item.options[i] for i in o])]
    assert sorted(orders) == sorted(admissible) and len(admissible) == 22  # the alphabetical order is left out
    assert orders == arrangement_orders(item, arrangements=24, seed=0, identity="Quiz test:7")
    many = item_from_row({"text": "Pick", "choices": [f"option {word}" for word in "kdqxmzt"]})
    sampled = arrangement_orders(many, arrangements=24, seed=0, identity="x")
    assert len(sampled) == 23 == len(set(sampled)) and tuple(range(7)) not in sampled


def test_the_gold_answer_is_found_as_an_index_a_letter_or_an_option_text() -> None:
    from lm_eval_contam.methods.optionorder.orders import answer_index, keeps_answer

    item = item_from_row(MMLU_STYLE)
    assert answer_index(item, "B") == 1 == answer_index(item, 1) == answer_index(item, "carbon dioxide ")
    assert answer_index(item, "Atlantis") is None and answer_index(item, 7) is None and answer_index(item, True) is None
    assert keeps_answer((2, 1, 0, 3), 1) and not keeps_answer((1, 2, 0, 3), 1)


def test_order_docs_carry_the_rank_tests_orders_first_then_every_arrangement(tmp_path) -> None:
    import json

    from lm_eval_contam.core.partitions import Partition
    from lm_eval_contam.methods.optionorder.task import OptionOrderSettings, order_docs

    rows = [{"text": f"Which word is number {i}?\nA. kiwi{i}\nB. fig\nC. lime\nD. date\nAnswer:", "answer": "C",
             "choices": ["A", "B", "C", "D"]} for i in range(3)]
    data = tmp_path / "quiz_test.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    partition = Partition.from_task_metadata({"dataset_name": "Quiz", "data_files": {"test": str(data)},
                                              "text_field": "text", "label_field": "answer", "task_type": "question",
                                              "columns": ["text", "answer"]}, "test")
    docs = order_docs(OptionOrderSettings(partition, num_instances=100, orders=5, arrangements=24, seed=0,
                                          all_orders=True), rows)
    doc = docs[0]
    # 24 orders less the alphabetical one (date, fig, kiwi0, lime: made on purpose, never drawn).
    assert doc["rank_orders"] == 5 and len(doc["texts"]) == 23 == len(set(doc["texts"])) == len(doc["arranged"])
    assert doc["texts"][0] == rows[doc["row_index"]]["text"]
    # The answer (lime, C) keeps its letter in 3! = 6 orders, the original among them.
    assert len(doc["fixed"]) == 6 and doc["fixed"][0] == 0
    assert all(doc["texts"][n].split("\n")[3] == "C. lime" for n in doc["fixed"])
    # Without a reference model only the rank test's orders are scored (the same five texts, the same draw).
    rank_only = order_docs(OptionOrderSettings(partition, num_instances=100, orders=5, arrangements=24, seed=0),
                           rows)[0]
    assert rank_only["texts"] == doc["texts"][:5] and rank_only["arranged"] == rank_only["fixed"] == []
