"""The report's details of the sentence-order test (ours): each verdict's numbers and what the test compares."""

from __future__ import annotations

from lm_eval_contam.reportkit.section import FactsSection

SECTION = FactsSection(
    heading="Sentence-order test (ours)",
    note="Each instance scored in its own sentence order and in other orders of the same sentences (the same words, "
         "so its length and difficulty do not move). On its own log-likelihoods any model prefers the coherent, "
         "original order of natural text; against the reference model (u) what both models prefer cancels and what "
         "the fine-tune memorised is left.",
)
