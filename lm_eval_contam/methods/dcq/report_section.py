"""DCQ's details: the range and its test, BDQ pick rates and BCQ hit rates (the paper's Figure 2 style)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lm_eval_contam.core.formatting import number
from lm_eval_contam.core.method_verdict import NotRunEvidence, Verdict
from lm_eval_contam.methods.dcq.quiz import LETTERS, POSITIONS
from lm_eval_contam.reportkit import charts, htmlkit, mdkit
from lm_eval_contam.reportkit.htmlkit import e
from lm_eval_contam.reportkit.mdkit import md


def html(verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
    verdict = verdicts[0]
    evidence = verdict.evidence
    heading = f'<h5 id="{anchor(verdict)}">{e(verdict.title)} — <code>{e(verdict.task)}</code></h5>'
    if isinstance(evidence, NotRunEvidence):  # the quiz did not run: its reason, no charts
        return heading + htmlkit.facts_table([verdict])
    bdq_labels = [f"{letter} (none)" if letter == LETTERS[-1] else letter for letter in LETTERS]
    return (
        heading
        + htmlkit.facts_table([verdict])
        + '<div class="charts">'
        + charts.bar_chart(bdq_labels, evidence.bdq_pick_rates, title="BDQ: share of picks per option",
                           y_max=1.0, y_label="pick rate", color=charts.PALETTE[2])
        + charts.bar_chart(list(POSITIONS), evidence.bcq_hit_rates,
                           title="BCQ: original picked, by its slot", y_max=1.0, y_label="hit rate",
                           color=charts.HIGHLIGHT)
        + "</div>"
        + '<p class="note">BDQ (green, the paper\'s Figure 2 style): only E, "none of the provided options", is '
          "correct, since every option is a word-level perturbation of the instance. BCQ (red): how often the model "
          "picked the original instance when it sat in slot A, B, C or D; a hit rate well above the BDQ pick rate "
          "of the same slot signals that the model has seen the instance.</p>"
    )


def markdown(verdicts: Sequence[Verdict]) -> list[str]:
    verdict = verdicts[0]
    evidence = verdict.evidence
    heading = [f"##### {md(verdict.title)} — {md(verdict.task)}", "", *mdkit.facts_table([verdict])]
    if isinstance(evidence, NotRunEvidence):  # the quiz did not run: its reason, no rates
        return heading
    rates = mdkit.table(["quiz", *LETTERS],
                        [["BDQ pick rate", *(number(v) for v in evidence.bdq_pick_rates)],
                         ["BCQ hit rate (original in slot)", *(number(v) for v in evidence.bcq_hit_rates), "—"]])
    return [*heading, *rates]
