"""The reordered score's pure functions on hand cases: the orders, the per-item scores, the intervals, the exact p;
and the test's level and power simulated (issue 31)."""

from __future__ import annotations

import itertools
import logging
from fractions import Fraction

import numpy as np
import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import check_run_metadata
from lm_eval_contam.methods.reordered.benchmark_tasks import adjustment_tasks
from lm_eval_contam.methods.reordered.hook import post_process_results
from lm_eval_contam.methods.reordered.orders import (
    check_reference_items,
    check_reorderings,
    default_reorderings,
    reference_items,
    reference_share,
    reordered_docs,
    why_not_reordered,
)
from lm_eval_contam.methods.reordered.stats import ItemScores, exchangeable_pvalue, item_scores, reordered_score
from lm_eval_contam.methods.reordered.task import aggregate

LISTED = "Which tool cuts wood?\nA. saw\nB. spoon\nC. pillow\nD. kettle\nAnswer:"


def test_a_listed_item_gets_k_seeded_reorderings_and_the_answer_moves_with_its_option() -> None:
    docs = reordered_docs(7, LISTED, ["A", "B", "C", "D"], 0, reorderings=4, seed=0)
    assert [(d.item, d.order, d.moved, d.gold) for d in docs] == [
        (7, 0, (0, 1, 2, 3), 0), (7, 1, (2, 0, 3, 1), 1), (7, 2, (0, 2, 3, 1), 0), (7, 3, (1, 2, 3, 0), 3),
        (7, 4, (3, 1, 2, 0), 3)]
    assert docs[0].text == LISTED
    assert docs[1].text == "Which tool cuts wood?\nA. pillow\nB. saw\nC. kettle\nD. spoon\nAnswer:"
    for doc in docs:  # the gold letter's line is the answer's text in every form; the choices stay the letters
        assert doc.choices == ("A", "B", "C", "D")
        assert f"\n{'ABCD'[doc.gold]}. saw\n" in doc.text
    # Seeded by the item's content: the same item elsewhere gets the same reorderings; another seed others.
    assert [d.moved for d in reordered_docs(0, LISTED, ["A", "B", "C", "D"], 0, reorderings=4, seed=0)] == \
        [d.moved for d in docs]
    assert [d.moved for d in reordered_docs(7, LISTED, ["A", "B", "C", "D"], 0, reorderings=4, seed=1)] != \
        [d.moved for d in docs]


def test_choices_that_are_the_options_texts_move_with_them() -> None:
    text = "Pick one:\nA. red\nB. blue\nC. green"
    docs = reordered_docs(0, text, ["red", "blue", "green"], 1, reorderings=9, seed=0)
    assert len(docs) == 1 + 4  # 3! - 1 = 5 other orders, less the alphabetical one (blue, green, red)
    for doc in docs[1:]:
        assert doc.choices[doc.gold] == "blue" and doc.choices == tuple(["red", "blue", "green"][i] for i in doc.moved)
        assert doc.text == "Pick one:\n" + "\n".join(f"{'ABC'[i]}. {c}" for i, c in enumerate(doc.choices))
    assert ("blue", "green", "red") not in {d.choices for d in docs}


@pytest.mark.parametrize(("text", "choices", "why"), [
    ("Which tool cuts wood?\nAnswer:", ["saw", "spoon", "pillow"], "not shown in the prompt"),
    ("Pick:\nA. cat\nB. dog\nC. All of the above", ["A", "B", "C"], "refers to other options"),
    ("How many legs?\nA. 2\nB. 4\nC. 6\nD. 8", ["A", "B", "C", "D"], "sorted"),
    ("Q\nA. x", ["A"], "fewer than two"),
])
def test_an_item_that_cannot_be_reordered_keeps_its_original_form_only(text: str, choices: list[str],
                                                                       why: str) -> None:
    assert why in (why_not_reordered(text, choices) or "")
    assert [d.order for d in reordered_docs(0, text, choices, 0, reorderings=4, seed=0)] == [0]


THIRTY = [f"option {n}" for n in range(1, 31)]


@pytest.mark.parametrize(("text", "choices", "why"), [
    ("Pick:\n" + "\n".join(f"{n}. {option}" for n, option in enumerate(THIRTY, start=1)) + "\nAnswer:",
     [str(n) for n in range(1, 31)], "its prompt lists 30 options by number (1., 2., ...): only options listed by "
                                     "letter (A., B., ...) are moved in the prompt"),
    ("Pick:\n" + "\n".join(f"{letter}. {option}" for letter, option in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", THIRTY)),
     THIRTY, "it has 30 options, more than the 26 letters (A.-Z.) a prompt lists options by"),
    ("Pick:\nA. same\nB. same\nC. same\nD. same\nAnswer:", ["A", "B", "C", "D"],
     "its 4 options are all the same text ('same'): every order reads the same"),
])
def test_thirty_numbered_options_or_four_identical_ones_say_the_real_reason(text: str, choices: list[str],
                                                                              why: str) -> None:
    """Issue 41: these read "not shown in the prompt" and "sorted"."""
    assert why_not_reordered(text, choices) == why
    assert [d.order for d in reordered_docs(0, text, choices, 0, reorderings=4, seed=0)] == [0]


def test_an_item_with_fewer_other_orders_than_k_gets_them_all_and_k_zero_none() -> None:
    assert [d.moved for d in reordered_docs(0, "Q\nA. cat\nB. dog", ["A", "B"], 1, reorderings=4, seed=0)] == \
        [(0, 1), (1, 0)]
    assert len(reordered_docs(0, LISTED, ["A", "B", "C", "D"], 0, reorderings=0, seed=0)) == 1
    with pytest.raises(ContamError, match="gold index 4"):
        reordered_docs(3, LISTED, ["A", "B", "C", "D"], 4, reorderings=4, seed=0)


@pytest.mark.parametrize(("items", "k"), [(1, 4), (40, 4), (250, 4), (251, 3), (334, 2), (500, 2), (501, 1),
                                          (1000, 1), (14042, 1)])
def test_with_no_k_given_a_large_benchmark_gets_fewer_reorderings_per_item(items: int, k: int) -> None:
    # Four per item up to 250 items, then about 1,000 reordered forms in all, at least one per item (docs/guide/cost.md).
    assert default_reorderings(items) == k


@pytest.mark.parametrize("value", [True, -1, 24, "4", 2.0])
def test_a_bad_number_of_reorderings_is_refused(value: object, tmp_path) -> None:
    with pytest.raises(ContamError, match="reorderings"):
        check_reorderings(value)
    with pytest.raises(ContamError, match="reorderings"):  # before any task is loaded or written
        adjustment_tasks(["listed_mc"], None, {"reorderings": value}, home=tmp_path / "home")
    assert not (tmp_path / "home").exists()
    if not isinstance(value, str) and not isinstance(value, float):
        with pytest.raises(ContamError, match="'reorderings'"):
            check_run_metadata({"reorderings": value})
    assert check_reorderings(0) == 0 and check_reorderings(23) == 23


def test_item_scores_group_the_forms_by_item_and_refuse_what_cannot_be_paired() -> None:
    records = [{"item": 1, "order": 2, "correct": 0.0}, {"item": 0, "order": 0, "correct": 1.0},
               {"item": 1, "order": 0, "correct": 1.0}, {"item": 1, "order": 1, "correct": 1.0}]
    assert item_scores(records) == [ItemScores(0, 1.0, ()), ItemScores(1, 1.0, (1.0, 0.0))]
    with pytest.raises(ContamError, match="item 0 has two original"):
        item_scores([{"item": 0, "order": 0, "correct": 1}, {"item": 0, "order": 0, "correct": 0}])
    with pytest.raises(ContamError, match="item 5 has reorderings but no original"):
        item_scores([{"item": 5, "order": 1, "correct": 1}])
    with pytest.raises(ContamError, match="not 0 or 1"):
        item_scores([{"item": 0, "order": 0, "correct": 0.5}])


def test_the_exact_p_on_hand_cases() -> None:
    # K = 1: the sign-flip case: three items right only in the original order: p = 1/8.
    assert exchangeable_pvalue([ItemScores(i, 1.0, (0.0,)) for i in range(3)]) == pytest.approx(1 / 8)
    # K = 2, one item right only in the original: the original is that form with probability 1/3.
    assert exchangeable_pvalue([ItemScores(0, 1.0, (0.0, 0.0))]) == pytest.approx(1 / 3)
    assert exchangeable_pvalue([ItemScores(i, 1.0, (0.0, 0.0)) for i in range(2)]) == pytest.approx(1 / 9)
    # Mixed K (1 and 2): 1/2 * 1/3.
    assert exchangeable_pvalue([ItemScores(0, 1.0, (0.0,)), ItemScores(1, 1.0, (0.0, 0.0))]) == pytest.approx(1 / 6)
    # The original worse than its reorderings, or every form alike: no evidence against H0.
    assert exchangeable_pvalue([ItemScores(0, 0.0, (1.0, 0.0))]) == 1.0
    assert exchangeable_pvalue([ItemScores(0, 1.0, (1.0, 1.0)), ItemScores(1, 1.0, ())]) == 1.0


def _brute_force(items: list[ItemScores]) -> Fraction:
    """P(T >= t) by enumerating which form is the original in every item (each equally likely)."""
    forms = [(item.original, *item.reordered) for item in items]

    def total(choice: tuple[int, ...]) -> Fraction:
        return sum((Fraction(int(f[j])) - Fraction(int(sum(f) - f[j]), len(f) - 1) for f, j in zip(forms, choice)),
                   Fraction(0))
    observed = total(tuple(0 for _ in forms))
    choices = list(itertools.product(*(range(len(f)) for f in forms)))
    return Fraction(sum(total(c) >= observed for c in choices), len(choices))


@pytest.mark.parametrize("case", range(6))
def test_the_exact_p_is_the_enumerated_relabelling_distribution(case: int) -> None:
    rng = np.random.default_rng(case)
    items = []
    for index in range(6):
        k = int(rng.integers(1, 4))
        forms = rng.integers(0, 2, size=k + 1).astype(float)
        items.append(ItemScores(index, float(forms[0]), tuple(forms[1:])))
    assert exchangeable_pvalue(items) == pytest.approx(float(_brute_force(items)), abs=1e-12)


def test_the_score_and_its_paired_intervals_on_hand_items() -> None:
    items = [ItemScores(0, 1.0, (1.0, 0.0, 0.0, 0.0)), ItemScores(1, 0.0, (0.0, 0.0, 0.0, 0.0)),
             ItemScores(2, 1.0, (1.0, 1.0, 1.0, 1.0)), ItemScores(3, 1.0, ())]
    score = reordered_score(items)
    assert (score.original, score.reordered, score.gap) == (0.75, 0.5625, 0.1875)
    assert (score.n_items, score.n_reordered, score.reorderings) == (4, 3, 4)
    assert score.pvalue == pytest.approx(2 / 5)  # item 0 alone informs: 2 of its 5 forms are right
    assert 0.0 <= score.reordered_interval.low <= 0.5625 <= score.reordered_interval.high <= 1.0
    assert 0.0 <= score.gap_interval.low <= 0.1875 <= score.gap_interval.high <= 0.75
    assert reordered_score(items) == score  # seeded
    # Every item loses the same on reordering: the paired gap's interval is that one number.
    same = reordered_score([ItemScores(i, 1.0, (0.0,)) for i in range(5)])
    assert (same.gap_interval.low, same.gap_interval.high, same.reordered_interval.high) == (1.0, 1.0, 0.0)
    # Two items, gaps 1 and 0: a resampled mean is 0, 1/2 or 1 (1/4, 1/2, 1/4): the 2.5 % and 97.5 % points are 0 and 1.
    two = reordered_score([ItemScores(0, 1.0, (0.0,)), ItemScores(1, 0.0, (0.0,))])
    assert (two.gap, two.gap_interval.low, two.gap_interval.high) == (0.5, 0.0, 1.0)
    assert (two.reordered, two.reordered_interval.low, two.reordered_interval.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ContamError, match="no items"):
        reordered_score([])


def _simulated(rng: np.random.Generator, n: int, k: int, boost: float) -> list[ItemScores]:
    """Items of random difficulty, each form right independently (exchangeable); ``boost`` raises the original's."""
    items = []
    for index in range(n):
        p = rng.uniform(0.1, 0.9)
        reorderable = rng.random() < 0.8  # a fifth of the items keep their original order only
        original = float(rng.random() < min(1.0, p + boost))
        items.append(ItemScores(index, original,
                                tuple(float(x) for x in rng.random(k) < p) if reorderable else ()))
    return items


def test_the_gap_test_holds_its_level_and_the_interval_its_coverage_when_orders_are_exchangeable() -> None:
    rng = np.random.default_rng(31)
    runs = [reordered_score(_simulated(rng, 60, 4, 0.0), n_resamples=500, seed=run) for run in range(400)]
    level = np.mean([run.pvalue <= 0.05 for run in runs])
    covered = np.mean([run.gap_interval.low <= 0.0 <= run.gap_interval.high for run in runs])
    # An exact test: at most 5 % (binomial sd over 400 runs: 1.1 points); a test that never rejects fails the floor.
    assert 0.02 <= level <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / 400), level
    assert covered >= 0.92, covered


def test_the_gap_test_finds_a_memorised_original_order() -> None:
    rng = np.random.default_rng(32)
    pvalues = [exchangeable_pvalue(_simulated(rng, 60, 4, 0.3)) for _ in range(100)]
    assert np.mean(np.array(pvalues) <= 0.05) >= 0.8


def test_the_aggregations_and_the_hook_put_the_rows_beside_the_benchmark(caplog: pytest.LogCaptureFixture) -> None:
    records = [{"item": 0, "order": 0, "correct": 1.0}, {"item": 0, "order": 1, "correct": 0.0},
               {"item": 1, "order": 0, "correct": 1.0}, {"item": 1, "order": 1, "correct": 1.0}]
    assert aggregate("_reordered", 0, 200)(records) == 0.5
    assert aggregate("_reordered_gap", 0, 200)(records) == 0.5
    assert aggregate("_reordered_p", 0, 200)(records) == pytest.approx(0.5)
    results = {"results": {"bench": {"alias": "bench", "acc,none": 1.0, "acc_stderr,none": 0.0},
                           "reordered_bench": {"alias": "reordered_bench", "acc_reordered,none": 0.5,
                                               "acc_reordered_stderr,none": "N/A", "acc_reordered_p,none": 0.5}},
               "configs": {"reordered_bench": {"metadata": {"method": "reordered", "reordered_benchmark": "bench"}},
                           "orphan": {"metadata": {"method": "reordered", "reordered_benchmark": "gone"}}},
               "higher_is_better": {"reordered_bench": {"acc_reordered": True}}}
    results["results"]["orphan"] = {"acc_reordered,none": 0.1}
    with caplog.at_level(logging.WARNING, logger="lm_eval_contam.methods.reordered"):
        post_process_results(results)
    assert results["results"]["bench"] == {"alias": "bench", "acc,none": 1.0, "acc_stderr,none": 0.0,
                                           "acc_reordered,none": 0.5, "acc_reordered_p,none": 0.5}
    assert results["higher_is_better"]["bench"] == {"acc_reordered": True}
    assert "gone is not in this run's results" in caplog.text


def test_the_first_screen_shows_the_reordered_score_beside_acc_and_acc_adj() -> None:
    from types import SimpleNamespace

    from lm_eval_contam.report import layout

    reordered = {"acc_reordered,none": 0.55, "acc_reordered_ci_low,none": 0.52, "acc_reordered_ci_high,none": 0.58,
                 "acc_reordered_gap,none": 0.07, "acc_reordered_gap_ci_low,none": 0.04,
                 "acc_reordered_gap_ci_high,none": 0.1, "acc_reordered_p,none": 0.003}
    results = {"results": {
        "mmlu_x": {"acc,none": 0.62, "acc_adj,none": 0.6, "acc_adj_ci_low,none": 0.5, "acc_adj_ci_high,none": 0.7,
                   **reordered},
        "mmlu_y": {"acc,none": 0.62, "acc_stderr,none": 0.01, **reordered},  # no DCR sheet could be built
        "reordered_mmlu_y": dict(reordered)},  # the reordered task's own row: no acc, not a benchmark score
        "benchmark_scoring": {"tasks": ["mmlu_x", "mmlu_y"]}}
    scores = layout.benchmark_scores([SimpleNamespace(label="m", results=results)])
    assert [(s.task, s.metric, s.adjusted) for s in scores] == [("mmlu_x", "acc,none", 0.6), ("mmlu_y", "acc,none", None)]
    assert scores[1].caveats == (layout.NO_ADJUSTMENT,) and not scores[0].caveats
    assert layout.reordered_text(scores[0]) == "0.5500 (95 % CI 0.5200–0.5800)"
    assert layout.gap_text(scores[0]) == "0.0700 (95 % CI 0.0400–0.1000), p = 0.0030"
    assert layout.adjusted_heading() == "adjusted (DCR)"
    bare = layout.BenchmarkScore("m", "arc", "acc,none", 0.5, None, None, None, "")
    assert (layout.reordered_text(bare), layout.gap_text(bare)) == ("—", "—")


def test_a_task_whose_options_are_not_in_its_prompt_gets_no_reordered_task() -> None:
    from types import SimpleNamespace

    from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc
    from lm_eval_contam.methods.reordered.benchmark_tasks import task_rows

    def task(docs: list[dict], multiple_input: int = 0) -> SimpleNamespace:
        return SimpleNamespace(multiple_input=multiple_input, eval_docs=docs,
                               config=SimpleNamespace(description="About {{topic}}."),
                               resolve_field=lambda doc, field: field.replace("{{topic}}", doc["topic"]))

    arc = [BenchmarkDoc("arc", 0, "Which tool cuts wood?\nAnswer:", "saw", ("saw", "spoon", "pillow"),
                        "multiple_choice")]
    with pytest.raises(ContamError, match="no item can be reordered .the first: its options are not shown"):
        task_rows("arc", task([{"topic": "tools"}]), arc, reorderings=4, seed=0)
    with pytest.raises(ContamError, match="multiple input"):
        task_rows("wino", task([{"topic": "x"}], multiple_input=2), arc, reorderings=4, seed=0)
    mixed = [*arc, BenchmarkDoc("mixed", 1, LISTED, "A", ("A", "B", "C", "D"), "multiple_choice")]
    rows = task_rows("mixed", task([{"topic": "tools"}, {"topic": "wood"}]), mixed, reorderings=2, seed=0)
    assert [(row["item"], row["order"], row["gold"]) for row in rows] == [(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 2, 3)]
    assert [row["description"] for row in rows] == ["About tools.", "About wood.", "About wood.", "About wood."]
    assert rows[2]["text"] == reordered_docs(1, LISTED, ["A", "B", "C", "D"], 0, reorderings=2, seed=0)[1].text


def test_a_group_gets_its_subtasks_items_pooled(caplog: pytest.LogCaptureFixture) -> None:
    def forms(*items: tuple[float, float]) -> list[dict]:  # (original, reordered) per item, K = 1
        return [{"acc_reordered": {"item": number, "order": order, "correct": correct}}
                for number, pair in enumerate(items) for order, correct in enumerate(pair)]

    def results(samples: dict | None) -> dict:
        found = {"results": {name: {"alias": name} for name in ("b1", "b2", "grp", "top")},
                 "groups": {"grp": {"alias": "grp"}, "top": {"alias": "top"}},
                 "group_subtasks": {"top": ["grp"], "grp": ["b1", "b2"]},
                 "configs": {f"reordered_{b}": {"metadata": {"method": "reordered", "reordered_benchmark": b}}
                             for b in ("b1", "b2")},
                 "higher_is_better": {"reordered_b1": {"acc_reordered": True}}}
        found["results"].update({f"reordered_{b}": {"acc_reordered,none": 0.0} for b in ("b1", "b2")})
        if samples is not None:
            found["samples"] = samples
        return found

    # b1: two items right in the original order, one lost on reordering; b2: one item, right in both.
    done = post_process_results(results({"reordered_b1": forms((1.0, 0.0), (1.0, 1.0)),
                                         "reordered_b2": forms((1.0, 1.0))}))
    pooled = reordered_score([ItemScores(0, 1.0, (0.0,)), ItemScores(1, 1.0, (1.0,)), ItemScores(2, 1.0, (1.0,))],
                             name="grp")
    for group in ("grp", "top"):  # a nested group pools the same leaves
        row = done["groups"][group]
        assert row["acc_reordered,none"] == pytest.approx(2 / 3) and row["acc_reordered_items,none"] == 3
        assert row["acc_reordered_gap,none"] == pytest.approx(1 / 3)
        assert row["acc_reordered_p,none"] == pytest.approx(pooled.pvalue)
        assert done["results"][group]["acc_reordered,none"] == pytest.approx(2 / 3)
    assert done["higher_is_better"]["grp"] == {"acc_reordered": True}
    with caplog.at_level(logging.INFO, logger="lm_eval_contam.methods.reordered"):
        bare = post_process_results(results(None))
    assert "acc_reordered,none" not in bare["groups"]["grp"]
    assert "group grp: no pooled reordered score without the subtasks' samples (--log_samples)" in caplog.text


@pytest.mark.parametrize(("items", "named", "most", "share"), [
    (100, 5700, 1000, 18), (100, 1000, 1000, 100), (1000, 1000, 1000, 1000), (5000, 5000, 1000, 1000),
    (100, 5700, 0, 100), (3, 100_000, 1000, 1), (40, 40, 1000, 40)])
def test_the_reference_scores_a_proportional_share_of_a_large_task_or_groups_items(items: int, named: int,
                                                                                  most: int, share: int) -> None:
    # About `most` items of the task or group named, each subtask in proportion (at least one); 0: every item.
    assert reference_share(items, named, most) == share


def test_the_reference_sample_is_seeded_by_the_item_and_a_larger_one_holds_a_smaller_one(tmp_path) -> None:
    from lm_eval_contam.core.jsonl import write_jsonl
    from lm_eval_contam.methods.reordered.benchmark_tasks import reference_doc_indices

    three, five = reference_items(10, 3, 0, "b"), reference_items(10, 5, 0, "b")
    assert len(three) == 3 and three < five <= frozenset(range(10))
    assert reference_items(10, 3, 0, "b") == three  # reruns and shards agree
    assert reference_items(10, 10, 0, "b") == frozenset(range(10))
    rows = [{"item": item, "order": order, "reference": item in three} for item in range(10) for order in (0, 1)]
    path = write_jsonl(tmp_path / "docs.jsonl", rows)
    assert reference_doc_indices({"reordered_docs": str(path)}) == [
        position for position, row in enumerate(rows) if row["item"] in three]
    every = write_jsonl(tmp_path / "every.jsonl", [{**row, "reference": True} for row in rows])
    assert reference_doc_indices({"reordered_docs": str(every)}) is None
    for value in (True, -1, "4", 2.0):
        with pytest.raises(ContamError, match="reference_items"):
            check_reference_items(value, source="--reference-items")
    with pytest.raises(ContamError, match="reference_items"):
        adjustment_tasks([], None, metadata={"reference_items": -3})


def test_the_gap_less_the_references_pairs_items_by_subtask_and_pools_a_group() -> None:
    from lm_eval_contam.core.registry import REFERENCE_SAMPLES_KEY
    from lm_eval_contam.methods.reordered.stats import reference_gap_score

    def forms(*items: tuple[int, float, float]) -> list[dict]:  # (item, original, reordered) per item, K = 1
        return [{"acc_reordered": {"item": number, "order": order, "correct": correct}}
                for number, *pair in items for order, correct in enumerate(pair)]

    results = {"results": {name: {"alias": name} for name in ("b1", "b2", "grp")},
               "groups": {"grp": {"alias": "grp"}}, "group_subtasks": {"grp": ["b1", "b2"]},
               "configs": {f"reordered_{b}": {"metadata": {"method": "reordered", "reordered_benchmark": b}}
                           for b in ("b1", "b2")},
               "samples": {"reordered_b1": forms((0, 1.0, 0.0), (1, 1.0, 1.0)), "reordered_b2": forms((0, 1.0, 1.0))},
               # The reference scored a sample: b1's item 1 (gap 0) and b2's item 0 (gap -1), not b1's item 0.
               REFERENCE_SAMPLES_KEY: {"reordered_b1": forms((1, 1.0, 1.0)), "reordered_b2": forms((0, 0.0, 1.0))}}
    results["results"].update({f"reordered_{b}": {"acc_reordered,none": 0.0} for b in ("b1", "b2")})
    done = post_process_results(results)
    assert done["results"]["b1"]["acc_reordered_gap_vs_reference,none"] == 0.0
    assert done["results"]["b1"]["acc_reordered_gap_vs_reference_items,none"] == 1
    assert done["results"]["b2"]["acc_reordered_gap_vs_reference,none"] == 1.0
    # The group pairs b1's item 1 with b1's and b2's item 0 with b2's (never b1's item 0 with b2's): gaps 0 and 1.
    expected = reference_gap_score([ItemScores(0, 1.0, (1.0,)), ItemScores(1, 1.0, (1.0,))],
                                   [ItemScores(0, 1.0, (1.0,)), ItemScores(1, 0.0, (1.0,))], name="group grp")
    row = done["groups"]["grp"]
    assert (row["acc_reordered_gap_vs_reference,none"], row["acc_reordered_gap_vs_reference_items,none"],
            row["acc_reordered_gap_vs_reference_p,none"], row["acc_reordered_items,none"]) == \
        (0.5, 2.0, expected.pvalue, 3.0)
