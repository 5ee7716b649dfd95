"""How much of a control is the audited data: its items that are copies of audited items, and those that are near
copies (the same questions with their options rotated, another year's copy with small edits).

Measured once per audit, where the control is chosen (``audit --tasks``, ``--data``, or a hand-written card when the
audit starts), and carried on the card's ``control`` mapping (:class:`~lm_eval_contam.core.partitions.Control`) to the
task YAMLs and the verdicts.

Near copies are found by their *item-specific* word pairs (each line's, an option's label dropped, case folded,
punctuation a word break; the pairs more than :data:`COMMON_SHINGLE_SHARE` of all items hold, a template's, left
out): a control item is a near copy when its set and an audited item's have a Jaccard index of at least
:data:`NEAR_COPY_JACCARD`. The pairs are found by prefix filtering (the rarest word pairs of each set, indexed), which
misses no pair at that index, so 2,000 × 2,000 items cost a pass over their word pairs and a few candidates each, not
four million comparisons (about 6 s on a loaded 2-core machine).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

# A control sharing this share of its rows with the audited rows is the audited data: the likelihood modes compare
# the two, so the difference is ~0 and the test can never flag.
CONTROL_OVERLAP_LIMIT = 0.5
# The Jaccard index of two items' item-specific word pairs at and above which one is a near copy of the other. A
# one-word edit of a 20-word question keeps about 0.85 of them (2 of its ~22 pairs change), two edits 0.6 or more on
# most items; options rotated on their own lines keep all (1.0). Distinct items share at most 0.33: the 24 + 24 items
# of each of the study's 16 pairs of fresh splits (lm_eval_contam/nullstudy/fresh, rendered as "Question: …" with
# lettered options), all pairs compared; 0.5 sits between.
NEAR_COPY_JACCARD = 0.5
SHINGLE = 2  # words
WORD_BREAK = re.compile(r"[\W_]+")
# A word pair more than this share of all items hold (and more than MIN_COMMON of them) is a template's, not an item's.
COMMON_SHINGLE_SHARE, MIN_COMMON = 0.02, 4


@dataclass(frozen=True)
class ControlOverlap:
    """How many of a control's rows are audited rows (``shared``: texts compared by :func:`comparable`) and how many
    more are near copies of one (``near``, :data:`NEAR_COPY_JACCARD`), of its ``rows``."""

    shared: int
    rows: int  # the control's rows
    near: int = 0  # near copies, the exact copies (``shared``) not counted again

    @property
    def share(self) -> float:
        return self.shared / self.rows if self.rows else 0.0

    def describe(self) -> str:
        return f"control shares {self.shared} of {self.rows} rows ({self.share:.0%}) with the audited data"

    def near_copies_note(self) -> str | None:
        """The verdict's note on the control's near copies of audited items (None: none)."""
        if not self.near:
            return None
        return (f"{self.near} of {self.rows} control items are near copies of audited items (their word pairs' "
                f"Jaccard index >= {NEAR_COPY_JACCARD:g}): a model that saw the audited items may know these too, so "
                "the control tests lose power on them")

    def fields(self) -> dict[str, int]:
        """As the card's ``control.overlap`` keeps it."""
        return {"shared": self.shared, "near": self.near, "rows": self.rows}


def comparable(text: str) -> str:
    """A row's text as the overlap check compares it: whitespace collapsed, case folded and its closing punctuation
    dropped (a lower-cased copy of the audited data, or one whose final full stop is spaced off or removed, is the
    audited data)."""
    folded = " ".join(text.casefold().split())
    end = len(folded)
    while end and (folded[end - 1].isspace() or unicodedata.category(folded[end - 1]).startswith("P")):
        end -= 1
    return folded[:end]


# An option's label at the start of a line ("A. ", "(b) ", "3: "): rotated options keep their lines, not their labels.
OPTION_LABEL = re.compile(r"^\s*\(?[A-Za-z0-9]\s*[.):]\s+")


def _shingles(text: str) -> set[str]:
    """The word pairs of each line of ``text`` (a line of one word: the word), its option label dropped, case folded,
    every run of punctuation and whitespace a word break."""
    found: set[str] = set()
    for line in unicodedata.normalize("NFKC", text).casefold().splitlines():
        words = WORD_BREAK.sub(" ", OPTION_LABEL.sub("", line)).split()
        found.update(" ".join(words[start:start + SHINGLE]) for start in range(max(1, len(words) - SHINGLE + 1))
                     if words)
    return found


def _prefix(items: set[str], order: dict[str, tuple[int, str]]) -> list[str]:
    """The rarest of ``items`` that any set at Jaccard >= NEAR_COPY_JACCARD with them must share one of."""
    ranked = sorted(items, key=order.__getitem__)
    return ranked[: len(ranked) - math.ceil(NEAR_COPY_JACCARD * len(ranked)) + 1]


def near_copies(audited: Sequence[str], control: Sequence[str]) -> list[bool]:
    """For each control text, whether it is a near copy of an audited text (the module docstring's measure)."""
    sets = [_shingles(text) for text in (*audited, *control)]
    held = Counter(shingle for items in sets for shingle in items)
    common = max(MIN_COMMON, COMMON_SHINGLE_SHARE * len(sets))
    specific = [{shingle for shingle in items if held[shingle] <= common} for items in sets]
    order = {shingle: (count, shingle) for shingle, count in held.items()}
    index: dict[str, list[int]] = {}
    for position, items in enumerate(specific[: len(audited)]):
        for shingle in _prefix(items, order):
            index.setdefault(shingle, []).append(position)

    def near(items: set[str]) -> bool:
        candidates = {position for shingle in _prefix(items, order) for position in index.get(shingle, ())}
        return any(len(items & specific[position]) >= NEAR_COPY_JACCARD * len(items | specific[position])
                   for position in candidates)

    return [bool(items) and near(items) for items in specific[len(audited):]]


def control_overlap(audited: Sequence[str], control: Sequence[str]) -> ControlOverlap:
    """How many of the control's texts are audited texts (:func:`comparable`), and how many others near copies of one
    (:func:`near_copies`)."""
    seen = {comparable(text) for text in audited}
    exact = [comparable(text) in seen for text in control]
    near = sum(copy and not same for copy, same in zip(near_copies(audited, control), exact))
    return ControlOverlap(sum(exact), len(control), near)
