"""The report's details of the pairing test (ours): each verdict's numbers and what the test compares."""

from __future__ import annotations

from lm_eval_contam.reportkit.section import FactsSection

SECTION = FactsSection(
    heading="Pairing test (ours)",
    note="Each instance cut in two; within groups of instances every first half is scored with every second half. "
         "Each half's own level is removed (double centring), so what is left is how much the model prefers the true "
         "pairing: memory of the instances. On its own log-likelihoods a model that learned the domain also prefers "
         "coherent pairings; against the reference model (u) what both models share cancels.",
)
