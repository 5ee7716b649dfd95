"""Likelihood modes (ours, not a seed paper's): contamination evidence from log-likelihoods, no generation.

* partition vs control: the partition's texts are more likely than a control partition's
  of the same distribution (per byte; per zlib byte);
* lift: Time Travel's guided-vs-general contrast as log-likelihoods of the true second
  piece, controlled by the same contrast on another instance's second piece;
* options: DCQ's original-vs-perturbation contrast as log-likelihoods, controlled by the
  control partition's gap.

Modules: :mod:`~.docs` (rows, texts, prompts; per-instance scores in the shared
:mod:`lm_eval_contam.kit.scoring`), :mod:`~.stats` (the tests), :mod:`~.configs` (task YAMLs and the
audit's task names), :mod:`~.task` (lm-eval glue), :mod:`~.verdicts`.
"""

from lm_eval_contam.methods.likelihood.stats import TwoSampleResult, lift_test, two_sample_test

__all__ = ["TwoSampleResult", "lift_test", "two_sample_test"]
