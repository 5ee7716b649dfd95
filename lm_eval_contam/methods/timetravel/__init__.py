"""Time Travel in LLMs (Golchin & Surdeanu, ICLR 2024) as lm-eval tasks.

Public API: :func:`bootstrap_test` (Algorithm 1), :func:`permutation_test` (Algorithm 1's
sign-flip test, ours), :func:`classify_match`
(Algorithm 2, Judge A); the paper's guided and general prompts are shared with the likelihood lift mode
(:func:`lm_eval_contam.kit.guided_prompts.render_prompt`).
"""

from lm_eval_contam.core.stats import PermutationResult, permutation_test
from lm_eval_contam.methods.timetravel.judge import (
    Algorithm2Verdict,
    algorithm2_verdict,
    classify_match,
    parse_judge_b_match,
)
from lm_eval_contam.methods.timetravel.prompts import render_judge_prompt
from lm_eval_contam.methods.timetravel.stats import BootstrapResult, bootstrap_test

__all__ = [
    "Algorithm2Verdict",
    "BootstrapResult",
    "PermutationResult",
    "algorithm2_verdict",
    "bootstrap_test",
    "classify_match",
    "parse_judge_b_match",
    "permutation_test",
    "render_judge_prompt",
]
