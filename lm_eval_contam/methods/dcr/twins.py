"""Twins for generated L3/L4 items (the controlled check mode's control): a word-level perturbed twin of each
benchmark instance.

A model with no memory of an instance answers about it as it answers about a
twin that differs only in some words swapped for WordNet synonyms: same format,
same length, same label (synonym swaps never touch numbers or the label), but
never in the benchmark. So the twin measures what task ability, yes-bias and
knowledge of the dataset's style earn on their own, and only item memory moves
the original above it:

- L3 membership: the twin is the non-member ("Is the statement <twin> in X?");
- L3 completion: the twin's first half is completed against the twin's second half (the first
  option that changes both halves: an unchanged first half would ask the very same question);
- L4 association: the twin keeps the original's gold label.

The twin is the first option of the DCQ offline perturber
(:func:`lm_eval_contam.kit.perturb.perturb`), seeded by the task's seed and the
instance text, so every run and every data-parallel rank builds the same twin.
"""

from __future__ import annotations

from collections.abc import Callable

from lm_eval_contam.core.wordnet import WordNet, load_wordnet
from lm_eval_contam.kit.instances import QuizInstance
from lm_eval_contam.kit.perturb import synonym_variants


def perturbed_twin(text: str, *, seed: int, usable: Callable[[str], bool] = lambda twin: True,
                   wordnet: WordNet | None = None) -> str | None:
    """The instance with a seeded share of its content words replaced by synonyms: the perturber's first option
    that is ``usable``; None when no word has a synonym or no option is usable."""
    options = synonym_variants(QuizInstance(text), seed=seed, wordnet=wordnet or load_wordnet())
    return next((option for option in options if usable(option)), None)
