"""The report object (everything the renderers show) and writing ``report.html`` + ``report.md``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_contam.errors import ContamError
from lm_eval_contam.report.load import ModelRun, load_run
from lm_eval_contam.report.summary import (
    DCRResults,
    TimeTravelInstance,
    Verdict,
    dcr_results,
    timetravel_instances,
    verdicts,
)

HTML_NAME = "report.html"
MD_NAME = "report.md"


@dataclass(frozen=True)
class Report:
    source: Path
    models: tuple[ModelRun, ...]
    verdicts: tuple[Verdict, ...]
    # (model label, Time Travel task) → its per-instance rows
    instances: Mapping[tuple[str, str], tuple[TimeTravelInstance, ...]]
    dcr: DCRResults
    audit: Mapping[str, Any] | None = None

    def html(self) -> str:
        from lm_eval_contam.report.html import render_html

        return render_html(self)

    def markdown(self) -> str:
        from lm_eval_contam.report.markdown import render_markdown

        return render_markdown(self)


@dataclass(frozen=True)
class WrittenReport:
    html_path: Path
    md_path: Path
    report: Report


def build_report(path: str | Path) -> Report:
    """Read a run directory (audit or plain lm-eval output path) into a :class:`Report`."""
    run = load_run(path)
    found = verdicts(run)
    by_label = {model.label: model for model in run.models}
    tt_tasks = sorted({(v.model, v.task) for v in found if v.method.startswith("tt_")})
    instances = {(label, task): tuple(timetravel_instances(by_label[label], task)) for label, task in tt_tasks}
    return Report(source=run.path.resolve(), models=run.models, verdicts=tuple(found), instances=instances,
                  dcr=dcr_results(run), audit=run.audit)


def write_report(path: str | Path, out_dir: str | Path | None = None) -> WrittenReport:
    """Build the report of ``path`` and write ``report.html`` and ``report.md`` into ``out_dir`` (default: ``path``)."""
    report = build_report(path)
    target = Path(out_dir) if out_dir is not None else Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
        html_path, md_path = target / HTML_NAME, target / MD_NAME
        html_path.write_text(report.html(), encoding="utf-8")
        md_path.write_text(report.markdown(), encoding="utf-8")
    except OSError as error:
        raise ContamError(f"cannot write the report: {error.strerror or error}", source=str(target),
                          field="--out") from None
    return WrittenReport(html_path=html_path, md_path=md_path, report=report)
