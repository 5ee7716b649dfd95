"""Reading DCR out of an lm-eval results dict: which tasks are a sheet's levels, and their scores S1..S4.

Shared by the hook (live, after ``simple_evaluate``), ``adjust`` and ``dcr-export``
(after the fact, on a saved ``results_*.json``) and the verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lm_eval_contam.dcr.sheet import LEVELS

SCORE_METRIC = "contaminated"
UNCHECKED_METRIC = "unchecked"


@dataclass(frozen=True)
class SheetScores:
    """S1..S4 of one sheet and, when known, each level's per-item Check results (for the CI)."""

    sheet: str  # shipped sheet name or sheet path
    scores: tuple[float, float, float, float]
    level_items: tuple[np.ndarray, ...] | None = None


def dcr_level_tasks(results: Mapping[str, Any]) -> dict[str, dict[int, str]]:
    """Sheet → {level: task name} for every DCR level task in the run's configs."""
    found: dict[str, dict[int, str]] = {}
    for task, config in (results.get("configs") or {}).items():
        metadata = (config or {}).get("metadata") or {}
        if "dcr_sheet" in metadata and "dcr_level" in metadata:
            found.setdefault(str(metadata["dcr_sheet"]), {})[int(metadata["dcr_level"])] = task
    return found


def _level_items(score: float, unchecked: float, n: int) -> np.ndarray:
    # Checks are binary, so a level's items are determined by its score and checked count.
    checked = int(round(n * (1.0 - unchecked)))
    positives = int(round(score * checked))
    return np.array([1.0] * positives + [0.0] * (checked - positives))


def scores_from_results(results: Mapping[str, Any]) -> tuple[dict[str, SheetScores], list[str]]:
    """Each complete sheet's level scores read from the level tasks' rows; messages for the rest."""
    evidence: dict[str, SheetScores] = {}
    messages: list[str] = []
    for sheet, tasks in dcr_level_tasks(results).items():
        missing = [f"L{level}" for level in LEVELS if level not in tasks]
        if missing:
            messages.append(f"DCR sheet {sheet!r}: level task(s) {missing} did not run; the DCR Factor needs all "
                            f"four (run the group dcr_<bench>)")
            continue
        scores, items = [], []
        for level in LEVELS:
            task = tasks[level]
            row = results.get("results", {}).get(task, {})
            score = row.get(f"{SCORE_METRIC},none")
            n = (results.get("n-samples", {}).get(task) or {}).get("effective")
            if not isinstance(score, (int, float)) or math.isnan(score) or not n:
                messages.append(f"DCR sheet {sheet!r}: {task} has no automatically checked items "
                                f"({SCORE_METRIC}={score!r}); check them by hand: lm-eval-contam dcr-export, then "
                                f"lm-eval-contam adjust --check-csv")
                break
            scores.append(float(score))
            items.append(_level_items(float(score), float(row.get(f"{UNCHECKED_METRIC},none", 0.0)), int(n)))
        else:
            evidence[sheet] = SheetScores(sheet, tuple(scores), tuple(items))  # type: ignore[arg-type]
    return evidence, messages
