"""The contamination report: ``report.html`` (self-contained) and ``report.md`` from a run directory.

``build_report(path)`` reads an audit directory or lm-eval output path(s) into a
:class:`Report`; ``write_report(path, out_dir=None)`` writes both files (into
``path`` by default). :func:`lm_eval_contam.report.summary.verdicts` gives the
verdict records alone, without rendering.
"""

from __future__ import annotations

from lm_eval_contam.report.build import (
    Report,
    WrittenReport,
    build_report,
    write_report,
)
from lm_eval_contam.report.summary import Verdict, verdicts

__all__ = ["Report", "Verdict", "WrittenReport", "build_report", "verdicts", "write_report"]
