"""The likelihood modes' verdicts (ours) from a run: partition vs control (per byte, zlib), lift, options.

Read from each task's own metrics in lm-eval's results; the report only renders
them (``lm_eval_contam.report.methods.likelihood``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.formatting import number, p_equals, pvalue
from lm_eval_contam.methods.likelihood.configs import control_overlap_of
from lm_eval_contam.methods.likelihood.docs import control_partition
from lm_eval_contam.methods.likelihood.stats import TwoSampleResult, reference_control_test
from lm_eval_contam.methods.likelihood.task import RECORD_METRIC
from lm_eval_contam.core.partitions import Control, ControlKind, Partition
from lm_eval_contam.core.relabelling import records_by_identity
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.stats import ALPHA, sign_flip_caveats
from lm_eval_contam.verdicts.verdict import Verdict

FAMILY = "likelihood"
# The lift mode names its two means after what they lift.
METRIC_NAMES = {"lift": {"partition": "lift_own", "reference": "lift_other"}}
TWO_SAMPLE_RULE = f"flagged when the one-sided two-sample permutation p <= {ALPHA}"


@dataclass(frozen=True)
class ComparisonEvidence:
    """A score's mean on the partition vs on what it is compared with, and the test's p."""

    score: str  # what is compared, in words
    partition_mean: float
    reference_mean: float
    reference: str  # e.g. "control (Toy News test)"
    pvalue: float
    uncontrolled_pvalue: float | None = None  # the lift mode's own lift against 0, shown for comparison only
    control: str | None = None  # the control's kind and source (Control.describe), for the modes that have one
    control_overlap: str | None = None  # how many of the control's rows are audited rows, when some are
    reference_model: str | None = None  # the reference model, when the score is u (the model's less the reference's)

    def facts(self) -> list[tuple[str, str]]:
        facts = [(f"{self.score}, partition", number(self.partition_mean)),
                 (f"{self.score}, {self.reference}", number(self.reference_mean)),
                 ("difference", number(self.partition_mean - self.reference_mean)),
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
        return f"{p_equals(self.pvalue)}, {number(self.partition_mean)} vs {number(self.reference_mean)}"


def _comparison(model: ModelResults, task: str, common: dict, *, test: str, title: str, score: str, prefix: str,
                reference: str, null: str, rule: str, uncontrolled: str | None = None,
                caveats: tuple[str, ...] = (), control: str | None = None,
                control_overlap: str | None = None) -> Verdict:
    """One verdict from the task's ``<prefix>_partition``, ``<prefix>_reference`` and ``<prefix>_pvalue`` metrics."""
    names = METRIC_NAMES.get(prefix, {})
    partition_mean = model.number(task, names.get("partition", f"{prefix}_partition"))
    reference_mean = model.number(task, names.get("reference", f"{prefix}_control"))
    p = model.number(task, f"{prefix}_pvalue")
    evidence = ComparisonEvidence(score, partition_mean, reference_mean, reference, p,
                                  model.number(task, uncontrolled) if uncontrolled else None, control, control_overlap)
    return Verdict(test=test, title=title, flagged=p <= ALPHA, statistic=partition_mean - reference_mean, pvalue=p,
                   null=null, rule=rule, evidence=evidence, caveats=caveats, **common)


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
    rule = "never flags without a control"
    return [Verdict(test=test, title=title, flagged=None, statistic=None, pvalue=None, null=null, rule=rule,
                    evidence=NotTestedEvidence(score), **{**common, "n": None, "variant": mode})
            for test, title, score, mode in (
                ("likelihood_control", "Likelihood vs control (ours)", "log-likelihood per byte", "control"),
                ("likelihood_options", "DCQ options, likelihood (ours)",
                 "original minus mean perturbation, log-likelihood per byte", "options"))]


def task_control(metadata: Mapping[str, Any]) -> Control:
    """The control a likelihood task's YAML names (``control_kind``, ``control_source``, ``control``)."""
    kind = str(metadata.get("control_kind") or "none")
    if kind not in get_args(ControlKind):
        raise ContamError(f"{kind!r} is not one of {', '.join(get_args(ControlKind))}",
                          source=metadata.get("config_source"), field="control_kind")
    if kind == "none":
        return Control()
    split = str(metadata.get("control") or metadata.get("control_source") or "")
    return Control(kind, str(metadata.get("control_source") or split), split)


def task_verdicts(model: ModelResults, task: str) -> list[Verdict]:
    metadata = model.metadata(task)
    partition = Partition.from_task_metadata(metadata, str(model.config(task).get("test_split")))
    mode = str(metadata.get("mode", "control"))
    named = task_control(metadata)
    common = {"model": model.label, "partition": partition.label, "family": FAMILY, "task": task,
              "n": model.n_instances(task), "confidence_interval": None, "variant": mode}
    if mode == "lift":
        lift = _comparison(
            model, task, common, test="likelihood_lift", title="Time Travel, likelihood (ours)",
            score="guided-minus-general log-likelihood per byte", prefix="lift",
            reference="other instances' second pieces",
            null=("within each instance, the dataset name lifts the log-likelihood of its own second piece and of "
                  "another instance's second piece alike (paired differences symmetric about 0)"),
            rule=f"flagged when the one-sided sign-flip p <= {ALPHA}", uncontrolled="lift_own_pvalue",
            caveats=sign_flip_caveats(common["n"]))
        return [lift, *(not_tested(common, partition) if named.kind == "none" else [])]
    control = control_partition(partition, str(metadata.get("control") or "")).label
    reference = f"control ({control})"
    overlap = control_overlap_of(metadata)
    named_control = {"control": named.describe(), "control_overlap": overlap.describe() if overlap else None}
    if mode == "options":
        return [_comparison(
            model, task, common, test="likelihood_options", title="DCQ options, likelihood (ours)",
            score="original minus mean perturbation, log-likelihood per byte", prefix="gap", reference=reference,
            null=(f"the original-over-perturbations gaps of {partition.label} and of {control} are exchangeable "
                  "(the naturalness gap unseen text shows, no more)"), rule=TWO_SAMPLE_RULE,
            **named_control)]
    null = f"the scores of {partition.label} and of {control} are exchangeable (the model saw both alike)"
    return [
        _comparison(model, task, common, test="likelihood_control", title="Likelihood vs control (ours)",
                    score="log-likelihood per byte", prefix="per_byte", reference=reference, null=null,
                    rule=TWO_SAMPLE_RULE, **named_control),
        _comparison(model, task, common, test="likelihood_control_zlib",
                    title="Likelihood vs control, zlib-normalised (ours)",
                    score="log-likelihood per zlib byte", prefix="zlib", reference=reference, null=null,
                    rule=TWO_SAMPLE_RULE, **named_control),
        *_reference_verdict(model, task, common, partition=partition, control=control, named_control=named_control),
    ]


REFERENCE_TEST = "likelihood_control_reference"
REFERENCE_TITLE = "Likelihood vs control on u, against the reference model (ours)"
REFERENCE_SCORE = "u = log p(model) - log p(reference) per byte"


def reference_result(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], *, seed: int,
                     source: str) -> TwoSampleResult | None:
    """The test on u of one control-mode task's logged records against the reference model's records of the same
    texts (by ``identity``); None for records of the earlier task (no identity logged) or none at all. The audit's
    verdict and ``run --reference-model`` both read it."""
    if not records or any("identity" not in record for record in records):
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
    result = reference_result([sample.get(RECORD_METRIC) or {} for sample in model.samples(task)], reference,
                              seed=model.seed(task), source=str(model.reference.directory))
    if result is None:
        return []
    evidence = ComparisonEvidence(REFERENCE_SCORE, result.partition_mean, result.control_mean, f"control ({control})",
                                  result.pvalue, control=named_control["control"],
                                  control_overlap=named_control["control_overlap"],
                                  reference_model=model.reference.model or model.reference.label)
    null = (f"the u of {partition.label}'s texts and of {control}'s are exchangeable (the fine-tune saw both alike; "
            "what it shares with the reference, each text's difficulty and fluency, cancels in u)")
    return [Verdict(test=REFERENCE_TEST, title=REFERENCE_TITLE, flagged=result.pvalue <= ALPHA,
                    statistic=result.statistic, pvalue=result.pvalue, null=null, rule=TWO_SAMPLE_RULE,
                    evidence=evidence, **common)]


def verdicts(model: ModelResults) -> list[Verdict]:
    return [verdict for task in model.tasks_of(FAMILY) for verdict in task_verdicts(model, task)]
