"""Time Travel's details: the verdicts' numbers, a ROUGE-L strip plot and the per-instance table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lm_eval_contam.core.formatting import number
from lm_eval_contam.core.method_verdict import NotRunEvidence, Verdict
from lm_eval_contam.methods.timetravel.verdicts import Instance
from lm_eval_contam.reportkit import charts, htmlkit, mdkit
from lm_eval_contam.reportkit.htmlkit import e
from lm_eval_contam.reportkit.mdkit import md

MATCH_NAMES = {"exact": "exact", "near_exact": "near-exact", "inexact": "inexact"}


def _instances(verdicts: Sequence[Verdict]) -> tuple[Instance, ...]:
    evidence = verdicts[0].evidence
    return () if isinstance(evidence, NotRunEvidence) else evidence.instances  # not run: no instances


def _match(value: str | None) -> str:
    if value is None:
        return "—"
    return f'<span class="match-{e(value)}">{e(MATCH_NAMES.get(value, value))}</span>'


def _text_cell(text: str) -> str:
    return e(text) if text else '<span class="note">(empty)</span>'


def instance_table(instances: Sequence[Instance]) -> str:
    with_b = any(row.judge_b is not None for row in instances)
    header = ["doc", "first piece", "reference (second piece)", "guided completion", "general completion",
              "ROUGE-L guided", "ROUGE-L general", "match (Judge A)"] + (["match (Judge B)"] if with_b else [])
    lines = []
    for row in instances:
        cells = [f'<td class="num">{row.doc_id}</td>',
                 *(f'<td><div class="text">{_text_cell(text)}</div></td>'
                   for text in (row.first_piece, row.reference, row.guided, row.general)),
                 f'<td class="num">{e(number(row.rouge_guided))}</td>',
                 f'<td class="num">{e(number(row.rouge_general))}</td>',
                 f"<td>{_match(row.judge_a)}</td>"] + ([f"<td>{_match(row.judge_b)}</td>"] if with_b else [])
        lines.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    return htmlkit.scroll(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>")


def html(verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
    first = verdicts[0]
    instances = _instances(verdicts)
    variant = f" ({first.variant} prompts)" if first.variant else ""
    parts = [f'<h5 id="{anchor(first)}">Time Travel — <code>{e(first.task)}</code>{e(variant)}</h5>',
             htmlkit.facts_table(verdicts)]
    if instances:
        parts.append('<div class="charts">' + charts.strip_plot(
            [("guided", [row.rouge_guided for row in instances]), ("general", [row.rouge_general for row in instances])],
            title="ROUGE-L against the reference, per instance", y_label="ROUGE-L F") + "</div>")
        parts.append(f"<details><summary>{len(instances)} instances: pieces, completions, match class</summary>"
                     f"{instance_table(instances)}</details>")
    else:
        parts.append('<p class="note">No logged samples for this task (run with --log_samples for the '
                     "per-instance table).</p>")
    return "".join(parts)


def markdown(verdicts: Sequence[Verdict]) -> list[str]:
    first = verdicts[0]
    variant = f" ({first.variant} prompts)" if first.variant else ""
    lines = [f"##### Time Travel — {md(first.task)}{md(variant)}", "", *mdkit.facts_table(verdicts)]
    instances = _instances(verdicts)
    if not instances:
        return lines + ["_No logged samples for this task._", ""]
    with_b = any(row.judge_b is not None for row in instances)
    header = ["doc", "first piece", "reference", "guided completion", "general completion", "ROUGE-L guided",
              "ROUGE-L general", "Judge A"] + (["Judge B"] if with_b else [])
    rows = [[str(row.doc_id), *(md(text) if text else "_(empty)_"
                                for text in (row.first_piece, row.reference, row.guided, row.general)),
             number(row.rouge_guided), number(row.rouge_general), md(MATCH_NAMES.get(row.judge_a, row.judge_a))]
            + ([md(MATCH_NAMES.get(row.judge_b, row.judge_b) if row.judge_b else "—")] if with_b else [])
            for row in instances]
    return lines + mdkit.table(header, rows)
