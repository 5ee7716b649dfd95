"""Pairing test (ours): does each free-text instance's first half go with its own second half more than with the
second halves of other instances of the partition?

Every instance is cut in two; within groups of instances, each first half is scored with every second half of the
group. A model that never saw the instances prefers some pairings for reasons that are not memory (coherence, a
fluent second half); those cancel in the double-centred scores, and the true pairing is one of the group's
permutations. Scored on ``u = log p(model) - log p(reference)`` when the checkpoint the model was fine-tuned from is
given. The null and its Monte-Carlo p-value: :mod:`lm_eval_contam.core.relabelling`.
"""

from lm_eval_contam.methods.pairing.halves import DEFAULT_GROUP_SIZE, halves, pairing_groups

__all__ = ["DEFAULT_GROUP_SIZE", "halves", "pairing_groups"]
