"""``lm-eval-contam demo``: contaminate the default model on purpose, audit it and the clean one, report.

Injects one shipped partition (Toy News train) into SmolLM2-135M-Instruct in Time
Travel's web format, then audits the clean and the contaminated model on that
partition and on an unseen one (Toy News test). The report states the injection
strength; read its verdicts for where detection works and where it does not.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_contam.audit.job import AuditSettings
from lm_eval_contam.cli.audit import audit_one, write_report
from lm_eval_contam.contaminate import InjectionSettings, inject, partition_contaminant, trained_with
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.rundir import load_run
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.models.default_model import default_model_path
from lm_eval_contam.report.layout import titled
from lm_eval_contam.verdicts.verdict import collect, no_call_reason, partition_verdicts

INJECTED = "toy_news:train"
UNSEEN = "toy_news:test"
# Far stronger than the papers' settings (3 epochs, lr 5e-5, 15 % share): at those a 135M model
# reproduces none of the injected text (see README, validation study).
DEMO_INJECTION = InjectionSettings(epochs=6, learning_rate=3e-4, share=0.5, batch_size=1, max_length=256)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="contaminate the default model on a shipped partition, audit clean vs "
                                                "contaminated, write the report", description=__doc__)
    parser.add_argument("--output_path", type=Path, default=Path("contamination_demo"),
                        help="demo directory (default: ./contamination_demo)")
    parser.add_argument("--model", help="base model to contaminate (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--epochs", type=int, default=DEMO_INJECTION.epochs)
    parser.add_argument("--learning-rate", type=float, default=DEMO_INJECTION.learning_rate)
    parser.add_argument("--share", type=float, default=DEMO_INJECTION.share)
    parser.add_argument("--train-batch-size", type=int, default=DEMO_INJECTION.batch_size, help="training sequences per step")
    parser.add_argument("--max_gen_toks", type=int, default=48, help="cap on Time Travel completions (default: 48)")
    parser.add_argument("--batch_size", type=int, default=8, help="lm-eval batch size (default: 8)")
    parser.set_defaults(func=_main, every_method=True)  # plans or runs the methods: a broken plug-in stops it


def _main(args: argparse.Namespace) -> int:
    from dataclasses import replace

    out: Path = args.output_path
    base = args.model or str(default_model_path())
    contaminated = out / "models" / "contaminated"
    settings = replace(DEMO_INJECTION, epochs=args.epochs, learning_rate=args.learning_rate, share=args.share,
                       batch_size=args.train_batch_size)
    texts, sources = partition_contaminant([Partition.parse(INJECTED)], "timetravel")
    if trained_with(contaminated, settings, sources):
        print(f"reusing {contaminated} (same injection)")
    else:
        print(f"injecting {len(texts)} {INJECTED} instances: {settings.epochs} epochs, lr {settings.learning_rate}, "
              f"contaminant share <= {settings.share:.0%}")
        inject(base, texts, str(contaminated), settings=settings, description={"sources": sources})
    audit = AuditSettings(partitions=(INJECTED, UNSEEN), max_gen_toks=args.max_gen_toks, batch_size=args.batch_size)
    audit_one(ModelSpec.parse(base), "clean", out, audit)
    audit_one(ModelSpec.parse(str(contaminated)), "contaminated", out, audit)
    write_report(out)
    print(verdict_lines(out))
    return 0


def verdict_lines(out: Path) -> str:
    """Per model and partition: the per-partition verdict, then every method that flagged, plainly; a test whose p
    makes no call (over its measured level, or not measured) is named apart, so it never reads as a flag."""
    injected = Partition.parse(INJECTED).label
    verdicts = collect(load_run(out))
    lines = ["", "model / partition: the partition's verdict (Holm over the driving tests); every method that flagged"]
    for row in sorted(partition_verdicts(verdicts), key=lambda row: (row.model, row.partition)):
        where = "injected" if row.model == "contaminated" and row.partition == injected else "not injected"
        mine = [(v, no_call_reason(v)) for v in verdicts
                if v.flagged and (v.model, v.partition) == (row.model, row.partition)]
        flagged = [titled(v) for v, reason in mine if reason is None]
        no_call = [f"{titled(v)} ({reason})" for v, reason in mine if reason is not None]
        lines.append(f"  {row.model} / {row.partition} ({where}): {row.decision.upper()} ({row.summary()}); "
                     f"flagged by: {', '.join(flagged) or 'none'}"
                     + (f"; p ≤ {ALPHA:g} with no call: {', '.join(no_call)}" if no_call else ""))
    return "\n".join(lines)
