"""The confidence-interval result shared by every method's statistics (scipy.stats style)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfidenceInterval:
    low: float
    high: float
    confidence_level: float = 0.95
