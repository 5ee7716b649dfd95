"""``report.md``: the same report as Markdown, in the same order: the evidence matrix as a table of short cells, one
line per cell, each test's statement once, the models, the details (numbers instead of charts)."""

from __future__ import annotations

from lm_eval_contam.core.formatting import pvalue
from lm_eval_contam.core.install import __version__
from lm_eval_contam.core.registry import method_of
from lm_eval_contam.report import layout
from lm_eval_contam.report.model import Report
from lm_eval_contam.reportkit.mdkit import md, table
from lm_eval_contam.verdicts.detection_rates import clean_bill

MATRIX_NOTE = (
    "One row per model and partition: the per-partition verdict (contaminated when any test that drives it has a "
    "Holm-adjusted p ≤ 0.05), then each test's p-value (or a rule's decision). **Bold**: p ≤ 0.05 or the rule "
    "flagged; ⚑: fired in the verdict; _italic_: shown beside the verdict, not driving it; —: not run.")


def _verdict_cell(row: layout.MatrixRow) -> str:
    verdict = row.verdict
    decision = f"**{md(verdict.decision.upper())}**" if verdict.flagged else md(verdict.decision)
    note = f" — {md(clean_bill(verdict, short=True))}" if verdict.flagged is False else ""
    return decision + (f" (Holm {md(pvalue(verdict.pvalue))})" if verdict.pvalue is not None else "") + note


def _matrix_cell(cell: layout.MatrixCell) -> str:
    if not cell.verdicts:
        return "—"
    text = md(cell.text)
    text = f"**{text}**" if cell.shade in ("p3", "p2", "p1", "hit") else text
    text = f"_{text}_" if cell.aside else text
    return f"{text} ⚑" if cell.fired else text


def evidence_matrix(report: Report) -> list[str]:
    rows = report.partitions
    columns = layout.test_columns(report.verdicts, rows)
    grid = [[md(row.label), _verdict_cell(row), *(_matrix_cell(cell) for cell in row.cells)]
            for row in layout.matrix(rows, columns)]
    header = ["model / partition", "verdict per partition",
              *(md(column.label) if layout.drives(column, rows) else f"_{md(column.label)}_" for column in columns)]
    return [*table(header, grid), md(MATRIX_NOTE), ""]


def cell_table(report: Report) -> list[str]:
    rows = report.partitions
    columns = layout.test_columns(report.verdicts, rows)
    return table(["model / partition", "test", "result", "Holm p", "decision"],
                 [[md(row.label), md(layout.titled(verdict)), md(layout.cell_detail(verdict)),
                   md(layout.holm_text(cell)), md(layout.decision_text(verdict, cell))]
                  for row, column, verdict, cell in layout.cell_lines(layout.matrix(rows, columns), columns)])


def tests_section(report: Report) -> list[str]:
    rows = report.partitions
    lines = ["Stated once per test; the false-positive rate is the one the null study measured on never-seen "
             "partitions (95 % Clopper–Pearson interval).", "", "#### Verdict per partition", ""]
    lines += [f"- {md(key)}: {md(value)}" for key, value in layout.partition_facts(rows)] + [""]
    for column in layout.test_columns(report.verdicts, rows):
        lines += [f"#### {md(column.label)}", ""]
        lines += [f"- {md(key)}: {md(value)}" for key, value in layout.test_facts(column, rows)] + [""]
    return lines


def details(report: Report) -> list[str]:
    lines = ["## Details", ""]
    for model in report.models:
        mine = [v for v in report.verdicts if v.model == model.label]
        if not mine:
            continue
        lines += [f"### {md(model.label)}", ""]
        for partition, verdicts in layout.partition_groups(mine).items():
            lines += [f"#### {md(partition)}", ""]
            for found in layout.task_groups(verdicts).values():
                lines += method_of(found[0].family).section.markdown(found)
    return lines


def benchmark_section(report: Report) -> list[str]:
    """Each benchmark's own score, its DCR-adjusted one and its score with the options reordered (the gap and its p),
    on the first screen beside the verdicts."""
    scores = layout.benchmark_scores(report.models, report.audit)
    if not scores:
        return []
    return ["## Benchmark scores", "",
            *table(["model", "task", "metric", "score", md(layout.adjusted_heading()), md(layout.REORDERED_HEADING),
                    md(layout.GAP_HEADING), "scored with"],
                   [[md(s.model), md(s.task), md(s.metric), md(layout.score_text(s)), md(layout.adjusted_text(s)),
                     md(layout.reordered_text(s)), md(layout.gap_text(s)), md(s.scored_with)] for s in scores]),
            *([md(note), ""] if (note := layout.reordered_note(scores)) else [])]


def render_markdown(report: Report) -> str:
    lines = ["# Contamination report", "",
             f"{md(report.source)} · {len(report.models)} model(s) · lm-eval-contam {__version__}", ""]
    if left_out := layout.left_out_line(report.audit):
        lines += [f"_{md(left_out)}_", ""]
    lines += benchmark_section(report)
    if layout.decided(report.verdicts):
        lines += ["## Evidence per partition and test", "", *evidence_matrix(report)]
        lines += ["## One line per cell", "", *cell_table(report)]
        lines += ["## The tests: null hypothesis, rule, measured rates", "", *tests_section(report)]
    else:
        lines += [f"_{md(layout.nothing_to_decide())}_", ""]
    lines += ["## Models", ""]
    lines += table(["label", "model", "reference model", "contamination injected"],
                   [[md(m.label), md(m.model), md(layout.reference_description(m)),
                     md(layout.model_description(dict(m.injection or {})) or "—")] for m in report.models])
    if report.verdicts:
        lines += details(report)
    return "\n".join(lines).rstrip() + "\n"
