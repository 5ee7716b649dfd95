"""The likelihood modes' tests (ours), each level-exact under its stated null.

* :func:`two_sample_test`: one-sided two-sample permutation test of the mean
  (H0: the partition's and the control's scores are exchangeable, as when both
  are samples of one distribution the model saw alike; H1: the partition scores higher).
* :func:`reference_control_test`: the two-sample test on ``u = (log p(model) - log p(reference)) / bytes`` per text
  (the reference model, the checkpoint the model was fine-tuned from, scored the same texts): the same null; what
  both models share, each text's difficulty and fluency, cancels in u, so a partition the fine-tune saw stands out
  of less noise.
* :func:`lift_test`: one-sided paired sign-flip test of own lift minus other lift
  (H0: within each instance, the dataset name's lift of its own second piece and of
  another instance's second piece are exchangeable; H1: its own is lifted more);
  the sign-flip test of :mod:`lm_eval_contam.core.stats` (Time Travel's too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np
from scipy import stats

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.relabelling import reference_record
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.split_tests import (
    NoUnitsResult,
    SplitLabelResult,
    SplitUnits,
    TextsDifferResult,
    cluster_label_test,
    split_units,
    texts_differ_test,
)
from lm_eval_contam.core.stats import PermutationResult, TestResult, finite_scores, permutation_test
from lm_eval_contam.methods.likelihood.docs import CONTROL, PARTITION

# Group relabellings are enumerated exactly up to this many, else sampled.
EXACT_LIMIT = 100_000
N_RESAMPLES = 10_000


@dataclass(frozen=True)
class TwoSampleResult(TestResult):
    """``statistic``: mean(partition) - mean(control); ``confidence_interval`` None (a p-value, not an interval);
    ``null_sd``: the statistic's standard deviation over every relabelling of the pooled scores (its null mean is 0)."""

    partition_mean: float
    control_mean: float
    n_partition: int
    n_control: int
    exact: bool
    null_sd: float

    @property
    def standardised(self) -> float:
        """How many null standard deviations the difference lies above 0 (0 when the pooled scores are all equal)."""
        return self.statistic / self.null_sd if self.null_sd > 0 else 0.0


def relabelling_sd(x: np.ndarray, y: np.ndarray) -> float:
    """The standard deviation of mean(x) - mean(y) over the relabellings of the pooled scores (exact: sampling
    without replacement, ``N * sigma / sqrt(n_x * n_y * (N - 1))``, sigma the pooled scores' population SD)."""
    pooled = np.concatenate([x, y])
    size = pooled.size
    return float(size * pooled.std() / np.sqrt(x.size * y.size * (size - 1))) if size > 1 else 0.0


def two_sample_test(partition: Sequence[float], control: Sequence[float], *, seed: int = 0,
                    n_resamples: int = N_RESAMPLES) -> TwoSampleResult:
    """Permutation test of mean(partition) > mean(control): exact when the relabellings number <= 100,000,
    else ``n_resamples`` seeded relabellings with p = (1 + hits) / (1 + resamples)."""
    x, y = finite_scores(partition, "partition"), finite_scores(control, "control")
    relabellings = comb(x.size + y.size, x.size)
    exact = relabellings <= EXACT_LIMIT
    result = stats.permutation_test(
        (x, y), lambda a, b, axis: np.mean(a, axis=axis) - np.mean(b, axis=axis),
        permutation_type="independent", alternative="greater", vectorized=True,
        n_resamples=relabellings if exact else n_resamples, rng=rng_for(seed, "likelihood-two-sample"))
    return TwoSampleResult(statistic=float(x.mean() - y.mean()), pvalue=float(result.pvalue),
                           confidence_interval=None, partition_mean=float(x.mean()), control_mean=float(y.mean()),
                           n_partition=int(x.size), n_control=int(y.size), exact=exact, null_sd=relabelling_sd(x, y))


def lift_test(own: Sequence[float], other: Sequence[float], *, seed: int = 0,
              n_resamples: int = N_RESAMPLES) -> PermutationResult:
    """Paired sign-flip test of own - other lift (exact up to n = 16, else ``n_resamples`` seeded flips)."""
    return permutation_test(own, other, seed=seed, n_resamples=n_resamples)


def _groups(records: Sequence[Mapping[str, object]], key: str) -> tuple[list[float], list[float]]:
    by_group: dict[str, list[float]] = {PARTITION: [], CONTROL: []}
    for record in records:
        by_group[str(record["group"])].append(float(record[key]))  # type: ignore[arg-type]
    return by_group[PARTITION], by_group[CONTROL]


# Up to this many items a side, with every item its own unit, the relabellings are scipy's (exact enumeration where
# they number <= EXACT_LIMIT); above it, or with shared-context clusters, the split-label test's own.
ITEM_TEST_LIMIT = 200


def split_label_test(records: Sequence[Mapping[str, Any]], key: str, seed: int) -> TwoSampleResult | SplitLabelResult:
    """Partition vs control on ``key``, the records' ``cluster`` relabelled as wholes
    (:func:`~lm_eval_contam.core.split_tests.cluster_label_test`); records of singletons only, at most
    ``ITEM_TEST_LIMIT`` a side, or logged before clusters were: :func:`two_sample_test`, as before."""
    clusters = [record.get("cluster") for record in records]
    partition, control = _groups(records, key)
    singletons = None in clusters or len(set(clusters)) == len(clusters)
    if singletons and max(len(partition), len(control)) <= ITEM_TEST_LIMIT:
        return two_sample_test(partition, control, seed=seed)
    return cluster_label_test([float(record[key]) for record in records],
                              [record["group"] == PARTITION for record in records],
                              None if None in clusters else clusters, seed=seed)


def texts_check(records: Sequence[Mapping[str, Any]], seed: int) -> TextsDifferResult:
    """The comparability check of the two sides' texts as compared (:func:`texts_differ_test`, clusters as wholes)."""
    ordered = sorted(records, key=lambda record: record["group"] != PARTITION)
    clusters = [record.get("cluster") for record in ordered]
    return texts_differ_test([str(r["text"]) for r in ordered if r["group"] == PARTITION],
                             [str(r["text"]) for r in ordered if r["group"] != PARTITION],
                             None if None in clusters else clusters, seed=seed)


def control_units(records: Sequence[Mapping[str, Any]]) -> SplitUnits:
    """The units the control mode's split-label tests relabel in its records (their ``cluster``, where logged)."""
    clusters = [record.get("cluster") for record in records]
    return split_units([record["group"] == PARTITION for record in records], None if None in clusters else clusters)


def control_tests(records: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    """Partition vs control on per-byte log-likelihood and on the zlib ratio, and the texts' comparability check;
    where no unit lies in one split alone, :class:`NoUnitsResult` for each (NaN: the verdicts read it)."""
    units = control_units(records)
    if not units.testable:
        return dict.fromkeys(("per_byte", "zlib", "texts"), NoUnitsResult.of(units))
    found: dict[str, Any] = {key: split_label_test(records, key, seed) for key in ("per_byte", "zlib")}
    if all("text" in record for record in records):
        found["texts"] = texts_check(records, seed)
    return found


def differenced_per_byte(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], *,
                         source: str) -> list[dict[str, Any]]:
    """Each control-mode record (``doc_record``) with ``u``: its text's log-likelihood minus the reference model's of
    the same text (its record of the same ``identity``), per byte. A text the reference did not score, or scored as
    another text (other bytes), is an error naming the reference's run (``source``): the two runs must hold the
    same task."""
    found = []
    for record in records:
        identity = str(record.get("identity"))
        other = reference_record(record, reference, source=source)
        if other.get("bytes") != record["bytes"]:
            raise ContamError(f"the reference model scored {identity!r} as a text of {other.get('bytes')!r} bytes "
                              f"where the audited model's has {record['bytes']!r}; audit both models on the same task",
                              source=source, field="bytes")
        u = (float(record["loglikelihood"]) - float(other["loglikelihood"])) / int(record["bytes"])
        found.append({"group": record["group"], "u": u, **({"cluster": record["cluster"]} if "cluster" in record else {})})
    return found


def reference_control_test(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], *,
                           seed: int, source: str) -> TwoSampleResult | SplitLabelResult:
    """Partition vs control on u per byte (:func:`differenced_per_byte`): :func:`split_label_test`."""
    return split_label_test(differenced_per_byte(records, reference, source=source), "u", seed)


def option_test(records: Sequence[Mapping[str, Any]], seed: int) -> TwoSampleResult | SplitLabelResult | NoUnitsResult:
    """The original-over-perturbations gap of the partition vs of the control, items sharing a passage or option texts
    relabelled as wholes (:func:`split_label_test`); :class:`NoUnitsResult` where no unit lies in one split alone."""
    units = control_units(records)
    return split_label_test(records, "gap", seed) if units.testable else NoUnitsResult.of(units)


def lift_from_records(records: Sequence[Mapping[str, object]], seed: int) -> PermutationResult:
    return lift_test([float(r["own_lift"]) for r in records], [float(r["other_lift"]) for r in records], seed=seed)
