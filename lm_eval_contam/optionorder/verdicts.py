"""The option-order test's verdicts from a run (read from each task's metrics and logged records)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_contam.formatting import number, p_equals, pvalue
from lm_eval_contam.method_verdict import Verdict
from lm_eval_contam.optionorder.configs import METHOD
from lm_eval_contam.optionorder.orders import DEFAULT_ORDERS
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


def smallest_pvalue(orders_per_item: Sequence[int]) -> float:
    """The smallest p the exact rank test can give: every item's original order ranked first, 1/orders each."""
    return math.prod(1 / orders for orders in orders_per_item)


def task_verdict(model: ModelResults, task: str) -> Verdict:
    partition = Partition.from_task_metadata(model.metadata(task), str(model.config(task).get("test_split")))
    records = [sample.get("order_pvalue") or {} for sample in model.samples(task)]
    p = model.number(task, "order_pvalue")
    items = int(model.number(task, "order_items"))
    # Each item's orders from its logged record; a run without logged samples has the default for every item.
    per_item = [int(record["orders"]) for record in records if record.get("orders")] or [DEFAULT_ORDERS] * items
    orders = max(per_item, default=DEFAULT_ORDERS)
    first = records[0] if records else {}
    caveats = []
    if smallest_pvalue(per_item) > ALPHA:
        caveats.append(f"{items} item(s) with {min(per_item)}–{orders} orders each: the smallest p this test can give "
                       f"is {number(smallest_pvalue(per_item))} > {ALPHA}, so it cannot flag")
    evidence = OrderEvidence(items, orders, model.number(task, "order_top_share"), model.number(task, "order_u_mean"),
                             p, int(first.get("left_out", 0)), str(first.get("left_out_reason", "")))
    return Verdict(model=model.label, partition=partition.label, family=METHOD, method="option_order",
                   title="Option order (ours, after Ni et al.)", task=task, flagged=p <= ALPHA,
                   statistic=evidence.mean_u, pvalue=p, confidence_interval=None, n=items, null=NULL, rule=RULE,
                   evidence=evidence, caveats=tuple(caveats))


def verdicts(model: ModelResults) -> list[Verdict]:
    return [task_verdict(model, task) for task in model.tasks_of(METHOD)]
