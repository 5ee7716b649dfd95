"""The null study: how often each verdict flags partitions its model cannot have seen.

Tiny models trained from scratch on seeded synthetic English datasets
(:mod:`~.corpus`) give guaranteed-unseen partitions, including held-out splits of
datasets whose sibling split (and name) the model learned (:mod:`~.design`). Every
shipped task family runs on them through lm-eval (:mod:`~.configs`, :mod:`~.study`),
and :mod:`~.rates` turns the verdicts into false-positive rates with exact
Clopper–Pearson intervals, shipped as ``lm_eval_contam/verdicts/null_rates.json``.
"""

from lm_eval_contam.nullstudy.design import QUICK, StudySettings
from lm_eval_contam.nullstudy.rates import clopper_pearson, markdown_table, rates_document, tally
from lm_eval_contam.nullstudy.study import run_study

__all__ = ["QUICK", "StudySettings", "clopper_pearson", "markdown_table", "rates_document", "run_study", "tally"]
