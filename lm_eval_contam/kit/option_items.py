"""A multiple-choice item's options and their order (shared core): the item, whether its prompt shows its options, an
order's text, and the orders an author may have chosen on purpose.

After Ni et al. (AAAI 2025); in the core because two method packages reorder options (``optionorder/``, whose
``orders.py`` adds its tests' order sets, and ``reordered/``). An item is its prompt and its options.
Where the prompt lists the options itself (``A. ...`` lines, as MMLU-style tasks render them) an order rewrites those
lines in place, letters fixed: the answer moves with its option. Where the options are only continuations (ARC
style: each choice is scored after the prompt, none is shown in it) their order never reaches the model.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LISTED = re.compile(r"^([A-Z])[.)]\s*(.*\S)\s*$")
_POSITIONAL = re.compile(
    r"\b(all|none|both|neither|either)\s+(of\s+)?(the\s+)?(above|below|these|those|them|options|answers)\b"
    r"|\b[A-H]\s*(,|and|or|&)\s*[A-H]\b|^(both|neither|all|none)\b", re.IGNORECASE)
_NUMBER = re.compile(r"^[^\d\-+.]*([-+]?\d[\d,]*(\.\d+)?)")
# Up to this many options every order is enumerated (6! = 720); beyond, orders are drawn by rejection sampling.
ENUMERATED_OPTIONS = 6


@dataclass(frozen=True)
class Item:
    """A multiple-choice item: its prompt, its options in the original order, and whether the prompt lists them."""

    prompt: str
    options: tuple[str, ...]
    listed: bool


def listed_options(prompt: str) -> list[str]:
    """The texts of the prompt's first run of ``A.``/``B.``... lines (at least two), else []."""
    found: list[str] = []
    for line in prompt.split("\n"):
        match = _LISTED.match(line)
        if match and match.group(1) == LETTERS[len(found)]:
            found.append(match.group(2))
        elif len(found) >= 2:
            break
        elif found:
            found = []
    return found if len(found) >= 2 else []


_NUMBERED = re.compile(r"^(\d+)[.)]\s*\S")


def numbered_options(prompt: str) -> int:
    """How many ``1.``/``2.``... lines the prompt's first numbered run holds (at least two), else 0: options listed by
    number, which :func:`render_listed` does not rewrite."""
    found = 0
    for line in prompt.split("\n"):
        match = _NUMBERED.match(line)
        if match and int(match.group(1)) == found + 1:
            found += 1
        elif found >= 2:
            break
        else:
            found = 0
    return found if found >= 2 else 0


def item_from_row(row: Mapping[str, Any], text_field: str = "text") -> Item | None:
    """The item of a rendered benchmark doc (``text`` + ``choices``); None when it has fewer than two options.

    A prompt whose lines include ``A. ...``, ``B. ...`` (consecutive letters, as many as the choices, or at least two
    when the choices are the letters themselves) lists its options; else the choices are the options.
    """
    prompt = str(row.get(text_field, ""))
    choices = [str(choice) for choice in row.get("choices") or []]
    listed = listed_options(prompt)
    if listed and (len(listed) == len(choices) or not choices):
        return Item(prompt, tuple(listed), True)
    letters_only = [choice.strip() for choice in choices] == list(LETTERS[: len(choices)])
    if len(choices) >= 2 and len(set(choices)) == len(choices) and not letters_only:
        return Item(prompt, tuple(choices), False)
    return None


def render_listed(item: Item, order: Sequence[int]) -> str:
    """A listing item's prompt with its options in ``order`` (indices into the original options); letters keep their
    places, every other line is kept as it is."""
    options = [item.options[index] for index in order]
    lines, position = [], 0
    for line in item.prompt.split("\n"):
        match = _LISTED.match(line)
        if match and position < len(options) and match.group(1) == LETTERS[position]:
            lines.append(line[: match.start(2)] + options[position])
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


def admissible(options: Sequence[str], order: Sequence[int]) -> bool:
    """An order other than the original that does not look ordered on purpose."""
    return tuple(order) != tuple(range(len(options))) and not deliberate([options[i] for i in order])


def other_orders(options: Sequence[str], count: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Up to ``count`` admissible orders other than the original, drawn uniformly without replacement with ``rng``
    (every admissible order when there are at most ``count``)."""
    size = len(options)
    if size <= ENUMERATED_OPTIONS:
        candidates = [order for order in itertools.permutations(range(size)) if admissible(options, order)]
        picked = rng.choice(len(candidates), size=min(count, len(candidates)), replace=False) if candidates else []
        return [candidates[int(i)] for i in picked]
    found: list[tuple[int, ...]] = []
    while len(found) < count:  # many options: rejection sampling over the (huge) set of orders
        order = tuple(int(i) for i in rng.permutation(size))
        if admissible(options, order) and order not in found:
            found.append(order)
    return found
