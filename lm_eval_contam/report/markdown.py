"""``report.md``: the same report as Markdown tables (numbers instead of charts)."""

from __future__ import annotations

from lm_eval_contam import __version__
from lm_eval_contam.report import layout
from lm_eval_contam.report.html import PARTITION_NOTE, by_task
from lm_eval_contam.report.mdkit import md, table
from lm_eval_contam.report.methods import renderer
from lm_eval_contam.report.model import Report


def summary_table(report: Report) -> list[str]:
    columns = layout.summary_columns(report.verdicts)
    rows = []
    for row in layout.summary_rows(layout.decided(report.verdicts)):
        cells = [md(row.model), md(row.partition)]
        for method, _ in columns:
            found = row.cells.get(method, ())
            cells.append("; ".join(
                (f"**{md(v.decision.upper())}**" if v.flagged else md(v.decision))
                + f" ({md(layout.cell_detail(v))})" for v in found) or "—")
        rows.append(cells)
    return table(["model", "partition", *(md(title) for _, title in columns)], rows)


def partition_table(report: Report) -> list[str]:
    rows = report.partitions
    kinds = layout.evidence_kinds(rows)
    lines = []
    for row in rows:
        verdict = f"**{row.decision.upper()}**" if row.flagged else md(row.decision)
        cells = [md(row.model), md(row.partition), f"{verdict} ({md(layout.partition_line(row))})"]
        for evidence_kind in kinds:
            mine = [(v, adjusted) for v, adjusted in row.evidence if layout.evidence_kind(v.family) == evidence_kind]
            cells.append("; ".join((f"**{md(layout.evidence_line(v, adjusted))}**" if v in row.fired
                                    else md(layout.evidence_line(v, adjusted))) for v, adjusted in mine) or "—")
        cells.append("; ".join([*(md(layout.papers_line(v)) for v in row.papers),
                                *(md(layout.over_level_line(v)) for v in row.over_level)]) or "—")
        lines.append(cells)
    return table(["model", "partition", "verdict", *(md(kind) for kind in kinds), "papers' own verdicts"], lines)


def details(report: Report) -> list[str]:
    lines = ["## Details", ""]
    for model in report.models:
        mine = [v for v in report.verdicts if v.model == model.label]
        if not mine:
            continue
        lines += [f"### {md(model.label)}", ""]
        for row in layout.summary_rows(mine):
            lines += [f"#### {md(row.partition)}", ""]
            for verdicts in by_task(v for cell in row.cells.values() for v in cell).values():
                lines += renderer(verdicts[0].family).markdown(verdicts)
    return lines


def render_markdown(report: Report) -> str:
    lines = ["# Contamination report", "",
             f"{md(report.source)} · {len(report.models)} model(s) · lm-eval-contam {__version__}", ""]
    if report.verdicts:
        lines += ["## Verdict per partition", "", md(PARTITION_NOTE), "", *partition_table(report)]
    lines += ["## Every method's verdict", ""]
    lines += summary_table(report) if layout.decided(report.verdicts) else ["_No Time Travel or DCQ task in this run._", ""]
    lines += ["## Models", ""]
    lines += table(["label", "model", "contamination injected"],
                   [[md(m.label), md(m.model), md(layout.model_description(dict(m.injection or {})) or "—")]
                    for m in report.models])
    if report.verdicts:
        lines += details(report)
    return "\n".join(lines).rstrip() + "\n"
