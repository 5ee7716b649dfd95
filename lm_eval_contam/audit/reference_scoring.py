"""``lm-eval-contam run --reference-model SPEC``: the checkpoint the model was fine-tuned from scores the run's
reference-differenced tasks too, and their rows in lm-eval's results get the tests on u = log p(model) -
log p(reference) (the same functions the audit's verdicts read: ``MethodSpec.reference_tests``).

The tasks a reference scores are those named in ``--tasks`` (not through a group) whose method has a test compared
with the reference (those of its tasks its ``reference_scores`` chooses: the likelihood family's control mode), as
``audit --reference-model`` chooses them (:func:`lm_eval_contam.audit.job.check_reference`). Both
models run them built with ``all_orders`` added to the run's metadata (the option-order task then scores every
admissible order, which the tests on u read; a task that does not read the key ignores it), so both score the same
texts; each doc's logged record carries its identity, and the two models' records pair by it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_contam.audit.job import REFERENCE_SUFFIX, check_reference
from lm_eval_contam.audit.reference_model import AUTO, REFERENCE_FLAG, check_reference_model
from lm_eval_contam.core.audit_identity import model_fingerprint
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.registry import registered_methods
from lm_eval_contam.core.rundir import FILTER
from lm_eval_contam.harness import check_scores_prompts
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.lmeval.lm_eval_compat import built_tasks, task_index

log = logging.getLogger(__name__)

# What both models' reference-differenced tasks are built with (the option-order task: every admissible order).
REFERENCE_METADATA = {"all_orders": True}
REFERENCE_CONFIG_KEY = "reference_model"  # in the results' "config": the reference model, as "<backend> <model_args>"


def split_reference_flag(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """``--reference-model SPEC`` (or ``--reference-model=SPEC``) taken out of ``argv``: (SPEC or None, the rest)."""
    rest: list[str] = []
    found: str | None = None
    arguments = iter(argv)
    for argument in arguments:
        flag, equals, value = argument.partition("=")
        if flag != REFERENCE_FLAG:
            rest.append(argument)
            continue
        if not equals:
            value = next(arguments, "")
        if not value.strip() or value.startswith("--"):
            raise ContamError("expected the model the audited one was fine-tuned from (an HF folder, a Hub id or "
                              "<backend>:<model_args>)", field=REFERENCE_FLAG)
        if found is not None:
            raise ContamError(f"given twice ({found!r} and {value!r}); give one reference model", field=REFERENCE_FLAG)
        found = value
    return found, rest


@dataclass(frozen=True)
class ReferencePlan:
    """The reference model and what it scores in one ``run``."""

    spec: ModelSpec
    tasks: tuple[str, ...]  # the run's tasks it scores too (named in --tasks)
    built: Callable[[], dict[str, Any]]  # the tasks built with REFERENCE_METADATA, fresh for each model's run

    @property
    def described(self) -> str:
        return f"{self.spec.backend} {self.spec.model_args}"


def plan_reference(reference: str, model: ModelSpec | Any, tasks: Sequence[Any], task_manager: Any) -> ReferencePlan:
    """The reference model's spec and tasks, refused in one line before any request as the audit refuses them (a spec
    that does not parse or load, a model that cannot score log-likelihoods, the audited model itself, a shorter
    window, nothing in the run for it to score). ``model``: the run's spec, or the lm-eval model it was handed (then
    only the reference itself is checked)."""
    backend = model.backend if isinstance(model, ModelSpec) else type(model).__name__
    if reference == AUTO:
        raise ContamError(f"'{AUTO}' is the audit's (lm-eval-contam audit --reference-model {AUTO}); give run the "
                          "checkpoint the model was fine-tuned from", field=REFERENCE_FLAG)
    spec = ModelSpec.parse(reference, flag=REFERENCE_FLAG)
    if isinstance(model, ModelSpec):
        check_reference_model(spec, model)
    else:
        spec.check()
        check_scores_prompts(spec)
    found = check_reference(backend, [task for task in tasks if isinstance(task, str)], task_manager)
    index = task_index(task_manager)
    folders = sorted({str(Path(index[task].yaml_path).parent) for task in found})
    metadata = {**(getattr(task_manager, "metadata", None) or {}), **REFERENCE_METADATA}

    def built() -> dict[str, Any]:
        from lm_eval.tasks import TaskManager

        # The tasks' own folders only, with the run's metadata and REFERENCE_METADATA: lm-eval merges a manager's
        # metadata into every task it builds, and a built task has already made its docs.
        return built_tasks(TaskManager(include_path=folders, include_defaults=False, metadata=metadata), found)

    return ReferencePlan(spec, tuple(found), built)


def with_reference_tasks(tasks: Sequence[Any], plan: ReferencePlan) -> list[Any]:
    """The run's task list with each task the reference scores too built as the reference's run builds it."""
    built = plan.built()
    return [built.get(task, task) if isinstance(task, str) else task for task in tasks]


def reference_cache(use_cache: str | None, spec: ModelSpec) -> str | None:
    """The reference model's own request cache beside the run's (keyed by its fingerprint), when the run has one."""
    return None if not use_cache else f"{use_cache}{REFERENCE_SUFFIX}-{model_fingerprint(spec.backend, spec.model_args)}"


def score_reference(simple_evaluate: Callable[..., Any], plan: ReferencePlan,
                    run: Mapping[str, Any]) -> dict[str, Any] | None:
    """The reference model's lm-eval run of the plan's tasks, with the run's batch size, device and docs (``limit``,
    ``samples``), samples logged; no chat template (the texts are scored whole)."""
    started = time.perf_counter()
    results = simple_evaluate(
        model=plan.spec.backend, model_args=plan.spec.model_args, tasks=list(plan.built().values()),
        batch_size=run.get("batch_size"), max_batch_size=run.get("max_batch_size"), device=run.get("device"),
        use_cache=reference_cache(run.get("use_cache"), plan.spec), limit=run.get("limit"), samples=run.get("samples"),
        log_samples=True, apply_chat_template=False, task_manager=run.get("task_manager"))
    log.info("reference model %s scored %d task(s) in %.1f s", plan.described, len(plan.tasks),
             time.perf_counter() - started)
    return results


def add_reference_tests(results: dict[str, Any], reference: Mapping[str, Any], plan: ReferencePlan) -> dict[str, Any]:
    """``results`` with each reference-differenced test's p-value (``<test>_pvalue``) and standardised statistic
    (``<test>_z``) in its task's row, and the reference model in ``config.reference_model``. A task whose records do
    not pair with the reference's is logged and keeps its row as lm-eval wrote it."""
    testing = {spec.name: spec.reference_tests for spec in registered_methods() if spec.reference_tests}
    samples, reference_samples = results.get("samples") or {}, reference.get("samples") or {}
    for task in plan.tasks:
        config = (results.get("configs") or {}).get(task) or {}
        tests = testing.get(str((config.get("metadata") or {}).get("method")))
        if tests is None or task not in (results.get("results") or {}):
            continue
        try:
            found = tests(samples.get(task) or [], reference_samples.get(task) or [], config,
                          f"the reference model's run ({plan.described})")
        except ContamError as error:
            log.error("%s: the tests on u were not computed: %s", task, error)
            continue
        row = results["results"][task]
        higher = results.setdefault("higher_is_better", {}).setdefault(task, {})
        for test, result in found.items():
            row[f"{test}_pvalue,{FILTER}"] = result.pvalue
            row[f"{test}_z,{FILTER}"] = result.standardised
            higher[f"{test}_pvalue"], higher[f"{test}_z"] = False, True
    results.setdefault("config", {})[REFERENCE_CONFIG_KEY] = plan.described
    return results
