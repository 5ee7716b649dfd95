"""lm-eval glue for the option-order test: one task per partition, ``loglikelihood_rolling`` requests only.

Task ``metadata``: the partition (the schema every method shares), ``num_instances`` (100), ``orders`` (5: the
original and four admissible others per item, the rank test's), ``all_orders`` (false: only the rank test's orders
are scored; true, as a reference model's audit renders it: the arrangement tests' too), ``arrangements`` (24: the
original and up to 23 admissible others, the arrangement tests') and ``seed`` (0). Requests per item: one rolling
log-likelihood per order scored (the rank test's orders are among the arrangement tests' for items of up to four
options), each one forward pass: 5 per item without a reference, up to 24 with one.
Every order's score is logged, so a reference model's run of the same task gives ``u`` per order (verdicts.py).
Items the test cannot use (fewer than two options, options that refer to positions, an original order sorted on
purpose) are counted and left out before any request.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition, metadata_flag, metadata_number
from lm_eval_contam.kit.instances import sample_indices, sampled_partition
from lm_eval_contam.lmeval.lm_eval_compat import rolling_loglikelihood
from lm_eval_contam.lmeval.partition_task import PartitionSteps, ScoredTextsTask
from lm_eval_contam.methods.optionorder.orders import (
    DEFAULT_ARRANGEMENTS,
    DEFAULT_ORDERS,
    Item,
    answer_index,
    arrangement_orders,
    comparator_orders,
    deliberate,
    item_from_row,
    keeps_answer,
    positional_reason,
    render,
)
from lm_eval_contam.methods.optionorder.stats import OrderStatistics, order_statistics, original_rank

METRICS: dict[str, Callable[[OrderStatistics], float]] = {
    "order_u_mean": lambda s: s.rank.statistic,
    "order_pvalue": lambda s: s.rank.pvalue,
    "order_top_share": lambda s: s.rank.top_share,
    "order_items": lambda s: s.rank.n,
    # NaN where only the rank test's orders were scored (``all_orders`` false): no arrangement test ran.
    "arrangement_z": lambda s: s.arrangement.standardised if s.arrangement else math.nan,
    "arrangement_pvalue": lambda s: s.arrangement.pvalue if s.arrangement else math.nan,
}


@dataclass(frozen=True)
class OptionOrderSettings:
    partition: Partition
    num_instances: int
    orders: int
    arrangements: int
    seed: int
    all_orders: bool = False

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None, split: str) -> OptionOrderSettings:
        metadata = dict(metadata or {})
        return cls(**sampled_partition(metadata, split),
                   orders=metadata_number(metadata, "orders", DEFAULT_ORDERS, minimum=2, maximum=24),
                   arrangements=metadata_number(metadata, "arrangements", DEFAULT_ARRANGEMENTS, minimum=2,
                                                maximum=120),
                   all_orders=metadata_flag(metadata, "all_orders"))


def shared_option_sets(items: Sequence[Item | None]) -> set[frozenset[str]]:
    """Option sets that more than one item has: a fixed answer set (seasons, yes/no/maybe) in the dataset's own order,
    which a model that never saw the items can still prefer."""
    counts = Counter(frozenset(o.strip().casefold() for o in item.options) for item in items if item is not None)
    return {options for options, count in counts.items() if count > 1}


def left_out_reason(item: Item | None, shared: set[frozenset[str]]) -> str | None:
    """Why an item cannot be tested (None: it can)."""
    if item is None:
        return "fewer than two options"
    if frozenset(o.strip().casefold() for o in item.options) in shared:
        return "options shared with other items (a fixed answer set in the dataset's own order)"
    return positional_reason(item.options) or ("options in sorted order (likely on purpose)"
                                               if deliberate(item.options) else None)


def no_usable_item(reasons: Sequence[str]) -> str:
    """Why no sampled item could be used (the first reason, with how many were left out)."""
    return f"no multiple-choice item the option-order test can use ({len(reasons)} left out: " \
           f"{reasons[0] if reasons else 'no rows'})"


def item_doc(item: Item, identity: str, answer: int | None, *, orders: int, arrangements: int, seed: int,
             all_orders: bool) -> dict[str, Any] | None:
    """One item's doc (see :func:`order_docs`), or None when it has no other admissible order. The null studies build
    their pools' docs with it, so that they score the audit's own orders."""
    ranked = comparator_orders(item, orders=orders, seed=seed, identity=identity)
    if not ranked:
        return None
    arranged = arrangement_orders(item, arrangements=arrangements, seed=seed, identity=identity) if all_orders else []
    scored = [tuple(range(len(item.options))), *ranked, *(order for order in arranged if order not in ranked)]
    in_arrangement = [0, *(number for number, order in enumerate(scored) if order in arranged)] if arranged else []
    return {"identity": identity, "texts": [render(item, order) for order in scored], "rank_orders": 1 + len(ranked),
            "arranged": in_arrangement,
            "fixed": [] if answer is None else [n for n in in_arrangement if keeps_answer(scored[n], answer)]}


def order_docs(settings: OptionOrderSettings, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One doc per usable sampled item: the item rendered in its original order, then in the rank test's comparator
    orders, then (``all_orders``) in the arrangement tests' other orders (each order once).

    ``rank_orders``: how many texts from the first the rank test reads; ``arranged``: the texts of the arrangement
    tests (the original first; empty without ``all_orders``); ``fixed``: those among them whose order keeps the gold
    answer at its letter (empty when the row's answer names no option). Every doc carries the partition's count of sampled items left out and why
    (the first reason), for the verdict.
    """
    partition = settings.partition
    text_field, label_field = partition.dataset.text_field, partition.dataset.label_field
    indices = sample_indices(partition, rows, settings.num_instances, settings.seed)
    items = [item_from_row(rows[index], text_field) for index in indices]
    shared = shared_option_sets(items)
    docs, reasons = [], []
    for index, item in zip(indices, items):
        identity = f"{partition.label}:{index}"
        reason = left_out_reason(item, shared)
        if item is None or reason:
            reasons.append(reason or "fewer than two options")
            continue
        answer = answer_index(item, rows[index].get(label_field)) if label_field else None
        doc = item_doc(item, identity, answer, orders=settings.orders, arrangements=settings.arrangements,
                       seed=settings.seed, all_orders=settings.all_orders)
        if doc is None:
            reasons.append("no other admissible order")
            continue
        docs.append({"row_index": index, **doc})
    if not docs:
        raise ContamError(no_usable_item(reasons), source=partition.label, field=text_field)
    for doc in docs:
        doc["left_out"], doc["left_out_reason"] = len(reasons), (reasons[0] if reasons else "")
    return docs


def usable_items(partition: Partition, rows: Sequence[Mapping[str, Any]]) -> int:
    """How many of the partition's rows the test can use (the audit plans the task only when some can)."""
    items = [item_from_row(row, partition.dataset.text_field) for row in rows]
    shared = shared_option_sets(items)
    return sum(left_out_reason(item, shared) is None for item in items)


def doc_record(settings: OptionOrderSettings, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    scores = [rolling_loglikelihood(result) for result in results]
    ranked = scores[: doc["rank_orders"]]
    return {"rank": original_rank(ranked[0], ranked[1:], seed=settings.seed, identity=doc["identity"]), "orders": len(ranked),
            "original": scores[0], "best_other": max(ranked[1:]), "identity": doc["identity"], "scores": scores,
            "arranged": list(doc["arranged"]), "fixed": list(doc["fixed"]), "left_out": doc["left_out"],
            "left_out_reason": doc["left_out_reason"]}


def records_statistics(settings: OptionOrderSettings, records: Sequence[Mapping[str, Any]]) -> OrderStatistics:
    return order_statistics(records, seed=settings.seed, name=settings.partition.label)


class OptionOrderTask(ScoredTextsTask):
    """One partition's option-order test; its YAML's ``metadata`` names the partition."""

    metrics = METRICS
    steps = PartitionSteps(OptionOrderSettings, docs=order_docs, record=doc_record, statistics=records_statistics)
