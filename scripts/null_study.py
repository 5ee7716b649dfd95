"""Null study: the false-positive rate of every verdict, on partitions the model cannot have seen.

    python scripts/null_study.py [--out null_study] [--quick] [--write-rates] [--worlds N ...]

Each world is a tiny model trained from scratch on English background text and the
train splits of its sibling datasets (Time Travel's web format, with the dataset's
name); every shipped task family audits its held-out test splits and both splits of
its unseen datasets through lm-eval. Writes ``rates.json`` and ``rates.md`` under
``--out`` (re-running resumes); ``--write-rates`` also updates the rates file the
package ships (``lm_eval_contam/verdicts/null_rates.json``), which the report reads.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import shlex
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from lm_eval_contam.nullstudy import QUICK, StudySettings

    defaults = StudySettings()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("null_study"))
    parser.add_argument("--quick", action="store_true", help="one tiny world in seconds (the test suite's setting)")
    for field in dataclasses.fields(StudySettings):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(getattr(defaults, field.name)),
                            default=None, help=f"default {getattr(defaults, field.name)} ({getattr(QUICK, field.name)} "
                                               "with --quick)")
    parser.add_argument("--write-rates", action="store_true",
                        help="update the shipped lm_eval_contam/verdicts/null_rates.json with the measured rates")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    from lm_eval_contam.nullstudy import markdown_table, rates_document, run_study, tally
    from lm_eval_contam.nullstudy.configs import left_out
    from lm_eval_contam.nullstudy.study import recorded_seconds
    from lm_eval_contam.verdicts.verdict import NULL_RATES_FILE

    chosen = {field.name: getattr(args, field.name) for field in dataclasses.fields(StudySettings)
              if getattr(args, field.name) is not None}
    settings = dataclasses.replace(QUICK if args.quick else defaults, **chosen)
    command = "python scripts/null_study.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    labelled = run_study(settings, args.out, progress=not args.no_progress)
    wall = recorded_seconds(args.out)  # the first run's time of every step, however often the study resumed
    found = tally(labelled)
    document = rates_document(found, command=command.strip(), date=datetime.date.today().isoformat(),
                              design={**settings.as_dict(), "left_out": left_out()}, wall_seconds=wall)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rates.json").write_text(json.dumps(document, indent=2) + "\n")
    table = markdown_table(found, wall_seconds=wall, command=command.strip())
    (args.out / "rates.md").write_text(table)
    if args.write_rates:
        NULL_RATES_FILE.write_text(json.dumps(document, indent=2) + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
