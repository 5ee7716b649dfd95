"""``lm-eval-contam report``: rebuild report.html and report.md from a run directory.

The directory is an ``lm-eval-contam audit`` output (with ``audit.json``) or any
lm-eval ``--output_path`` (one model per directory of ``results_*.json``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_contam.report import write_report


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write report.html (self-contained) and report.md from an audit or lm-eval output directory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("output_path", type=Path, help="the run's --output_path (or an audit directory)")
    parser.add_argument("--out", type=Path, default=None, help="where to write the two files (default: output_path)")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    written = write_report(args.output_path, out_dir=args.out)
    print(f"wrote {written.html_path}")
    print(f"wrote {written.md_path}")
    return 0
