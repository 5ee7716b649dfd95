"""Within-item relabelling tests (ours): does each item's true arrangement stand out among its own rearrangements?

Every item is scored in its true arrangement (its original option order, the true pairing of its halves) and in
rearrangements of it that a model could not prefer without having seen the item; the scores are the audited model's
log-likelihoods, or ``u = log p(audited) - log p(reference)`` when the checkpoint the model was fine-tuned from is
given (what both models share, such as an item's difficulty or an author's conventions, cancels in ``u``).

H0: which arrangement is the true one is exchangeable with the others, independently across items (the model never
saw the items). Under H0 the true arrangement's label is uniform over each item's arrangements, so the statistic
recomputed with the labels redrawn has the statistic's own null distribution: the Monte-Carlo p-value
``(1 + #{T* >= T}) / (1 + draws)`` is valid at any n (Phipson & Smyth 2010), with no assumption on the scores.

- :func:`arrangement_test`: each item's arrangements scored; the statistic is the sum over items of the true
  arrangement's standardised score (its z-score among the item's own arrangements), so the size of the preference
  counts, not only its rank.
- :func:`pairing_test`: groups of items whose first halves are each scored with every second half of the group; the
  statistic is the sum of the true pairings' double-centred scores (each first half's and each second half's own
  level removed), the null redraws the pairing as a uniform permutation within each group.
- :func:`residualised`: ``u`` less the part of it the reference's own log-likelihood explains across an item's
  arrangements (one least-squares slope over every arrangement of every item). A fine-tune can rescale how strongly
  the model prefers some arrangements to others without having seen any item (one that learned the task's format
  flattens them); that moves ``u`` with the reference's preference, not with the true arrangement. The slope uses every
  arrangement alike, whichever is the true one, so the residuals keep the relabelling null exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.formatting import number, p_equals, pvalue
from lm_eval_contam.core.method_verdict import DRIVES, Test, Verdict
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import MethodSpec, OneScoredTask, ReportSection, not_run_without_docs
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import ALPHA, TestResult

DEFAULT_DRAWS = 9_999


@dataclass(frozen=True)
class RelabellingResult(TestResult):
    """``statistic``: the sum over items (or groups) of the true arrangement's centred score; ``expected``: its null
    mean; ``null_sd``: its null standard deviation (from the draws); ``n``: items (or groups) tested; ``min_pvalue``:
    the smallest p the test can give on these items (``1 / prod(arrangements)``, or ``1 / (1 + draws)``)."""

    n: int
    expected: float
    null_sd: float
    draws: int
    min_pvalue: float

    @property
    def standardised(self) -> float:
        """How many null standard deviations the statistic lies above its null mean (0 when the null has no spread)."""
        return (self.statistic - self.expected) / self.null_sd if self.null_sd > 0 else 0.0


def relabelling_metrics(name: str, *, count: str) -> dict[str, Callable[[RelabellingResult], float]]:
    """A relabelling test's task metrics: ``<name>_z`` (its standardised statistic), ``<name>_pvalue`` and ``count``
    (the items or groups it tested)."""
    return {f"{name}_z": lambda s: s.standardised, f"{name}_pvalue": lambda s: s.pvalue, count: lambda s: s.n}


def standardised(scores: Sequence[float]) -> np.ndarray:
    """Each score's z-score among the item's own (all zero when they are all equal)."""
    values = np.asarray(scores, dtype=float)
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def _monte_carlo(columns: Sequence[np.ndarray], observed: float, draws: int, seed: int, name: str,
                 min_pvalue: float) -> RelabellingResult:
    """p of ``observed`` against the sum over items of one value drawn uniformly from each item's ``columns``."""
    rng = rng_for(seed, "relabelling", name)
    null = np.zeros(draws)
    for values in columns:
        null += values[rng.integers(len(values), size=draws)]
    pvalue = (1 + int(np.sum(null >= observed - 1e-12 * max(1.0, abs(observed))))) / (1 + draws)
    expected = float(sum(values.mean() for values in columns))
    return RelabellingResult(statistic=float(observed), pvalue=pvalue, confidence_interval=None, n=len(columns),
                             expected=expected, null_sd=float(null.std()), draws=draws,
                             min_pvalue=max(min_pvalue, 1 / (1 + draws)))


def arrangement_test(items: Sequence[Sequence[float]], *, draws: int = DEFAULT_DRAWS, seed: int = 0,
                     name: str = "") -> RelabellingResult:
    """One-sided test that each item's true arrangement (index 0 of its scores) scores above its rearrangements.

    ``items``: per item, the scores of its true arrangement first, then of its rearrangements (at least one).
    ``name`` (e.g. the partition's label) and ``seed`` seed the draws.
    """
    if len(items) == 0:
        raise ContamError("no item to test", field="items")
    if any(len(scores) < 2 for scores in items):
        raise ContamError("every item needs its true arrangement and at least one other", field="items")
    if any(not math.isfinite(float(score)) for scores in items for score in scores):
        raise ContamError("a score is not a finite number", field="items")
    columns = [standardised(scores) for scores in items]
    observed = float(sum(values[0] for values in columns))
    smallest = math.prod(1 / len(values) for values in columns)
    return _monte_carlo(columns, observed, draws, seed, f"arrangements:{name}", smallest)


def double_centred(matrix: Sequence[Sequence[float]]) -> np.ndarray:
    """``m[i, j] - row mean - column mean + grand mean``: what is left of pairing i with j once each first half's
    and each second half's own level is removed."""
    values = np.asarray(matrix, dtype=float)
    return values - values.mean(axis=1, keepdims=True) - values.mean(axis=0, keepdims=True) + values.mean()


def pairing_test(groups: Sequence[Sequence[Sequence[float]]], *, draws: int = DEFAULT_DRAWS, seed: int = 0,
                 name: str = "") -> RelabellingResult:
    """One-sided test that true pairings (the diagonal of each group's square score matrix: row i = first half i,
    column j = second half j) score above the other pairings, within-group permutations as the null."""
    if len(groups) == 0:
        raise ContamError("no group to test", field="groups")
    centred = []
    for matrix in groups:
        values = np.asarray(matrix, dtype=float)
        if values.ndim != 2 or values.shape[0] != values.shape[1] or values.shape[0] < 2:
            raise ContamError(f"a group's scores must be a square matrix of side >= 2, got shape {values.shape}",
                              field="groups")
        if not np.all(np.isfinite(values)):
            raise ContamError("a score is not a finite number", field="groups")
        centred.append(double_centred(values))
    observed = float(sum(np.trace(values) for values in centred))
    rng = rng_for(seed, "relabelling", f"pairings:{name}")
    null = np.zeros(draws)
    for values in centred:
        size = values.shape[0]
        permutations = np.argsort(rng.random((draws, size)), axis=1)  # uniform permutations, one per draw
        null += values[np.arange(size), permutations].sum(axis=1)
    pvalue = (1 + int(np.sum(null >= observed - 1e-12 * max(1.0, abs(observed))))) / (1 + draws)
    smallest = math.prod(1 / math.factorial(values.shape[0]) for values in centred)
    return RelabellingResult(statistic=observed, pvalue=pvalue, confidence_interval=None, n=len(centred),
                             expected=0.0, null_sd=float(null.std()), draws=draws,
                             min_pvalue=max(smallest, 1 / (1 + draws)))


def differenced(audited: Sequence[float], reference: Sequence[float]) -> list[float]:
    """``u = log p(audited) - log p(reference)`` per text (the two models scored the same texts, in order)."""
    if len(audited) != len(reference):
        raise ContamError(f"the reference scored {len(reference)} texts where the audited model scored "
                          f"{len(audited)}", field="reference")
    return [float(a) - float(r) for a, r in zip(audited, reference)]


def residualised(u: Sequence[Sequence[float]], reference: Sequence[Sequence[float]]) -> tuple[list[list[float]], float]:
    """Each item's ``u`` less ``slope`` times the reference's own scores, both centred within the item, and the slope:
    the least-squares fit of centred ``u`` on centred reference scores over every arrangement of every item (0 when
    the reference scores every arrangement of every item alike)."""
    centred_u = [np.asarray(item, dtype=float) - np.mean(item) for item in u]
    centred_ref = [np.asarray(item, dtype=float) - np.mean(item) for item in reference]
    spread = sum(float(ref @ ref) for ref in centred_ref)
    slope = sum(float(item @ ref) for item, ref in zip(centred_u, centred_ref)) / spread if spread > 0 else 0.0
    return [list(item - slope * ref) for item, ref in zip(centred_u, centred_ref)], slope


def records_by_identity(records: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """A run's logged records of one task by their doc's ``identity`` (how the two models' records pair)."""
    return {str(record.get("identity")): record for record in records}


def reference_record(record: Mapping[str, Any], reference: Mapping[str, Mapping[str, Any]], *,
                     source: str) -> Mapping[str, Any]:
    """The reference model's record of the same doc as ``record`` (by ``identity``); a doc the reference did not score
    is an error naming its run (``source``): the two runs must hold the same task."""
    identity = str(record.get("identity"))
    other = reference.get(identity)
    if other is None:
        raise ContamError(f"the reference model's run has no record of {identity!r}; audit both models on the same "
                          "task", source=source, field="identity")
    return other


def reference_differenced(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]],
                          *, source: str) -> list[list[float]]:
    """Each record's ``scores`` as ``u``: minus the reference's record of the same doc (:func:`reference_record`); a
    doc it scored as other texts is an error too."""
    return [differenced(record["scores"], reference_record(record, reference, source=source).get("scores") or [])
            for record in records]


@dataclass(frozen=True)
class ReferencedTask:
    """One task's logged records from both models' samples, as a family's ``MethodSpec.reference_tests`` reads them:
    the model's records, the reference's by identity, the task's seed and its partition's label."""

    records: list[Mapping[str, Any]]
    reference: dict[str, Mapping[str, Any]]
    seed: int
    label: str


def referenced_task(samples: Sequence[Mapping[str, Any]], reference_samples: Sequence[Mapping[str, Any]],
                    config: Mapping[str, Any], metric: str) -> ReferencedTask | None:
    """Both models' records of one task (each doc's record logged under ``metric``); None when the model logged none."""
    records = [sample.get(metric) or {} for sample in samples]
    if not records:
        return None
    metadata = dict(config.get("metadata") or {})
    return ReferencedTask(records, records_by_identity([sample.get(metric) or {} for sample in reference_samples]),
                          int(metadata.get("seed", 0)),
                          Partition.from_task_metadata(metadata, str(config.get("test_split"))).label)


def reference_tests_reading(metric: str, results: Callable[[ReferencedTask, str], Mapping[str, RelabellingResult]]
                            ) -> Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]], Mapping[str, Any],
                                           str], dict[str, RelabellingResult]]:
    """A family's ``MethodSpec.reference_tests``: both models' records of one task (logged under ``metric``), its
    tests on u by ``results(task, where the reference's samples come from)``; none when the model logged none."""
    def reference_tests(samples: Sequence[Mapping[str, Any]], reference_samples: Sequence[Mapping[str, Any]],
                        config: Mapping[str, Any], source: str) -> dict[str, RelabellingResult]:
        task = referenced_task(samples, reference_samples, config, metric)
        return {} if task is None else dict(results(task, source))

    return reference_tests


@dataclass(frozen=True)
class RelabellingEvidence:
    """A relabelling test's numbers as the report shows them."""

    arrangement: str  # what was rearranged, in words ("option orders", "pairings of first and second halves")
    scored: str  # "log-likelihood" or "u = log p(model) - log p(reference)"
    reference: str | None  # the reference model, when the scores are differenced
    result: RelabellingResult
    per_unit: int  # the most arrangements scored per item (or the group size)
    unit: str = "item"
    slope: float | None = None  # residualised scores: the slope on the reference's own scores taken out of them

    def facts(self) -> list[tuple[str, str]]:
        result = self.result
        facts = [(f"{self.unit}s tested", str(result.n)),
                 (f"{self.arrangement} scored per {self.unit} (the true one + others)", str(self.per_unit)),
                 ("scores", self.scored)]
        if self.reference:
            facts.append(("reference model", self.reference))
        if self.slope is not None:
            facts.append(("slope on the reference's own scores, taken out", number(self.slope)))
        facts += [("sum of the true arrangements' centred scores", number(result.statistic)),
                  ("null mean and standard deviation", f"{number(result.expected)} ± {number(result.null_sd)}"),
                  ("standardised (null SDs above its mean)", number(result.standardised)),
                  (f"p-value (Monte-Carlo relabelling, {result.draws} draws)", pvalue(result.pvalue))]
        return facts

    def summary(self) -> str:
        return f"{p_equals(self.result.pvalue)}, {number(self.result.standardised)} null SDs out"


def scored_as(reference: str | None) -> str:
    """What a relabelling test's scores are, in words: u with a reference model, else the model's log-likelihood."""
    return "u = log p(model) - log p(reference)" if reference else "log-likelihood"


def relabelling_verdict(test: Test, *, model: str, partition: str, task: str,
                        evidence: RelabellingEvidence) -> Verdict:
    """A relabelling test's verdict: flagged at p <= ALPHA, its title, null and rule from its :class:`Test`, and a
    caveat when the smallest p it can give is above ALPHA (too few items: it cannot flag)."""
    result = evidence.result
    caveats = (() if result.min_pvalue <= ALPHA else
               (f"the smallest p this test can give on {result.n} {evidence.unit}(s) is {number(result.min_pvalue)} > "
                f"{ALPHA}, so it cannot flag",))
    return test.verdict(model=model, partition=partition, task=task, flagged=result.pvalue <= ALPHA,
                        statistic=result.standardised, pvalue=result.pvalue, n=result.n, evidence=evidence,
                        caveats=caveats)


def own_and_reference_tests(family: str, name: str, *, title: str, null: str, reference_title: str,
                            reference_null: str, rule: str) -> tuple[Test, Test]:
    """A relabelling test on the model's own log-likelihoods and its twin on u (``<name>_reference``), both
    driving when calibrated, under one rule."""
    return (Test(family=family, name=name, title=title, null=null, rule=rule, compares=(), role=DRIVES),
            Test(family=family, name=f"{name}_reference", title=reference_title, null=reference_null, rule=rule,
                 compares=("reference",), role=DRIVES))


@dataclass(frozen=True)
class RecordsRelabelling:
    """A relabelling test over one task's logged records (each doc's ``scores``), on the model's own log-likelihoods
    and, with a reference model, on u: the family's verdicts from a run and its ``MethodSpec.reference_tests``."""

    record_metric: str  # the metric each doc's record is logged under (every metric logs it)
    own: Test
    on_reference: Test
    arrangement: str  # what was rearranged, in words (:class:`RelabellingEvidence`)
    unit: str
    # the test over the scores (one list per record), given the records, the seed and a name for its errors
    statistic: Callable[[Sequence[Sequence[float]], Sequence[Mapping[str, Any]], int, str], RelabellingResult]
    per_unit: Callable[[Sequence[Mapping[str, Any]]], int]  # the most arrangements per unit, from the records

    @property
    def family(self) -> str:
        return self.own.family

    def reference_result(self, records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], *,
                         seed: int, label: str, source: str) -> RelabellingResult:
        """The test on u of one task's records against the reference model's records of the same docs (by
        ``identity``). The audit's verdicts and ``run --reference-model`` both read it."""
        return self.statistic(reference_differenced(records, reference, source=source), records, seed,
                              f"{label}:reference")

    @property
    def reference_tests(self) -> Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]],
                                           Mapping[str, Any], str], dict[str, RelabellingResult]]:
        return reference_tests_reading(self.record_metric, lambda task, source: {
            self.on_reference.name: self.reference_result(task.records, task.reference, seed=task.seed,
                                                          label=task.label, source=source)})

    def task_verdicts(self, model: ModelResults, task: str) -> list[Verdict]:
        records = model.records(task, self.record_metric)
        if not records:
            return []
        partition, seed, per_unit = model.partition(task).label, model.seed(task), self.per_unit(records)

        def verdict(test: Test, result: RelabellingResult, reference: str | None) -> Verdict:
            evidence = RelabellingEvidence(self.arrangement, scored_as(reference), reference, result, per_unit,
                                           unit=self.unit)
            return relabelling_verdict(test, model=model.label, partition=partition, task=task, evidence=evidence)

        found = [verdict(self.own, self.statistic([record["scores"] for record in records], records, seed,
                                                  partition), None)]
        reference = model.reference_records(task, self.record_metric)
        if reference is not None and model.reference is not None:
            result = self.reference_result(records, reference, seed=seed, label=partition,
                                           source=str(model.reference.directory))
            found.append(verdict(self.on_reference, result, model.reference.model or model.reference.label))
        return found

    def verdicts(self, model: ModelResults) -> list[Verdict]:
        return [verdict for task in model.tasks_of(self.family) for verdict in self.task_verdicts(model, task)]

    def method_spec(self, tasks: OneScoredTask, *, order: int, title: str, evidence_kind: str, section: ReportSection,
                    docs: tuple[type, Callable[[Any, Any], object]],
                    shipped_task_configs: Callable[[], Mapping[str, str]], not_run_as: Test | None = None
                    ) -> MethodSpec:
        """The registry entry of a method that is this test on free-text partitions: log-likelihoods only, no
        control, read on u too when the audit names a reference model; "not tested" (as ``not_run_as``, its own test
        by default) where ``docs`` (its settings' class and docs builder) finds nothing to test."""
        return MethodSpec(
            name=self.family, order=order, title=title,
            task_names=tasks.task_names, render_task_configs=tasks.render_task_configs, verdicts=self.verdicts,
            section=section, tests=(self.own, self.on_reference), evidence_kind=evidence_kind,
            output_types=frozenset({"generate_until", "loglikelihood", "loglikelihood_rolling"}),
            cannot_run=not_run_without_docs(not_run_as or self.own, *docs),
            reference_tests=self.reference_tests, shipped_task_configs=shipped_task_configs)
