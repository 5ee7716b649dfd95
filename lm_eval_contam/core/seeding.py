"""Deterministic randomness derived from a seed plus a document's identity.

Never Python's ``hash()`` (salted per process) and never global RNG state: two
runs, or two data-parallel shards, must draw the same numbers for the same doc.
"""

from __future__ import annotations

import hashlib

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
