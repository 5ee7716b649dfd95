"""The split-control tests' level at every size they run at, on real scored items (issue 49).

The items: the default model's shipped scores of the split-control study's never-injected pool
(``lm_eval_contam/nullstudy/scored/split_control_clean.jsonl``: 4 free-text and 4 multiple-choice seeded datasets,
4,304 items). Split at random, the two sides are exchangeable, and the split-label test's rejection rate at 0.05 lies
in its binomial 95 % interval of 5 % at 24, 96, 384 and 2,000 items a side (2,000 relabellings each). Split another way
(by length, by source, upper-cased, other words, another template), the comparability check on the items compared
catches it and the verdict is not computed. The level assertions read the rejection rate's 95 % interval for the split-
label test (the issue's bar) and the 99.9 % interval for the check's own level, whose several sizes would otherwise
fail one run in seven by chance (at 384 items a side these seeds give 21/200; 12/300 on other seeds). Each relabelling test here draws 19 relabellings: with the +1 correction
p <= 0.05 exactly when none of the 19 reaches the observed statistic, a rejection of probability 1/20 under H0 — the
level the audit's 10,000 relabellings keep, at a fraction of the cost.
"""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.core.split_tests import (
    binomial_interval,
    cluster_label_test,
    shared_context_clusters,
    split_units,
    texts_differ_test,
    within_level,
)
from lm_eval_contam.nullstudy.split_control import scored

RELABELLINGS = 2000


@pytest.fixture(scope="module")
def pool() -> list[dict]:
    return scored("clean")


def random_split_rejections(scores: np.ndarray, size: int, runs: int, *, seed: int,
                            clusters: np.ndarray | None = None, by_item: bool = False) -> int:
    """How often the split-label test rejects at 0.05 on ``runs`` random splits of ``size`` items (or clusters) a side."""
    rng = np.random.default_rng(seed)
    units = np.arange(scores.size) if clusters is None else np.unique(clusters)
    hits = 0
    for run in range(runs):
        chosen = rng.permutation(units)[: 2 * size]
        items = chosen if clusters is None else np.flatnonzero(np.isin(clusters, chosen))
        side = np.isin(items if clusters is None else clusters[items], chosen[:size])
        ids = None if clusters is None or by_item else clusters[items]
        hits += cluster_label_test(scores[items], side, ids, seed=run, n_resamples=19).pvalue <= 0.05
    return hits


@pytest.mark.parametrize("size", [24, 96, 384, 2000])
def test_the_split_label_test_holds_its_level_on_random_splits_at_every_size(pool: list[dict], size: int) -> None:
    scores = np.array([row["per_byte"] for row in pool])
    hits = random_split_rejections(scores, size, RELABELLINGS, seed=size)
    assert within_level(hits, RELABELLINGS), (hits, binomial_interval(hits, RELABELLINGS))


def test_clustered_items_hold_the_level_only_when_relabelled_as_clusters(pool: list[dict]) -> None:
    """Items sharing a passage score alike: relabelled one by one they reject far above 5 %; as clusters, at 5 %."""
    rng = np.random.default_rng(7)
    passages = np.repeat(np.arange(1000), 4)  # 1,000 passages of 4 questions, each passage's shift shared
    scores = rng.normal(size=1000)[passages] + 0.3 * rng.normal(size=passages.size)
    as_clusters = random_split_rejections(scores, 96, RELABELLINGS, seed=1, clusters=passages)
    assert within_level(as_clusters, RELABELLINGS)
    by_item = random_split_rejections(scores, 96, 400, seed=2, clusters=passages, by_item=True)
    assert by_item / 400 > 0.12  # 16 % here; at 5 % the chance of 48 or more of 400 is below 1e-7


def test_the_items_compared_a_side_leave_out_units_holding_both_splits() -> None:
    """A verdict's sides are the items its test relabels: a passage holding items of both splits is left out of both,
    so 96 items a side with 70 of each in shared passages compare 26 a side (the size whose rates it quotes)."""
    passages = [*range(70), *range(100, 126), *range(70), *range(200, 226)]  # 70 shared passages, 26 of each alone
    units = split_units([True] * 96 + [False] * 96, passages)
    assert (units.partition, units.control, units.items, units.mixed_items, units.sides) == (26, 26, 52, 140, (26, 26))
    assert split_units([True] * 3 + [False] * 5, None).sides == (3, 5)


def test_the_options_mode_relabels_items_sharing_a_passage_as_wholes() -> None:
    """The options mode's gap, like the control mode's scores, is compared with items sharing a passage relabelled as
    one unit: with 4 questions a passage its p is the cluster test's, not the item-by-item one's; every passage shared
    by both splits leaves nothing to relabel (NaN, read "not tested"); singletons keep scipy's test as before."""
    from lm_eval_contam.methods.likelihood.stats import option_test, two_sample_test

    rng = np.random.default_rng(3)
    passages = np.repeat(np.arange(60), 4)
    gaps = rng.normal(size=60)[passages] + 0.3 * rng.normal(size=passages.size)
    side = passages < 30
    records = [{"group": "partition" if mine else "control", "cluster": int(cluster), "gap": float(gap)}
               for mine, cluster, gap in zip(side, passages, gaps)]
    found = option_test(records, seed=5)
    expected = cluster_label_test(gaps, side, passages, seed=5)
    assert (found.pvalue, found.clusters) == (expected.pvalue, (30, 30))
    shared = [{**record, "group": "partition" if number % 2 else "control"} for number, record in enumerate(records)]
    assert np.isnan(option_test(shared, seed=5).pvalue)
    singletons = [{**record, "cluster": number} for number, record in enumerate(records[::6])]
    assert option_test(singletons, seed=5).pvalue == two_sample_test(
        [r["gap"] for r in singletons if r["group"] == "partition"],
        [r["gap"] for r in singletons if r["group"] == "control"], seed=5).pvalue


def test_clusters_are_items_sharing_a_passage_or_options_not_the_template() -> None:
    template = "Answer with the letter of the best option."
    texts = [f"Passage {i}: the river rose {i} metres overnight and the bridge closed.\nQuestion {j}?\n{template}"
             for i in range(100) for j in range(2)]
    texts += [f"Question {i} about boats?" for i in range(4)]
    choices = [["A", "B"]] * 200 + [["the red boat", "the blue boat"]] * 2 + [["a kite", "a drum"]] * 2
    ids = shared_context_clusters(texts, choices)
    assert ids[0] == ids[1] != ids[2] == ids[3] and len(set(ids[:200])) == 100  # the passages, not the template
    assert ids[200] == ids[201] != ids[202] == ids[203]  # item-specific option texts shared
    # one option set shared by every item is the task's own (e.g. A/B/C/D): it links nothing
    assert len(set(shared_context_clusters([f"question {i} of the quiz" for i in range(100)], [["A", "B"]] * 100))) == 100


def _rejections(make_pair, sizes_runs, seed: int) -> dict[int, int]:
    found = {}
    for size, runs in sizes_runs:
        rng = np.random.default_rng(seed + size)
        found[size] = sum(texts_differ_test(*make_pair(rng, size), seed=run, n_resamples=19).differ()
                          for run in range(runs))
    return found


def _random_halves(texts: list[str]):
    def pair(rng: np.random.Generator, size: int) -> tuple[list[str], list[str]]:
        chosen = rng.permutation(len(texts))[: 2 * size]
        return [texts[i] for i in chosen[:size]], [texts[i] for i in chosen[size:]]
    return pair


def test_the_comparability_check_holds_its_level_on_random_splits(pool: list[dict]) -> None:
    texts = [row["text"] for row in pool]
    found = _rejections(_random_halves(texts), [(24, 400), (96, 400), (384, 200), (2000, 20)], seed=0)
    for size, runs in ((24, 400), (96, 400), (384, 200)):
        assert within_level(found[size], runs, confidence=0.999), (size, found)
    assert found[2000] <= 4  # 20 runs: at 5 %, 4 or more has probability 0.016


def _other_kind(texts: list[str], change):
    def pair(rng: np.random.Generator, size: int) -> tuple[list[str], list[str]]:
        chosen = rng.permutation(len(texts))[: 2 * size]
        return [texts[i] for i in chosen[:size]], [change(texts[i], rng) for i in chosen[size:]]
    return pair


OTHER_WORDS = {"the": "our", "a": "one", "of": "off", "and": "plus", "with": "amid", "in": "at", "to": "unto"}


def _other_words(text: str, rng: np.random.Generator) -> str:
    """Other words, padded to the same length: each common function word swapped for another, then cut or padded."""
    changed = " ".join(OTHER_WORDS.get(word, word) for word in text.split(" "))
    return (changed + " " * len(text))[: len(text)]


SECOND_SPLITS = {
    "upper-cased": lambda text, rng: text.upper(),
    "other words, same lengths": _other_words,
    "another template": lambda text, rng: "Q: " + text.replace("\nAnswer:", "\nThe answer is"),
}


@pytest.mark.parametrize("kind", sorted(SECOND_SPLITS))
def test_the_check_catches_a_second_split_of_another_kind(pool: list[dict], kind: str) -> None:
    texts = [row["text"] for row in pool]
    found = _rejections(_other_kind(texts, SECOND_SPLITS[kind]), [(24, 40), (96, 20), (384, 5)], seed=3)
    assert found[96] == 20 and found[384] == 5, found
    assert found[24] >= 12, found  # at 24 items a side it catches 18 of 40 or more (its level is 5 %)


def test_splits_cut_by_length_or_by_source_are_caught_before_the_test_can_fire(pool: list[dict]) -> None:
    """Not exchangeable: the shorter half against the longer, one dataset against another. Where the check catches
    them the verdict is not computed; the test alone would fire on most of them."""
    by_length = sorted(pool, key=lambda row: len(row["text"]))
    short, long = by_length[: len(pool) // 2], by_length[len(pool) // 2:]
    sources = sorted({row["dataset"] for row in pool if row["shape"] == "free text"})
    first, second = ([row for row in pool if row["dataset"] == name] for name in sources[:2])
    for one, other in ((short, long), (first, second)):
        for size in (96, 384):
            rng = np.random.default_rng(size)
            a = [one[i] for i in rng.permutation(len(one))[:size]]
            b = [other[i] for i in rng.permutation(len(other))[:size]]
            assert texts_differ_test([r["text"] for r in a], [r["text"] for r in b], n_resamples=99).differ()
