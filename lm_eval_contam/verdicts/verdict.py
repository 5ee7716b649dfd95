"""Verdicts of a run: every registered method's, each partition's combined one, and the measured rates beside them.

Each method decides its own verdicts (:class:`~lm_eval_contam.core.method_verdict.Verdict`) from an lm-eval run
directory through its registry entry (``MethodSpec.verdicts``); the report only renders them. The common fields say
what was tested and how; ``evidence`` holds the method's own numbers, which the method's report section
(``MethodSpec.section``) shows. :func:`collect` sends each task's ``metadata.method`` to
its registered method, so a new method registers one :class:`~lm_eval_contam.core.registry.MethodSpec` and nothing here
changes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.formatting import p_equals
from lm_eval_contam.core.method_verdict import DRIVES, EXPLORATORY, NotRun, Verdict, not_run_verdict
from lm_eval_contam.core.registry import (
    NOT_RUN_KEY,
    controlled_tests,
    method_of,
    papers_own_tests,
    referenced_tests,
    registered_methods,
    tests_in_role,
)
from lm_eval_contam.core.rundir import ModelResults, Run
from lm_eval_contam.core.stats import ALPHA, ConfidenceInterval
from lm_eval_contam.lmeval.context_window import TRUNCATED_METRIC, truncation_caveat

def order_of_tests(verdicts: Sequence[Verdict]) -> list[str]:
    """Tests in order of first appearance (each family emits its tests in its own order)."""
    return list(dict.fromkeys(verdict.test for verdict in verdicts))


def run_caveats(model: ModelResults) -> tuple[str, ...]:
    """What about the run itself weakens every verdict it gives."""
    if model.limit is None:
        return ()
    return (f"run with --limit {model.limit:g}: lm-eval took the first instances, not the method's sample; "
            "a smoke run, not a verdict to report",)


def model_verdicts(model: ModelResults) -> list[Verdict]:
    """Every verdict of one model: each task's ``metadata.method`` names the registered method that decides it."""
    methods = sorted({method_of(str(model.metadata(task)["method"])) for task in (model.results.get("results") or {})
                      if model.metadata(task).get("method")}, key=lambda spec: (spec.order, spec.name))
    found = [verdict for spec in methods for verdict in spec.verdicts(model)]
    caveats = run_caveats(model)
    declared = {verdict.partition: shape for verdict in found if (shape := declared_shape(model, verdict.task))}
    shapes = partition_shapes(found, declared)
    tested = [replace(verdict, caveats=verdict.caveats + caveats + task_caveats(model, verdict.task) + study_size_caveats(verdict),
                      shape=shapes[verdict.partition]) for verdict in found]
    return tested + [replace(verdict, shape=shapes.get(verdict.partition)) for verdict in not_run_verdicts(model)]


MULTIPLE_CHOICE, FREE_TEXT = "multiple choice", "free text"


def items_shape(verdicts: Sequence[Verdict]) -> str:
    """The study shape of a partition's items, from its tests: multiple choice when a test that only multiple-choice
    items get ran on it (``MethodSpec.output_types``), free text otherwise."""
    multiple_choice = {spec.name for spec in registered_methods() if spec.output_types == {"multiple_choice"}}
    return MULTIPLE_CHOICE if any(verdict.family in multiple_choice for verdict in verdicts) else FREE_TEXT


def declared_shape(model: ModelResults, task: str) -> str | None:
    """The shape of items a benchmark partition's card declares (its lm-eval task's output_type), if any: a
    multiple-choice benchmark audited with the log-likelihood tests alone is still multiple choice."""
    output_type = model.metadata(task.split(" + ")[0]).get("benchmark_output_type")
    if output_type is None:
        return None
    return MULTIPLE_CHOICE if output_type == "multiple_choice" else FREE_TEXT


def partition_shapes(verdicts: Sequence[Verdict], declared: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each partition's shape over one model's verdicts: the one its card declares (``declared``), else
    :func:`items_shape`."""
    grouped: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        grouped.setdefault(verdict.partition, []).append(verdict)
    return {partition: (declared or {}).get(partition) or items_shape(mine) for partition, mine in grouped.items()}


def study_size_caveats(verdict: Verdict) -> tuple[str, ...]:
    """A test run on more instances than the validation study tested it on (its rates' ``largest_n``, as the test
    counts them; an entry without one: the study's partition size): its measured rates say nothing of that size. A
    shift that fine-tuning makes without memory, too small to flag the study's partitions, grows with the instances
    (on authored option orders the filler-only fine-tune's was about -0.9 null SDs per partition)."""
    shipped = _shipped_validation()
    entry = (shipped.get("methods") or {}).get(rate_key(verdict)) or {}
    size = entry.get("largest_n") or (shipped.get("design") or {}).get("rows_per_partition")
    if not size or verdict.n is None or verdict.n <= size or verdict.pvalue is None:
        return ()
    return (f"tested on {verdict.n} instances; its false-positive rates were measured on partitions of {size}, and "
            f"not at this size (the power quoted is a floor)",)


def not_run_verdicts(model: ModelResults) -> list[Verdict]:
    """The "not tested: <why>" verdicts of the tasks the audit left out (their method cannot run on the partition)."""
    return [not_run_verdict(model.label, NotRun.from_record(record))
            for record in (model.results.get(NOT_RUN_KEY) or {}).values()]


def task_caveats(model: ModelResults, task: str) -> tuple[str, ...]:
    """What about one task's run weakens its verdicts: docs cut to the model's context window."""
    if task not in (model.results.get("results") or {}):
        return ()
    return truncation_caveat(model.row(task).get(f"{TRUNCATED_METRIC},none"), model.n_instances(task))


def collect(run: Run) -> list[Verdict]:
    """Every verdict of every model: by model (run order), then partition, then family and test order."""
    # sorted() is stable: within a partition the families' own order stays.
    return [verdict for model in run.models for verdict in sorted(model_verdicts(model), key=lambda v: v.partition)]


# The null study's measured false-positive rates (scripts/null_study.py writes it; the report reads it).
NULL_RATES_FILE = Path(__file__).with_name("null_rates.json")


def rate_key(verdict: Verdict) -> str:
    """How the null study files a verdict's rate: its test, and its prompt style where it has one."""
    return f"{verdict.test}:{verdict.variant}" if verdict.variant else verdict.test


@dataclass(frozen=True)
class MeasuredRate:
    """How often a verdict flagged partitions its model cannot have seen, in the null study."""

    key: str
    k: int
    false_positives: int
    rate: float
    confidence_interval: ConfidenceInterval
    null: str  # which partitions counted as null
    command: str
    date: str
    study: str = "the null study"  # where it was measured, as sentences name it

    def text(self) -> str:
        """E.g. ``3.2 % (2/63; 95 % CI 0.4–11.0 %)``."""
        ci = self.confidence_interval
        return (f"{100 * self.rate:.1f} % ({self.false_positives}/{self.k}; 95 % CI "
                f"{100 * ci.low:.1f}–{100 * ci.high:.1f} %)")


def parse_rates(document: Mapping[str, Any], source: str = "null rates") -> dict[str, MeasuredRate]:
    """The ``methods`` of a rates document, keyed as :func:`rate_key`."""
    found = {}
    for key, entry in (document.get("methods") or {}).items():
        try:
            low, high = entry["ci"]
            found[key] = MeasuredRate(key, int(entry["k"]), int(entry["false_positives"]), float(entry["rate"]),
                                      ConfidenceInterval(float(low), float(high),
                                                         float(document.get("confidence_level", 0.95))),
                                      str(entry.get("null", "")), str(entry["command"]), str(entry["date"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ContamError(f"not a measured rate ({type(error).__name__}: {error})", source=source,
                              field=f"methods.{key}") from None
    return found


@functools.lru_cache(maxsize=1)
def shipped_rates() -> dict[str, MeasuredRate]:
    """The rates shipped with the package; empty when the study has not been run."""
    if not NULL_RATES_FILE.is_file():
        return {}
    return parse_rates(json.loads(NULL_RATES_FILE.read_text(encoding="utf-8")), str(NULL_RATES_FILE))


# The validation study's rates (scripts/validation_study.py --papers writes it; detection_rates reads its detection).
VALIDATION_RATES_FILE = Path(__file__).with_name("validation_rates.json")
CLEAN_MODEL_STUDY = "the validation study (never-seen partitions, clean default model)"


SIBLING_STUDY = "the validation study (held-out siblings of injected partitions)"
FILLER_STUDY = "the validation study (never-seen partitions, filler-only fine-tune against its reference)"
POOL_STUDY = ("the order-pool study (24-item draws from 768 never-seen multiple-choice items, a fine-tune of the "
              "default model against its reference)")
POOL_FILLER_STUDY = ("the order-pool study (24-item draws from 768 never-seen multiple-choice items, the filler-only "
                     "fine-tune of the default model against its reference)")
# The order-pool study's rates (scripts/order_pool_study.py rates writes it), in the validation rates' shape.
ORDER_POOL_RATES_FILE = Path(__file__).with_name("order_pool_rates.json")
AUTHOR_STUDY = ("the validation study (never-seen natural-text partitions, a fine-tune on the same authors' other split "
                "against its reference)")
# Which false-positive column of a validation rates document each study reads, and what its null partitions are.
_VALIDATION_NULLS = {
    "false_positive_clean": ("partitions the clean default model never saw", CLEAN_MODEL_STUDY),
    "false_positive_held_out": ("held-out splits of datasets whose other split the model was trained on",
                                SIBLING_STUDY),
    "false_positive_filler": ("partitions a fine-tune of the default model on the same corpus less the contaminant "
                              "never saw, against the default model as its reference", FILLER_STUDY),
    "false_positive_author": ("natural-text partitions a fine-tune of the default model on the same authors' other "
                              "split never saw, against the default model as its reference", AUTHOR_STUDY),
    "false_positive_pool": ("24-item partitions drawn from a pool of multiple-choice items a fine-tune of the default "
                            "model never saw, against the default model as its reference", POOL_STUDY),
    "false_positive_pool_filler": ("24-item partitions drawn from a pool of multiple-choice items a fine-tune of the "
                                   "default model on filler alone never saw, against the default model as its "
                                   "reference", POOL_FILLER_STUDY),
}


def validation_false_positives(document: Mapping[str, Any], column: str,
                               source: str = "validation rates") -> dict[str, MeasuredRate]:
    """A validation rates document's false positives in ``column`` (on the clean model, or beside an injection),
    as measured rates."""
    null, study = _VALIDATION_NULLS[column]
    methods = {key: {"k": fp["k"], "false_positives": fp["flagged"], "rate": fp["rate"], "ci": fp["ci"],
                     "null": null, "command": entry.get("command") or document.get("command"),
                     "date": entry.get("date") or document.get("date")}
               for key, entry in (document.get("methods") or {}).items()
               if (fp := (entry or {}).get(column))}
    # Per shape too ("<key>@<shape>", the study's shapes, fresh ones included): a test can hold its level pooled and
    # break it on one shape (the lift on authored multiple-choice items).
    methods.update({shape_key(key, shape): {"k": fp["k"], "false_positives": fp["flagged"],
                                            "rate": fp["rate"], "ci": fp["ci"], "null": f"{null} ({shape})",
                                            "command": entry.get("command") or document.get("command"),
                                            "date": entry.get("date") or document.get("date")}
                    for key, entry in (document.get("methods") or {}).items()
                    for shape, columns in ((entry or {}).get("by_shape") or {}).items()
                    if (fp := (columns or {}).get(column))})
    parsed = parse_rates({"confidence_level": document.get("confidence_level", 0.95), "methods": methods}, source)
    return {key: replace(rate, study=study) for key, rate in parsed.items()}


def shape_key(key: str, shape: str) -> str:
    """Where a rate measured on one shape of items is filed beside the pooled one."""
    return f"{key}@{shape}"


def shape_keys(verdict: Verdict) -> list[str]:
    """The rate keys a verdict is checked against: its test's pooled rate, and where its partition's shape is known
    the rates on that shape (the study's own items and the fresh ones written after the model's cutoff)."""
    key = rate_key(verdict)
    shapes = [verdict.shape, f"fresh {verdict.shape}"] if verdict.shape else []
    return [key, *(shape_key(key, shape) for shape in shapes)]


def clean_model_rates(document: Mapping[str, Any], source: str = "validation rates") -> dict[str, MeasuredRate]:
    """The clean default model's false positives: the null study's tiny models keep a test's null where an instruct
    model can break it (e.g. a guided prompt that alone makes completions closer to the reference)."""
    return validation_false_positives(document, "false_positive_clean", source)


def sibling_rates(document: Mapping[str, Any], source: str = "validation rates") -> dict[str, MeasuredRate]:
    """False positives on held-out siblings of injected partitions: a test that flags a dataset the model only knows
    (its name, style, other split) says nothing about these instances, the benchmarks' common case."""
    return validation_false_positives(document, "false_positive_held_out", source)


def filler_rates(document: Mapping[str, Any], source: str = "validation rates") -> dict[str, MeasuredRate]:
    """False positives on the filler-only fine-tune (the recipe of the injected model, contaminant left out): the null
    of a test that differences a fine-tune with its reference, where the clean model (u = 0) is none."""
    return validation_false_positives(document, "false_positive_filler", source)


def _shipped_validation() -> Mapping[str, Any]:
    return json.loads(VALIDATION_RATES_FILE.read_text(encoding="utf-8")) if VALIDATION_RATES_FILE.is_file() else {}


@functools.lru_cache(maxsize=1)
def shipped_clean_model_rates() -> dict[str, MeasuredRate]:
    return clean_model_rates(_shipped_validation(), str(VALIDATION_RATES_FILE))


@functools.lru_cache(maxsize=1)
def shipped_sibling_rates() -> dict[str, MeasuredRate]:
    return sibling_rates(_shipped_validation(), str(VALIDATION_RATES_FILE))


@functools.lru_cache(maxsize=1)
def shipped_filler_rates() -> dict[str, MeasuredRate]:
    return filler_rates(_shipped_validation(), str(VALIDATION_RATES_FILE))


@functools.lru_cache(maxsize=1)
def shipped_author_rates() -> dict[str, MeasuredRate]:
    """False positives on the author fine-tune: a reference-differenced test that fires on what a fine-tune learned
    of the items' authors (their conventions, their domain) rather than on the items."""
    return validation_false_positives(_shipped_validation(), "false_positive_author", str(VALIDATION_RATES_FILE))


@functools.lru_cache(maxsize=1)
def shipped_pool_rates() -> dict[str, MeasuredRate]:
    """False positives over 24-item draws from the order pool: the option-order tests on u, whose level on items a
    fine-tune never saw can drift with the items an audit reads (docs/studies/validation-study.md)."""
    return validation_false_positives(_shipped_order_pool(), "false_positive_pool", str(ORDER_POOL_RATES_FILE))


@functools.lru_cache(maxsize=1)
def shipped_pool_filler_rates() -> dict[str, MeasuredRate]:
    """The same pool's false positives with the filler-only fine-tune as the null (no multiple-choice item in its
    training): the null the design names; the injected fine-tune's (:func:`shipped_pool_rates`, other items of the
    same kind learned) is the stricter one, and a test over its level on either makes no call."""
    return validation_false_positives(_shipped_order_pool(), "false_positive_pool_filler", str(ORDER_POOL_RATES_FILE))


def _shipped_order_pool() -> Mapping[str, Any]:
    return json.loads(ORDER_POOL_RATES_FILE.read_text(encoding="utf-8")) if ORDER_POOL_RATES_FILE.is_file() else {}


def measured_rate(verdict: Verdict, rates: Mapping[str, MeasuredRate] | None = None) -> MeasuredRate | None:
    """The null study's false-positive rate of this verdict's test (None: not measured)."""
    return (shipped_rates() if rates is None else rates).get(rate_key(verdict))


COMBINED_TEST, COMBINED_WITHOUT_CONTROL = "partition_combined", "partition_combined_without_control"
COMBINED_WITH_REFERENCE = "partition_combined_with_reference"
COMBINED_WITH_CONTROL_AND_REFERENCE = "partition_combined_with_control_and_reference"
PARTITION_NULL = "every calibrated test's own null hypothesis holds for this partition"
PARTITION_RULE = (f"contaminated when any calibrated test's Holm-adjusted p <= {ALPHA} (family-wise level {ALPHA} over "
                  "the partition's calibrated tests, under any dependence between them); the papers' own verdicts, "
                  "tests with no measured false-positive rate, and tests measured flagging never-seen partitions "
                  "(null study, clean default model, filler-only and author fine-tunes) or held-out siblings of injected "
                  f"partitions significantly more often than {ALPHA} (over all partitions, or over those of the "
                  "partition's shape: multiple choice or free text), are shown beside it and do not drive it")


# Measured rates a verdict is checked against: one mapping, or several (e.g. the null study's and a validation
# study's); None: every shipped source.
RateSources = Mapping[str, MeasuredRate] | Sequence[Mapping[str, MeasuredRate]]


def rate_sources(rates: RateSources | None) -> list[Mapping[str, MeasuredRate]]:
    if rates is None:
        return [shipped_rates(), shipped_clean_model_rates(), shipped_sibling_rates(), shipped_filler_rates(),
                shipped_author_rates(), shipped_pool_rates(), shipped_pool_filler_rates()]
    return [rates] if isinstance(rates, Mapping) else list(rates)


def over_level_rate(verdict: Verdict, rates: RateSources | None = None) -> MeasuredRate | None:
    """The measured rate showing this test flagging null partitions significantly more often than its level (the
    Clopper-Pearson interval lies above ALPHA), if any: its p-value holds only under its own null, which real models
    break (e.g. Time Travel's guided prompt alone eliciting closer text; a dataset's learned name and style lifting
    its unseen split). ``rates`` None: the null study's rates and the validation study's on the clean model and on
    held-out siblings of injected partitions, on the filler-only fine-tune and on the author fine-tune, and the order
    pool's with either null fine-tune. Each pooled,
    and on the verdict's shape of items where known (:func:`shape_keys`)."""
    return next(filter(None, (key_over_level(key, rates) for key in shape_keys(verdict))), None)


def key_over_level(key: str, rates: RateSources | None = None) -> MeasuredRate | None:
    """The measured rate under ``key`` whose interval lies above ALPHA in any source, if any."""
    found = [source[key] for source in rate_sources(rates) if key in source]
    return next((rate for rate in found if rate.confidence_interval.low > ALPHA), None)


def methods_without_a_call(rates: RateSources | None = None) -> tuple[str, ...]:
    """The registered methods none of whose tests can drive a verdict: every rate key measured over its level, and
    none a paper's own decision. An audit leaves them out unless ``--methods`` names them: their p-values make no
    call, and their texts cost model passes (the sentence-order task: up to 24 orders of each instance, per model)."""
    return tuple(spec.name for spec in registered_methods()
                 if (keys := [key for test in spec.tests if test.role == DRIVES for key in test.keys])
                 and not spec.papers_own_tests and all(key_over_level(key, rates) for key in keys))


def over_level(verdict: Verdict, rates: RateSources | None = None) -> bool:
    return over_level_rate(verdict, rates) is not None


def measured(verdict: Verdict, rates: RateSources | None = None) -> bool:
    """Whether a study measured this test's false-positive rate (a rates entry in any source): a test whose level on
    real models is unmeasured does not drive a verdict, however exact its p-value under its own null."""
    return any(rate_key(verdict) in source for source in rate_sources(rates))


def stated_rate(verdict: Verdict) -> MeasuredRate | None:
    """The false-positive rate a verdict is shown with: the null study's, else the clean model's, else the one that
    puts it over its level, else the highest a study of fine-tunes measured for its test (held-out siblings, the
    filler-only and author fine-tunes, the order pool: the most cautious reading), so that a test that drives on those
    studies' rates is never shown unmeasured."""
    key = rate_key(verdict)
    first = next((source[key] for source in (shipped_rates(), shipped_clean_model_rates()) if key in source), None)
    found = [source[key] for source in (shipped_sibling_rates(), shipped_filler_rates(), shipped_author_rates(),
                                        shipped_pool_rates(), shipped_pool_filler_rates()) if key in source]
    return first or over_level_rate(verdict) or max(found, key=lambda rate: (rate.rate, rate.k), default=None)


def no_call_reason(verdict: Verdict, rates: RateSources | None = None) -> str | None:
    """Why a test's p <= ALPHA makes no call of contamination (None: its decision stands): it is declared
    exploratory, a study measured it flagging null partitions over its level, or none measured how often it does.
    The papers' own decisions stand as published."""
    if not verdict.flagged or verdict.pvalue is None or verdict.test in papers_own_tests():
        return None
    if verdict.test in tests_in_role(EXPLORATORY):
        return "exploratory"
    if over_level(verdict, rates):
        return "over its level"
    return None if measured(verdict, rates) else "its false-positive rate is not measured"


def stated_decision(verdict: Verdict, rates: RateSources | None = None) -> str:
    """A test's decision as a report states it: "contaminated" only from a test whose p can be read as one."""
    reason = no_call_reason(verdict, rates)
    return f"p ≤ {ALPHA:g}, no call: {reason}" if reason else verdict.decision


def tested(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """Verdicts with a p-value from a test that may drive (not the papers' own decision rules, not exploratory tests:
    their declared ``Test.role``)."""
    beside = papers_own_tests() | tests_in_role(EXPLORATORY)
    return [v for v in verdicts if v.pvalue is not None and v.flagged is not None and v.test not in beside]


def calibrated(verdicts: Sequence[Verdict], rates: RateSources | None = None,
               candidates: frozenset[str] = frozenset()) -> list[Verdict]:
    """The verdicts that drive a partition's verdict: a p-value from a test that holds its level, in the suite's
    simulations and in a study that measured its false-positive rate (``candidates``: rate keys a study is measuring
    now, counted as if measured, so the study's combined verdict includes them).

    A verdict combining other tasks' tests (its ``task`` joins them with " + ", e.g. Time Travel's two prompt styles
    under Bonferroni) stands in for those parts, so no test is counted twice; when one of its parts is over its
    level (:func:`over_level`) the combination is dropped and its other parts stand alone.
    """
    found = [v for v in tested(verdicts) if measured(v, rates) or rate_key(v) in candidates]
    # By verdict, not task: one task can give several tests (the option-order task's rank and arrangement tests).
    over = [v for v in found if over_level(v, rates)]
    failing = {v.task for v in over}
    kept = [v for v in found if not any(v is o for o in over)
            and not (" + " in v.task and failing & set(v.task.split(" + ")))]
    covered = {part for v in kept if " + " in v.task for part in v.task.split(" + ")}
    return [v for v in kept if " + " in v.task or v.task not in covered]


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (each capped at 1)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [0.0] * len(pvalues)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class PartitionVerdict:
    """One model × partition decision from its calibrated verdicts (Holm), with the papers' own verdicts beside it."""

    model: str
    partition: str
    evidence: tuple[tuple[Verdict, float], ...]  # each calibrated verdict with its Holm-adjusted p
    papers: tuple[Verdict, ...]
    over_level: tuple[Verdict, ...] = ()  # tests shown but not driving: the null study measured them over their level
    with_control: bool = False  # a test against a control partition was among its tests (else: the no-control verdict)
    referenced: bool = False  # a test on u against a reference model drove it (and no control)
    unmeasured: tuple[Verdict, ...] = ()  # tests shown but not driving: no study measured their false-positive rate

    @property
    def flagged(self) -> bool | None:
        return any(adjusted <= ALPHA for _, adjusted in self.evidence) if self.evidence else None

    @property
    def pvalue(self) -> float | None:
        """The smallest Holm-adjusted p (the partition-level test: Bonferroni's min p × m)."""
        return min((adjusted for _, adjusted in self.evidence), default=None)

    @property
    def fired(self) -> tuple[Verdict, ...]:
        return tuple(verdict for verdict, adjusted in self.evidence if adjusted <= ALPHA)

    @property
    def decision(self) -> str:
        if self.flagged is None:
            return "no calibrated evidence"
        return "contaminated" if self.flagged else "not flagged"

    def facts(self) -> list[tuple[str, str]]:
        return [(f"{v.title}{f' ({v.variant})' if v.variant else ''}", f"{p_equals(v.pvalue)}, Holm {p_equals(adjusted)}")
                for v, adjusted in self.evidence]

    def summary(self) -> str:
        kinds = ", ".join(dict.fromkeys(method_of(v.family).kind for v in self.fired))
        return f"Holm {p_equals(self.pvalue)}" + (f"; fired: {kinds}" if kinds else "")

    @property
    def test(self) -> str:
        """``partition_combined`` with a control, ``partition_combined_with_reference`` with a reference model and no
        control, ``partition_combined_with_control_and_reference`` with both, ``partition_combined_without_control``
        with neither: verdicts with their own measured rates (the report states the one that was computed)."""
        if self.with_control:
            return COMBINED_WITH_CONTROL_AND_REFERENCE if self.referenced else COMBINED_TEST
        return COMBINED_WITH_REFERENCE if self.referenced else COMBINED_WITHOUT_CONTROL

    @property
    def setting(self) -> str:
        """What the verdict was computed with, in words ("with a control", "with a reference model, no control",
        "without a control")."""
        return {COMBINED_TEST: "with a control", COMBINED_WITH_REFERENCE: "with a reference model, no control",
                COMBINED_WITH_CONTROL_AND_REFERENCE: "with a control and a reference model",
                COMBINED_WITHOUT_CONTROL: "without a control"}[self.test]

    def as_verdict(self) -> Verdict:
        """As a :class:`Verdict` (:attr:`test`), for the studies' tallies and the rates lookup."""
        title = {COMBINED_TEST: "One verdict per partition (Holm over calibrated tests)",
                 COMBINED_WITH_REFERENCE: "One verdict per partition, reference model, no control (Holm over "
                                          "calibrated tests)",
                 COMBINED_WITH_CONTROL_AND_REFERENCE: "One verdict per partition, control and reference model (Holm "
                                                      "over calibrated tests)",
                 COMBINED_WITHOUT_CONTROL: "One verdict per partition, no control (Holm over calibrated tests)"}[
            self.test]
        return Verdict(model=self.model, partition=self.partition, family="combined", test=self.test,
                       title=title,
                       task=" + ".join(v.task for v, _ in self.evidence), flagged=self.flagged, statistic=None,
                       pvalue=self.pvalue, confidence_interval=None, n=len(self.evidence), null=PARTITION_NULL,
                       rule=PARTITION_RULE, evidence=self)


def partition_verdicts(verdicts: Sequence[Verdict], rates: RateSources | None = None,
                       candidates: frozenset[str] = frozenset()) -> list[PartitionVerdict]:
    """One verdict per model × partition, in the verdicts' order (``rates``: the null study's; default the shipped;
    ``candidates``: see :func:`calibrated`)."""
    grouped: dict[tuple[str, str], list[Verdict]] = {}
    for verdict in verdicts:
        grouped.setdefault((verdict.model, verdict.partition), []).append(verdict)
    found = []
    for (model, partition), mine in grouped.items():
        tests = calibrated(mine, rates, candidates)
        adjusted = holm([float(v.pvalue) for v in tests])  # type: ignore[arg-type]
        found.append(PartitionVerdict(model, partition, tuple(zip(tests, adjusted)),
                                      tuple(v for v in mine if v.test in papers_own_tests()),
                                      tuple(v for v in tested(mine) if over_level(v, rates)),
                                      with_control=any(v.test in controlled_tests() for v in tested(mine)),
                                      referenced=any(v.test in referenced_tests() for v in tests),
                                      unmeasured=tuple(v for v in tested(mine)
                                                       if not measured(v, rates) and rate_key(v) not in candidates)))
    return found
