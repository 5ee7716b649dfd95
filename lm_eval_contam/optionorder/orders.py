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
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.seeding import rng_for

DEFAULT_ORDERS = 5  # the original and four other orders per item: the smallest per-item p is 1/5
# Orders per item of the arrangement tests (the original and up to 23 others: every order of four options; a seeded
# sample of 23 admissible others beyond that).
DEFAULT_ARRANGEMENTS = 24
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_OPTIONS = len(_LETTERS)  # options listed after the prompt are lettered A-Z: an item with more cannot be shown
_LISTED = re.compile(r"^([A-Z])[.)]\s*(.*\S)\s*$")
_POSITIONAL = re.compile(
    r"\b(all|none|both|neither|either)\s+(of\s+)?(the\s+)?(above|below|these|those|them|options|answers)\b"
    r"|\b[A-H]\s*(,|and|or|&)\s*[A-H]\b|^(both|neither|all|none)\b", re.IGNORECASE)
_NUMBER = re.compile(r"^[^\d\-+.]*([-+]?\d[\d,]*(\.\d+)?)")


@dataclass(frozen=True)
class Item:
    """A multiple-choice item: its prompt, its options in the original order, and whether the prompt lists them."""

    prompt: str
    options: tuple[str, ...]
    listed: bool


def item_from_row(row: Mapping[str, Any], text_field: str = "text") -> Item | None:
    """The item of a rendered benchmark doc (``text`` + ``choices``); None when it has fewer than two options.

    A prompt whose lines include ``A. ...``, ``B. ...`` (consecutive letters, as many as the choices, or at least two
    when the choices are the letters themselves) lists its options; else the choices are the options.
    """
    prompt = str(row.get(text_field, ""))
    choices = [str(choice) for choice in row.get("choices") or []]
    listed = _listed_options(prompt)
    if listed and (len(listed) == len(choices) or not choices):
        return Item(prompt, tuple(listed), True)
    letters_only = [choice.strip() for choice in choices] == list(_LETTERS[: len(choices)])
    if len(choices) >= 2 and len(set(choices)) == len(choices) and not letters_only:
        return Item(prompt, tuple(choices), False)
    return None


def too_many_options(rows: Sequence[Mapping[str, Any]], text_field: str = "text") -> str | None:
    """Why the rows' items cannot be rendered (the first with more options than letters), if so."""
    for number, row in enumerate(rows):
        item = item_from_row(row, text_field)
        if item is not None and not item.listed and len(item.options) > MAX_OPTIONS:
            return (f"row {number} has {len(item.options)} choices; the test letters the options A-Z "
                    f"({MAX_OPTIONS} at most)")
    return None


def _listed_options(prompt: str) -> list[str]:
    """The texts of the prompt's first run of ``A.``/``B.``... lines (at least two), else []."""
    found: list[str] = []
    for line in prompt.split("\n"):
        match = _LISTED.match(line)
        if match and match.group(1) == _LETTERS[len(found)]:
            found.append(match.group(2))
        elif len(found) >= 2:
            break
        elif found:
            found = []
    return found if len(found) >= 2 else []


def render(item: Item, order: Sequence[int]) -> str:
    """The item with its options in ``order`` (indices into the original options); letters keep their places."""
    options = [item.options[index] for index in order]
    if not item.listed:
        return item.prompt + "".join(f"\n{_LETTERS[i]}. {option}" for i, option in enumerate(options))
    lines, position = [], 0
    for line in item.prompt.split("\n"):
        match = _LISTED.match(line)
        if match and position < len(options) and match.group(1) == _LETTERS[position]:
            prefix = line[: match.start(2)]
            lines.append(prefix + options[position])
            position += 1
        else:
            lines.append(line)
    return "\n".join(lines)


def positional_reason(options: Sequence[str]) -> str | None:
    """Why the item's order cannot be permuted (an option that refers to others by position), if so."""
    for option in options:
        if _POSITIONAL.search(option):
            return f"option {option!r} refers to other options"
    return None


def _number(option: str) -> float | None:
    match = _NUMBER.match(option.strip())
    return float(match.group(1).replace(",", "")) if match else None


def deliberate(options: Sequence[str]) -> bool:
    """Whether these options, in this order, look ordered on purpose: numbers ascending or descending, or (three or
    more) text options in alphabetical order."""
    numbers = [_number(option) for option in options]
    if all(number is not None for number in numbers):
        return numbers == sorted(numbers) or numbers == sorted(numbers, reverse=True)  # type: ignore[type-var]
    folded = [option.strip().casefold() for option in options]
    return len(options) >= 3 and folded == sorted(folded)


def comparator_orders(item: Item, *, orders: int, seed: int, identity: str) -> list[tuple[int, ...]]:
    """Up to ``orders - 1`` other admissible orders, drawn without replacement (seeded by the doc's identity).

    Admissible: not the original, not :func:`deliberate`. Drawn uniformly, so under the null the original's rank
    among itself and its comparators is uniform.
    """
    count = len(item.options)
    identity_order = tuple(range(count))
    if count <= 6:
        candidates = [order for order in itertools.permutations(range(count))
                      if order != identity_order and not deliberate([item.options[i] for i in order])]
        rng = rng_for(seed, "optionorder-orders", identity)
        picked = rng.choice(len(candidates), size=min(orders - 1, len(candidates)), replace=False) if candidates else []
        return [candidates[int(i)] for i in picked]
    rng = rng_for(seed, "optionorder-orders", identity)
    found: list[tuple[int, ...]] = []
    while len(found) < orders - 1:  # many options: rejection sampling over the (huge) set of orders
        order = tuple(int(i) for i in rng.permutation(count))
        if order != identity_order and order not in found and not deliberate([item.options[i] for i in order]):
            found.append(order)
    return found


def _admissible(item: Item, order: tuple[int, ...]) -> bool:
    return order != tuple(range(len(item.options))) and not deliberate([item.options[i] for i in order])


def arrangement_orders(item: Item, *, arrangements: int, seed: int, identity: str) -> list[tuple[int, ...]]:
    """The other admissible orders of the arrangement tests: every one when there are at most ``arrangements - 1``,
    else a seeded uniform sample of that many (in a seeded order either way)."""
    count = len(item.options)
    rng = rng_for(seed, "optionorder-arrangements", identity)
    if math.factorial(count) <= 8 * arrangements:
        candidates = [order for order in itertools.permutations(range(count)) if _admissible(item, order)]
        picked = rng.permutation(len(candidates))[: arrangements - 1]
        return [candidates[int(i)] for i in picked]
    found: list[tuple[int, ...]] = []
    while len(found) < arrangements - 1:  # many options: rejection sampling over the (huge) set of orders
        order = tuple(int(i) for i in rng.permutation(count))
        if _admissible(item, order) and order not in found:
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
    if len(text) == 1 and text in _LETTERS[: len(item.options)]:
        return _LETTERS.index(text)
    folded = [option.strip().casefold() for option in item.options]
    return folded.index(text.casefold()) if text.casefold() in folded else None


def keeps_answer(order: Sequence[int], answer: int) -> bool:
    """Whether ``order`` leaves the gold answer at its letter (only the wrong options move)."""
    return order[answer] == answer
