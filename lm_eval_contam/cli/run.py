"""``lm-eval-contam run``: ``lm_eval run`` with the project's tasks on the include path.

Every flag is lm-eval's own and is parsed by lm-eval's own parser, so outputs
(results JSON, samples, printed table) are exactly lm-eval's. The one seam is
``simple_evaluate``: its results pass through ``harness.post_process`` before lm-eval
saves and prints them; before it, ``harness.check_model_can_run`` stops runs an API
model cannot do (log-likelihood tasks), and ``harness.adjustment_tasks`` adds (through the registry) the
DCR level tasks of a sheet built from every benchmark task in the run, so each gets
``<metric>_adj`` beside its raw metric (``--metadata '{"dcr_adjust": false}'``: off), and a project task whose
method cannot run on its partition (``MethodSpec.cannot_run``: e.g. a row over a local model's window, where lm-eval
would stop on an assertion mid-run) stops the run in one line before any request. Under ``accelerate launch`` non-zero ranks get ``None``
from ``simple_evaluate`` and are left alone, so only rank 0 post-processes.

One flag is ours: ``--reference-model SPEC`` (taken out before lm-eval's parser sees the rest), the checkpoint the
model was fine-tuned from. It scores the run's option-order and pairing tasks too, and their rows get the audit's
tests on u = log p(model) - log p(reference) (:mod:`lm_eval_contam.audit.reference_scoring`).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

from lm_eval_contam.audit.reference_model import REFERENCE_FLAG
from lm_eval_contam.audit.reference_scoring import (
    add_reference_tests,
    plan_reference,
    score_reference,
    split_reference_flag,
    with_reference_tasks,
)
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import BlankValue, check_run_metadata, refuse_blank_values
from lm_eval_contam.harness import adjustment_tasks, check_model_can_run, include_paths, post_process, tasks_not_run
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.lmeval.lm_eval_compat import selected_task_configs

# lm-eval's results and the run's model (None: lm-eval was handed a model object) -> the results to save
ResultsHook = Callable[[dict[str, Any], ModelSpec | None], dict[str, Any]]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run lm_eval with the lm-eval-contam tasks available (all lm_eval run flags accepted)",
        add_help=False,
        description=__doc__,
    )
    parser.set_defaults(func=_main, accepts_extra=True, every_method=True)  # a broken plug-in stops it


def lm_eval_run_parser() -> argparse.ArgumentParser:
    from lm_eval._cli.harness import HarnessCLI

    run_parser = HarnessCLI()._subparsers.choices["run"]
    run_parser.prog = "lm-eval-contam run"
    refuse_blank_values(run_parser)
    return run_parser


def _with_hook(simple_evaluate: Callable[..., Any], hook: ResultsHook, reference: str | None = None) -> Callable[..., Any]:
    """``simple_evaluate`` with the run's checks before it and ``hook`` on its results; with ``reference`` (a model
    spec: ``--reference-model``), that model scores the run's reference-differenced tasks too and their rows get the
    tests on u (:mod:`lm_eval_contam.audit.reference_scoring`)."""
    @functools.wraps(simple_evaluate)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        model = kwargs.get("model")
        # lm-eval's --model and --model_args, parsed once: its checks and the hook share the spec and its tokenizer
        spec = ModelSpec.of_lm_eval(model, kwargs.get("model_args")) if isinstance(model, str) else None
        check_model_can_run(spec or model, kwargs.get("tasks"), kwargs.get("task_manager"))
        plan = None
        if reference is not None:  # refused before the first request, like the audit's
            plan = plan_reference(reference, spec or model, kwargs["tasks"], kwargs["task_manager"])
        if kwargs.get("task_manager") is not None:
            check_methods_can_run(kwargs["tasks"], kwargs["task_manager"], spec)
            kwargs["tasks"] = [*kwargs["tasks"], *adjustment_tasks(kwargs["tasks"], kwargs["task_manager"],
                                                                   metadata=kwargs.get("metadata"))]
        if plan is None:
            results = simple_evaluate(*args, **kwargs)
            return hook(results, spec) if results is not None else results
        samples_asked = bool(kwargs.get("log_samples"))
        kwargs["tasks"] = with_reference_tasks(kwargs["tasks"], plan)
        results = simple_evaluate(*args, **{**kwargs, "log_samples": True})  # the records u is computed from
        reference_results = score_reference(simple_evaluate, plan, kwargs)  # every rank, as the run's call
        if results is None:
            return results
        if reference_results is not None:
            results = add_reference_tests(results, reference_results, plan)
        if not samples_asked:  # lm-eval would write them into the results JSON
            results.pop("samples", None)
        return hook(results, spec)

    return wrapped


def check_methods_can_run(tasks: Sequence[str], task_manager: Any, model: ModelSpec | None) -> None:
    """The run's project tasks (groups expanded) whose method cannot run on their partition, as one line.

    The audit leaves such a task out and says "not tested: <why>"; a plain run was asked for exactly these tasks, so
    it stops before the first request instead of in lm-eval's assertion (or its "no docs" error) mid-run.
    """
    project = [name for name, config in selected_task_configs(task_manager, tasks).items()
               if (config.get("metadata") or {}).get("method")]
    if not project:  # lm-eval's own tasks only: nothing to ask, no tokenizer to load
        return
    window = model.window if model is not None else None
    not_run = tasks_not_run(project, task_manager, window)
    if not_run:
        reasons = "; ".join(f"{task}: {entry.reason}" for task, entry in sorted(not_run.items()))
        raise ContamError(f"cannot run on its partition: {reasons}; leave it out of --tasks", field="--tasks")


def parse_run_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """lm-eval's flags, with a malformed JSON value or a wrongly typed metadata key as one ContamError."""
    try:
        args = parser.parse_args(argv)
    except BlankValue as blank:
        raise blank.error() from None
    except ValueError as error:  # lm-eval's JSON-or-key=value flags raise it on a malformed value
        flag = next((flag for flag, value in zip(argv, argv[1:]) if flag.startswith("--") and value
                     and value in str(error)), "arguments")
        why = " ".join(str(error).split()).rstrip(".")
        raise ContamError(f"{why}; expected a JSON object or key=value pairs", field=flag) from None
    check_run_metadata(getattr(args, "metadata", None))
    limit = getattr(args, "limit", None)
    if limit is not None and limit <= 0:  # lm-eval would build every task and end in a traceback on no docs
        raise ContamError(f"got {limit:g}; expected a number of docs per task >= 1, or a share of them in (0, 1) (or "
                          f"leave it out)", field="--limit")
    return args


def run_lm_eval(argv: Sequence[str], hook: ResultsHook = post_process) -> int:
    """Parse ``argv`` as ``lm_eval run`` flags (and ours: ``--reference-model``) and run it with our include path and
    hook."""
    import lm_eval
    from lm_eval.evaluator import simple_evaluate
    from lm_eval.utils import setup_logging

    parser = lm_eval_run_parser()
    if not argv or "-h" in argv or "--help" in argv:
        print("lm-eval-contam run: lm_eval run with the lm-eval-contam task directory on --include_path.\n")
        print(f"  {REFERENCE_FLAG} SPEC  the checkpoint the model was fine-tuned from (an HF folder, a Hub id or "
              "<backend>:<model_args>): it scores the run's option-order and pairing tasks too, and their rows get "
              "the tests on u = log p(model) - log p(reference)\n")
        parser.print_help()
        return 0 if argv else 2
    reference, argv = split_reference_flag(argv)
    args = parse_run_args(parser, argv)
    args.include_path = include_paths(getattr(args, "include_path", None))
    setup_logging()
    original = lm_eval.__dict__.get("simple_evaluate")
    lm_eval.simple_evaluate = _with_hook(simple_evaluate, hook, reference)
    try:
        args.func(args)
    finally:
        if original is None:
            del lm_eval.simple_evaluate
        else:
            lm_eval.simple_evaluate = original
    return 0


def _main(args: argparse.Namespace) -> int:
    return run_lm_eval(args.extra)


if __name__ == "__main__":
    sys.exit(run_lm_eval(sys.argv[1:]))
