"""After a run: the DCR Factor of each sheet and ``<metric>_adj`` beside every metric it adjusts.

Works on lm-eval's own results dict (the one ``simple_evaluate`` returns and
``lm_eval run`` saves and prints), so the new rows appear in lm-eval's JSON and
table: ``dcr_factor`` (± its bootstrap standard error, ``dcr_factor_ci_low`` /
``_high``), ``s1``..``s4`` and ``check_mode`` (what produced them) on the
``dcr_<bench>`` group, and ``<metric>_adj`` (± stderr, with its own 95 % interval
``<metric>_adj_ci_low`` / ``_high``, clipped to the metric's range where it is
known: :data:`~lm_eval_contam.core.result_numbers.METRIC_RANGES`) plus the factor and its
interval on each adjusted task, under the same filter as the raw metric. A controlled
level with fewer than :data:`~lm_eval_contam.methods.dcr.level_score.MIN_LEVEL_ITEMS` decided
items adds no evidence (its items count as ties, in the factor and in its interval)
and is named on the group row's ``too_few_items``; its level task keeps its own score. Shared by
``lm-eval-contam run`` (live) and ``lm-eval-contam adjust``; the level scores it
starts from are read by :mod:`lm_eval_contam.methods.dcr.results`. Anything missing is
logged and returned as a message, never raised.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.result_numbers import METRIC_RANGES
from lm_eval_contam.methods.dcr.bootstrap import (
    N_RESAMPLES,
    FactorBootstrap,
    adjusted_accuracy,
    bootstrap_dcr_factor,
)
from lm_eval_contam.methods.dcr.fuzzy import dcr_factor
from lm_eval_contam.methods.dcr.level_score import MIN_LEVEL_ITEMS
from lm_eval_contam.methods.dcr.results import CHECK_MODE_ROW, TOO_FEW_ITEMS_ROW, SheetScores, scores_from_results
from lm_eval_contam.methods.dcr.schema import LEVELS
from lm_eval_contam.methods.dcr.sheet import load_sheet

log = logging.getLogger("lm_eval_contam.methods.dcr")


def _set_row(results: dict[str, Any], task: str, values: Mapping[str, Any]) -> None:
    results.setdefault("results", {}).setdefault(task, {"alias": task}).update(values)
    if task in results.get("groups", {}):
        results["groups"][task].update(values)


def _factor_rows(factor: float, bootstrap: FactorBootstrap | None, filter_name: str) -> dict[str, Any]:
    rows: dict[str, Any] = {f"dcr_factor,{filter_name}": factor}
    if bootstrap is not None:
        rows[f"dcr_factor_stderr,{filter_name}"] = bootstrap.standard_error
        rows[f"dcr_factor_ci_low,{filter_name}"] = bootstrap.confidence_interval.low
        rows[f"dcr_factor_ci_high,{filter_name}"] = bootstrap.confidence_interval.high
    else:
        # No per-item checks, no interval: never leave an earlier run's interval beside a new factor.
        for key in ("stderr", "ci_low", "ci_high"):
            rows[f"dcr_factor_{key},{filter_name}"] = "N/A"
    return rows


def without_small_levels(scores: SheetScores) -> tuple[SheetScores, str]:
    """The scores the factor uses: a controlled level of too few decided items as ties (S = 0), and which they are.

    Only controlled levels: the paper's mode, a person's checks and given scores stay as they are.
    """
    if scores.check_mode != "controlled" or scores.level_items is None:
        return scores, ""
    small = [level for level, items in zip(LEVELS, scores.level_items) if 0 < len(items) < MIN_LEVEL_ITEMS]
    if not small:
        return scores, ""
    named = ", ".join(f"L{level} ({len(scores.level_items[level - 1])} of {MIN_LEVEL_ITEMS})" for level in small)
    return replace(scores,
                   scores=tuple(0.0 if level in small else score for level, score in zip(LEVELS, scores.scores)),
                   level_items=tuple(np.zeros(len(items)) if level in small else items
                                     for level, items in zip(LEVELS, scores.level_items))), named  # type: ignore[arg-type]


def apply_dcr(
    results: dict[str, Any],
    evidence: Mapping[str, SheetScores],
    *,
    sheet_override: str | None = None,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> list[str]:
    """Write the factor and adjusted metrics into ``results`` (in place); returns what was skipped."""
    messages: list[str] = []
    for sheet_ref, sheet_scores in evidence.items():
        try:
            sheet = load_sheet(sheet_override or sheet_ref)
        except ContamError as error:
            messages.append(f"DCR sheet {sheet_ref!r} could not be loaded ({error}); pass --sheet")
            continue
        sheet_scores, too_few = without_small_levels(sheet_scores)
        if too_few:
            messages.append(f"DCR sheet {sheet_ref!r}: too few items at {too_few}: those levels add no evidence")
        factor = dcr_factor(sheet_scores.scores)
        bootstrap = None
        if sheet_scores.level_items is not None:
            try:
                bootstrap = bootstrap_dcr_factor(sheet_scores.level_items, n_resamples=n_resamples, seed=seed)
            except ContamError as error:
                messages.append(f"DCR sheet {sheet_ref!r}: no confidence interval ({error})")
        else:
            messages.append(f"DCR sheet {sheet_ref!r}: scores given without per-item checks, so the factor has no "
                            f"confidence interval and acc_adj_stderr only carries the accuracy's stderr")
        group_rows = _factor_rows(factor, bootstrap, "none")
        group_rows.update({f"s{level},none": score for level, score in zip(LEVELS, sheet_scores.scores)})
        group_rows[f"{CHECK_MODE_ROW},none"] = sheet_scores.check_mode
        group_rows[f"{TOO_FEW_ITEMS_ROW},none"] = too_few or "none"
        _set_row(results, sheet.group, group_rows)
        results.setdefault("higher_is_better", {}).setdefault(sheet.group, {})["dcr_factor"] = False
        for target in sheet.adjusts:
            messages.extend(_adjust_task(results, sheet.name, target.task, target.metric, factor, bootstrap, seed))
    for message in messages:
        log.warning(message)
    return messages


def _adjust_task(results: dict[str, Any], sheet_name: str, task: str, metric: str, factor: float,
                 bootstrap: FactorBootstrap | None, seed: int) -> list[str]:
    row = results.get("results", {}).get(task)
    if row is None:
        return [f"DCR sheet {sheet_name!r} adjusts task {task!r}, which is not in this run; run it alongside "
                f"the DCR group to get {metric}_adj"]
    keys = [key for key in row if key.partition(",")[0] == metric and "," in key]
    if not keys:
        metrics = sorted({key.partition(",")[0] for key in row if "," in key})
        return [f"DCR sheet {sheet_name!r} adjusts {task}/{metric}, but {task} reports no {metric!r} "
                f"(it has {metrics})"]
    messages = []
    updates: dict[str, Any] = {}
    for key in keys:
        filter_name = key.partition(",")[2]
        acc = row[key]
        if not isinstance(acc, (int, float)) or math.isnan(acc):
            messages.append(f"{task}/{key} is {acc!r}, not a number: no {metric}_adj")
            continue
        stderr = row.get(f"{metric}_stderr,{filter_name}")
        stderr = float(stderr) if isinstance(stderr, (int, float)) else None
        adjusted = adjusted_accuracy(float(acc), stderr, factor, bootstrap, seed=seed,
                                     value_range=METRIC_RANGES.get(metric))
        updates[f"{metric}_adj,{filter_name}"] = adjusted.statistic
        updates[f"{metric}_adj_stderr,{filter_name}"] = (
            adjusted.standard_error if adjusted.standard_error is not None else "N/A")
        interval = adjusted.confidence_interval
        updates[f"{metric}_adj_ci_low,{filter_name}"] = interval.low if interval is not None else "N/A"
        updates[f"{metric}_adj_ci_high,{filter_name}"] = interval.high if interval is not None else "N/A"
        updates.update(_factor_rows(factor, bootstrap, filter_name))
    _set_row(results, task, updates)
    higher = results.setdefault("higher_is_better", {}).setdefault(task, {})
    higher[f"{metric}_adj"] = higher.get(metric, True)
    higher["dcr_factor"] = False
    return messages


def post_process_results(results: dict[str, Any]) -> dict[str, Any]:
    """The live hook: factor and adjusted metrics for every sheet whose four levels ran."""
    evidence, messages = scores_from_results(results)
    for message in messages:
        log.warning(message)
    if not evidence and not messages:
        log.info("no DCR test sheet in this run: no acc_adj (add a dcr_<bench> group to --tasks)")
        return results
    apply_dcr(results, evidence)
    return results
