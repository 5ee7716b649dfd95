"""``report.html``: one self-contained page (inline CSS and SVG, no scripts, no external assets).

Every piece of model output and data text goes through :func:`html.escape`. The
page opens with the evidence matrix (model × partition rows, one column per test,
the per-partition verdict first), then one short line per cell, each test's null,
rule and measured rates stated once, the models and the details; each method's
details come from its own renderer (``lm_eval_contam.report.methods``). No table
is wider than the page: wide ones scroll inside their own box.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lm_eval_contam.core.formatting import pvalue
from lm_eval_contam.core.install import __version__
from lm_eval_contam.core.registry import method_of
from lm_eval_contam.report import layout
from lm_eval_contam.report.model import Report
from lm_eval_contam.reportkit.htmlkit import anchor, e, scroll, table
from lm_eval_contam.verdicts.detection_rates import clean_bill

CSS = """
:root { --ink:#222; --muted:#666; --line:#ddd; --flag:#fbe3e4; --flag-ink:#8e1b21; --ok:#eaf5ec; --ok-ink:#1d5e2c; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 auto;
       max-width: 1200px; padding: 16px 24px; overflow-wrap: break-word; }
h1 { font-size: 22px; margin: 0 0 2px; } h2 { margin-top: 32px; border-bottom: 2px solid var(--line); }
h3 { margin-top: 28px; } h4 { margin: 20px 0 8px; } h5 { font-size: 14px; margin: 16px 0 6px; color: #333; }
.meta, .note { color: var(--muted); } .meta { margin: 0 0 10px; font-size: 13px; }
.scroll { max-width: 100%; overflow-x: auto; margin: 8px 0 16px; }
.scroll.tall { max-height: 360px; overflow-y: auto; border: 1px solid var(--line); }
.scroll > table { margin: 0; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
.scroll.tall th { position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.text { white-space: pre-wrap; word-break: break-word; max-width: 320px; font-size: 13px; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.charts svg { max-width: 100%; height: auto; }
.match-exact { color: var(--flag-ink); font-weight: 600; } .match-near_exact { color: #a35c00; font-weight: 600; }
details { margin: 8px 0 16px; } summary { cursor: pointer; color: #2a5599; }
.badge { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; }
.badge.flag { background: var(--flag); color: var(--flag-ink); } .badge.ok { background: var(--ok); color: var(--ok-ink); }
.badge.none { background: #eee; color: var(--muted); }
table.matrix { table-layout: fixed; width: 100%; border-collapse: separate; border-spacing: 2px; }
table.matrix th, table.matrix td { border: none; padding: 4px 3px; text-align: center; vertical-align: middle; }
table.matrix th { background: none; font-size: 10px; font-weight: 600; line-height: 1.2; vertical-align: bottom; }
table.matrix th.group { font-size: 12px; border-bottom: 2px solid var(--line); }
table.matrix th.row, table.matrix td.row { text-align: left; font-size: 12px; width: 9%; }
table.matrix th.verdict, table.matrix td.verdict { width: 8%; }
table.matrix td { font-size: 12px; font-variant-numeric: tabular-nums; height: 30px; }
table.matrix th a { color: inherit; text-decoration: none; }
table.matrix td a { color: inherit; text-decoration: none; display: block; }
table.matrix small { display: block; font-size: 10px; font-weight: normal; }
table.matrix th small { color: var(--muted); }
td.flag { background: #8e1b21; color: #fff; font-weight: 700; } td.ok { background: var(--ok); color: var(--ok-ink); }
td.undecided { background: #eee; color: var(--muted); }
.p3 { background: #b2182b; color: #fff; } .p2 { background: #d6604d; color: #fff; } .p1 { background: #f4a582; }
.p0 { background: #e8eef4; color: #345; } .hit { background: #d6604d; color: #fff; } .miss { background: #e8eef4; color: #345; }
td.none { background: #f7f7f7; color: #bbb; }
td.aside { font-style: italic; background-image: repeating-linear-gradient(135deg, rgba(255,255,255,.35) 0 3px,
           transparent 3px 7px); }
td.fired { box-shadow: inset 0 0 0 2px #111; font-weight: 700; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: var(--muted); margin: 2px 0 6px; }
.legend span.key { display: inline-block; width: 22px; height: 12px; vertical-align: -2px; margin-right: 4px;
                   border: 1px solid #ccc; }
dl.test { margin: 4px 0 14px; } dl.test dt { font-weight: 600; margin-top: 10px; }
dl.test dd { margin: 2px 0 0 16px; } dl.test dd b { font-weight: 600; color: #444; }
"""

MATRIX_NOTE = (
    "One row per model and partition. First column: the per-partition verdict (contaminated when any test that drives "
    "it has a Holm-adjusted p ≤ 0.05). Then one column per test, its cell coloured by the test's p-value (or, for a "
    "rule without one, by its decision); a cell with a black frame fired in the verdict; hatched italic cells are "
    "shown beside the verdict and do not drive it (the papers' own decisions, tests over their level). Hover a cell "
    "or a test for its numbers; each test's null, rule and measured false-positive rate are stated once, below.")

LEGEND = (("p3", "p ≤ 0.001"), ("p2", "p ≤ 0.01"), ("p1", "p ≤ 0.05"), ("p0", "p > 0.05"),
          ("hit", "rule flagged"), ("miss", "rule not flagged"), ("none", "not run"))


def _verdict_cell(row: layout.MatrixRow) -> str:
    verdict = row.verdict
    kind = "undecided" if verdict.flagged is None else "flag" if verdict.flagged else "ok"
    small = "no calibrated test" if verdict.pvalue is None else f"Holm {pvalue(verdict.pvalue)}"
    if verdict.flagged is False:
        small += f" — {clean_bill(verdict, short=True)}"
    return (f'<td class="verdict {kind}" title="{e(layout.partition_line(verdict))}">{e(verdict.decision)}'
            f"<small>{e(small)}</small></td>")


def _matrix_cell(cell: layout.MatrixCell) -> str:
    if not cell.verdicts:
        return '<td class="none" title="not run">—</td>'
    classes = " ".join(part for part in (cell.shade, "fired" if cell.fired else "", "aside" if cell.aside else "")
                       if part)
    return (f'<td class="{classes}" title="{e(cell.tooltip())}"><a href="#{anchor(cell.verdicts[0])}">'
            f"{e(cell.text)}</a></td>")


def _test_header(column: layout.TestColumn) -> str:
    variant = f"<small>{e(column.variant)}</small>" if column.variant else ""
    return f'<th><a href="#{column.anchor}">{e(column.title)}{variant}</a></th>'


def evidence_matrix(report: Report) -> str:
    rows = report.partitions
    columns = layout.test_columns(report.verdicts, rows)
    grid = layout.matrix(rows, columns)
    driving = sum(layout.drives(column, rows) for column in columns)
    groups = "".join(f'<th class="group" colspan="{count}">{e(name)}</th>' for name, count in (
        ("drive the verdict", driving), ("shown beside, not driving", len(columns) - driving)) if count)
    header = (f'<tr><th class="row" rowspan="2">model / partition</th><th class="verdict" rowspan="2">verdict per '
              f"partition</th>{groups}</tr><tr>{''.join(_test_header(column) for column in columns)}</tr>")
    body = "".join(f'<tr><td class="row">{e(row.verdict.model)}<small>{e(row.verdict.partition)}</small></td>'
                   + _verdict_cell(row) + "".join(_matrix_cell(cell) for cell in row.cells) + "</tr>" for row in grid)
    legend = "".join(f'<span><span class="key {kind}"></span>{e(text)}</span>' for kind, text in LEGEND)
    return (scroll(f'<table class="matrix"><thead>{header}</thead><tbody>{body}</tbody></table>')
            + f'<div class="legend">{legend}</div><p class="note">{e(MATRIX_NOTE)}</p>')


def cell_table(report: Report) -> str:
    rows = report.partitions
    columns = layout.test_columns(report.verdicts, rows)
    lines = [(f"{e(row.label)}", f'<a href="#{column.anchor}">{e(layout.titled(verdict))}</a>',
              f'<a href="#{anchor(verdict)}">{e(layout.cell_detail(verdict))}</a>', e(layout.holm_text(cell)),
              e(layout.decision_text(verdict, cell)))
             for row, column, verdict, cell in layout.cell_lines(layout.matrix(rows, columns), columns)]
    return scroll(table(("model / partition", "test", "result", "Holm p", "decision"), lines, raw=True), tall=True)


def _statement(name: str, anchor_id: str, facts: Iterable[tuple[str, str]]) -> str:
    return (f'<dt id="{anchor_id}">{e(name)}</dt>'
            + "".join(f"<dd><b>{e(key)}:</b> {e(value)}</dd>" for key, value in facts))


def tests_section(report: Report) -> str:
    rows = report.partitions
    columns = layout.test_columns(report.verdicts, rows)
    return ('<dl class="test">' + _statement("Verdict per partition", "t-partition", layout.partition_facts(rows))
            + "".join(_statement(column.label, column.anchor, layout.test_facts(column, rows)) for column in columns)
            + "</dl>")


def models_table(report: Report) -> str:
    return table(("label", "model", "reference model", "contamination injected", "directory"),
                 ((m.label, m.model, layout.reference_description(m),
                   layout.model_description(dict(m.injection or {})) or "—", str(m.directory)) for m in report.models))


def details(report: Report) -> str:
    parts = []
    for model in report.models:
        mine = [v for v in report.verdicts if v.model == model.label]
        if not mine:
            continue
        parts.append(f"<h3>{e(model.label)}</h3>")
        for partition, verdicts in layout.partition_groups(mine).items():
            parts.append(f"<h4>{e(partition)}</h4>")
            for found in layout.task_groups(verdicts).values():
                parts.append(method_of(found[0].family).section.html(found, anchor))
    return "".join(parts)


def _sections(report: Report) -> Sequence[str]:
    if not layout.decided(report.verdicts):
        return (f'<p class="note">{e(layout.nothing_to_decide())}</p>',)
    return (f'<h2 id="matrix">Evidence per partition and test</h2>{evidence_matrix(report)}',
            '<h2 id="cells">One line per cell</h2>' + cell_table(report),
            '<h2 id="tests">The tests: null hypothesis, rule, measured rates</h2>'
            '<p class="note">Stated once per test; the false-positive rate is the one the null study measured on '
            "never-seen partitions (95 % Clopper–Pearson interval).</p>" + tests_section(report))


def benchmark_section(report: Report) -> str:
    """Each benchmark's own score, its DCR-adjusted one and its score with the options reordered (the gap and its p),
    on the first screen beside the verdicts."""
    scores = layout.benchmark_scores(report.models, report.audit)
    if not scores:
        return ""
    return ('<h2 id="benchmarks">Benchmark scores</h2>'
            + table(("model", "task", "metric", "score", layout.adjusted_heading(), layout.REORDERED_HEADING,
                     layout.GAP_HEADING, "scored with"),
                    ((s.model, s.task, s.metric, layout.score_text(s), layout.adjusted_text(s),
                      layout.reordered_text(s), layout.gap_text(s), s.scored_with)
                     for s in scores))
            + (f'<p class="note">{e(note)}</p>' if (note := layout.reordered_note(scores)) else ""))


def render_html(report: Report) -> str:
    flagged = sum(row.flagged is True for row in report.partitions)
    partitions = len({v.partition for v in layout.decided(report.verdicts)})
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Contamination report — {e(report.source.name)}</title><style>{CSS}</style></head><body>"
        f"<h1>Contamination report</h1>"
        f'<p class="meta">{e(str(report.source))} · {len(report.models)} model(s) · {partitions} partition(s) · '
        f"{flagged} model × partition pair(s) contaminated by the per-partition verdict · lm-eval-contam {e(__version__)}</p>"
        + (f'<p class="note">{e(left_out)}</p>' if (left_out := layout.left_out_line(report.audit)) else "")
        + benchmark_section(report)
        + "".join(_sections(report))
        + f"<h2>Models</h2>{models_table(report)}"
        + (f'<h2 id="details">Details</h2>{details(report)}' if report.verdicts else "")
        + "</body></html>\n"
    )
