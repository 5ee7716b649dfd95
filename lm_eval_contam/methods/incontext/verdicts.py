"""The in-context test's verdicts from a run (read from each task's metrics)."""

from __future__ import annotations

from dataclasses import dataclass

from lm_eval_contam.core.formatting import number, p_equals, pvalue
from lm_eval_contam.core.method_verdict import DRIVES, Test, Verdict
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.incontext.configs import METHOD

NULL = ("the model never saw these instances: each instance and its perturbed twin gain alike from other instances "
        "in the context (differences symmetric about 0)")
RULE = f"flagged when the one-sided sign-flip p <= {ALPHA} (instances gain less from context than their twins)"
TEST = Test(family=METHOD, name="incontext_twin", title="In-context vs twin (ours, after CoDeC)", null=NULL, rule=RULE,
            compares=(), role=DRIVES, sign_flip=True)


@dataclass(frozen=True)
class InContextEvidence:
    instance_gain: float
    twin_gain: float
    codec_score: float
    pvalue: float

    def facts(self) -> list[tuple[str, str]]:
        return [("mean in-context gain, instances (log-likelihood per byte)", number(self.instance_gain)),
                ("mean in-context gain, their perturbed twins", number(self.twin_gain)),
                ("difference (twin minus instance)", number(self.twin_gain - self.instance_gain)),
                ("p-value (sign-flip, instances gain less)", pvalue(self.pvalue)),
                ("CoDeC score: instances whose likelihood drops in context (the paper's number; no test here)",
                 f"{100 * self.codec_score:.1f} %")]

    def summary(self) -> str:
        return f"{p_equals(self.pvalue)}, gain {number(self.instance_gain)} vs twins {number(self.twin_gain)}"


def task_verdict(model: ModelResults, task: str) -> Verdict:
    partition = model.partition(task)
    p = model.number(task, "incontext_pvalue")
    n = model.n_instances(task)
    evidence = InContextEvidence(model.number(task, "incontext_instance_gain"), model.number(task, "incontext_twin_gain"),
                                 model.number(task, "codec_score"), p)
    return TEST.verdict(model=model.label, partition=partition.label, task=task, flagged=p <= ALPHA,
                        statistic=model.number(task, "incontext_difference"), pvalue=p, n=n, evidence=evidence)


def verdicts(model: ModelResults) -> list[Verdict]:
    return [task_verdict(model, task) for task in model.tasks_of(METHOD)]
