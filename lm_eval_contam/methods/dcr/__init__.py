"""DCR (Xu et al., EMNLP 2025): four-level test sheets, the Check step, the fuzzy DCR Factor.

Public API::

    dcr_factor([S1, S2, S3, S4]) -> float           # the released aggregator (scikit-fuzzy)
    dcr_factor_many(array_n_by_4) -> np.ndarray      # vectorised, identical values
    adjust(acc, factor) -> acc * (1 - factor)
    bootstrap_dcr_factor(level_items, n_resamples=10_000, seed=0) -> FactorBootstrap
    adjusted_accuracy(acc, acc_stderr, factor, bootstrap) -> AdjustedAccuracy
    load_sheet(name_or_path) -> Sheet

Modules, from the ground up:

- the Check step: ``judge`` (the LLM judge), ``checks`` (the check kinds), ``check_spec`` (a check as data);
- the sheet: ``schema`` (its dataclasses), ``sheet`` (reading the YAML), ``twins`` / ``items`` (generated
  items and their twins), ``data`` (benchmark rows), ``docs`` (item → lm-eval doc, responses → Check results);
- the score: ``level_score`` (a level's S_i), ``fuzzy`` / ``bootstrap`` (the factor and its interval);
- lm-eval: ``task`` / ``configs`` (level tasks), ``results`` / ``hook`` / ``adjustment`` (reading and writing
  lm-eval results), ``check_csv`` (manual checks), ``verdicts``.
"""

from __future__ import annotations

from lm_eval_contam.methods.dcr.bootstrap import (
    AdjustedAccuracy,
    FactorBootstrap,
    adjusted_accuracy,
    bootstrap_dcr_factor,
)
from lm_eval_contam.methods.dcr.fuzzy import (
    adjust,
    dcr_factor,
    dcr_factor_many,
    dcr_factor_reference,
)
from lm_eval_contam.methods.dcr.schema import Sheet
from lm_eval_contam.methods.dcr.sheet import load_sheet

__all__ = [
    "AdjustedAccuracy",
    "FactorBootstrap",
    "Sheet",
    "adjust",
    "adjusted_accuracy",
    "bootstrap_dcr_factor",
    "dcr_factor",
    "dcr_factor_many",
    "dcr_factor_reference",
    "load_sheet",
]
