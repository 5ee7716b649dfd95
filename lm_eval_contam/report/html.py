"""``report.html``: one self-contained page (inline CSS and SVG, no scripts, no external assets).

Every piece of model output and data text goes through :func:`html.escape`. The
page lays out the summary, the models and the details; each method's details
come from its own renderer (``lm_eval_contam.report.methods``).
"""

from __future__ import annotations

from collections.abc import Iterable

from lm_eval_contam import __version__
from lm_eval_contam.report import layout
from lm_eval_contam.report.htmlkit import anchor, e, table
from lm_eval_contam.report.methods import renderer
from lm_eval_contam.report.model import Report
from lm_eval_contam.verdict import Verdict

CSS = """
:root { --ink:#222; --muted:#666; --line:#ddd; --flag:#fbe3e4; --flag-ink:#8e1b21; --ok:#eaf5ec; --ok-ink:#1d5e2c; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 auto;
       max-width: 1200px; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { margin-top: 36px; border-bottom: 2px solid var(--line); }
h3 { margin-top: 28px; } h4 { margin: 20px 0 8px; } h5 { font-size: 14px; margin: 16px 0 6px; color: #333; }
.meta, .note { color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.flag { background: var(--flag); color: var(--flag-ink); font-weight: 600; }
td.ok { background: var(--ok); color: var(--ok-ink); }
td.none { color: #aaa; text-align: center; }
td.flag a, td.ok a { color: inherit; }
td.flag small, td.ok small { font-weight: normal; color: var(--ink); display: block; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.text { white-space: pre-wrap; word-break: break-word; max-width: 320px; font-size: 13px; }
.match-exact { color: var(--flag-ink); font-weight: 600; } .match-near_exact { color: #a35c00; font-weight: 600; }
details { margin: 8px 0 16px; } summary { cursor: pointer; color: #2a5599; }
.badge { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; }
.badge.flag { background: var(--flag); color: var(--flag-ink); } .badge.ok { background: var(--ok); color: var(--ok-ink); }
.badge.none { background: #eee; color: var(--muted); }
"""


def summary_table(report: Report) -> str:
    decided = layout.decided(report.verdicts)
    columns = layout.summary_columns(report.verdicts)
    header = "".join(f"<th>{e(h)}</th>" for h in ("model", "partition", *(title for _, title in columns)))
    lines = []
    for row in layout.summary_rows(decided):
        cells = [f"<td>{e(row.model)}</td>", f"<td>{e(row.partition)}</td>"]
        for method, _ in columns:
            found = row.cells.get(method, ())
            if not found:
                cells.append('<td class="none">—</td>')
                continue
            flagged = any(v.flagged for v in found)
            text = "".join(f'<a href="#{anchor(v)}">{e(v.decision)}</a><small>{e(layout.cell_detail(v))}</small>'
                           for v in found)
            cells.append(f'<td class="{"flag" if flagged else "ok"}">{text}</td>')
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class=\"summary\"><thead><tr>{header}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


PARTITION_NOTE = (
    "One verdict per model and partition. It is driven only by the calibrated tests (each with a stated null and a "
    "p-value that holds its level): contaminated when any test's Holm-adjusted p is at most 0.05, which keeps the "
    "family-wise false-positive rate at 0.05 per partition whatever the dependence between the tests. Each test shows "
    "its p-value, its Holm-adjusted p and the false-positive rate the null study measured for it; a test that fired is "
    "in bold. The papers' own verdicts (Time Travel Alg. 1 bootstrap, Alg. 2 with Judge A or B) are shown beside it "
    "unchanged and do not drive it; so are tests whose false-positive rate in the null study lies significantly above "
    "0.05 (today Time Travel's completion-style sign-flip test), marked as such.")


def partition_table(report: Report) -> str:
    rows = report.partitions
    kinds = layout.evidence_kinds(rows)
    header = "".join(f"<th>{e(h)}</th>" for h in ("model", "partition", "verdict", *kinds, "papers' own verdicts"))
    lines = []
    for row in rows:
        kind = "none" if row.flagged is None else "flag" if row.flagged else "ok"
        cells = [f"<td>{e(row.model)}</td>", f"<td>{e(row.partition)}</td>",
                 f'<td class="{kind}">{e(row.decision)}<small>{e(layout.partition_line(row))}</small></td>']
        for evidence_kind in kinds:
            mine = [(v, adjusted) for v, adjusted in row.evidence if layout.evidence_kind(v.family) == evidence_kind]
            text = "<br>".join((f"<b>{e(layout.evidence_line(v, adjusted))}</b>" if v in row.fired
                                else e(layout.evidence_line(v, adjusted))) for v, adjusted in mine)
            cells.append(f"<td>{text}</td>" if mine else '<td class="none">—</td>')
        papers = "<br>".join(f'<a href="#{anchor(v)}">{e(layout.papers_line(v))}</a>' for v in row.papers)
        papers += "".join(f'<br><a href="#{anchor(v)}">{e(layout.over_level_line(v))}</a>' for v in row.over_level)
        cells.append(f"<td>{papers}</td>" if row.papers or row.over_level else '<td class="none">—</td>')
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class=\"partitions\"><thead><tr>{header}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def models_table(report: Report) -> str:
    return table(("label", "model", "contamination injected", "directory"),
                 ((m.label, m.model, layout.model_description(dict(m.injection or {})) or "—", str(m.directory))
                  for m in report.models))


def by_task(verdicts: Iterable[Verdict]) -> dict[str, list[Verdict]]:
    grouped: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        grouped.setdefault(verdict.task, []).append(verdict)
    return grouped


def details(report: Report) -> str:
    parts = []
    for model in report.models:
        mine = [v for v in report.verdicts if v.model == model.label]
        if not mine:
            continue
        parts.append(f"<h3>{e(model.label)}</h3>")
        for row in layout.summary_rows(mine):
            parts.append(f"<h4>{e(row.partition)}</h4>")
            for verdicts in by_task(v for cell in row.cells.values() for v in cell).values():
                parts.append(renderer(verdicts[0].family).html(verdicts, anchor))
    return "".join(parts)


def render_html(report: Report) -> str:
    decided = layout.decided(report.verdicts)
    flagged = sum(row.flagged is True for row in report.partitions)
    partitions = len({v.partition for v in decided})
    summary = (summary_table(report) if decided else
               '<p class="note">No Time Travel or DCQ task in this run.</p>')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Contamination report — {e(report.source.name)}</title><style>{CSS}</style></head><body>"
        f"<h1>Contamination report</h1>"
        f'<p class="meta">{e(str(report.source))} · {len(report.models)} model(s) · {partitions} partition(s) · '
        f"{flagged} model × partition pair(s) contaminated by the per-partition verdict · lm-eval-contam {e(__version__)}</p>"
        + (f'<h2 id="verdicts">Verdict per partition</h2><p class="note">{e(PARTITION_NOTE)}</p>'
           f"{partition_table(report)}" if report.verdicts else "")
        + f'<h2 id="summary">Every method\'s verdict</h2>'
        '<p class="note">One row per model and partition; a red cell is a method flagging contamination. '
        "Each method decides on its own, against the null hypothesis and rule stated in its details below, where "
        "each also shows the false-positive rate the null study measured for it.</p>"
        f"{summary}<h2>Models</h2>{models_table(report)}"
        + (f'<h2 id="details">Details</h2>{details(report)}' if report.verdicts else "")
        + "</body></html>\n"
    )
