"""``lm-eval-contam adjust``: DCR-adjusted metrics for an existing lm-eval output directory.

Reads each ``results_<date>.json``, computes the DCR Factor (from the run's own
level tasks, from ``--sheet-scores`` or from a filled ``--check-csv``), writes
``results_<date>.dcr_adjusted.json`` beside it (the original is never touched)
and prints lm-eval's table of the adjusted results.
"""

from __future__ import annotations

import argparse
import json

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.rundir import adjusted_path, read_results, results_files
from lm_eval_contam.methods.dcr.adjustment import adjust_results
from lm_eval_contam.methods.dcr.fuzzy import validate_scores


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("adjust", help="add DCR-adjusted metrics to an lm-eval output directory",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output_path", help="lm-eval --output_path directory, or one results JSON file")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--sheet-scores", help="S1,S2,S3,S4 from a manual DCR test, e.g. 0.7,0.13,0.5,0.28")
    source.add_argument("--check-csv", help="a check CSV from dcr-export, filled in by a person")
    parser.add_argument("--sheet", help="sheet name or path (default: the sheet the run's DCR tasks name)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.set_defaults(func=_main)


def parse_sheet_scores(text: str) -> tuple[float, float, float, float]:
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError as error:
        raise ContamError(f"expected four comma-separated numbers, got {text!r}", field="--sheet-scores") from error
    if len(values) != 4:
        raise ContamError(f"expected four comma-separated numbers, got {len(values)} in {text!r}",
                          field="--sheet-scores")
    (row,) = validate_scores(values, field="--sheet-scores")
    outside = [float(v) for v in row if not 0.0 <= v <= 1.0]
    if outside:
        raise ContamError(f"scores are shares in [0, 1], got {outside[0]!r} in {text!r}", field="--sheet-scores")
    return tuple(float(v) for v in row)  # type: ignore[return-value]


def _main(args: argparse.Namespace) -> int:
    from lm_eval.utils import handle_non_serializable, make_table

    scores = parse_sheet_scores(args.sheet_scores) if args.sheet_scores is not None else None
    adjusted = []
    for results_file in results_files(args.output_path):  # validate and compute everything before writing
        results = read_results(results_file)
        messages = adjust_results(results, source=results_file, check_csv=args.check_csv, scores=scores,
                                  sheet=args.sheet, seed=args.seed)
        adjusted.append((results_file, results, messages))
    for results_file, results, messages in adjusted:
        target = adjusted_path(results_file)
        target.write_text(json.dumps(results, indent=2, default=handle_non_serializable, ensure_ascii=False),
                          encoding="utf-8")
        for message in messages:
            print(f"note: {message}")
        print(f"wrote {target}")
        print(make_table(results))
        if "groups" in results:
            print(make_table(results, "groups"))
    return 0
