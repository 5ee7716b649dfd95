"""DCQ's verdict per task from a run: the contamination range, decided by our chance test.

The published McNemar p at p* is shown as a fact only: p* is chosen after seeing
the hits, so that p is uncorrected for the choice (anti-conservative). The
decision uses ``dcq_pvalue_null``, the whole procedure simulated under no memory
(:mod:`lm_eval_contam.methods.dcq.chance`).

Read from the task's own metrics in lm-eval's results; the report only renders
it (``lm_eval_contam.report.methods.dcq``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.formatting import interval, number, p_equals, pvalue
from lm_eval_contam.core.method_verdict import DRIVES, Test, Verdict
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.rundir import FILTER, ModelResults, number_or_none
from lm_eval_contam.core.stats import ALPHA, ConfidenceInterval
from lm_eval_contam.kit.quiz_options import LEFT_OUT_KEY
from lm_eval_contam.methods.dcq.quiz import LETTERS, POSITIONS, QUIZ_NAMES

FAMILY = "dcq"
NULL = ("no memory: every quiz is answered from the same letter distribution, whichever slot holds the original "
        "(dcq_max no higher than a memory-free model with the same BDQ picks would score)")
RULE = f"flagged when the Monte-Carlo p of the whole procedure (p* chosen as published) <= {ALPHA}"
# One test per answering mode, by the task's output type.
TESTS = {output_type: Test(family=FAMILY, name="dcq_" + output_type.removesuffix("_until"), title=title, null=NULL,
                           rule=RULE, compares=(), role=DRIVES)
         for output_type, title in (("loglikelihood", "DCQ (loglikelihood)"), ("generate_until", "DCQ (generate)"))}


def mode_test(config: Mapping[str, Any]) -> Test:
    """The test a DCQ task runs, by its answering mode (``output_type``)."""
    return TESTS[str(config.get("output_type", "generate_until"))]


@dataclass(frozen=True)
class DCQEvidence:
    dcq_max: float
    dcq_min: float
    dcq_max_ci: ConfidenceInterval
    dcq_kappa: float
    pvalue: float  # ours: the chance test of the whole procedure
    mcnemar_pvalue: float  # published: McNemar at p* as if p* were fixed in advance
    chance_max: float  # mean max of memory-free partitions with the same BDQ picks
    bdq_pick_rates: tuple[float, ...]  # options A..E (E: "none of the provided options")
    bcq_hit_rates: tuple[float, ...]  # original in slot A..D
    unparseable: float
    top_letter_share: float | None  # of all answers, the most common letter's; None in runs made before the metric

    def facts(self) -> list[tuple[str, str]]:
        return [("dcq_max (upper bound)", f"{number(self.dcq_max)} {interval(self.dcq_max_ci)}"),
                ("dcq_min (lower bound)", number(self.dcq_min)),
                ("Cohen's kappa (BCQ positions)", number(self.dcq_kappa)),
                ("chance level of dcq_max (memory-free, same BDQ picks)", number(self.chance_max)),
                ("dcq_max above chance by", number(self.dcq_max - self.chance_max)),
                ("p-value against no memory (whole procedure simulated)", pvalue(self.pvalue)),
                ("McNemar p-value at p* (uncorrected for the choice of p*)", pvalue(self.mcnemar_pvalue)),
                ("unparseable replies", number(self.unparseable)),
                ("most common answer letter's share", number(self.top_letter_share))]

    def summary(self) -> str:
        return f"{p_equals(self.pvalue)}, max {number(self.dcq_max)} (chance {number(self.chance_max)})"


def task_verdict(model: ModelResults, task: str) -> Verdict:
    """Flagged when our chance test of the whole procedure gives p <= 0.05."""
    config, metadata = model.config(task), model.metadata(task)
    p = model.number(task, "dcq_pvalue_null")
    level = float(metadata.get("confidence_level", 0.95))
    ci = ConfidenceInterval(model.number(task, "dcq_max_ci_low"), model.number(task, "dcq_max_ci_high"), level)
    evidence = DCQEvidence(
        dcq_max=model.number(task, "dcq_max"), dcq_min=model.number(task, "dcq_min"), dcq_max_ci=ci,
        dcq_kappa=model.number(task, "dcq_kappa"), pvalue=p, mcnemar_pvalue=model.number(task, "dcq_pvalue"),
        chance_max=model.number(task, "dcq_chance_max"),
        bdq_pick_rates=tuple(model.number(task, f"dcq_bdq_{letter}") for letter in LETTERS),
        bcq_hit_rates=tuple(model.number(task, f"dcq_bcq_{position}") for position in POSITIONS),
        unparseable=model.number(task, "dcq_unparseable"),
        # Read only where the run has it: runs made before the metric existed still load, without it.
        top_letter_share=number_or_none(model.row(task).get(f"dcq_top_letter_share,{FILTER}")),
    )
    n = model.n_instances(task)
    return mode_test(config).verdict(
        model=model.label, partition=Partition.from_task_metadata(metadata, str(config.get("test_split"))).label,
        task=task, flagged=p <= ALPHA, statistic=evidence.dcq_max, pvalue=p, confidence_interval=ci,
        n=n, evidence=evidence, caveats=left_out_caveats(metadata) + same_letter_caveats(evidence, n))


def left_out_caveats(metadata: dict) -> tuple[str, ...]:
    """The sampled instances the quiz left out (no valid options could be made), each with why."""
    left_out = metadata.get(LEFT_OUT_KEY) or []
    if not left_out:
        return ()
    listed = "; ".join(f"{entry['instance'][:60]!r} ({'; '.join(entry['problems'])})" for entry in left_out[:3])
    more = f"; and {len(left_out) - 3} more" if len(left_out) > 3 else ""
    return (f"{len(left_out)} sampled instance(s) left out of the quiz, no valid options could be made: {listed}{more}",)


def same_letter_caveats(evidence: DCQEvidence, n: int | None) -> tuple[str, ...]:
    """When every quiz got the same letter: then the published max is 0 and p is 1 whatever the model remembers."""
    if evidence.top_letter_share != 1.0:
        return ()
    # Every answer is one letter, so every BDQ answer is: it is the letter the BDQ picked every time.
    letter, _rate = max(zip(LETTERS, evidence.bdq_pick_rates), key=lambda pick: pick[1])
    answers = f", {n * len(QUIZ_NAMES)} of {n * len(QUIZ_NAMES)} answers" if n else ""
    return (f"the model answered every quiz with the same letter ({letter}{answers}): a letter preference, not the "
            "options, decides its answers, so this quiz cannot show memory here (p = 1 by construction); generate "
            "mode with an instruct model (audit --dcq-mode generate), or a model without that preference, can",)


def verdicts(model: ModelResults) -> list[Verdict]:
    return [task_verdict(model, task) for task in model.tasks_of(FAMILY)]
