"""The report's details of the Option-order test (ours, after Ni et al.): each verdict's numbers and what the test compares."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lm_eval_contam.method_verdict import Verdict
from lm_eval_contam.reportkit import htmlkit, mdkit
from lm_eval_contam.reportkit.htmlkit import e
from lm_eval_contam.reportkit.mdkit import md

HEADING = "Option-order test (ours, after Ni et al.)"
NOTE = ("Each multiple-choice item scored with its options in the original order and in a few other admissible orders (letters fixed): a model that never saw the item ranks the original order like any other; one that memorised it ranks the original first. Items whose options refer to positions, or whose original order is sorted, are left out.")


def html(verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
    first = verdicts[0]
    return (f'<h5 id="{anchor(first)}">{e(HEADING)} — <code>{e(first.task)}</code></h5>'
            + htmlkit.facts_table(verdicts) + f'<p class="note">{e(NOTE)}</p>')


def markdown(verdicts: Sequence[Verdict]) -> list[str]:
    return [f"##### {md(HEADING)} — {md(verdicts[0].task)}", "", *mdkit.facts_table(verdicts), md(NOTE), ""]
