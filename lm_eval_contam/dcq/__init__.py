"""Data Contamination Quiz (DCQ; Golchin & Surdeanu, TACL 2025).

A model is asked to pick the original instance among four word-level
perturbations; a bias-detector quiz (BDQ) finds the positions the model avoids,
bias-compensator quizzes (BCQ) put the original there, and the hits give the
contamination range [min, max] of a partition.

Modules: :mod:`~.quiz` (prompt, layouts, answer parser), :mod:`~.estimate` (the
range, its interval and p-value), :mod:`~.options` (option generation,
validation, cache), :mod:`~.perturb` (offline WordNet perturber),
:mod:`~.instances` (sampling, instance strings), :mod:`~.task` (lm-eval glue).
"""

from lm_eval_contam.dcq.estimate import (
    ConfidenceInterval,
    DCQEstimate,
    InstanceAnswers,
    estimate,
    estimate_from_counts,
)
from lm_eval_contam.dcq.quiz import parse_answer

__all__ = [
    "ConfidenceInterval",
    "DCQEstimate",
    "InstanceAnswers",
    "estimate",
    "estimate_from_counts",
    "parse_answer",
]
