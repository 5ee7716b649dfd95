"""DCR adjustment after the fact (``lm-eval-contam adjust``): where a saved run's level scores come from.

Three sources, in order of precedence: a check CSV a person filled in (per-item
results, so the factor gets a bootstrap interval), four scores measured elsewhere
(no interval), or the run's own level tasks. (Not named ``adjust``: that is the
package's ``acc × (1 − factor)`` function, which a submodule of the same name
would shadow.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcr.check_csv import CheckRow, level_items_by_sheet, read_check_csv, validate_check_rows
from lm_eval_contam.methods.dcr.hook import apply_dcr
from lm_eval_contam.methods.dcr.results import SheetScores, dcr_level_tasks, scores_from_results
from lm_eval_contam.methods.dcr.sheet import load_sheet


def scores_from_check_rows(rows: Iterable[CheckRow]) -> dict[str, SheetScores]:
    """Each sheet's level scores and per-item results from a person's decisions (NaN for a level with none)."""
    return {sheet: SheetScores(sheet, tuple(float(np.mean(i)) if i else float("nan") for i in levels),  # type: ignore[arg-type]
                               tuple(np.asarray(i) for i in levels), check_mode="manual")
            for sheet, levels in level_items_by_sheet(rows).items()}


def given_scores(results: Mapping[str, Any], scores: Sequence[float], sheet: str | None) -> dict[str, SheetScores]:
    """S1..S4 from elsewhere, for ``sheet`` or else the one sheet the run's level tasks name."""
    sheets = [sheet] if sheet else list(dcr_level_tasks(results))
    if len(sheets) != 1:
        raise ContamError(f"the run names {len(sheets)} DCR sheets {sheets}; say which with --sheet", field="--sheet")
    return {sheets[0]: SheetScores(sheets[0], tuple(scores), check_mode="given")}  # type: ignore[arg-type]


def sheet_scores(results: Mapping[str, Any], *, check_csv: str | Path | None = None,
                 scores: Sequence[float] | None = None,
                 sheet: str | None = None) -> tuple[dict[str, SheetScores], list[str]]:
    """The level scores to adjust with: the CSV, the given scores, or the run's own level tasks."""
    if check_csv is not None:
        rows = validate_check_rows(read_check_csv(check_csv), source=str(check_csv), sheet_override=sheet)
        return scores_from_check_rows(rows), []
    if scores is not None:
        return given_scores(results, scores, sheet), []
    return scores_from_results(results)


def adjust_results(results: dict[str, Any], *, source: Path, check_csv: str | Path | None = None,
                   scores: Sequence[float] | None = None, sheet: str | None = None, seed: int = 0) -> list[str]:
    """Write the DCR rows into ``results`` (read from ``source``) in place; returns what was skipped.

    Every sheet must load (ContamError otherwise), so a copy is never "adjusted" without a factor.
    """
    evidence, messages = sheet_scores(results, check_csv=check_csv, scores=scores, sheet=sheet)
    if not evidence:
        raise ContamError("no DCR scores for this run: it has no complete dcr_<bench> group "
                          + (f"({'; '.join(messages)}) " if messages else "")
                          + "and neither --sheet-scores nor --check-csv was given", source=str(source))
    for sheet_ref in evidence:
        try:
            load_sheet(sheet or sheet_ref)
        except ContamError as error:
            raise ContamError(f"DCR sheet {sheet or sheet_ref!r} could not be loaded ({error})", source=str(source),
                              field="--sheet" if sheet else "dcr_sheet") from None
    return messages + apply_dcr(results, evidence, sheet_override=sheet, seed=seed)
