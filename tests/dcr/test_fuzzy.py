"""The DCR Factor: published numbers, the 0.02 threshold, reference == vectorised, bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcr import (
    adjust,
    adjusted_accuracy,
    bootstrap_dcr_factor,
    dcr_factor,
    dcr_factor_many,
    dcr_factor_reference,
)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([0.70, 0.13, 0.50, 0.28], 0.4913),  # Section 3.6
        ([0.70, 0.13, 0.00, 0.28], 0.4907),  # Section 3.6, S3 forced to 0
        ([0.0, 0.0, 0.0, 0.0], 0.0),
        # S from the authors' released data/sst2_experimental_data.csv, DCR from Table 2 (SST-2).
        ([1.00, 1.00, 0.67, 0.38], 0.6759),  # Qwen2.5-7B baseline
        ([0.07, 0.00, 0.00, 0.00], 0.0),  # InstructLM-1.3B baseline (mean below 0.02)
        ([0.05, 0.00, 0.00, 0.72], 0.5620),  # InstructLM-500M, L4 injection
    ],
)
def test_published_factors(scores, expected) -> None:
    assert dcr_factor(scores) == expected
    assert dcr_factor_many([scores])[0] == expected


def test_threshold_edge_jumps_from_zero() -> None:
    below, at = [0.0799, 0, 0, 0], [0.08, 0, 0, 0]  # means 0.019975 and 0.02
    assert dcr_factor(below) == 0.0
    assert dcr_factor(at) == pytest.approx(0.21, abs=0.01)
    assert dcr_factor_many([below, at]).tolist() == [dcr_factor(below), dcr_factor(at)]


def test_scores_are_clipped_to_unit_interval() -> None:
    assert dcr_factor([1.5, 1.2, -0.3, 2.0]) == dcr_factor([1.0, 1.0, 0.0, 1.0])


def test_reference_and_vectorised_agree_on_a_grid() -> None:
    axis = np.linspace(0.0, 1.0, 11)
    grid = np.stack(np.meshgrid(axis, axis, axis, axis, indexing="ij"), axis=-1).reshape(-1, 4)
    low = np.random.default_rng(7).random((2000, 4)) * 0.12  # dense around the 0.02 threshold
    vectors = np.concatenate([grid, low])
    assert len(vectors) >= 10_000
    reference = np.array([dcr_factor_reference(v) for v in vectors])
    np.testing.assert_array_equal(dcr_factor_many(vectors), reference)


@pytest.mark.parametrize("bad", [[0.1, 0.2, 0.3], [0.1, float("nan"), 0.2, 0.3], [[0.1, 0.2, 0.3, 0.4, 0.5]]])
def test_bad_score_vectors_are_rejected(bad) -> None:
    with pytest.raises(ContamError, match="scores"):
        dcr_factor_many(bad)


def test_adjust_arithmetic() -> None:
    assert round(adjust(94.56, 0.6759), 2) == 30.65  # Table 2, Qwen2.5-7B SST-2 baseline
    assert adjust(0.8, 0.0) == 0.8


def _items():
    return [np.array([1.0] * 14 + [0.0] * 6), np.array([1.0] * 3 + [0.0] * 17),
            np.array([1.0] * 10 + [0.0] * 10), np.array([1.0] * 6 + [0.0] * 14)]


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    first = bootstrap_dcr_factor(_items(), seed=3)
    second = bootstrap_dcr_factor(_items(), seed=3)
    other = bootstrap_dcr_factor(_items(), seed=4)
    assert first.n_resamples == 10_000
    assert first.level_scores == (0.7, 0.15, 0.5, 0.3)
    assert first.statistic == dcr_factor([0.7, 0.15, 0.5, 0.3])
    assert first == second  # the resamples array is kept out of equality
    assert first.confidence_interval.confidence_level == 0.95
    assert first.standard_error == second.standard_error
    assert other.confidence_interval != first.confidence_interval or other.standard_error != first.standard_error
    assert first.confidence_interval.low <= first.statistic <= first.confidence_interval.high


def test_adjusted_accuracy_with_and_without_bootstrap() -> None:
    fixed = adjusted_accuracy(0.9, 0.01, 0.5)
    assert fixed.statistic == 0.45 and fixed.standard_error == pytest.approx(0.005) and fixed.confidence_interval is None
    boot = bootstrap_dcr_factor(_items(), seed=0)
    spread = adjusted_accuracy(0.9, 0.01, boot.statistic, boot, seed=0)
    assert spread.statistic == pytest.approx(0.9 * (1 - boot.statistic))
    assert spread.standard_error > 0.9 * boot.standard_error * 0.9
    assert spread.confidence_interval.low < spread.statistic < spread.confidence_interval.high
    assert adjusted_accuracy(0.9, 0.01, boot.statistic, boot, seed=0) == spread


def test_bootstrap_rejects_an_empty_level() -> None:
    with pytest.raises(ContamError, match="L2 has no checked items"):
        bootstrap_dcr_factor([[1.0], [], [0.0], [1.0]])
