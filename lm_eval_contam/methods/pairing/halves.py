"""An instance cut in two, and the partition's instances in groups whose halves are paired every way."""

from __future__ import annotations

import re
from collections.abc import Sequence

from lm_eval_contam.core.seeding import rng_for

DEFAULT_GROUP_SIZE = 6  # 36 texts per group; the smallest p of one group is 1/720
MIN_WORDS = 6  # a shorter instance has no halves worth pairing
SEPARATOR = " "
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def halves(text: str) -> tuple[str, str] | None:
    """The instance cut at the sentence boundary nearest its middle (at its middle word when it is one sentence);
    None when it has fewer than :data:`MIN_WORDS` words."""
    text = " ".join(text.split())
    words = text.split(" ")
    if len(words) < MIN_WORDS:
        return None
    middle = len(text) / 2
    boundaries = [match.start() for match in _SENTENCE_END.finditer(text)]
    if boundaries:
        cut = min(boundaries, key=lambda position: abs(position - middle))
        return text[:cut], text[cut:].lstrip()
    half = len(words) // 2
    return " ".join(words[:half]), " ".join(words[half:])


def pairing_groups(count: int, *, group_size: int, seed: int, identity: str) -> list[list[int]]:
    """``count`` instances (by position) in a seeded order, cut into groups of ``group_size``; a last group of fewer
    than two is left out (it has no other pairing)."""
    order = [int(i) for i in rng_for(seed, "pairing-groups", identity).permutation(count)]
    groups = [sorted(order[start:start + group_size]) for start in range(0, count, group_size)]
    return [group for group in groups if len(group) >= 2]


def paired_texts(firsts: Sequence[str], seconds: Sequence[str]) -> list[str]:
    """Every first half with every second half, row by row (row i: first half i; column j: second half j)."""
    return [first + SEPARATOR + second for first in firsts for second in seconds]
