"""What a quiz-option generator hands back: the contract between the perturbers and the options cache.

A proposer is either the offline WordNet perturber (:mod:`lm_eval_contam.kit.perturb`)
or an instruct model with the paper's prompt (:mod:`lm_eval_contam.kit.quiz_options`);
the options cache validates whatever it proposes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lm_eval_contam.kit.instances import QuizInstance

NUM_OPTIONS = 4  # perturbations per instance: with the original, a five-choice quiz

# Four options for one instance, or None when the generator produced none (an
# unparseable completion; no replaceable word for the offline perturber).
Proposal = Sequence[str] | None
# (instances, attempt number from 1) -> one proposal per instance.
Proposer = Callable[[Sequence[QuizInstance], int], Sequence[Proposal]]
