"""Option-order test (ours, after Ni et al., AAAI 2025, "Training on the Benchmark Is Not All You Need").

A multiple-choice item the model never saw has no preferred option order among orders its author could have chosen
at random: the original order's likelihood rank among a few permutations is uniform. Memorising the item as it was
written makes the original order the likeliest. No control data is needed: the null is exact per item.
"""

from lm_eval_contam.methods.optionorder.orders import DEFAULT_ORDERS, Item, comparator_orders, item_from_row, render
from lm_eval_contam.methods.optionorder.stats import OrderRankResult, original_rank, rank_test

__all__ = ["DEFAULT_ORDERS", "Item", "OrderRankResult", "comparator_orders", "item_from_row", "original_rank",
           "rank_test", "render"]
