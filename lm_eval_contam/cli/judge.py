"""``lm-eval-contam judge``: Judge B (the paper's few-shot judge) over a run's Time Travel samples."""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_contam.methods.timetravel.judge_b import judge_output_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judge",
        help="classify Time Travel guided completions with the paper's few-shot judge prompt (Alg. 2, Judge B)",
        description=__doc__,
    )
    parser.add_argument("output_path", type=Path, help="the run's --output_path (or one samples_*.jsonl file)")
    parser.add_argument("--judge-model", required=True, help="HF folder / Hub id, or <lm-eval backend>:<model_args>")
    parser.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    parser.add_argument("--batch-size", default=1)
    parser.add_argument("--no-chat-template", action="store_true", help="send the prompt as plain text")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    for out in judge_output_path(args.output_path, args.judge_model, device=args.device,
                                 batch_size=args.batch_size, chat_template=not args.no_chat_template):
        print(f"wrote {out}")
    return 0
