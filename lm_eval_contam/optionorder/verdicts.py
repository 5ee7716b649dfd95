"""The option-order test's verdicts from a run (read from each task's metrics and logged records)."""

from __future__ import annotations

from dataclasses import dataclass

from lm_eval_contam.formatting import number, p_equals, pvalue
from lm_eval_contam.method_verdict import Verdict
from lm_eval_contam.optionorder.configs import METHOD
from lm_eval_contam.partitions import Partition
from lm_eval_contam.rundir import ModelResults
from lm_eval_contam.stats import ALPHA

NULL = ("the model never saw these items: each item's original option order is exchangeable with its admissible "
        "reorderings, so its likelihood rank among them is uniform")
RULE = f"flagged when the exact one-sided rank-test p <= {ALPHA} (original orders ranked higher than chance)"


@dataclass(frozen=True)
class OrderEvidence:
    items: int
    orders: int  # the most orders scored per item
    top_share: float
    mean_u: float
    pvalue: float
    left_out: int
    left_out_reason: str

    def facts(self) -> list[tuple[str, str]]:
        facts = [("items tested", str(self.items)), ("orders scored per item (original + others)", str(self.orders)),
                 ("original order the most likely", f"{100 * self.top_share:.1f} % (chance {100 / self.orders:.1f} %)"),
                 ("mean position score of the original (0.5 by chance, 1 = always first)", number(self.mean_u)),
                 ("p-value (exact rank test)", pvalue(self.pvalue))]
        if self.left_out:
            facts.append(("items left out", f"{self.left_out} ({self.left_out_reason})"))
        return facts

    def summary(self) -> str:
        return f"{p_equals(self.pvalue)}, original first in {100 * self.top_share:.0f} % (chance {100 / self.orders:.0f} %)"


def smallest_pvalue(items: int, orders: int) -> float:
    return float(orders) ** -items


def task_verdict(model: ModelResults, task: str) -> Verdict:
    partition = Partition.from_task_metadata(model.metadata(task), str(model.config(task).get("test_split")))
    records = [sample.get("order_pvalue") or {} for sample in model.samples(task)]
    orders = max((int(record.get("orders", 0)) for record in records), default=0) or 5
    first = records[0] if records else {}
    p = model.number(task, "order_pvalue")
    items = int(model.number(task, "order_items"))
    caveats = []
    if smallest_pvalue(items, orders) > ALPHA:
        caveats.append(f"{items} item(s) with {orders} orders each: the smallest p this test can give is "
                       f"{number(smallest_pvalue(items, orders))} > {ALPHA}, so it cannot flag")
    evidence = OrderEvidence(items, orders, model.number(task, "order_top_share"), model.number(task, "order_u_mean"),
                             p, int(first.get("left_out", 0)), str(first.get("left_out_reason", "")))
    return Verdict(model=model.label, partition=partition.label, family=METHOD, method="option_order",
                   title="Option order (ours, after Ni et al.)", task=task, flagged=p <= ALPHA,
                   statistic=evidence.mean_u, pvalue=p, confidence_interval=None, n=items, null=NULL, rule=RULE,
                   evidence=evidence, caveats=tuple(caveats))


def verdicts(model: ModelResults) -> list[Verdict]:
    return [task_verdict(model, task) for task in model.tasks_of(METHOD)]
