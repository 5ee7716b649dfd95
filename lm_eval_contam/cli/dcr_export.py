"""``lm-eval-contam dcr-export``: the DCR items of a run as a CSV for a person to check.

Needs a run made with ``--log_samples``. The ``contaminated`` column is pre-filled
with the automatic Check result and empty where a person must decide (manual
checks, unparseable judge replies); fill it with 1/0 and pass the file to
``lm-eval-contam adjust <output_path> --check-csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.rundir import read_results, results_files
from lm_eval_contam.methods.dcr.check_csv import logged_check_rows, write_check_csv
from lm_eval_contam.methods.dcr.results import dcr_level_tasks


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dcr-export", help="export a run's DCR prompts/responses to a CSV for manual checks",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output_path", help="lm-eval --output_path directory, or one results JSON file")
    parser.add_argument("--out", required=True, help="CSV file to write (a new file unless --force)")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    if Path(args.out).exists() and not args.force:
        raise ContamError("already exists (it may hold a person's decisions); use a new name or --force",
                          source=str(args.out), field="--out")
    rows = []
    for results_file in results_files(args.output_path):
        rows += logged_check_rows(results_file, dcr_level_tasks(read_results(results_file)))
    if not rows:
        raise ContamError("the run has no DCR level tasks to export", source=str(args.output_path))
    path = write_check_csv(rows, args.out)
    undecided = sum(row.contaminated is None for row in rows)
    print(f"wrote {len(rows)} items to {path} ({undecided} need a decision in the 'contaminated' column)")
    return 0
