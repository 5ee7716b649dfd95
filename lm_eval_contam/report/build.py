"""Building the report from a run directory and writing ``report.html`` + ``report.md``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.rundir import load_run
from lm_eval_contam.methods.catalogue import load_methods
from lm_eval_contam.report.html import render_html
from lm_eval_contam.report.layout import partition_statement
from lm_eval_contam.report.markdown import render_markdown
from lm_eval_contam.report.model import Report
from lm_eval_contam.verdicts.verdict import collect

HTML_NAME = "report.html"
MD_NAME = "report.md"


@dataclass(frozen=True)
class WrittenReport:
    html_path: Path
    md_path: Path
    report: Report


def build_report(path: str | Path) -> Report:
    """Read a run directory (audit or plain lm-eval output path) into a :class:`Report`."""
    load_methods()  # its tasks' methods read their verdicts and draw their sections
    run = load_run(path)
    return Report(source=run.path.resolve(), models=run.models, verdicts=tuple(collect(run)), audit=run.audit)


def write_report(path: str | Path, out_dir: str | Path | None = None) -> WrittenReport:
    """Build the report of ``path`` and write ``report.html`` and ``report.md`` into ``out_dir`` (default: ``path``)."""
    report = build_report(path)
    target = Path(out_dir) if out_dir is not None else Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
        html_path, md_path = target / HTML_NAME, target / MD_NAME
        html_path.write_text(render_html(report), encoding="utf-8")
        md_path.write_text(render_markdown(report), encoding="utf-8")
    except OSError as error:
        raise ContamError(f"cannot write the report: {error.strerror or error}", source=str(target),
                          field="--out") from None
    return WrittenReport(html_path=html_path, md_path=md_path, report=report)


def partition_statements(path: str | Path) -> list[str]:
    """One console line per model x partition verdict of ``path`` (what a "not flagged" is worth included)."""
    return [partition_statement(row) for row in build_report(path).partitions]
