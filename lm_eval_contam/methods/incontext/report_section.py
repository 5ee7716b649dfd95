"""The report's details of the In-context test (ours, after CoDeC): each verdict's numbers and what the test compares."""

from __future__ import annotations

from lm_eval_contam.reportkit.section import FactsSection

SECTION = FactsSection(
    heading="In-context test (ours, after CoDeC)",
    note="Each instance's log-likelihood alone and after a few other instances of the partition, against the same for its perturbed twin (a few words swapped for synonyms): a model that knows the dataset's domain gains little from context on both; one that memorised the instances gains less on them than on their twins.",
)
