"""Scores and test of the in-context test (ours, after CoDeC): does context help the instance less than its twin?

Per instance, ``gain(y) = (log p(y | context) - log p(y)) / bytes(y)``: how much a few other instances of the
dataset in the context raise the likelihood of ``y``. CoDeC (NVIDIA 2025) reads a *drop* as memorisation: context
raises the confidence on unseen data and disturbs it on memorised data. A model that only learned the dataset's
domain also gains less from context (the domain is no news to it), so the raw gain finds the domain, not the
instances. Ours compares each instance with its own perturbed twin, which shares the domain but not the text:
``difference = gain(twin) - gain(instance)``. H0: the model never saw these instances, so an instance and its twin
gain alike from context and each difference is symmetric about 0; H1: memorised instances gain less than their
twins. One-sided sign-flip test of the mean difference (exact at n <= 16, else 10,000 seeded flips).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.stats import TestResult, permutation_test


def gain(in_context: float, alone: float, num_bytes: int) -> float:
    """Log-likelihood gained per byte by reading the context first."""
    if num_bytes < 1:
        raise ContamError("an instance must have at least one byte", field="text")
    return (in_context - alone) / num_bytes


@dataclass(frozen=True)
class InContextResult(TestResult):
    """``statistic``: mean ``gain(twin) - gain(instance)`` (nats/byte, > 0 under H1); ``codec_score``: CoDeC's
    own number, the share of instances whose likelihood drops in context (no test: the paper calibrates it across
    datasets); mean gains of the instances and of their twins."""

    n: int
    codec_score: float
    instance_gain: float
    twin_gain: float


def incontext_test(records: Sequence[Mapping[str, float]], seed: int = 0) -> InContextResult:
    """The test over per-instance records with ``instance_gain`` and ``twin_gain``."""
    if not records:
        raise ContamError("no instances scored", field="records")
    own = [float(record["instance_gain"]) for record in records]
    twin = [float(record["twin_gain"]) for record in records]
    result = permutation_test(twin, own, seed=seed)
    return InContextResult(statistic=result.statistic, pvalue=result.pvalue, confidence_interval=None, n=len(own),
                           codec_score=sum(value < 0 for value in own) / len(own),
                           instance_gain=sum(own) / len(own), twin_gain=sum(twin) / len(twin))
