"""The report's details of the In-context test (ours, after CoDeC): each verdict's numbers and what the test compares."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lm_eval_contam.method_verdict import Verdict
from lm_eval_contam.reportkit import htmlkit, mdkit
from lm_eval_contam.reportkit.htmlkit import e
from lm_eval_contam.reportkit.mdkit import md

HEADING = "In-context test (ours, after CoDeC)"
NOTE = ("Each instance's log-likelihood alone and after a few other instances of the partition, against the same for its perturbed twin (a few words swapped for synonyms): a model that knows the dataset's domain gains little from context on both; one that memorised the instances gains less on them than on their twins.")


def html(verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
    first = verdicts[0]
    return (f'<h5 id="{anchor(first)}">{e(HEADING)} — <code>{e(first.task)}</code></h5>'
            + htmlkit.facts_table(verdicts) + f'<p class="note">{e(NOTE)}</p>')


def markdown(verdicts: Sequence[Verdict]) -> list[str]:
    return [f"##### {md(HEADING)} — {md(verdicts[0].task)}", "", *mdkit.facts_table(verdicts), md(NOTE), ""]
