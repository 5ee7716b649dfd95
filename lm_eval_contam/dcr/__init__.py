"""DCR (Xu et al., EMNLP 2025): four-level test sheets, the Check step, the fuzzy DCR Factor.

Public API::

    dcr_factor([S1, S2, S3, S4]) -> float           # the released aggregator (scikit-fuzzy)
    dcr_factor_many(array_n_by_4) -> np.ndarray      # vectorised, identical values
    adjust(acc, factor) -> acc * (1 - factor)
    bootstrap_dcr_factor(level_items, n_resamples=10_000, seed=0) -> FactorBootstrap
    adjusted_accuracy(acc, acc_stderr, factor, bootstrap) -> AdjustedAccuracy
    load_sheet(name_or_path) -> Sheet

Modules: ``sheet`` (schema, loading), ``items`` (generated items), ``data`` (benchmark
rows), ``docs`` (item → lm-eval doc), ``checks`` / ``judge`` (the Check step),
``check_csv`` (manual checks), ``fuzzy`` / ``bootstrap`` (the factor), ``results`` /
``hook`` / ``adjustment`` (reading and writing lm-eval results), ``verdicts``.
"""

from __future__ import annotations

from lm_eval_contam.dcr.bootstrap import (
    AdjustedAccuracy,
    FactorBootstrap,
    adjusted_accuracy,
    bootstrap_dcr_factor,
)
from lm_eval_contam.dcr.fuzzy import (
    adjust,
    dcr_factor,
    dcr_factor_many,
    dcr_factor_reference,
)
from lm_eval_contam.dcr.sheet import Sheet, load_sheet

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
