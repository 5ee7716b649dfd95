"""``lm-eval-contam contaminate``: continued pre-training on benchmark partitions, on purpose.

Builds the seed papers' injection corpus (Time Travel's web format or DCR's level
3/4 blocks, plus optional user text for DCR levels 1/2), mixes it with filler at a
capped token share, trains, and saves an HF folder with
``contamination_manifest.json``. Under ``accelerate launch`` it trains
data-parallel on GPUs; on CPU keep partitions small (see README for timings).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lm_eval_contam.contaminate import (
    INJECTION_FORMATS,
    InjectionSettings,
    inject,
    partition_contaminant,
    read_paragraphs,
)
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import resolve_partition
from lm_eval_contam.models.default_model import default_model_path

DEFAULTS = InjectionSettings()


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("contaminate", help="inject benchmark partitions into a model (continued pre-training)",
                                   description=__doc__)
    parser.add_argument("--partition", action="append", default=[], metavar="DATASET:SPLIT",
                        help="partition to inject, e.g. toy_news:train (repeatable); `lm-eval-contam tasks` lists datasets")
    parser.add_argument("--format", choices=INJECTION_FORMATS, default="timetravel",
                        help="timetravel: the Time Travel web format; dcr-l3: data only; dcr-l4: data with labels")
    parser.add_argument("--text-file", action="append", default=[], type=Path, metavar="FILE",
                        help="extra contaminant text (DCR levels 1/2: topic text, text about the benchmark); "
                             "paragraphs separated by blank lines (repeatable)")
    parser.add_argument("--filler-file", type=Path, help="filler paragraphs (blank-line separated); "
                                                         "default: the Python reference docs bundled with CPython")
    parser.add_argument("--model", help="HF folder or Hub id to continue training (default: the embedded SmolLM2-135M)")
    parser.add_argument("--out", required=True, type=Path, help="folder for the contaminated model and its manifest")
    parser.add_argument("--force", action="store_true", help="write into an --out folder that is not empty")
    parser.add_argument("--all-rows", action="store_true",
                        help="inject every row of each partition, not just the rows an audit examines")
    for name, help_text in (
        ("epochs", "training epochs"),
        ("learning_rate", "peak learning rate (linear decay)"),
        ("weight_decay", "AdamW weight decay"),
        ("share", "largest share of the corpus's tokens that is contaminant"),
        ("batch_size", "sequences per step"),
        ("max_length", "tokens per training block (documents are packed, not padded)"),
        ("seed", "seed for filler choice, order and initialisation"),
        ("validation_docs", "held-out filler documents whose loss is logged before and after each epoch"),
    ):
        default = getattr(DEFAULTS, name)
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default,
                            help=f"{help_text} (default: {default})")
    parser.add_argument("--mixed-precision", choices=("no", "bf16", "fp16"), default=DEFAULTS.mixed_precision,
                        help="accelerate's mixed precision: bf16 trains under bf16 autocast with fp32 weights "
                             f"(default: {DEFAULTS.mixed_precision})")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    if not args.partition and not args.text_file:
        raise ContamError("nothing to inject: pass --partition and/or --text-file", field="partition")
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())) and not args.force:
        raise ContamError("exists and is not an empty folder: a model there would be overwritten; pass a new --out "
                          "or --force", source=str(args.out), field="--out")
    partitions = [resolve_partition(name) for name in args.partition]
    contaminant, injected = partition_contaminant(partitions, args.format, all_rows=args.all_rows)
    for path in args.text_file:
        contaminant += read_paragraphs(path)
        injected.append({"text_file": str(path)})
    settings = InjectionSettings(**{name: getattr(args, name) for name in vars(DEFAULTS)})
    manifest = inject(
        args.model or str(default_model_path()),
        contaminant,
        str(args.out),
        settings=settings,
        filler=read_paragraphs(args.filler_file) if args.filler_file else None,
        description={"sources": injected},
    )
    corpus, loss = manifest["corpus"], manifest["loss"]
    print(f"wrote {args.out} ({len(contaminant)} contaminant texts, {corpus['contaminant_tokens']} tokens, "
          f"share {corpus['contaminant_share']:.1%}, {manifest['train_seconds']} s)")
    print(f"held-out filler loss by epoch: {json.dumps([round(v, 4) for v in loss['eval_loss']])}")
    return 0
