"""Within-item relabelling tests (lm_eval_contam.core.relabelling): exact small cases, level under exchangeable scores
(simulated), power when the true arrangement is preferred, and u against a reference."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.relabelling import (
    arrangement_test,
    double_centred,
    pairing_test,
    reference_differenced,
    residualised,
    standardised,
)


def test_standardised_scores_and_the_exact_two_arrangement_case() -> None:
    assert standardised([3.0, 1.0]).tolist() == [1.0, -1.0]
    assert standardised([2.0, 2.0, 2.0]).tolist() == [0.0, 0.0, 0.0]
    # One item of two arrangements, the true one higher: T = 1, and T* = +-1 with probability 1/2 each.
    result = arrangement_test([[3.0, 1.0]], draws=9999, seed=0, name="x")
    assert result.statistic == 1.0 and result.min_pvalue == 0.5
    assert result.pvalue == pytest.approx(0.5, abs=0.02)
    # Three items, every true arrangement on top of two: T = 3 * z_top; P(T* >= T) = (1/2)^3 (top of 2 each).
    assert arrangement_test([[1.0, 0.0]] * 3, draws=19999).pvalue == pytest.approx(0.125, abs=0.01)


def test_all_equal_scores_never_flag() -> None:
    result = arrangement_test([[-5.0] * 24] * 10)
    assert result.statistic == 0.0 and result.pvalue == 1.0 and result.standardised == 0.0


def test_arrangement_test_holds_its_level_when_arrangements_are_exchangeable() -> None:
    rng = np.random.default_rng(1)
    pvalues = [arrangement_test(rng.normal(size=(24, 24)) + rng.normal(size=(24, 1)) * 5, draws=999, seed=trial).pvalue
               for trial in range(400)]
    rate = np.mean(np.array(pvalues) <= 0.05)
    assert 0.02 <= rate <= 0.08  # 5 % level; 400 trials: binomial sd 1.1 points
    assert 0.4 <= np.mean(pvalues) <= 0.6  # valid p-values are uniform under H0


def test_arrangement_test_detects_a_preferred_true_arrangement_and_is_seeded() -> None:
    rng = np.random.default_rng(2)
    items = rng.normal(size=(24, 24))
    items[:, 0] += 1.5  # the true order likelier on every item
    result = arrangement_test(items, seed=0, name="p")
    assert result.pvalue < 0.001 and result.standardised > 3
    assert arrangement_test(items, seed=0, name="p") == result


def test_residualised_takes_one_least_squares_slope_over_every_arrangement() -> None:
    # Centred: u (-1, 1, 0) and (-2, 0, 2); reference (-1, 1, 0) and (1, 0, -1). Slope (2 - 4) / (2 + 2) = -0.5.
    residuals, slope = residualised([[1.0, 3.0, 2.0], [0.0, 2.0, 4.0]], [[0.0, 2.0, 1.0], [1.0, 0.0, -1.0]])
    assert slope == -0.5 and residuals == [[-1.5, 1.5, 0.0], [-1.5, 0.0, 1.5]]
    assert residualised([[1.0, 2.0]], [[3.0, 3.0]]) == ([[-0.5, 0.5]], 0.0)  # no reference spread: u centred


def test_residualising_takes_out_a_rescaled_reference_preference_keeps_the_level_and_detects_memory() -> None:
    rng = np.random.default_rng(3)
    plain, residual, memorised = [], [], []
    for trial in range(200):
        reference = rng.normal(size=(24, 24))
        reference[:, 0] += 1.0  # the author's order is a conventional one: the reference model prefers it
        u = 0.5 * reference + rng.normal(size=(24, 24))  # a fine-tune that never saw the items sharpened that
        plain.append(arrangement_test(u, draws=499, seed=trial).pvalue)
        residual.append(arrangement_test(residualised(u, reference)[0], draws=499, seed=trial).pvalue)
        u[:, 0] += 1.0  # ... and one that saw them
        memorised.append(arrangement_test(residualised(u, reference)[0], draws=499, seed=trial).pvalue)
    assert np.mean(np.array(plain) <= 0.05) > 0.5  # u alone keeps the preference: false flags most of the time
    assert 0.01 <= np.mean(np.array(residual) <= 0.05) <= 0.09  # 5 % level; 200 trials: binomial sd 1.5 points
    assert np.mean(np.array(memorised) <= 0.05) > 0.9


def test_double_centring_removes_row_and_column_levels() -> None:
    matrix = np.add.outer([1.0, 5.0, -2.0], [10.0, 0.0, 3.0])
    assert np.allclose(double_centred(matrix), 0.0)


def test_pairing_test_holds_its_level_with_fluent_halves_and_detects_true_pairings() -> None:
    rng = np.random.default_rng(3)

    def groups(boost: float) -> list[np.ndarray]:
        found = []
        for _ in range(4):
            matrix = rng.normal(size=(6, 6)) + np.add.outer(rng.normal(size=6) * 10, rng.normal(size=6) * 10)
            found.append(matrix + boost * np.eye(6))
        return found

    pvalues = np.array([pairing_test(groups(0.0), draws=999, seed=trial).pvalue for trial in range(300)])
    assert 0.02 <= np.mean(pvalues <= 0.05) <= 0.09
    assert pairing_test(groups(1.5), seed=0).pvalue < 0.001
    assert pairing_test(groups(0.0)).min_pvalue == pytest.approx(1 / 10_000)  # 720^-4 is smaller than 1/(1+draws)


def test_reference_differencing_pairs_docs_by_identity() -> None:
    records = [{"identity": "a", "scores": [-1.0, -3.0]}, {"identity": "b", "scores": [-2.0, -2.5]}]
    reference = {"b": {"identity": "b", "scores": [-1.0, -1.0]}, "a": {"identity": "a", "scores": [-2.0, -2.0]}}
    assert reference_differenced(records, reference, source="ref") == [[1.0, -1.0], [-1.0, -1.5]]
    with pytest.raises(ContamError, match="no record of 'c'"):
        reference_differenced([{"identity": "c", "scores": [0.0]}], reference, source="ref")
    with pytest.raises(ContamError, match="scored 1 texts where the audited model scored 2"):
        reference_differenced(records, {**reference, "a": {"scores": [0.0]}}, source="ref")


def test_bad_scores_are_refused() -> None:
    with pytest.raises(ContamError, match="at least one other"):
        arrangement_test([[1.0]])
    with pytest.raises(ContamError, match="finite"):
        arrangement_test([[1.0, float("nan")]])
    with pytest.raises(ContamError, match="square matrix"):
        pairing_test([[[1.0, 2.0]]])
