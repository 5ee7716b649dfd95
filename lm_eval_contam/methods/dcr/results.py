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

from lm_eval_contam.methods.dcr.schema import LEVELS

SCORE_METRIC = "contaminated"
UNCHECKED_METRIC = "unchecked"
# Written by controlled levels only: the shares of checked items where only the original / only the control passed.
ORIGINAL_ONLY_METRIC = "original_only"
TWIN_ONLY_METRIC = "control_only"  # the share where only the twin (the item's control) passed
PVALUE_METRIC = "advantage_pvalue"  # the controlled level's sign test, item vs control
# The group row's record of what produced S1..S4 (SheetScores.check_mode), written by the hook.
CHECK_MODE_ROW = "check_mode"
# The group row's record of the controlled levels with too few items to add evidence ("none" when every level has
# enough), written by the hook.
TOO_FEW_ITEMS_ROW = "too_few_items"
# Runs made before the controlled checks existed carry no check_mode: their levels were checked as in the paper.
UNRECORDED_CHECK_MODE = "paper"


@dataclass(frozen=True)
class SheetScores:
    """S1..S4 of one sheet and, when known, each level's per-item Check results (for the CI).

    ``check_mode`` says what produced the scores: "controlled" or "paper" (the level tasks' checks),
    "manual" (a person's decisions, ``adjust --check-csv``) or "given" (``adjust --sheet-scores``).
    """

    sheet: str  # shipped sheet name or sheet path
    scores: tuple[float, float, float, float]
    level_items: tuple[np.ndarray, ...] | None = None
    check_mode: str = UNRECORDED_CHECK_MODE


def dcr_level_tasks(results: Mapping[str, Any]) -> dict[str, dict[int, str]]:
    """Sheet → {level: task name} for every DCR level task in the run's configs."""
    found: dict[str, dict[int, str]] = {}
    for task, config in (results.get("configs") or {}).items():
        metadata = (config or {}).get("metadata") or {}
        if "dcr_sheet" in metadata and "dcr_level" in metadata:
            found.setdefault(str(metadata["dcr_sheet"]), {})[int(metadata["dcr_level"])] = task
    return found


def _level_items(row: Mapping[str, Any], score: float, n: int) -> np.ndarray:
    """Each checked item's result, rebuilt from the level's shares (all items of a level are alike).

    A paper-mode level's results are 1/0, determined by its score and checked count; a controlled level's are
    original minus control (1, 0 or -1), determined by the shares where only one of the two passed.
    """
    checked = int(round(n * (1.0 - float(row.get(f"{UNCHECKED_METRIC},none", 0.0)))))
    original_only = row.get(f"{ORIGINAL_ONLY_METRIC},none")
    if isinstance(original_only, (int, float)):
        wins = int(round(original_only * checked))
        losses = int(round(float(row[f"{TWIN_ONLY_METRIC},none"]) * checked))
        return np.array([1.0] * wins + [-1.0] * losses + [0.0] * (checked - wins - losses))
    positives = int(round(score * checked))
    return np.array([1.0] * positives + [0.0] * (checked - positives))


def level_check_modes(results: Mapping[str, Any], tasks: Mapping[int, str]) -> str:
    """The check mode the level tasks recorded in their metadata ("mixed" when they differ)."""
    configs = results.get("configs") or {}
    modes = {str(((configs.get(task) or {}).get("metadata") or {}).get("check_mode", UNRECORDED_CHECK_MODE))
             for task in tasks.values()}
    return modes.pop() if len(modes) == 1 else "mixed"


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
            items.append(_level_items(row, float(score), int(n)))
        else:
            evidence[sheet] = SheetScores(sheet, tuple(scores), tuple(items),  # type: ignore[arg-type]
                                          check_mode=level_check_modes(results, tasks))
    return evidence, messages
