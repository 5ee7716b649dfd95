"""``report.html``: one self-contained page (inline CSS and SVG, no scripts, no external assets).

Every piece of model output and data text goes through :func:`html.escape`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from lm_eval_contam import __version__
from lm_eval_contam.dcq.quiz import LETTERS, POSITIONS
from lm_eval_contam.report import charts, layout
from lm_eval_contam.report.build import Report
from lm_eval_contam.report.summary import (
    METHOD_NAMES,
    AdjustedMetric,
    DCRSheet,
    TimeTravelInstance,
    Verdict,
)

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
"""


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], *, raw: bool = False) -> str:
    """A table; cells are escaped unless ``raw`` (then the caller built them from escaped parts)."""
    head = "".join(f"<th>{e(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell if raw else e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _badge(flagged: bool) -> str:
    return f'<span class="badge {"flag" if flagged else "ok"}">{e("contaminated" if flagged else "not flagged")}</span>'


def _anchor(verdict: Verdict) -> str:
    return "d-" + "".join(ch if ch.isalnum() else "-" for ch in f"{verdict.model}-{verdict.task}")


def summary_table(report: Report) -> str:
    methods = layout.methods_present(report.verdicts)
    header = "".join(f"<th>{e(h)}</th>" for h in ("model", "partition", *(METHOD_NAMES[m] for m in methods)))
    lines = []
    for row in layout.summary_rows(report.verdicts):
        cells = [f"<td>{e(row.model)}</td>", f"<td>{e(row.partition)}</td>"]
        for method in methods:
            found = row.cells.get(method, ())
            if not found:
                cells.append('<td class="none">—</td>')
                continue
            flagged = any(v.flagged for v in found)
            text = "".join(f'<a href="#{_anchor(v)}">{e(layout.decision(v))}</a><small>{e(layout.cell_detail(v))}</small>'
                           for v in found)
            cells.append(f'<td class="{"flag" if flagged else "ok"}">{text}</td>')
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class=\"summary\"><thead><tr>{header}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def models_table(report: Report) -> str:
    return _table(("label", "model", "contamination injected", "directory"),
                  ((m.label, m.model, layout.model_description(dict(m.injection or {})) or "—", str(m.directory))
                   for m in report.models))


def _facts(verdicts: Sequence[Verdict]) -> str:
    rows = []
    for verdict in verdicts:
        facts = [(k, v) for k, v in layout.verdict_facts(verdict) if k not in ("task", "verdict")]
        rows.append((e(METHOD_NAMES[verdict.method]), _badge(verdict.flagged),
                     "<br>".join(f"{e(name)}: <b>{e(value)}</b>" for name, value in facts)))
    return _table(("method", "verdict", "numbers"), rows, raw=True)


def _match(value: str | None) -> str:
    if value is None:
        return "—"
    return f'<span class="match-{e(value)}">{e(layout.MATCH_NAMES.get(value, value))}</span>'


def _text_cell(text: str) -> str:
    return e(text) if text else '<span class="note">(empty)</span>'


def instance_table(instances: Sequence[TimeTravelInstance]) -> str:
    with_b = any(row.judge_b is not None for row in instances)
    header = ["doc", "first piece", "reference (second piece)", "guided completion", "general completion",
              "ROUGE-L guided", "ROUGE-L general", "match (Judge A)"] + (["match (Judge B)"] if with_b else [])
    lines = []
    for row in instances:
        cells = [f'<td class="num">{row.doc_id}</td>',
                 *(f'<td><div class="text">{_text_cell(text)}</div></td>'
                   for text in (row.first_piece, row.reference, row.guided, row.general)),
                 f'<td class="num">{e(layout.number(row.rouge_guided))}</td>',
                 f'<td class="num">{e(layout.number(row.rouge_general))}</td>',
                 f"<td>{_match(row.judge_a)}</td>"] + ([f"<td>{_match(row.judge_b)}</td>"] if with_b else [])
        lines.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def timetravel_section(report: Report, verdicts: Sequence[Verdict]) -> str:
    first = verdicts[0]
    instances = report.instances.get((first.model, first.task), ())
    variant = f" ({first.variant} prompts)" if first.variant else ""
    parts = [f'<h5 id="{_anchor(first)}">Time Travel — <code>{e(first.task)}</code>{e(variant)}</h5>', _facts(verdicts)]
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


def dcq_section(verdict: Verdict) -> str:
    bdq_labels = [f"{letter} (none)" if letter == LETTERS[-1] else letter for letter in LETTERS]
    return (
        f'<h5 id="{_anchor(verdict)}">{e(METHOD_NAMES[verdict.method])} — <code>{e(verdict.task)}</code></h5>'
        + _facts([verdict])
        + '<div class="charts">'
        + charts.bar_chart(bdq_labels, verdict.bdq_pick_rates or (), title="BDQ: share of picks per option",
                           y_max=1.0, y_label="pick rate", color=charts.PALETTE[2])
        + charts.bar_chart(list(POSITIONS), verdict.bcq_hit_rates or (),
                           title="BCQ: original picked, by its slot", y_max=1.0, y_label="hit rate",
                           color=charts.HIGHLIGHT)
        + "</div>"
        + '<p class="note">BDQ (green, the paper\'s Figure 2 style): only E, "none of the provided options", is '
          "correct, since every option is a word-level perturbation of the instance. BCQ (red): how often the model "
          "picked the original instance when it sat in slot A, B, C or D; a hit rate well above the BDQ pick rate "
          "of the same slot signals that the model has seen the instance.</p>"
    )


def _by_task(verdicts: Iterable[Verdict]) -> dict[str, list[Verdict]]:
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
            for verdicts in _by_task(v for cell in row.cells.values() for v in cell).values():
                is_tt = verdicts[0].method.startswith("tt_")
                parts.append(timetravel_section(report, verdicts) if is_tt else dcq_section(verdicts[0]))
    return "".join(parts)


def _sheet_block(sheet: DCRSheet) -> str:
    levels = [f"L{level}" for level in (1, 2, 3, 4)]
    return (
        f"<h4>Sheet <code>{e(sheet.sheet)}</code></h4>"
        f"<p>DCR Factor: <b>{e(layout.number(sheet.factor))}</b> {e(layout.interval(sheet.factor_ci))}</p>"
        + charts.bar_chart(levels, list(sheet.level_scores), title="DCR level scores S1–S4", y_max=1.0,
                           y_label="share contaminated")
    )


def _adjusted_block(rows: Sequence[AdjustedMetric]) -> str:
    names = [f"{row.task} {row.metric}" for row in rows]
    chart = charts.grouped_bar_chart(
        names,
        [charts.Series("raw", tuple(r.raw for r in rows), tuple(r.raw_stderr for r in rows)),
         charts.Series("DCR-adjusted", tuple(r.adjusted for r in rows), tuple(r.adjusted_stderr for r in rows))],
        title="raw vs DCR-adjusted", y_max=1.0, y_label="score (± stderr)",
    )
    table = _table(("task", "metric", "raw", "adjusted", "DCR Factor"),
                   ((r.task, r.metric, f"{layout.number(r.raw)} ± {layout.number(r.raw_stderr)}",
                     f"{layout.number(r.adjusted)} ± {layout.number(r.adjusted_stderr)}",
                     f"{layout.number(r.factor)} {layout.interval(r.factor_ci)}") for r in rows))
    return "<h4>Adjusted accuracy</h4>" + chart + table


def dcr_section(report: Report) -> str:
    if not report.dcr.sheets and not report.dcr.adjusted:
        return ""
    parts = ['<h2 id="dcr">DCR: contamination risk and adjusted accuracy</h2>',
             ('<p class="note">Each level score is the share of items a model completed from memory; the fuzzy '
              "DCR Factor combines them, and <code>acc_adj = acc × (1 − factor)</code>.</p>")]
    for model in report.models:
        blocks = [_sheet_block(sheet) for sheet in report.dcr.sheets if sheet.model == model.label]
        rows = [row for row in report.dcr.adjusted if row.model == model.label]
        if rows:
            blocks.append(_adjusted_block(rows))
        if blocks:
            parts.append(f"<h3>{e(model.label)}</h3>" + '<div class="charts">' + "".join(
                f"<div>{block}</div>" for block in blocks) + "</div>")
    return "".join(parts)


def render_html(report: Report) -> str:
    flagged = sum(row.flagged for row in layout.summary_rows(report.verdicts))
    partitions = len({v.partition for v in report.verdicts})
    summary = (summary_table(report) if report.verdicts else
               '<p class="note">No Time Travel or DCQ task in this run.</p>')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Contamination report — {e(report.source.name)}</title><style>{CSS}</style></head><body>"
        f"<h1>Contamination report</h1>"
        f'<p class="meta">{e(str(report.source))} · {len(report.models)} model(s) · {partitions} partition(s) · '
        f"{flagged} model × partition pair(s) flagged by at least one method · lm-eval-contam {e(__version__)}</p>"
        f'<h2 id="summary">Summary</h2>'
        '<p class="note">One row per model and partition; a red cell is a method flagging contamination. '
        "Time Travel and DCQ each decide on their own; see the details below each.</p>"
        f"{summary}<h2>Models</h2>{models_table(report)}"
        f"{dcr_section(report)}"
        + (f'<h2 id="details">Details</h2>{details(report)}' if report.verdicts else "")
        + "</body></html>\n"
    )
