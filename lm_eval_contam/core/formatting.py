"""Numbers in words, the same in every verdict, renderer and console line (unescaped plain text)."""

from __future__ import annotations

import math

from lm_eval_contam.core.stats import ConfidenceInterval


def number(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"


def pvalue(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def p_equals(value: float | None) -> str:
    """``p = 0.0123`` or ``p < 0.0001``."""
    text = pvalue(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def interval(ci: ConfidenceInterval | None) -> str:
    if ci is None:
        return "n/a"
    return f"[{number(ci.low)}, {number(ci.high)}] ({ci.confidence_level:.0%} CI)"
