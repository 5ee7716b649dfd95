"""Option orders of a multiple-choice item (after Ni et al., AAAI 2025): the item, its admissible orders, their text.

An item is its prompt and its options. Where the prompt lists the options itself (``A. ...`` lines, as MMLU-style
tasks render them) an order rewrites those lines in place, letters fixed; otherwise (ARC-style tasks, whose choices
are continuations) the options are listed after the prompt. Orders an author may have chosen on purpose are not
exchangeable with the others, so they are handled before any test: an item whose options refer to positions ("all of
the above", "A and B") is left out, and numerically or alphabetically sorted orders are never drawn as comparators
and make an item whose original order is one of them ineligible.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.kit.option_items import (
    LETTERS,
    Item,
    admissible,
    deliberate,
    item_from_row,
    other_orders,
    positional_reason,
    render_listed,
)

__all__ = ["DEFAULT_ARRANGEMENTS", "DEFAULT_ORDERS", "Item", "answer_index", "arrangement_orders", "comparator_orders",
           "deliberate", "item_from_row", "keeps_answer", "positional_reason", "render", "too_many_options"]

DEFAULT_ORDERS = 5  # the original and four other orders per item: the smallest per-item p is 1/5
# Orders per item of the arrangement tests (the original and up to 23 others: every order of four options; a seeded
# sample of 23 admissible others beyond that).
DEFAULT_ARRANGEMENTS = 24
MAX_OPTIONS = len(LETTERS)  # options listed after the prompt are lettered A-Z: an item with more cannot be shown


def too_many_options(rows: Sequence[Mapping[str, Any]], text_field: str = "text") -> str | None:
    """Why the rows' items cannot be rendered (the first with more options than letters), if so."""
    for number, row in enumerate(rows):
        item = item_from_row(row, text_field)
        if item is not None and not item.listed and len(item.options) > MAX_OPTIONS:
            return (f"row {number} has {len(item.options)} choices; the test letters the options A-Z "
                    f"({MAX_OPTIONS} at most)")
    return None


def render(item: Item, order: Sequence[int]) -> str:
    """The item with its options in ``order`` (indices into the original options); letters keep their places."""
    if item.listed:
        return render_listed(item, order)
    return item.prompt + "".join(f"\n{LETTERS[i]}. {item.options[index]}" for i, index in enumerate(order))


def comparator_orders(item: Item, *, orders: int, seed: int, identity: str) -> list[tuple[int, ...]]:
    """Up to ``orders - 1`` other admissible orders, drawn without replacement (seeded by the doc's identity).

    Admissible: not the original, not :func:`deliberate`. Drawn uniformly, so under the null the original's rank
    among itself and its comparators is uniform.
    """
    return other_orders(item.options, orders - 1, rng_for(seed, "optionorder-orders", identity))


def arrangement_orders(item: Item, *, arrangements: int, seed: int, identity: str) -> list[tuple[int, ...]]:
    """The other admissible orders of the arrangement tests: every one when there are at most ``arrangements - 1``,
    else a seeded uniform sample of that many (in a seeded order either way)."""
    count = len(item.options)
    rng = rng_for(seed, "optionorder-arrangements", identity)
    if math.factorial(count) <= 8 * arrangements:
        candidates = [order for order in itertools.permutations(range(count)) if admissible(item.options, order)]
        picked = rng.permutation(len(candidates))[: arrangements - 1]
        return [candidates[int(i)] for i in picked]
    found: list[tuple[int, ...]] = []
    while len(found) < arrangements - 1:  # many options: rejection sampling over the (huge) set of orders
        order = tuple(int(i) for i in rng.permutation(count))
        if admissible(item.options, order) and order not in found:
            found.append(order)
    return found


def answer_index(item: Item, answer: Any) -> int | None:
    """The position of the item's gold answer among its options (None when the row's answer does not name one):
    an index, a letter of a listed option, or an option's text."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        return answer if 0 <= answer < len(item.options) else None
    text = str(answer or "").strip()
    if len(text) == 1 and text in LETTERS[: len(item.options)]:
        return LETTERS.index(text)
    folded = [option.strip().casefold() for option in item.options]
    return folded.index(text.casefold()) if text.casefold() in folded else None


def keeps_answer(order: Sequence[int], answer: int) -> bool:
    """Whether ``order`` leaves the gold answer at its letter (only the wrong options move)."""
    return order[answer] == answer
