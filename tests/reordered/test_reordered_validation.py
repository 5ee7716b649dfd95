"""The validation study's reordered pass: its rates from constructed runs (no model), the reference-differenced gap,
and the shipped file's merge that keeps every other key (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.reordered.stats import ItemScores, reference_gap_score
from lm_eval_contam.nullstudy.reordered_validation import (
    FRESH_SHAPE,
    STUDY_SHAPE,
    markdown,
    mc_partitions,
    reordered_rates,
    ship,
)
from lm_eval_contam.nullstudy.validation import RATES_KEY, ValidationSettings, write_outputs


def _run(model: str, partition: str, role: str, shape: str, gap: tuple[float, float, float], p: float,
         records: list[list[float]], acc: float = 0.5) -> dict:
    value, low, high = gap
    return {"model": model, "partition": partition, "role": role, "shape": shape, "seed": 0,
            "row": {"acc": acc, "acc_reordered": acc - value, "acc_reordered_gap": value,
                    "acc_reordered_gap_ci_low": low, "acc_reordered_gap_ci_high": high, "acc_reordered_p": p},
            "records": records}


# Two items, K = 2: item 0 right in its original order only; item 1 right in every form.
ONLY_ORIGINAL = [[0, 0, 1.0], [0, 1, 0.0], [0, 2, 0.0], [1, 0, 1.0], [1, 1, 1.0], [1, 2, 1.0]]
# Item 0 right in every form too: no gap.
NO_GAP = [[0, 0, 1.0], [0, 1, 1.0], [0, 2, 1.0], [1, 0, 1.0], [1, 1, 1.0], [1, 2, 1.0]]
# Both items right in their original order only: each item's gap is 1.
BOTH_ORIGINAL = [[0, 0, 1.0], [0, 1, 0.0], [0, 2, 0.0], [1, 0, 1.0], [1, 1, 0.0], [1, 2, 0.0]]

RUNS = [
    _run("clean", "a_train", "injected", STUDY_SHAPE, (0.10, -0.05, 0.25), 0.20, NO_GAP, acc=0.25),
    _run("clean", "a_test", "sibling", STUDY_SHAPE, (-0.02, -0.20, 0.15), 0.70, NO_GAP, acc=0.25),
    _run("clean", "fresh_a", "unseen", FRESH_SHAPE, (0.30, 0.05, 0.55), 0.01, ONLY_ORIGINAL, acc=0.75),
    _run("filler", "a_train", "injected", STUDY_SHAPE, (0.00, -0.10, 0.10), 0.60, NO_GAP),
    _run("filler", "fresh_a", "unseen", FRESH_SHAPE, (0.20, 0.02, 0.40), 0.03, ONLY_ORIGINAL),
    _run("injected", "a_train", "injected", STUDY_SHAPE, (0.50, 0.30, 0.70), 0.001, BOTH_ORIGINAL, acc=0.75),
    _run("injected", "a_test", "sibling", STUDY_SHAPE, (0.04, -0.10, 0.20), 0.04, NO_GAP),
]


def _counts(entry: dict) -> dict:
    return {key: value for key, value in entry.items() if key != "pooled"}  # the pooled gap: its own test


def test_rates_count_the_gap_interval_above_zero_and_the_p_per_column_and_shape() -> None:
    rates = reordered_rates(RUNS)
    gap = rates["acc_reordered_gap"]
    # The clean model: all three partitions unseen; only the fresh one's interval lies above 0 (its p < 0.05 too).
    assert _counts(gap["false_positive_clean"]) == {
        "k": 3, "flagged": 1, "rate": 0.3333, "ci": [0.0084, 0.9057],
        "p_below_alpha": {"k": 3, "flagged": 1, "rate": 0.3333, "ci": [0.0084, 0.9057]},
        "interval_contains_0": 0.6667, "mean_gap": 0.1267, "sd_gap": 0.1617, "min_gap": -0.02, "max_gap": 0.3}
    assert gap["false_positive_filler"]["flagged"] == 1 and gap["false_positive_filler"]["k"] == 2
    assert gap["false_positive_filler"]["mean_gap"] == 0.1
    # The injected model: its injected split detected (interval and p), its held-out sibling not by the interval but
    # by the p (0.04).
    assert _counts(gap["detection"]) == {
        "k": 1, "flagged": 1, "rate": 1.0, "ci": [0.025, 1.0],
        "p_below_alpha": {"k": 1, "flagged": 1, "rate": 1.0, "ci": [0.025, 1.0]},
        "interval_contains_0": 0.0, "mean_gap": 0.5, "sd_gap": 0.0, "min_gap": 0.5, "max_gap": 0.5}
    held = gap["false_positive_held_out"]
    assert (held["flagged"], held["p_below_alpha"]["flagged"], held["interval_contains_0"]) == (0, 1, 1.0)
    # Per shape: the clean model's study partitions flag none, its fresh one is flagged.
    assert gap["by_shape"][STUDY_SHAPE]["false_positive_clean"]["flagged"] == 0
    assert gap["by_shape"][STUDY_SHAPE]["false_positive_clean"]["k"] == 2
    assert gap["by_shape"][FRESH_SHAPE]["false_positive_clean"]["flagged"] == 1
    assert "detection" not in gap["by_shape"][FRESH_SHAPE]
    assert gap["by_model"]["clean"] == {
        STUDY_SHAPE: {"k": 2, "mean_acc": 0.25, "mean_acc_reordered": 0.21, "mean_gap": 0.04},
        FRESH_SHAPE: {"k": 1, "mean_acc": 0.75, "mean_acc_reordered": 0.45, "mean_gap": 0.3}}


def test_the_gap_less_the_clean_models_cancels_what_both_share() -> None:
    versus = reordered_rates(RUNS)["acc_reordered_gap_vs_reference"]
    # The filler-only fine-tune's fresh gap is the clean model's, item by item: 0 left, nothing flagged.
    assert versus["false_positive_filler"]["mean_gap"] == 0.0
    assert versus["false_positive_filler"]["flagged"] == 0 and versus["false_positive_filler"]["k"] == 2
    # The injected split: the injected model's item gaps 1 and 1 against the clean model's 0 and 0.
    assert versus["detection"]["mean_gap"] == 1.0 and versus["detection"]["flagged"] == 1
    assert "false_positive_clean" not in versus  # the reference is not differenced with itself


def test_reference_gap_score_is_paired_per_item() -> None:
    mine = [ItemScores(0, 1.0, (0.0, 0.0)), ItemScores(1, 1.0, (1.0, 0.0)), ItemScores(2, 0.0, (0.0, 0.0))]
    theirs = [ItemScores(0, 0.0, (0.0, 0.0)), ItemScores(1, 1.0, (1.0, 1.0))]
    score = reference_gap_score(mine, theirs)
    assert score.n_items == 2 and score.gap == pytest.approx((1.0 + 0.5) / 2)
    assert score.gap_interval.low == pytest.approx(0.5) and score.gap_interval.high == pytest.approx(1.0)
    # Two items of positive difference: the flipped mean reaches the observed one when both signs stay (1 in 4).
    assert score.pvalue == pytest.approx(0.25, abs=0.02)
    with pytest.raises(ContamError, match="both"):
        reference_gap_score(mine, [ItemScores(9, 1.0, (0.0,))])


def test_no_run_is_refused() -> None:
    with pytest.raises(ContamError, match="no run"):
        reordered_rates([])


def test_the_pass_has_every_mc_partition_rendered_as_injected(tmp_path: Path) -> None:
    partitions = mc_partitions(ValidationSettings(mc_partitions=2, rows_per_partition=3, fresh_per_shape=1), tmp_path)
    assert [(p.role, p.shape) for p in partitions] == [
        ("injected", STUDY_SHAPE), ("sibling", STUDY_SHAPE), ("injected", STUDY_SHAPE), ("sibling", STUDY_SHAPE),
        ("unseen", FRESH_SHAPE), ("unseen", FRESH_SHAPE)]
    assert [p.name for p in partitions[-2:]] == ["fresh_mc_arith_a", "fresh_mc_arith_b"]
    first = partitions[0].rows[0]["prompt"]
    assert first.startswith("Which word fills the blank? ") and "\nA. " in first and first.endswith("\nAnswer:")
    assert len(partitions[0].rows) == 3 and len(partitions[-1].rows) == 24  # the fresh files as shipped


def test_shipping_merges_only_its_key_and_a_verdict_pass_keeps_it(tmp_path: Path) -> None:
    shipped = tmp_path / "validation_rates.json"
    shipped.write_text(json.dumps({"version": 1, "methods": {"pairing": {"title": "x"}}}))
    entries = {"acc_reordered_gap": {"title": "gap"}}
    ship(entries, shipped)
    assert json.loads(shipped.read_text()) == {"version": 1, "methods": {"pairing": {"title": "x"}},
                                               RATES_KEY: entries}
    # A verdict pass writes its own document: the adjusted scores' rates stay as shipped.
    write_outputs({"version": 1, "methods": {}}, tmp_path, ship_to=shipped, echo=lambda _: None)
    assert json.loads(shipped.read_text())[RATES_KEY] == entries
    assert "`acc_reordered_gap` | multiple choice" in markdown(reordered_rates(RUNS))


def test_the_report_note_states_the_measured_rates() -> None:
    from lm_eval_contam.verdicts.detection_rates import reordered_gap_note

    entry = reordered_rates(RUNS)["acc_reordered_gap"]
    document = {RATES_KEY: {"acc_reordered_gap": {**entry, "date": "2026-11-27", "design": {"reorderings": 4}}}}
    assert reordered_gap_note(document) == (
        "The gap's 95 % interval lay above 0 in the validation study (2026-11-27, K = 4): on never-seen partitions, "
        "clean default model: 1/3 = 33 % (95 % CI 1–91 %); filler-only fine-tune: 1/2 = 50 % (95 % CI 1–99 %); "
        "held-out siblings of injected partitions: 0/1 = 0 % (95 % CI 0–98 %); injected partitions at the papers' "
        "strength: 1/1 = 100 % (95 % CI 2–100 %).")
    assert reordered_gap_note({"methods": {}}) is None


def test_pooled_runs_are_one_benchmark_of_all_their_items() -> None:
    rates = reordered_rates(RUNS)
    # The injected split pooled alone: its two items each right in the original order only (K = 2): gap 1.
    assert rates["acc_reordered_gap"]["detection"]["pooled"]["items"] == 2
    assert rates["acc_reordered_gap"]["detection"]["pooled"]["gap"] == 1.0
    # The clean model's three partitions: 6 items, gaps 0, 0, 0, 0 (NO_GAP twice) and 1, 0 (ONLY_ORIGINAL).
    clean = rates["acc_reordered_gap"]["false_positive_clean"]["pooled"]
    assert (clean["items"], clean["gap"]) == (6, round(1 / 6, 4))
    assert rates["acc_reordered_gap"]["by_shape"][FRESH_SHAPE]["false_positive_clean"]["pooled"]["items"] == 2
    # Against the clean model: the filler-only fine-tune's items are the clean model's, so 0 on 4 items.
    versus = rates["acc_reordered_gap_vs_reference"]["false_positive_filler"]["pooled"]
    assert (versus["items"], versus["gap"], versus["ci"]) == (4, 0.0, [0.0, 0.0])


def test_the_gap_less_the_references_holds_its_level_when_the_two_models_are_exchangeable() -> None:
    # H0: per item, the model's gap and the reference's are exchangeable (swapping them flips the difference's sign).
    # Both models' forms drawn alike (random difficulty, K = 4), 400 runs of 60 items: p <= 0.05 at most 5 %.
    import numpy as np

    rng = np.random.default_rng(7)

    def model(difficulty: np.ndarray) -> list[ItemScores]:
        return [ItemScores(i, float(rng.random() < p), tuple(float(x) for x in rng.random(4) < p))
                for i, p in enumerate(difficulty)]

    pvalues = []
    for run in range(400):
        difficulty = rng.uniform(0.1, 0.9, size=60)
        pvalues.append(reference_gap_score(model(difficulty), model(difficulty), n_resamples=200, sign_flips=999,
                                           seed=run).pvalue)
    level = np.mean(np.array(pvalues) <= 0.05)
    assert 0.02 <= level <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / 400), level


def test_the_gap_less_the_references_holds_its_level_when_the_reference_scores_a_seeded_sample() -> None:
    # audit --reference-items: the reference scores a sample drawn from the items' places before either model is
    # scored, so the paired items are still exchangeable. 400 runs of 90 items, the reference on 60 of them.
    import numpy as np

    from lm_eval_contam.methods.reordered.orders import reference_items

    rng = np.random.default_rng(11)

    def model(difficulty: np.ndarray) -> list[ItemScores]:
        return [ItemScores(i, float(rng.random() < p), tuple(float(x) for x in rng.random(1) < p))
                for i, p in enumerate(difficulty)]

    pvalues = []
    for run in range(400):
        difficulty = rng.uniform(0.1, 0.9, size=90)
        chosen = reference_items(90, 60, run, "simulated")
        score = reference_gap_score(model(difficulty), [item for item in model(difficulty) if item.item in chosen],
                                    n_resamples=200, sign_flips=999, seed=run)
        assert score.n_items == 60
        pvalues.append(score.pvalue)
    level = np.mean(np.array(pvalues) <= 0.05)
    assert 0.02 <= level <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / 400), level
