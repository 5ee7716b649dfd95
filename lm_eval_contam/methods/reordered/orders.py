"""The reorderings of a multiple-choice item (pure): which items can be reordered, and each reordering's text,
choices and gold index.

An item's K reorderings are K admissible orders of its options other than the original (``option_items``: not
sorted on purpose), drawn without replacement with a generator seeded by the run's seed and the item's own content
(its prompt and choices), so every model sees the same reorderings of the same item. The answer moves with its option:
the prompt's ``A. ...`` lines are rewritten in place (letters fixed) and the gold index becomes the answer's new place.

An item is kept in its original order only (and counts with its original score in ``acc_reordered``) when it cannot
be reordered: its options are not shown in the prompt (each is scored as a continuation, so their order never reaches
the model), an option refers to others by position ("all of the above"), or the original order is sorted (an author's
deliberate order is not exchangeable with the others).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for, seeded_order, stable_hash
from lm_eval_contam.kit.option_items import (
    LETTERS,
    deliberate,
    item_from_row,
    numbered_options,
    other_orders,
    positional_reason,
    render_listed,
)

METHOD = "reordered"  # metadata.method of the reordered tasks
METADATA_KEY = "reorderings"  # run metadata (--metadata '{"reorderings": K}', audit --reorderings K); 0 turns it off
# K = 4 reorderings per item: the score's item-to-item spread dominates its interval once the per-item mean of the
# reorderings' 0/1 scores has four terms (its within-item variance falls as 1/K), while each reorderable item costs
# K more forward passes (its original order is scored again for the paired gap, in the very requests the benchmark
# makes, which lm-eval's HF backend answers with one pass). With four options an item has 23 other orders, so four are
# drawn without replacement.
DEFAULT_REORDERINGS = 4
MAX_REORDERINGS = 23  # every other order of four options
# With no K given, a benchmark of more than 250 items gets fewer reorderings per item: as many as keep its reordered
# forms near 1,000 (at least one each), so a large benchmark's reordered score costs about one more evaluation of it
# (docs/guide/cost.md), not four; with 1,000 or more items the item-to-item spread already dominates the interval.
REORDERED_FORMS = 1000
# With --reference-model the reference scores the reordered forms of about this many items of the task or group named
# (each subtask its proportional share, at least one, drawn by the seed and each item's place), every item of a
# smaller one: the gap less the reference's (paired per item) then costs the reference about two passes over 2,000
# items, not over the whole group (docs/guide/cost.md). Simulated on 5,700 items (scripts/simulate_reordered.py), the share
# of runs with p <= 0.05 at +0.05 is 0.45 / 0.75 / 0.88 / 0.995 with 1,000 / 2,000 / 3,000 / every item; 2,000 keeps
# a group of MMLU's shape within 4x plain lm_eval. The audited model's own score still covers every item.
REFERENCE_ITEMS = 2000
REFERENCE_ITEMS_KEY = "reference_items"  # run metadata (audit --reference-items N); 0: every item


def default_reorderings(items: int) -> int:
    """K per item when none is given: :data:`DEFAULT_REORDERINGS` up to 250 items, then ``REORDERED_FORMS // items``
    (at least 1)."""
    return max(1, min(DEFAULT_REORDERINGS, REORDERED_FORMS // max(items, 1)))


@dataclass(frozen=True)
class ReorderedDoc:
    """One scored form of an item: ``order`` 0 is the original, 1..K its reorderings."""

    item: int  # the doc's index in the benchmark's evaluation docs
    order: int
    text: str
    choices: tuple[str, ...]
    gold: int
    moved: tuple[int, ...]  # the original option at each position (identity for the original)


def check_reorderings(value: object, source: str = "--metadata") -> int:
    """The number of reorderings per item, checked: a whole number from 0 (off) to :data:`MAX_REORDERINGS`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REORDERINGS:
        raise ContamError(f"{METADATA_KEY!r} is {value!r}; expected a whole number from 0 (off) to {MAX_REORDERINGS}",
                          source=source, field=METADATA_KEY)
    return value


def check_reference_items(value: object, source: str = "--metadata") -> int:
    """The most items a reference model scores the reordered forms of, checked: a whole number, 0 for every item; not
    1 (one paired item has no interval and no p: "on 1 items: 0.0000 (95 % CI 0.0000-0.0000), p = 1.0000")."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value == 1:
        raise ContamError(f"got {value!r}; expected a whole number of items, 2 or more (0: every item; the gap's "
                          "interval and p pair two or more)", source=source, field=REFERENCE_ITEMS_KEY)
    return value


def reference_share(items: int, named_items: int, most: int) -> int:
    """How many of a subtask's ``items`` the reference scores when the task or group named has ``named_items``: all
    of them when ``most`` is 0 or the named task has no more, else its proportional share of ``most`` (at least 1)."""
    if most == 0 or named_items <= most:
        return items
    return max(1, min(items, round(items * most / named_items)))


def reference_items(items: int, size: int, seed: int, benchmark: str) -> frozenset[int]:
    """The item indices (of ``items``) whose forms the reference scores: the first ``size`` in a seeded order private
    to the benchmark, so reruns and shards agree and a larger sample holds a smaller one."""
    return frozenset(seeded_order(items, seed, "reordered-reference-sample", benchmark)[:size])


def item_identity(text: str, choices: Sequence[str]) -> str:
    """What seeds an item's reorderings: its content, so the same item gets the same reorderings in every run."""
    return stable_hash("reordered-item", text, tuple(choices))[:16]


def why_not_reordered(text: str, choices: Sequence[str]) -> str | None:
    """Why an item is scored in its original order only (None: it can be reordered)."""
    item = item_from_row({"text": text, "choices": list(choices)})
    if item is None:
        return "fewer than two distinct options"
    if not item.listed:
        numbered = numbered_options(text)
        if numbered:
            return (f"its prompt lists {numbered} options by number (1., 2., ...): only options listed by letter "
                    f"(A., B., ...) are moved in the prompt")
        if len(choices) > len(LETTERS):
            return (f"it has {len(choices)} options, more than the {len(LETTERS)} letters (A.-Z.) a prompt lists "
                    f"options by")
        return "its options are not shown in the prompt (each is scored as a continuation): their order never " \
               "reaches the model"
    if len(set(item.options)) == 1:
        return f"its {len(item.options)} options are all the same text ({item.options[0]!r}): every order reads the same"
    positional = positional_reason(item.options)
    if positional:
        return positional
    if deliberate(item.options):
        return "its options are sorted (an order chosen on purpose is not exchangeable with the others)"
    return None


def reordered_docs(index: int, text: str, choices: Sequence[str], gold: int, *, reorderings: int,
                   seed: int) -> list[ReorderedDoc]:
    """The item's original form, then its reorderings (none when :func:`why_not_reordered` says why)."""
    if not 0 <= gold < len(choices):
        raise ContamError(f"doc {index}: gold index {gold} is outside its {len(choices)} choices", field="gold")
    original = ReorderedDoc(index, 0, text, tuple(choices), gold, tuple(range(len(choices))))
    if reorderings == 0 or why_not_reordered(text, choices) is not None:
        return [original]
    item = item_from_row({"text": text, "choices": list(choices)})
    assert item is not None and item.listed  # why_not_reordered checked both
    letters = [choice.strip() for choice in choices] == list(LETTERS[: len(choices)])
    rng = rng_for(seed, "reordered-orders", item_identity(text, choices))
    found = [original]
    for number, order in enumerate(other_orders(item.options, reorderings, rng), start=1):
        # The prompt's lines show the options in the new order; choices that are the letters stay, choices that are
        # the options' own texts move with them; either way the gold index is the answer's new place.
        moved_choices = tuple(choices) if letters else tuple(choices[i] for i in order)
        found.append(ReorderedDoc(index, number, render_listed(item, order), moved_choices, order.index(gold),
                                  tuple(order)))
    return found
