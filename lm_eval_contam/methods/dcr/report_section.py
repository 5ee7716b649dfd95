"""DCR's details: the check mode, the level scores S1–S4, the DCR Factor with its interval, raw vs adjusted metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lm_eval_contam.core.formatting import interval, number
from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.methods.dcr.verdicts import AdjustedMetric, DCREvidence
from lm_eval_contam.reportkit import charts, htmlkit, mdkit
from lm_eval_contam.reportkit.htmlkit import e
from lm_eval_contam.reportkit.mdkit import md

LEVEL_LABELS = ("L1", "L2", "L3", "L4")
NOTE = ("Each level score S_i is the share of a level's items whose Check passed; with controlled checks (the "
        "check mode each sheet's facts name) S3/S4 are the pass rate on the items minus the pass rate on their "
        "word-level perturbed twins, floored at 0, so yes-bias and task ability score 0. The fuzzy DCR Factor "
        "combines S1–S4, and acc_adj = acc × (1 − factor).")


def _raw(row: AdjustedMetric) -> str:
    return f"{number(row.raw)} ± {number(row.raw_stderr)}"


def _adjusted(row: AdjustedMetric) -> str:
    return f"{number(row.adjusted)} ± {number(row.adjusted_stderr)}"


def _factor(row: AdjustedMetric) -> str:
    return f"{number(row.factor)} {interval(row.factor_ci)}"


def _levels_chart(evidence: DCREvidence) -> str:
    return charts.bar_chart(LEVEL_LABELS, list(evidence.level_scores), title="DCR level scores S1–S4", y_max=1.0,
                            y_label="share contaminated")


def _adjusted_chart(rows: Sequence[AdjustedMetric]) -> str:
    return charts.grouped_bar_chart(
        [f"{row.task} {row.metric}" for row in rows],
        [charts.Series("raw", tuple(r.raw for r in rows), tuple(r.raw_stderr for r in rows)),
         charts.Series("DCR-adjusted", tuple(r.adjusted for r in rows), tuple(r.adjusted_stderr for r in rows))],
        title="raw vs DCR-adjusted", y_max=1.0, y_label="score (± stderr)",
    )


def _heading(verdict: Verdict) -> str:
    return f"DCR — {verdict.task} (sheet {verdict.evidence.sheet})"


def html(verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
    parts = []
    for verdict in verdicts:
        evidence: DCREvidence = verdict.evidence
        blocks = []
        if any(score is not None for score in evidence.level_scores):
            blocks.append(_levels_chart(evidence))
        if evidence.adjusted:
            blocks.append(_adjusted_chart(evidence.adjusted) + htmlkit.table(
                ("task", "metric", "raw", "adjusted", "DCR Factor"),
                ((r.task, r.metric, _raw(r), _adjusted(r), _factor(r)) for r in evidence.adjusted)))
        parts.append(f'<h5 id="{e(anchor(verdict))}">{e(_heading(verdict))}</h5>' + htmlkit.facts_table([verdict])
                     + '<div class="charts">' + "".join(f"<div>{block}</div>" for block in blocks) + "</div>")
    return "".join(parts) + f'<p class="note">{e(NOTE)}</p>'


def markdown(verdicts: Sequence[Verdict]) -> list[str]:
    lines: list[str] = []
    for verdict in verdicts:
        evidence: DCREvidence = verdict.evidence
        lines += [f"##### {md(_heading(verdict))}", "", *mdkit.facts_table([verdict])]
        lines += mdkit.table(["S1", "S2", "S3", "S4", "DCR Factor"],
                             [[*(md(number(s)) for s in evidence.level_scores),
                               md(f"{number(evidence.factor)} {interval(evidence.factor_ci)}")]])
        if evidence.adjusted:
            lines += mdkit.table(["task", "metric", "raw", "adjusted", "DCR Factor"],
                                 [[md(r.task), md(r.metric), md(_raw(r)), md(_adjusted(r)), md(_factor(r))]
                                  for r in evidence.adjusted])
    return lines + [md(NOTE), ""]
