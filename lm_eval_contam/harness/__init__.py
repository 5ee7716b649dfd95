"""What every method's lm-eval glue shares: task-manager factory, include paths, the API model check, post-processing.

The only module besides ``<method>/task.py`` that talks to lm-eval's task API;
jobs (audit) and the CLI call it, never the other way round.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import task_dir
from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import MethodSpec, method_of, registered_methods, task_quiz_samples
from lm_eval_contam.lmeval.context_window import MODEL_WINDOW_KEY, ModelWindow, count_truncation, counted_tasks
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.lmeval.lm_eval_compat import (
    built_tasks,
    is_api_model,
    model_class,
    post_scoring_request,
    selected_task_configs,
    task_index,
)
from lm_eval_contam.methods.catalogue import QUIZ_OPTION_MAKER, load_methods
from lm_eval_contam.models.default_model import cache_home

log = logging.getLogger("lm_eval_contam")


def plugin_task_dir() -> Path | None:
    """Where the shipped task YAMLs of the registered methods that have none under :func:`task_dir` (plug-ins) are
    written for lm-eval to find (``$LM_EVAL_CONTAM_HOME/plugin_tasks/<method>/``, rewritten when they change); None
    when every method's are installed."""
    plugins = [spec for spec in registered_methods()
               if spec.shipped_task_configs is not None and not (task_dir() / spec.name).is_dir()]
    if not plugins:
        return None
    root = cache_home() / "plugin_tasks"
    for spec in plugins:
        rendered = {root / spec.name / relative: text for relative, text in spec.shipped_task_configs().items()}
        for stale in (root / spec.name).rglob("*.yaml"):
            if stale not in rendered:
                stale.unlink()  # a task the plug-in no longer ships
        for path, text in rendered.items():
            if not (path.is_file() and path.read_text(encoding="utf-8") == text):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    return root


def include_paths(user_value: str | list[str] | tuple[str, ...] | None = None) -> list[str]:
    """The user's include path(s) first, then the project's task directory, then the plug-ins' shipped task YAMLs
    (:func:`plugin_task_dir`)."""
    ours = [str(task_dir()), *([str(plugins)] if (plugins := plugin_task_dir()) is not None else [])]
    given = [] if user_value is None else [user_value] if isinstance(user_value, str) else list(user_value)
    return [p for p in given if p not in ours] + ours


def task_manager(include_path: str | list[str] | tuple[str, ...] | None = None, *, include_defaults: bool = False) -> Any:
    """lm-eval's TaskManager over the project's tasks (and lm-eval's own with ``include_defaults``)."""
    from lm_eval.tasks import TaskManager

    load_methods()  # the registered methods' tasks: the plug-ins' shipped YAMLs among the include paths
    return TaskManager(include_path=include_paths(include_path), include_defaults=include_defaults)


def generation_capped_tasks(task_manager: Any, tasks: Sequence[str], max_gen_toks: int) -> dict[str, Any]:
    """The tasks among ``tasks`` whose method caps its generation (``MethodSpec.generation.capped``), built with
    ``max_gen_toks`` as their cap, by name.

    lm-eval's ``gen_kwargs`` would reach every generate task, DCQ's one-letter
    answers included, so the cap goes on those methods' task objects only.
    """
    index = task_index(task_manager)
    names = [task for task in tasks if (entry := index.get(task)) is not None
             and (family := (entry.cfg.get("metadata") or {}).get("method"))
             and (generation := method_of(str(family)).generation) and generation.capped]
    capped = built_tasks(task_manager, names) if names else {}
    for task in capped.values():
        task.set_config("generation_kwargs", {"max_gen_toks": max_gen_toks}, update=True)
    return capped


# Request types that need the prompt's token log-probabilities.
SCORING_OUTPUT_TYPES = ("loglikelihood", "loglikelihood_rolling", "multiple_choice")
# Scored by the probe request: any text of two or more tokens does.
PROBE_PROMPT = "The quick brown fox"


def generate_mode_alternative(task: str) -> str | None:
    """The generate-mode twin of a log-likelihood task, from the registered method that runs it, if any."""
    return next((twin for spec in registered_methods() if spec.generation and spec.generation.alternative
                 and (twin := spec.generation.alternative(task))), None)


def echoed_prompt_logprobs(response: Any) -> bool:
    """Whether an OpenAI completions response carries the echoed prompt's token log-probabilities.

    lm-eval scores a continuation by sending ``echo=True, logprobs=1, max_tokens=1`` and
    reading ``choices[0].logprobs.token_logprobs`` over the prompt: one entry per prompt
    token plus the generated one, so an answer with fewer than two entries cannot be scored.
    """
    choices = response.get("choices") if isinstance(response, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    logprobs = first.get("logprobs")
    token_logprobs = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    return isinstance(token_logprobs, list) and len(token_logprobs) >= 2


def prompt_scoring_gap(lm: Any) -> str | None:
    """Why the API model ``lm`` cannot score prompts, or None when its server can.

    Chat models refuse in lm-eval itself (asked with no requests, so nothing is sent).
    Completion models send one probe: the scoring request lm-eval would send
    (:func:`~lm_eval_contam.lmeval.lm_eval_compat.post_scoring_request`), for :data:`PROBE_PROMPT`; servers without prompt
    log-probabilities (transformers serve, OpenAI's current models) answer it without them
    or with an HTTP error, where lm-eval would die mid-run on a missing field.
    """
    import requests

    try:
        lm.loglikelihood([])
    except NotImplementedError:
        return f"lm-eval's {type(lm).__name__} cannot score prompts (chat endpoints return no prompt log-probabilities)"
    try:
        response = post_scoring_request(lm, PROBE_PROMPT)
    except requests.RequestException as error:
        raise ContamError(f"cannot reach {lm.base_url}: {type(error).__name__}", field="model_args") from None
    if not response.ok:
        reply = " ".join(response.text.split())[:200]
        return f"{lm.base_url} answered a prompt-scoring request with HTTP {response.status_code} ({reply})"
    if not echoed_prompt_logprobs(response.json()):
        return f"{lm.base_url} returns no prompt log-probabilities (echo=True, logprobs=1)"
    return None


def check_model_can_run(model: ModelSpec | Any, tasks: Any, manager: Any | None = None) -> None:
    """Fail before the first evaluation request when an API model is asked to score log-likelihoods it cannot get.

    ``model``: its spec, or an lm-eval model already built. Only API models with scoring tasks are looked at; for
    those the model is built (as lm-eval is about to) and :func:`prompt_scoring_gap` asks its server once.
    """
    if not is_api_model(model.backend if isinstance(model, ModelSpec) else model):
        return
    configs = selected_task_configs(manager or task_manager(), tasks)
    scoring = {name: config.get("output_type") for name, config in sorted(configs.items())
               if config.get("output_type", "generate_until") in SCORING_OUTPUT_TYPES}
    if not scoring:
        return
    lm = (model_class(model.backend).create_from_arg_obj(dict(model.arguments), {}) if isinstance(model, ModelSpec)
          else model)
    gap = prompt_scoring_gap(lm)
    if gap is None:
        return
    name, output_type = next(iter(scoring.items()))
    alternative = generate_mode_alternative(name)
    instead = f"run its generate mode {alternative!r} instead" if alternative else "run it with --model hf or vllm"
    raise ContamError(f"task {name!r} scores log-likelihoods ({output_type}), but {gap}; {instead}", field="model")


def check_scores_prompts(spec: ModelSpec) -> None:
    """Refuse a model that is only ever asked for log-likelihoods (a reference model: every test on u reads them)
    when it cannot score prompts: an API model without prompt log-probabilities (asked as
    :func:`check_model_can_run` asks); the message names the flag that gave it."""
    if not is_api_model(spec.backend):
        return
    gap = prompt_scoring_gap(model_class(spec.backend).create_from_arg_obj(dict(spec.arguments), {}))
    if gap is not None:
        raise ContamError(f"a reference model scores log-likelihoods only, but {gap}; give a local model (hf, vllm) or "
                          "a completions server that returns prompt log-probabilities", field=spec.flag)


def task_config(task: str, task_manager: Any) -> dict[str, Any]:
    """A task's indexed config, its metadata carrying ``config_source`` (relative paths resolve against it)."""
    entry = task_index(task_manager).get(task)
    config = dict(entry.cfg) if entry is not None else {}
    config["metadata"] = {**(config.get("metadata") or {}), "config_source": str(getattr(entry, "yaml_path", ""))}
    return config


def tasks_not_run(tasks: Sequence[str], task_manager: Any, window: ModelWindow | None = None) -> dict[str, NotRun]:
    """The tasks whose method cannot run on their partition (``MethodSpec.cannot_run``), each with why.

    Asked once the quiz options exist: the audit leaves these out, says "not tested: <why>", and runs the rest.
    ``window``: the audited local model's, handed to each method in the config (``MODEL_WINDOW_KEY``).
    """
    found: dict[str, NotRun] = {}
    for task in tasks:
        config = task_config(task, task_manager)
        if window is not None:
            config[MODEL_WINDOW_KEY] = window
        family = config["metadata"].get("method")
        spec = method_of(str(family)) if family else None
        if spec is None:
            continue
        if spec.cannot_run is not None:
            entry = spec.cannot_run(task, config)
        elif spec.benchmark_adjustment is None:
            entry = without_docs(spec, task, config, task_manager)
        else:  # its tasks are built from the benchmarks' own docs, loaded and checked already: no second build
            entry = None
        if entry is not None:
            found[task] = entry
    return found


def without_docs(spec: MethodSpec, task: str, config: Mapping[str, Any], task_manager: Any) -> NotRun | None:
    """A task of a method that declares no ``cannot_run``, when lm-eval builds it with no docs: "not tested: no docs"
    (lm-eval reads a task's first doc as it builds it, so a task without docs would stop the whole run)."""
    try:
        empty = any(len(built.eval_docs) == 0 for built in built_tasks(task_manager, [task]).values())
    except IndexError as error:  # datasets: "Invalid key: 0 is out of bounds for size 0"
        if not str(error).rstrip(".").endswith("size 0"):
            raise
        empty = True
    if not empty:
        return None
    try:
        partition = Partition.from_task_metadata(config.get("metadata"), str(config.get("test_split"))).label
    except ContamError:  # a plug-in's task need not name a partition the project knows: then its name stands for it
        partition = task
    if spec.tests:
        return spec.tests[0].not_run(task=task, partition=partition, reason="no docs")
    return NotRun(task=task, family=spec.name, test=spec.name, title=spec.title, partition=partition, reason="no docs")


def prepare_quiz_options(tasks: Sequence[str], task_manager: Any, generator: str, *, progress: bool = True) -> None:
    """Make the quiz options the tasks' samples lack (offline perturber by default), before any request."""
    QUIZ_OPTION_MAKER(task_quiz_samples(task_config(task, task_manager) for task in tasks), generator,
                      progress=progress)


def adjustment_tasks(tasks: Sequence[Any], manager: Any, *, metadata: Mapping[str, Any] | None = None,
                     loaded: Mapping[str, Any] | None = None, like_benchmark: bool | None = None,
                     skip_methods: Sequence[str] = ()) -> list[str]:
    """The tasks every registered method adds so each plain benchmark of the run gets its adjusted score
    (``MethodSpec.benchmark_adjustment``); ``loaded``: benchmarks the audit already built and rendered, by name;
    ``like_benchmark``: only the methods whose tasks are (True) or are not (False) scored like the benchmarks;
    ``skip_methods``: methods left out (``audit --methods``)."""
    return [task for spec in registered_methods() if spec.benchmark_adjustment and spec.name not in skip_methods
            and like_benchmark in (None, spec.benchmark_adjustment.scored_like_benchmark)
            for task in spec.benchmark_adjustment.tasks(tasks, manager, metadata, loaded)]


def post_process(results: dict[str, Any], model: ModelSpec | None = None) -> dict[str, Any]:
    """Add the project's derived rows to lm-eval's results: docs cut to the context window of ``model`` (the run's,
    its tokenizer loaded only when a contamination task was run; None: not counted), then each registered method's
    that adjusts benchmark scores (``MethodSpec.benchmark_adjustment.post_process``, e.g. DCR Factor and ``acc_adj``).

    A failing hook is logged, never raised: lm-eval has not saved the run yet, and
    the raw results must survive.
    """
    def cut_docs(found: dict[str, Any]) -> dict[str, Any]:
        return count_truncation(found, model.window if model is not None and counted_tasks(found) else None)

    load_methods()
    steps = [(cut_docs, "Context-window check"),
             *((spec.benchmark_adjustment.post_process, f"{spec.title} post-processing")
               for spec in registered_methods() if spec.benchmark_adjustment)]
    for step, what in steps:
        try:
            results = step(results)
        except Exception:  # noqa: BLE001 - see docstring
            log.exception("%s failed; the run's lm-eval results are kept", what)
    return results
