"""``lm-eval-contam judge``: Judge B (the paper's few-shot judge) over a run's Time Travel samples."""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_contam.errors import ContamError


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


def judge_output_path(output_path: Path, judge_model: str, *, device: str | None = None,
                      batch_size: int | str = 1, chat_template: bool = True) -> list[Path]:
    """Judge B over every Time Travel samples file under ``output_path``; the verdict files written."""
    from lm_eval_contam.generation import ModelSpec, generate
    from lm_eval_contam.timetravel.verdicts import (
        JUDGE_MAX_NEW_TOKENS,
        judge_samples,
        samples_files,
        timetravel_rows,
        write_verdicts,
    )

    work = [(path, rows) for path in samples_files(output_path) if (rows := timetravel_rows(path))]
    if not work:
        raise ContamError("no Time Travel samples found (run with --log_samples)", source=str(output_path))
    model = ModelSpec.parse(judge_model, device=device, batch_size=batch_size).build()

    def run(prompts):
        return generate(model, prompts, max_gen_toks=JUDGE_MAX_NEW_TOKENS, apply_chat_template=chat_template)

    return [write_verdicts(path, judge_samples(rows, run), judge_model) for path, rows in work]


def _main(args: argparse.Namespace) -> int:
    for out in judge_output_path(args.output_path, args.judge_model, device=args.device,
                                 batch_size=args.batch_size, chat_template=not args.no_chat_template):
        print(f"wrote {out}")
    return 0
