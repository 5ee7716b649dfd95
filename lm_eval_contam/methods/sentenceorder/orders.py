"""An instance's sentences and the orders of them the sentence-order test scores."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

from lm_eval_contam.core.seeding import rng_for

# Orders per instance: the original and up to 23 others (every order of four sentences; a seeded sample beyond).
DEFAULT_ARRANGEMENTS = 24
# A sentence ends at . ! or ? (closing quotes or brackets may follow) before white space and a capital, a digit or an
# opening quote: "p.m. with" and "e.g. the" are not boundaries.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_CLOSERS = "\"')]"


def sentences(text: str) -> list[str]:
    """The text's sentences, white space collapsed (closing quotes and brackets stay with their sentence)."""
    text = " ".join(text.split())
    found, start = [], 0
    for match in _BOUNDARY.finditer(text):
        end = match.start() + len(match.group(0)) - len(match.group(0).lstrip(_CLOSERS))
        found.append(text[start:end].strip())
        start = match.end()
    found.append(text[start:].strip())
    return [sentence for sentence in found if sentence]


def sentence_orders(parts: Sequence[str], *, arrangements: int, seed: int, identity: str) -> list[tuple[int, ...]]:
    """The original order first, then up to ``arrangements - 1`` other orders whose text differs from the original's
    and from each other's (a repeated sentence makes some orders the same text: each text once), seeded by the
    instance's identity: every one when there are at most that many, else a uniform sample."""
    count = len(parts)
    original = tuple(range(count))
    rng = rng_for(seed, "sentenceorder-orders", identity)
    seen = {tuple(parts)}
    found: list[tuple[int, ...]] = [original]
    distinct = math.factorial(count) // math.prod(math.factorial(parts.count(part)) for part in set(parts))
    wanted = min(arrangements, distinct)
    if math.factorial(count) <= 8 * arrangements:
        candidates = list(itertools.permutations(range(count)))[1:]
        walk = (candidates[int(i)] for i in rng.permutation(len(candidates)))
    else:  # many sentences: rejection sampling over the (huge) set of orders, until ``wanted`` distinct texts
        walk = (tuple(int(i) for i in rng.permutation(count)) for _ in itertools.count())
    for order in walk:
        if len(found) == wanted:
            break
        text = tuple(parts[i] for i in order)
        if text not in seen:
            seen.add(text)
            found.append(order)
    return found
