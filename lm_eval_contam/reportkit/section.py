"""A method's report section that is its verdicts' facts table under a heading, with a note on what the test compares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.reportkit import htmlkit, mdkit
from lm_eval_contam.reportkit.htmlkit import e
from lm_eval_contam.reportkit.mdkit import md


@dataclass(frozen=True)
class FactsSection:
    heading: str
    note: str

    def html(self, verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
        first = verdicts[0]
        return (f'<h5 id="{anchor(first)}">{e(self.heading)} — <code>{e(first.task)}</code></h5>'
                + htmlkit.facts_table(verdicts) + f'<p class="note">{e(self.note)}</p>')

    def markdown(self, verdicts: Sequence[Verdict]) -> list[str]:
        return [f"##### {md(self.heading)} — {md(verdicts[0].task)}", "", *mdkit.facts_table(verdicts), md(self.note),
                ""]
