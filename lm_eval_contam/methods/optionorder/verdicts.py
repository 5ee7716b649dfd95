"""The option-order test's verdicts from a run (read from each task's metrics and logged records)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.formatting import number, p_equals, pvalue
from lm_eval_contam.core.method_verdict import DRIVES, Test, Verdict
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.relabelling import (
    RelabellingEvidence,
    RelabellingResult,
    arrangement_test,
    reference_differenced,
    reference_record,
    reference_tests_reading,
    relabelling_verdict,
    residualised,
    scored_as,
)
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.optionorder.configs import METHOD
from lm_eval_contam.methods.optionorder.orders import DEFAULT_ORDERS
from lm_eval_contam.methods.optionorder.stats import arranged_scores

NULL = ("the model never saw these items: each item's original option order is exchangeable with its admissible "
        "reorderings, so its likelihood rank among them is uniform")
RECORD_METRIC = "order_pvalue"  # the metric each doc's record is logged under (every metric logs it)
RULE = f"flagged when the exact one-sided rank-test p <= {ALPHA} (original orders ranked higher than chance)"
RANK_TEST = Test(family=METHOD, name="option_order", title="Option order (ours, after Ni et al.)", null=NULL, rule=RULE,
                 compares=(), role=DRIVES)


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
    partition = model.partition(task)
    records = model.records(task, RECORD_METRIC)
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
    return RANK_TEST.verdict(model=model.label, partition=partition.label, task=task, flagged=p <= ALPHA,
                             statistic=evidence.mean_u, pvalue=p, n=items, evidence=evidence, caveats=tuple(caveats))


ARRANGEMENT_NULL = ("the model never saw these items: which of each item's scored option orders is the original is "
                    "exchangeable (uniform over them), independently across items")
REFERENCE_NULL = ("the fine-tune never saw these items: which of each item's scored option orders is the original is "
                  "exchangeable in u = log p(model) - log p(reference), independently across items (what the reference "
                  "shares with the model, e.g. an author's ordering habits, cancels in u)")
FIXED_ANSWER_NULL = REFERENCE_NULL.replace("scored option orders", "scored orders that keep the answer at its letter")
RESIDUALISED_NULL = REFERENCE_NULL.replace(
    "exchangeable in u = log p(model) - log p(reference)",
    "exchangeable in u = log p(model) - log p(reference) less slope x the reference's own log p (both centred within "
    "the item; one least-squares slope over every order of every item, the same whichever order is the original)")
ARRANGEMENT_RULE = (f"flagged when the Monte-Carlo relabelling p <= {ALPHA} (the sum over items of the original "
                    "order's standardised score is high among the sums with each item's original redrawn)")
ARRANGEMENT_TESTS = {test.name: test for test in (
    Test(family=METHOD, name="option_order_arrangement", title="Option order, every order's likelihood (ours)",
         null=ARRANGEMENT_NULL, rule=ARRANGEMENT_RULE, compares=(), role=DRIVES),
    Test(family=METHOD, name="option_order_reference", title="Option order on u, against the reference model (ours)",
         null=REFERENCE_NULL, rule=ARRANGEMENT_RULE, compares=("reference",), role=DRIVES),
    Test(family=METHOD, name="option_order_reference_fixed_answer",
         title="Option order on u, answer kept at its letter (ours)", null=FIXED_ANSWER_NULL, rule=ARRANGEMENT_RULE,
         compares=("reference",), role=DRIVES),
    Test(family=METHOD, name="option_order_reference_residualised",
         title="Option order on u, less the reference's own preference (ours)", null=RESIDUALISED_NULL,
         rule=ARRANGEMENT_RULE, compares=("reference",), role=DRIVES))}
# The records' index list of the orders each arrangement test compares.
COMPARED_ORDERS = {"option_order_arrangement": "arranged", "option_order_reference": "arranged",
                   "option_order_reference_fixed_answer": "fixed", "option_order_reference_residualised": "arranged"}


def _arrangement_verdict(model: ModelResults, task: str, partition: Partition, test: str,
                         result: RelabellingResult, per_item: int, reference: str | None,
                         slope: float | None = None) -> Verdict:
    evidence = RelabellingEvidence("option orders", scored_as(reference), reference, result, per_item, slope=slope)
    return relabelling_verdict(ARRANGEMENT_TESTS[test], model=model.label, partition=partition.label, task=task,
                               evidence=evidence)


def reference_arrangement_results(records: Sequence[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]],
                                  *, seed: int, label: str,
                                  source: str) -> dict[str, tuple[RelabellingResult, int, float | None]]:
    """The arrangement tests on u of one task's logged records (``doc_record``) against the reference model's records
    of the same docs (by ``identity``): Verdict.test -> (its result, the most orders scored per item, the slope
    taken out of residualised scores or None). Every order;
    every order less the reference's own preference (:func:`~lm_eval_contam.core.relabelling.residualised`); and the orders
    that keep the answer's letter, on items whose answer is known (absent when no item has two).
    Records of the earlier task (no scores logged) have none. The audit's verdicts and ``run --reference-model``
    both read these."""
    if not records or any("scores" not in record for record in records):
        return {}
    differenced = reference_differenced(records, reference, source=source)
    found = {}
    for test, subset in COMPARED_ORDERS.items():
        if test == "option_order_arrangement":
            continue
        usable = [(record, u) for record, u in zip(records, differenced) if len(record[subset]) >= 2]
        items = [arranged_scores(record, u, subset=subset) for record, u in usable]
        slope = None
        if items and test == "option_order_reference_residualised":
            own = [arranged_scores(record, reference_record(record, reference, source=source)["scores"],
                                   subset=subset) for record, _ in usable]
            items, slope = residualised(items, own)
        if items:
            found[test] = (arrangement_test(items, seed=seed, name=f"{label}:{test}"),
                           max(len(scores) for scores in items), slope)
    return found


# ``MethodSpec.reference_tests``: the tests on u of one task from both models' logged samples and its config.
reference_tests = reference_tests_reading(RECORD_METRIC, lambda task, source: {
    test: result for test, (result, _, _) in reference_arrangement_results(
        task.records, task.reference, seed=task.seed, label=task.label, source=source).items()})


def arrangement_verdicts(model: ModelResults, task: str) -> list[Verdict]:
    """The arrangement tests of one task: on the model's own scores, and on u when a reference scored the task too
    (:func:`reference_arrangement_results`). A run of the earlier task (no scores logged), or one that scored only the
    rank test's orders (no reference model), has none."""
    partition = model.partition(task)
    records = model.records(task, RECORD_METRIC)
    if not records or any("scores" not in record for record in records) or not any(r["arranged"] for r in records):
        return []
    seed = model.seed(task)
    items = [arranged_scores(record) for record in records]
    found = [_arrangement_verdict(model, task, partition, "option_order_arrangement",
                                  arrangement_test(items, seed=seed, name=partition.label),
                                  max(len(scores) for scores in items), None)]
    reference = model.reference_records(task, RECORD_METRIC)
    if reference is None:
        return found
    described = model.reference.model or model.reference.label  # type: ignore[union-attr]
    on_u = reference_arrangement_results(records, reference, seed=seed, label=partition.label,
                                         source=str(model.reference.directory))  # type: ignore[union-attr]
    return found + [_arrangement_verdict(model, task, partition, test, result, per_item, described, slope)
                    for test, (result, per_item, slope) in on_u.items()]


def verdicts(model: ModelResults) -> list[Verdict]:
    return [verdict for task in model.tasks_of(METHOD)
            for verdict in (task_verdict(model, task), *arrangement_verdicts(model, task))]
