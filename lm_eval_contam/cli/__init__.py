"""``lm-eval-contam``: the project's command line.

Each subcommand lives in its own module exposing ``register(subparsers)``, which
adds the subparser and sets ``func`` to a callable taking the parsed namespace
and returning an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Sequence

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import BlankValue, refuse_blank_values
from lm_eval_contam.core.install import __version__
from lm_eval_contam.core.text import visible_bidi_controls
from lm_eval_contam.methods.catalogue import load_methods, plugins

# Module names under lm_eval_contam.cli, in the order `--help` lists them.
SUBCOMMANDS = ["run", "tasks", "default_model", "audit", "demo", "contaminate", "judge", "adjust", "dcr_export", "dcq_options", "report"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lm-eval-contam",
        description="Data-contamination evidence inside lm-evaluation-harness runs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"lm_eval_contam.cli.{name}").register(subparsers)
    for subparser in subparsers.choices.values():
        refuse_blank_values(subparser)
    return parser


class _Interrupts:
    """Ctrl-C seen since the command started. Building the parser imports torch, transformers and lm-eval (the first
    second or two), and an import may swallow the KeyboardInterrupt: the flag stops the command before it runs."""

    seen = False

    @classmethod
    def handler(cls, signum: int, frame: object) -> None:
        cls.seen = True
        raise KeyboardInterrupt


def value_lost_to_double_dash(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """The flag given as ``--flag=--``, if any: argparse drops a value of ``--`` (its end-of-options marker) and
    leaves the flag an empty list, whatever its type, so the command would meet a list where it expects text."""
    subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    for action in subparsers.choices[args.command]._actions:
        single = isinstance(action, argparse._StoreAction) and action.nargs is None and action.default != []
        if single and action.option_strings and getattr(args, action.dest, None) == []:
            return max(action.option_strings, key=len)
    return None


def left_out_plugins(command: str, *, every_method: bool) -> None:
    """An installed plug-in that does not load stops a command that plans or runs the methods (``every_method``);
    any other command says so in one line per plug-in and goes on without it (a run of its tasks is then refused
    where they are read: no registered method)."""
    for error in plugins().broken:
        if every_method:
            raise error
        print(f"{_prog(command)}: warning: {error}; its method is left out", file=sys.stderr)


class _VisibleBidi:
    """A console stream whose text has its bidi controls written out (``[U+202E]``), as the report writes them: a task
    name or a completion holding one would otherwise reorder the rest of the line on the terminal."""

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(visible_bidi_controls(text))

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _quiet_interrupted_finalizers(unraisable: object) -> None:
    """After Ctrl-C, a KeyboardInterrupt in a finalizer (lm-eval's SqliteDict cache closing) is the same interrupt the
    command already reported in one line, not a traceback to print; anything else is printed as Python does."""
    if not isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _prog(command: str | None) -> str:
    return f"lm-eval-contam {command}" if command else "lm-eval-contam"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = None
    _Interrupts.seen = False
    previous = signal.getsignal(signal.SIGINT)
    own_handler = previous is signal.default_int_handler and threading.current_thread() is threading.main_thread()
    if own_handler:
        signal.signal(signal.SIGINT, _Interrupts.handler)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _VisibleBidi(sys.stdout), _VisibleBidi(sys.stderr)
    try:
        parser = build_parser()
        try:
            args, extra = parser.parse_known_args(argv)
        except BlankValue as blank:
            command = next((name for name in argv if not name.startswith("-")), None)
            raise blank.error() from None
        command = args.command
        if args.command is None:
            parser.print_help()
            return 2
        # Only pass-through commands (run) accept flags they do not declare themselves.
        if extra and not getattr(args, "accepts_extra", False):
            parser.error(f"unrecognized arguments for {args.command!r}: {' '.join(extra)}")
        args.extra = extra
        flag = value_lost_to_double_dash(parser, args)
        if flag:
            raise ContamError("expected a value, got '--'", field=flag)
        load_methods()  # the built-in methods; the plug-ins, read next
        left_out_plugins(command, every_method=getattr(args, "every_method", False))
        if _Interrupts.seen:
            raise KeyboardInterrupt
        return int(args.func(args) or 0)
    except ContamError as error:
        print(f"{_prog(command)}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{_prog(command)}: interrupted; finished work is saved (re-run the same command to resume)",
              file=sys.stderr)
        sys.unraisablehook = _quiet_interrupted_finalizers
        return 130
    finally:
        sys.stdout, sys.stderr = streams
        if own_handler:
            signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":
    sys.exit(main())
