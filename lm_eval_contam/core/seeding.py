"""Deterministic randomness derived from a seed plus a document's identity.

Never Python's ``hash()`` (salted per process) and never global RNG state: two
runs, or two data-parallel shards, must draw the same numbers for the same doc.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np


def stable_hash(*parts: object) -> str:
    """Hex SHA-256 of the parts' reprs joined by a unit separator."""
    payload = "\x1f".join(repr(p) for p in parts).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def stable_seed(seed: int, *identity: object) -> int:
    """A 64-bit seed for ``identity`` under the user's ``seed``."""
    return int(stable_hash(int(seed), *identity)[:16], 16)


def rng_for(seed: int, *identity: object) -> np.random.Generator:
    """A numpy Generator private to (seed, identity)."""
    return np.random.default_rng(stable_seed(seed, *identity))


def seeded_order(count: int, seed: int, *identity: object) -> list[int]:
    """Positions ``0..count-1`` in an order private to (seed, identity, position): a seeded draw without replacement
    whose first k are the same whatever else is drawn."""
    return sorted(range(count), key=lambda position: stable_hash(seed, *identity, position))


def proportional_shares(sizes: Mapping[str, int], wanted: int, ties: Sequence[str]) -> dict[str, int]:
    """``wanted`` (at most the sizes' sum) shared out in proportion to ``sizes`` by largest remainder; equal remainders
    go in the order of ``ties`` (every key of ``sizes``)."""
    total = sum(sizes.values()) or 1
    # Whole numbers: the remainders of equal fractions (3 x 1/3) compare equal, so ties go in the seeded order of
    # ``ties``, where floats would differ in the last bit and favour a larger subtask.
    shares = {name: wanted * size // total for name, size in sizes.items()}
    remainders = {name: wanted * size % total for name, size in sizes.items()}
    by_remainder = sorted(ties, key=lambda name: -remainders[name])  # sorted() is stable: ties in order
    for name in by_remainder[: wanted - sum(shares.values())]:
        shares[name] += 1
    return shares
