"""``report.md``: the same report as Markdown tables (numbers instead of charts).

Data and model text pass through :func:`md`: no HTML gets through (``<``, ``>``
and ``&`` become entities) and table pipes and newlines cannot break a table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lm_eval_contam import __version__
from lm_eval_contam.dcq.quiz import LETTERS
from lm_eval_contam.report import layout
from lm_eval_contam.report.build import Report
from lm_eval_contam.report.summary import METHOD_NAMES, TimeTravelInstance, Verdict


def md(value: object) -> str:
    """Text safe inside a Markdown table cell."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    return " ⏎ ".join(line for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Lines of a Markdown table; cells must already be escaped with :func:`md`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def summary_table(report: Report) -> list[str]:
    methods = layout.methods_present(report.verdicts)
    rows = []
    for row in layout.summary_rows(report.verdicts):
        cells = [md(row.model), md(row.partition)]
        for method in methods:
            found = row.cells.get(method, ())
            cells.append("; ".join(
                (f"**{md(layout.decision(v).upper())}**" if v.flagged else md(layout.decision(v)))
                + f" ({md(layout.cell_detail(v))})" for v in found) or "—")
        rows.append(cells)
    return table(["model", "partition", *(md(METHOD_NAMES[m]) for m in methods)], rows)


def _facts(verdicts: Sequence[Verdict]) -> list[str]:
    rows = []
    for verdict in verdicts:
        facts = [(k, v) for k, v in layout.verdict_facts(verdict) if k not in ("task", "verdict")]
        decision = layout.decision(verdict)
        rows.append([md(METHOD_NAMES[verdict.method]), f"**{md(decision)}**" if verdict.flagged else md(decision),
                     "; ".join(f"{md(name)}: {md(value)}" for name, value in facts)])
    return table(["method", "verdict", "numbers"], rows)


def instance_table(instances: Sequence[TimeTravelInstance]) -> list[str]:
    with_b = any(row.judge_b is not None for row in instances)
    header = ["doc", "first piece", "reference", "guided completion", "general completion", "ROUGE-L guided",
              "ROUGE-L general", "Judge A"] + (["Judge B"] if with_b else [])
    rows = [[str(row.doc_id), *(md(text) if text else "_(empty)_"
                                for text in (row.first_piece, row.reference, row.guided, row.general)),
             layout.number(row.rouge_guided), layout.number(row.rouge_general),
             md(layout.MATCH_NAMES.get(row.judge_a, row.judge_a))]
            + ([md(layout.MATCH_NAMES.get(row.judge_b, row.judge_b) if row.judge_b else "—")] if with_b else [])
            for row in instances]
    return table(header, rows)


def task_section(report: Report, verdicts: Sequence[Verdict]) -> list[str]:
    first = verdicts[0]
    if first.method.startswith("tt_"):
        variant = f" ({first.variant} prompts)" if first.variant else ""
        lines = [f"##### Time Travel — {md(first.task)}{md(variant)}", "", *_facts(verdicts)]
        instances = report.instances.get((first.model, first.task), ())
        return lines + (instance_table(instances) if instances else ["_No logged samples for this task._", ""])
    rates = table(["quiz", *LETTERS],
                  [["BDQ pick rate", *(layout.number(v) for v in first.bdq_pick_rates or ())],
                   ["BCQ hit rate (original in slot)", *(layout.number(v) for v in first.bcq_hit_rates or ()), "—"]])
    return [f"##### {md(METHOD_NAMES[first.method])} — {md(first.task)}", "", *_facts([first]), *rates]


def dcr_section(report: Report) -> list[str]:
    if not report.dcr.sheets and not report.dcr.adjusted:
        return []
    lines = ["## DCR: contamination risk and adjusted accuracy", ""]
    if report.dcr.sheets:
        lines += table(["model", "sheet", "S1", "S2", "S3", "S4", "DCR Factor"],
                       [[md(s.model), md(s.sheet), *(layout.number(v) for v in s.level_scores),
                         md(f"{layout.number(s.factor)} {layout.interval(s.factor_ci)}")] for s in report.dcr.sheets])
    if report.dcr.adjusted:
        lines += table(["model", "task", "metric", "raw", "adjusted", "DCR Factor"],
                       [[md(r.model), md(r.task), md(r.metric), md(f"{layout.number(r.raw)} ± {layout.number(r.raw_stderr)}"),
                         md(f"{layout.number(r.adjusted)} ± {layout.number(r.adjusted_stderr)}"),
                         md(f"{layout.number(r.factor)} {layout.interval(r.factor_ci)}")] for r in report.dcr.adjusted])
    return lines


def details(report: Report) -> list[str]:
    lines = ["## Details", ""]
    for model in report.models:
        mine = [v for v in report.verdicts if v.model == model.label]
        if not mine:
            continue
        lines += [f"### {md(model.label)}", ""]
        for row in layout.summary_rows(mine):
            lines += [f"#### {md(row.partition)}", ""]
            by_task: dict[str, list[Verdict]] = {}
            for verdict in (v for cell in row.cells.values() for v in cell):
                by_task.setdefault(verdict.task, []).append(verdict)
            for verdicts in by_task.values():
                lines += task_section(report, verdicts)
    return lines


def render_markdown(report: Report) -> str:
    lines = ["# Contamination report", "",
             f"{md(report.source)} · {len(report.models)} model(s) · lm-eval-contam {__version__}", "",
             "## Summary", ""]
    lines += summary_table(report) if report.verdicts else ["_No Time Travel or DCQ task in this run._", ""]
    lines += ["## Models", ""]
    lines += table(["label", "model", "contamination injected"],
                   [[md(m.label), md(m.model), md(layout.model_description(dict(m.injection or {})) or "—")]
                    for m in report.models])
    lines += dcr_section(report)
    if report.verdicts:
        lines += details(report)
    return "\n".join(lines).rstrip() + "\n"
