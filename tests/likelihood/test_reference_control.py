"""The likelihood control mode on u against a reference model (``likelihood_control_reference``): its level under the
null by simulation, its power where each text's difficulty dominates, the relabelling SD it standardises by, and its
refusals of records that do not pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.likelihood.docs import CONTROL, PARTITION
from lm_eval_contam.methods.likelihood.stats import reference_control_test, relabelling_sd, two_sample_test
from lm_eval_contam.methods.likelihood.verdicts import reference_result

PER_SIDE = 24  # the validation study's rows per partition
RUNS = 400


def simulated_runs(rng: np.random.Generator, *, difficulty_sd: float, noise_sd: float,
                   boost: float) -> tuple[list[dict], dict[str, dict]]:
    """One partition and its control drawn from one distribution of texts: each text has a length and a difficulty
    (nats per byte) both models share; the model and the reference each add their own noise, and the model scores
    the partition's texts ``boost`` nats per byte higher (0: the null). The model's records and the reference's by
    identity, as the control mode logs them."""
    records, reference = [], {}
    for group in (PARTITION, CONTROL):
        for row in range(PER_SIDE):
            size = int(rng.integers(80, 200))
            difficulty = -1.5 + difficulty_sd * rng.standard_normal()
            lift = boost if group == PARTITION else 0.0
            model = size * (difficulty + lift + noise_sd * rng.standard_normal())
            base = size * (difficulty - 0.2 + noise_sd * rng.standard_normal())  # the reference: less fluent overall
            identity = f"{group}:{row}"
            records.append({"identity": identity, "group": group, "loglikelihood": model, "bytes": size,
                            "per_byte": model / size})
            reference[identity] = {"identity": identity, "group": group, "loglikelihood": base, "bytes": size}
    return records, reference


def rejection_rates(*, difficulty_sd: float, noise_sd: float, boost: float, runs: int,
                    seed: int) -> tuple[int, int]:
    """How many of ``runs`` simulated partitions the test on u and the test on raw log-likelihood per byte flag."""
    rng = np.random.default_rng(seed)
    on_u = raw = 0
    for run in range(runs):
        records, reference = simulated_runs(rng, difficulty_sd=difficulty_sd, noise_sd=noise_sd, boost=boost)
        on_u += reference_control_test(records, reference, seed=run, source="simulated").pvalue <= ALPHA
        sides = ([r["per_byte"] for r in records if r["group"] == group] for group in (PARTITION, CONTROL))
        raw += two_sample_test(*sides, seed=run).pvalue <= ALPHA
    return on_u, raw


def test_under_the_null_the_test_on_u_rejects_at_its_level() -> None:
    """Partition and control exchangeable, a large difficulty shared by both models: the rejection count over 400
    simulated partitions lies in the central 99 % of Binomial(400, 0.05)."""
    flagged, _ = rejection_rates(difficulty_sd=0.5, noise_sd=0.05, boost=0.0, runs=RUNS, seed=1)
    low, high = stats.binom.interval(0.99, RUNS, ALPHA)
    assert low <= flagged <= high, f"{flagged}/{RUNS} flagged, expected {low:.0f}-{high:.0f}"


def test_where_difficulty_dominates_u_detects_what_raw_log_likelihood_misses() -> None:
    """A partition the fine-tune saw (0.2 nats per byte higher) among texts whose difficulty varies 0.5 nats per byte:
    the raw test sees the boost through the difficulty's noise (expected power about 0.4 at n = 24 a side), the
    test on u, where the difficulty cancels, nearly always."""
    on_u, raw = rejection_rates(difficulty_sd=0.5, noise_sd=0.05, boost=0.2, runs=100, seed=2)
    assert on_u >= 99
    assert raw <= 80
    assert on_u - raw >= 20


def test_the_standardised_difference_uses_the_exact_relabelling_sd() -> None:
    x, y = np.array([1.0, 2.0, 4.0]), np.array([3.0, 5.0, 8.0, 13.0])
    pooled = np.concatenate([x, y])
    differences = [pooled[list(chosen)].mean() - np.delete(pooled, list(chosen)).mean()
                   for chosen in itertools.combinations(range(pooled.size), x.size)]
    assert relabelling_sd(x, y) == pytest.approx(np.std(differences), rel=1e-12)
    result = two_sample_test(x, y)
    assert result.standardised == pytest.approx(result.statistic / np.std(differences), rel=1e-12)
    assert two_sample_test([1.0, 1.0], [1.0, 1.0]).standardised == 0.0


def test_records_that_do_not_pair_are_refused_naming_the_reference_run() -> None:
    records, reference = simulated_runs(np.random.default_rng(0), difficulty_sd=0.5, noise_sd=0.05, boost=0.0)
    missing = {key: value for key, value in reference.items() if key != "control:3"}
    with pytest.raises(ContamError) as error:
        reference_control_test(records, missing, seed=0, source="runs/tuned.reference")
    assert error.value.field == "identity" and "control:3" in str(error.value)
    assert "runs/tuned.reference" in str(error.value)
    other = {**reference, "partition:0": {**reference["partition:0"], "bytes": 7}}
    with pytest.raises(ContamError) as error:
        reference_control_test(records, other, seed=0, source="runs/tuned.reference")
    assert error.value.field == "bytes" and "7 bytes" in str(error.value)


def test_a_run_of_the_earlier_task_without_identities_has_no_test_on_u() -> None:
    records, reference = simulated_runs(np.random.default_rng(0), difficulty_sd=0.5, noise_sd=0.05, boost=0.0)
    earlier = [{key: value for key, value in record.items() if key != "identity"} for record in records]
    assert reference_result(earlier, reference, seed=0, source="x") is None
    assert reference_result([], reference, seed=0, source="x") is None
    # Against itself u is 0 for every text: nothing stands out.
    itself = reference_result(records, {r["identity"]: r for r in records}, seed=0, source="x")
    assert itself is not None and itself.statistic == 0.0 and itself.pvalue == 1.0 and itself.standardised == 0.0
