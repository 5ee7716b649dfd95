"""The benchmark's own score with each item's options reordered (ours, after ConStat, NeurIPS 2024): ``acc_reordered``.

Public API::

    reordered_docs(index, text, choices, gold, reorderings=K, seed=0) -> [ReorderedDoc]  # original, then K others
    item_scores(records) -> [ItemScores]                   # per-form 0/1 records grouped by item
    reordered_score(items) -> ReorderedScore                # acc_reordered, the gap, paired intervals, the exact p
    reference_gap_score(items, reference) -> ReferenceGap   # the gap less a reference model's, paired per item
    exchangeable_pvalue(items) -> float                     # H0: the original order is exchangeable with the others

Modules: ``orders`` (which items reorder, and how), ``stats`` (the score, intervals and test), ``task`` (lm-eval
glue: the reordered task and its aggregations), ``benchmark_tasks`` (a reordered task per benchmark of a run),
``hook`` (the rows copied beside the benchmark's), ``method`` (the registry entry). See docs/guide/reordered.md.
"""

from lm_eval_contam.methods.reordered.orders import DEFAULT_REORDERINGS, ReorderedDoc, reordered_docs, why_not_reordered
from lm_eval_contam.methods.reordered.stats import (
    ItemScores,
    ReferenceGap,
    ReorderedScore,
    exchangeable_pvalue,
    item_scores,
    reference_gap_score,
    reordered_score,
)

__all__ = ["DEFAULT_REORDERINGS", "ItemScores", "ReferenceGap", "ReorderedDoc", "ReorderedScore", "exchangeable_pvalue",
           "item_scores", "reference_gap_score", "reordered_docs", "reordered_score", "why_not_reordered"]
