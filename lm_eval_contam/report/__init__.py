"""The contamination report: ``report.html`` (self-contained) and ``report.md`` from a run directory.

``build_report(path)`` reads an audit directory or lm-eval output path(s) into a
:class:`Report` whose verdicts each method decided
(:func:`lm_eval_contam.verdicts.verdict.collect`); ``write_report(path, out_dir=None)``
writes both files (into ``path`` by default).
"""

from __future__ import annotations

from lm_eval_contam.report.build import WrittenReport, build_report, partition_statements, write_report
from lm_eval_contam.report.model import Report

__all__ = ["Report", "WrittenReport", "build_report", "partition_statements", "write_report"]
