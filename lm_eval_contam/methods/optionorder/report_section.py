"""The report's details of the Option-order test (ours, after Ni et al.): each verdict's numbers and what the test compares."""

from __future__ import annotations

from lm_eval_contam.reportkit.section import FactsSection

SECTION = FactsSection(
    heading="Option-order test (ours, after Ni et al.)",
    note="Each multiple-choice item scored with its options in the original order and in a few other admissible orders (letters fixed): a model that never saw the item ranks the original order like any other; one that memorised it ranks the original first. Items whose options refer to positions, or whose original order is sorted, are left out.",
)
