"""The likelihood modes' verdicts (ours) from a run: partition vs control (per byte, zlib), lift, options.

Read from each task's own metrics in lm-eval's results; the report only renders
them (``lm_eval_contam.report.methods.likelihood``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.formatting import number, p_equals, pvalue
from lm_eval_contam.core.method_verdict import DRIVES, Test, Verdict
from lm_eval_contam.core.partitions import Control, Partition
from lm_eval_contam.core.relabelling import records_by_identity
from lm_eval_contam.core.rundir import FILTER, ModelResults, number_or_none
from lm_eval_contam.core.split_tests import SplitUnits
from lm_eval_contam.verdicts.detection_rates import split_control_detection, split_control_measured_size
from lm_eval_contam.core.stats import ALPHA, splits_differ, splits_differ_test
from lm_eval_contam.methods.likelihood.docs import CONTROL as CONTROL_GROUP  # the control side's docs (CONTROL: its Test)
from lm_eval_contam.methods.likelihood.docs import PARTITION, control_partition
from lm_eval_contam.methods.likelihood.stats import TwoSampleResult, control_units, reference_control_test
from lm_eval_contam.methods.likelihood.task import RECORD_METRIC

FAMILY = "likelihood"
# The lift mode names its two means after what they lift.
METRIC_NAMES = {"lift": {"partition": "lift_own", "baseline": "lift_other"}}
TWO_SAMPLE_RULE = f"flagged when the one-sided two-sample permutation p <= {ALPHA}"
CONTROL_NULL = "the scores of {partition} and of {control_partition} are exchangeable (the model saw both alike)"
CONTROL = Test(family=FAMILY, name="likelihood_control", title="Likelihood vs control (ours)", null=CONTROL_NULL,
               rule=TWO_SAMPLE_RULE, compares=("control",), role=DRIVES, rate_keys=("likelihood_control:control",))
CONTROL_ZLIB = Test(family=FAMILY, name="likelihood_control_zlib", title="Likelihood vs control, zlib-normalised (ours)",
                    null=CONTROL_NULL, rule=TWO_SAMPLE_RULE, compares=("control",), role=DRIVES,
                    rate_keys=("likelihood_control_zlib:control",))
ON_REFERENCE = Test(
    family=FAMILY, name="likelihood_control_reference",
    title="Likelihood vs control on u, against the reference model (ours)",
    null=("the u of {partition}'s texts and of {control_partition}'s are exchangeable (the fine-tune saw both alike; "
          "what it shares with the reference, each text's difficulty and fluency, cancels in u)"),
    rule=TWO_SAMPLE_RULE, compares=("control", "reference"), role=DRIVES,
    rate_keys=("likelihood_control_reference:control",))
LIFT = Test(family=FAMILY, name="likelihood_lift", title="Time Travel, likelihood (ours)",
            null=("within each instance, the dataset name lifts the log-likelihood of its own second piece and of "
                  "another instance's second piece alike (paired differences symmetric about 0)"),
            rule=f"flagged when the one-sided sign-flip p <= {ALPHA}", compares=(), role=DRIVES, sign_flip=True,
            rate_keys=("likelihood_lift:lift",))
OPTIONS = Test(family=FAMILY, name="likelihood_options", title="DCQ options, likelihood (ours)",
               null=("the original-over-perturbations gaps of {partition} and of {control_partition} are exchangeable "
                     "(the naturalness gap unseen text shows, no more)"),
               rule=TWO_SAMPLE_RULE, compares=("control",), role=DRIVES, rate_keys=("likelihood_options:options",))
TESTS = (CONTROL, CONTROL_ZLIB, ON_REFERENCE, LIFT, OPTIONS)
REFERENCE_TEST = ON_REFERENCE.name  # the control mode's test on u, as run --reference-model names its row's metrics


@dataclass(frozen=True)
class ComparisonEvidence:
    """A score's mean on the partition vs on its baseline (what it is compared with), and the test's p."""

    score: str  # what is compared, in words
    partition_mean: float
    baseline_mean: float
    baseline: str  # e.g. "control (Toy News test)", "other instances' second pieces"
    pvalue: float
    uncontrolled_pvalue: float | None = None  # the lift mode's own lift against 0, shown for comparison only
    control: str | None = None  # the control's kind and source (Control.describe), for the modes that have one
    control_overlap: str | None = None  # how many of the control's rows are audited rows, when some are
    reference_model: str | None = None  # the reference model, when the score is u (the model's less the reference's)

    def facts(self) -> list[tuple[str, str]]:
        facts = [(f"{self.score}, partition", number(self.partition_mean)),
                 (f"{self.score}, {self.baseline}", number(self.baseline_mean)),
                 ("difference", number(self.partition_mean - self.baseline_mean)),
                 ("p-value (partition higher)", pvalue(self.pvalue))]
        if self.uncontrolled_pvalue is not None:
            facts.append(("uncontrolled p (own lift > 0; also fires on a familiar dataset's unseen split)",
                          pvalue(self.uncontrolled_pvalue)))
        if self.control is not None:
            facts.append(("control (kind, source)", self.control))
        if self.control_overlap is not None:
            facts.append(("control overlap", self.control_overlap))
        if self.reference_model is not None:
            facts.append(("reference model", self.reference_model))
        return facts

    def summary(self) -> str:
        return f"{p_equals(self.pvalue)}, {number(self.partition_mean)} vs {number(self.baseline_mean)}"


def _comparison(model: ModelResults, task: str, common: dict, *, test: Test, score: str, prefix: str, baseline: str,
                uncontrolled: str | None = None, control: str | None = None, control_overlap: str | None = None,
                control_partition: str = "") -> Verdict:
    """One verdict from the task's ``<prefix>_partition``, ``<prefix>_control`` and ``<prefix>_pvalue`` metrics."""
    names = METRIC_NAMES.get(prefix, {})
    partition_mean = model.number(task, names.get("partition", f"{prefix}_partition"))
    baseline_mean = model.number(task, names.get("baseline", f"{prefix}_control"))
    p = model.number(task, f"{prefix}_pvalue")
    evidence = ComparisonEvidence(score, partition_mean, baseline_mean, baseline, p,
                                  model.number(task, uncontrolled) if uncontrolled else None, control, control_overlap)
    return test.verdict(flagged=p <= ALPHA, statistic=partition_mean - baseline_mean, pvalue=p, evidence=evidence,
                        control_partition=control_partition, **common)


PER_BYTE, PER_ZLIB_BYTE = "log-likelihood per byte", "log-likelihood per zlib byte"
OPTIONS_GAP = "original minus mean perturbation, log-likelihood per byte"
NO_CONTROL = "no valid control: not tested"


@dataclass(frozen=True)
class NotTestedEvidence:
    """Why a mode gave no verdict: the partition has no control to compare with."""

    score: str  # what the mode would compare, in words

    def facts(self) -> list[tuple[str, str]]:
        return [("control", "none (give --control-split or --control-data)"), ("would compare", self.score),
                ("result", NO_CONTROL)]

    def summary(self) -> str:
        return NO_CONTROL


def not_tested(common: dict, partition: Partition) -> list[Verdict]:
    """The control and options modes' verdicts for a partition without a control: no decision, saying why.

    Comparing the partition with nothing is no test, and the built-in contrast at hand (original vs its
    perturbation twin) is no null by itself: unseen originals already score above their twins.
    """
    null = (f"none: {partition.label} has no control partition of the same distribution the model cannot have seen, "
            "so these modes are not tested (the lift mode's reference is built in and is tested)")
    return [test.untested(model=common["model"], partition=common["partition"], task=common["task"], null=null,
                          rule="never flags without a control", evidence=NotTestedEvidence(score), variant=mode)
            for test, score, mode in ((CONTROL, PER_BYTE, "control"), (OPTIONS, OPTIONS_GAP, "options"))]


SPLITS_DIFFER = "not tested: the splits differ"


NO_UNITS = "not tested: no unit lies in one split alone"


TOO_FEW_UNITS = "not tested: too few units to relabel"


@dataclass(frozen=True)
class SplitsDifferEvidence:
    """Why a mode gave no verdict: its control, the task's own second split, differs from the audited split (or, with
    ``result`` :data:`NO_UNITS`, shares every passage with it; :data:`TOO_FEW_UNITS`, leaves too few items)."""

    score: str  # what the mode would compare, in words
    control: str  # the control's kind and source (Control.describe)
    why: str  # which check found the difference, with its p
    result: str = SPLITS_DIFFER

    def facts(self) -> list[tuple[str, str]]:
        return [("control (kind, source)", self.control), ("would compare", self.score),
                ("splits compared", self.why), ("result", self.result)]

    def summary(self) -> str:
        return f"{self.result} ({self.why})"


def _untested_controls(common: dict, named: Control, tests: Sequence[tuple[Test, str]], *, null: str, rule: str,
                       why: str, result: str) -> list[Verdict]:
    return [test.untested(model=common["model"], partition=common["partition"], task=common["task"], null=null,
                          rule=rule, evidence=SplitsDifferEvidence(score, named.describe(), why, result),
                          variant=common["variant"])
            for test, score in tests]


def splits_differ_verdicts(common: dict, partition: Partition, control: str, named: Control, why: str,
                           tests: Sequence[tuple[Test, str]]) -> list[Verdict]:
    """The control tests of a partition whose assumed control differs from it (``tests``: test, score): no
    decision, saying which check found the difference. The other verdicts stand."""
    null = (f"none: {partition.label} and {control} differ ({why}), so the control, assumed exchangeable with the "
            "partition, is not, and the tests against it are not tested")
    return _untested_controls(common, named, tests, null=null, rule="never flags when the splits differ", why=why,
                              result=SPLITS_DIFFER)


def no_units_verdicts(common: dict, partition: Partition, control: str, named: Control, units: SplitUnits,
                      tests: Sequence[tuple[Test, str]]) -> list[Verdict]:
    """The control tests of a partition whose :class:`~lm_eval_contam.core.split_tests.SplitUnits` leave nothing to
    relabel: a side whose every item shares a passage or option texts with the other split (the unit randomised
    cannot be relabelled whole), or too few items (a run cut short by ``--limit``). No decision, saying which. The
    other verdicts stand."""
    if units.shared_out:
        why = (f"{units.mixed_items} items share a passage or option texts with an item of the other split, leaving "
               f"{units.partition} audited and {units.control} control unit(s) to relabel")
        null = (f"none: {partition.label} and {control} share their passages ({why}); the split labels of shared units "
                "cannot be relabelled whole, so the tests against the control are not tested")
        return _untested_controls(common, named, tests, null=null,
                                  rule="never flags without units of one split alone", why=why, result=NO_UNITS)
    why = (f"{units.partition} audited and {units.control} control unit(s) of {units.items} items; a relabelling "
           "needs a unit of each split and 3 items")
    null = f"none: {partition.label} and {control} leave no relabelling to compare with ({why})"
    return _untested_controls(common, named, tests, null=null, rule="never flags without units to relabel", why=why,
                              result=TOO_FEW_UNITS)


TEXTS_CHECK_METRIC = "texts_pvalue"  # the control mode's comparability check of the items it compares


@dataclass(frozen=True)
class SplitChecks:
    """What tells a partition's two splits apart, from its control-mode task: the model-free check of the texts it
    compares (``texts_pvalue``: None in runs logged before it) and the reference model's (:func:`reference_splits_test`,
    None without a reference)."""

    texts_pvalue: float | None = None
    reference: Any | None = None
    units: SplitUnits | None = None  # the units its split-label tests relabel (None: no records logged)


def splits_difference(named: Control, checks: SplitChecks) -> str | None:
    """Why a control ``audit --tasks`` chose itself (the task's own second split) is not comparable with the audited
    split, or None: the items compared differ in their character 3-grams and lengths (the kernel two-sample check,
    :func:`~lm_eval_contam.core.split_tests.texts_differ_test`; in runs logged before it, the whole splits' lengths), or
    the reference model tells them apart (Mann-Whitney U); each at ``SPLIT_CHECK_ALPHA``. A control a flag named is the
    user's: not checked."""
    if not named.assumed:
        return None
    if checks.texts_pvalue is not None:
        if splits_differ(checks.texts_pvalue):
            return ("the compared items' character 3-grams and lengths: kernel two-sample relabelling "
                    f"{p_equals(checks.texts_pvalue)}")
    elif named.lengths_pvalue is not None and splits_differ(named.lengths_pvalue):
        return f"character lengths of the rendered docs: Mann-Whitney U {p_equals(named.lengths_pvalue)}"
    if checks.reference is not None and splits_differ(checks.reference.pvalue):
        return (f"the reference model's log-likelihood per byte, higher on the audited split: Mann-Whitney U "
                f"{p_equals(float(checks.reference.pvalue))}")
    return None


def split_checks(model: ModelResults, task: str) -> SplitChecks:
    """A control-mode task's :class:`SplitChecks`."""
    logged = f"{TEXTS_CHECK_METRIC},{FILTER}" in model.row(task)
    # NaN where the check had no units of one split alone to relabel (task_verdicts says so)
    texts = number_or_none(model.row(task).get(f"{TEXTS_CHECK_METRIC},{FILTER}")) if logged else None
    records = model.records(task, RECORD_METRIC)
    return SplitChecks(texts, reference_splits_test(model, task), control_units(records) if records else None)


def reference_splits_test(model: ModelResults, task: str) -> Any | None:
    """The reference model's own log-likelihood per byte of the partition's and the control's texts of a control-mode
    task, compared (:func:`~lm_eval_contam.core.stats.splits_differ_test`, one-sided: the partition's higher); None
    without a reference run of it. A partition the reference itself finds easier than its control differs in more than
    what the audited model learned, and in the direction the split-label tests read as memory. A control it finds
    easier only costs those one-sided tests power, never level, so it is not a reason to leave them untested (two-sided,
    the check cost the split study's whole audit one of its 4 injected partitions, at p = 0.046)."""
    reference = model.reference_records(task, RECORD_METRIC)
    if not reference:
        return None
    per_byte: dict[str, list[float]] = {PARTITION: [], CONTROL_GROUP: []}
    for record in reference.values():
        per_byte[str(record.get("group"))].append(float(record["loglikelihood"]) / int(record["bytes"]))
    if not per_byte[PARTITION] or not per_byte[CONTROL_GROUP]:
        return None
    return splits_differ_test(per_byte[PARTITION], per_byte[CONTROL_GROUP], alternative="greater")


def task_verdicts(model: ModelResults, task: str, checks: SplitChecks = SplitChecks()) -> list[Verdict]:
    """One likelihood task's verdicts; ``checks``: what tells the partition's two splits apart (:func:`split_checks` of
    its control-mode task), for a control the audit chose itself. The control is the one its YAML carries (the card's
    ``control`` mapping, with its overlap with the audited rows)."""
    metadata = model.metadata(task)
    partition = model.partition(task)
    mode = str(metadata.get("mode", "control"))
    named = partition.control
    common = {"model": model.label, "partition": partition.label, "task": task, "n": model.n_instances(task),
              "variant": mode}
    if mode == "lift":
        lift = _comparison(model, task, common, test=LIFT, score="guided-minus-general log-likelihood per byte",
                           prefix="lift", baseline="other instances' second pieces", uncontrolled="lift_own_pvalue")
        return [lift, *(not_tested(common, partition) if named.kind == "none" else [])]
    control = control_partition(partition).label
    baseline = f"control ({control})"
    overlap = named.overlap
    named_control = {"control": named.describe(),
                     "control_overlap": overlap.describe() if overlap is not None and overlap.shared else None}
    against_control = [(CONTROL, PER_BYTE), (CONTROL_ZLIB, PER_ZLIB_BYTE),
                       *([(ON_REFERENCE, REFERENCE_SCORE)] if checks.reference is not None else [])]
    tests = [(OPTIONS, OPTIONS_GAP)] if mode == "options" else against_control
    # the units each mode's test relabels, from its own records (the control mode's read once, where its checks were)
    units = checks.units if mode == "control" else None
    if units is None:
        records = model.records(task, "gap_pvalue" if mode == "options" else RECORD_METRIC)
        units = control_units(records) if records else None
    if units is not None and not units.testable:
        return no_units_verdicts(common, partition, control, named, units, tests)
    differ = splits_difference(named, checks)
    if differ is not None:
        return splits_differ_verdicts(common, partition, control, named, differ, tests)
    shape = "multiple choice" if metadata.get("benchmark_output_type") == "multiple_choice" else "free text"
    sides = units.sides if units is not None else unlogged_sides(model, task)
    near = overlap.near_copies_note() if overlap is not None else None

    def noted(test: Test) -> dict:
        """The verdict's caveats: the control's near copies of audited items, a control smaller than the rates
        quoted were measured with, and (the split-label tests, on a control the audit chose itself) what its level
        rests on."""
        leveled = split_level_caveats(named, checks, shape, sides, test.name) if test is not OPTIONS else ()
        return {**common, "caveats": (*([near] if near else []), *control_size_caveats(sides, shape, test.name),
                                      *leveled), "sides": sides}

    if mode == "options":
        return [_comparison(model, task, noted(OPTIONS), test=OPTIONS, score=OPTIONS_GAP, prefix="gap",
                            baseline=baseline, control_partition=control, **named_control)]
    return [
        _comparison(model, task, noted(CONTROL), test=CONTROL, score=PER_BYTE, prefix="per_byte", baseline=baseline,
                    control_partition=control, **named_control),
        _comparison(model, task, noted(CONTROL_ZLIB), test=CONTROL_ZLIB, score=PER_ZLIB_BYTE, prefix="zlib",
                    baseline=baseline, control_partition=control, **named_control),
        *_reference_verdict(model, task, noted(ON_REFERENCE), partition=partition, control=control,
                            named_control=named_control),
    ]


def unlogged_sides(model: ModelResults, task: str) -> tuple[int, int]:
    """The items a side of a control-comparison task that logged no records: half its instances each."""
    half = max(1, (model.n_instances(task) or 0) // 2)
    return half, half


def control_size_caveats(sides: tuple[int, int], shape: str, test: str) -> tuple[str, ...]:
    """A control side of fewer items than the split-control study's controls at the size its rates are quoted for
    (:func:`~lm_eval_contam.verdicts.detection_rates.split_control_measured_size`; the control mode's sizes for the
    tests the study did not run, measured on the same split pairs): the rates quoted overstate its power."""
    audited, control = sides
    measured = (split_control_measured_size(test, shape, min(sides))
                or split_control_measured_size(CONTROL.name, shape, min(sides)))
    if measured is None or control >= measured:
        return ()
    return (f"compared with a control of {control} item{'' if control == 1 else 's'} ({audited} audited); the rates "
            f"quoted were measured with controls of {measured} items a side, so its power is below the detection rate "
            "quoted",)


def split_level_caveats(named: Control, checks: SplitChecks, shape: str, sides: tuple[int, int],
                        test: str) -> tuple[str, ...]:
    """What a split-control verdict's level rests on, and the power measured nearest its size (the smaller side's):
    on the task's own second split, "exact: the two splits are exchangeable" (checked on the items compared, where
    the check ran)."""
    if not named.assumed or checks.texts_pvalue is None:
        return ()
    level = (f"level exact at any size: the two splits are exchangeable (assumed: drawn from one pool; the check of "
             f"the items compared passed, {p_equals(checks.texts_pvalue)}"
             + ("; a reference would check it on the model's own scores too)" if checks.reference is None else ")"))
    measured = split_control_detection(test, shape, max(1, min(sides)))
    return (level, *([measured] if measured else []))


REFERENCE_SCORE = "u = log p(model) - log p(reference) per byte"


def reference_result(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], *, seed: int,
                     source: str) -> TwoSampleResult | None:
    """The test on u of one control-mode task's logged records against the reference model's records of the same
    texts (by ``identity``); None for records of the earlier task (no identity logged), none at all, or records with
    no unit of one split alone to relabel (:func:`~lm_eval_contam.methods.likelihood.stats.control_units`). The audit's
    verdict and ``run --reference-model`` both read it."""
    if not records or any("identity" not in record for record in records) or not control_units(records).testable:
        return None
    return reference_control_test(records, reference, seed=seed, source=source)


def reference_tests(samples: Sequence[Mapping[str, Any]], reference_samples: Sequence[Mapping[str, Any]],
                    config: Mapping[str, Any], source: str) -> dict[str, TwoSampleResult]:
    """``MethodSpec.reference_tests``: the test on u of one control-mode task from both models' logged samples."""
    metadata = dict(config.get("metadata") or {})
    reference = records_by_identity([sample.get(RECORD_METRIC) or {} for sample in reference_samples])
    result = reference_result([sample.get(RECORD_METRIC) or {} for sample in samples], reference,
                              seed=int(metadata.get("seed", 0)), source=source)
    return {REFERENCE_TEST: result} if result is not None else {}


def _reference_verdict(model: ModelResults, task: str, common: dict, *, partition: Partition, control: str,
                       named_control: Mapping[str, str | None]) -> list[Verdict]:
    """The control mode's test on u when a reference model scored the task too (none otherwise)."""
    reference = model.reference_records(task, RECORD_METRIC)
    if reference is None or model.reference is None:
        return []
    result = reference_result(model.records(task, RECORD_METRIC), reference,
                              seed=model.seed(task), source=str(model.reference.directory))
    if result is None:
        return []
    evidence = ComparisonEvidence(REFERENCE_SCORE, result.partition_mean, result.control_mean, f"control ({control})",
                                  result.pvalue, control=named_control["control"],
                                  control_overlap=named_control["control_overlap"],
                                  reference_model=model.reference.model or model.reference.label)
    return [ON_REFERENCE.verdict(flagged=result.pvalue <= ALPHA, statistic=result.statistic, pvalue=result.pvalue,
                                 evidence=evidence, control_partition=control, **common)]


def verdicts(model: ModelResults) -> list[Verdict]:
    """Every likelihood task's verdicts; where the control is one the audit chose itself, a partition's options task
    reads the reference's check of its splits from the partition's control-mode task (the one the reference scores)."""
    tasks = model.tasks_of(FAMILY)
    checks = {model.partition(task).label: split_checks(model, task) for task in tasks
              if model.metadata(task).get("mode", "control") == "control"
              and model.partition(task).control.assumed}
    return [verdict for task in tasks
            for verdict in task_verdicts(model, task, checks.get(model.partition(task).label, SplitChecks()))]
