"""Data Contamination Quiz (DCQ; Golchin & Surdeanu, TACL 2025).

A model is asked to pick the original instance among four word-level
perturbations; a bias-detector quiz (BDQ) finds the positions the model avoids,
bias-compensator quizzes (BCQ) put the original there, and the hits give the
contamination range [min, max] of a partition.

Modules: :mod:`~.quiz` (prompt, layouts, answer parser), :mod:`~.estimate` (the
range, its interval and p-value), :mod:`~.task` (lm-eval glue). The quiz options
(:mod:`lm_eval_contam.kit.quiz_options`), the offline WordNet perturber
(:mod:`lm_eval_contam.kit.perturb`) and the instance sample
(:mod:`lm_eval_contam.kit.instances`) are shared with other methods.
"""

from lm_eval_contam.methods.dcq.estimate import (
    ConfidenceInterval,
    DCQEstimate,
    InstanceAnswers,
    estimate,
    estimate_from_counts,
)
from lm_eval_contam.methods.dcq.quiz import parse_answer

__all__ = [
    "ConfidenceInterval",
    "DCQEstimate",
    "InstanceAnswers",
    "estimate",
    "estimate_from_counts",
    "parse_answer",
]
