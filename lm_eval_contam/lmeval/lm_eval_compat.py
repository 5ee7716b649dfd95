"""The few places where the glue depends on lm-eval internals that differ between versions or backends.

Kept in one module so a new lm-eval release (or API model) changes one file.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# lm-eval's API models (TemplateAPI, JsonChatStr) live here; importing it needs the `api` extra
# (aiohttp, tenacity), so it is only looked up once lm-eval itself has loaded it for an API model.
API_MODELS_MODULE = "lm_eval.models.api_models"


def _loaded_api_models() -> Any | None:
    return sys.modules.get(API_MODELS_MODULE)


def is_json_chat(context: object) -> bool:
    """Whether an API model rendered ``context`` as a JSON list of chat messages (lm-eval's ``JsonChatStr``)."""
    api_models = _loaded_api_models()
    return api_models is not None and isinstance(context, api_models.JsonChatStr)


def model_class(model: str | object) -> type:
    """The lm-eval model class for a registered model name (``--model``) or a model instance."""
    if not isinstance(model, str):
        return type(model)
    from lm_eval.api.registry import get_model

    return get_model(model)


def is_api_model(model: str | object) -> bool:
    """Whether ``model`` is one of lm-eval's API models (a ``TemplateAPI``: local-completions, *-chat-completions, …)."""
    cls = model_class(model)
    api_models = _loaded_api_models()  # loaded by get_model/the instance when the model is an API model
    return api_models is not None and issubclass(cls, api_models.TemplateAPI)


def selected_task_configs(task_manager: Any, names: Any) -> dict[str, dict[str, Any]]:
    """The raw YAML config of every task the names select (groups and tags expanded), from the task index.

    Read without building the tasks (no dataset loads); names the index does not know
    (file paths, inline dicts, Task objects) are left to lm-eval.
    """
    index = task_index(task_manager)
    found: dict[str, dict[str, Any]] = {}
    pending = [names] if isinstance(names, str) else list(names or [])
    while pending:
        name = pending.pop()
        entry = index.get(name) if isinstance(name, str) else None
        if entry is None or name in found:
            continue
        cfg = entry.cfg or {}
        if "group" in cfg:
            pending.extend(cfg.get("task") or [])
        elif "task" in cfg:
            found[name] = cfg
        else:  # a tag: its entry lists the tasks carrying it
            pending.extend(entry.tags)
    return found


def _is_lm_eval_05() -> bool:
    from importlib.metadata import version

    from packaging.version import Version

    return Version(version("lm_eval")) >= Version("0.5.0.dev0")


# lm-eval 0.5 rebuilt its task API (Task subclasses per output type, Instances that carry their identity, scorers).
LM_EVAL_05 = _is_lm_eval_05()

# construct_requests receives these rendering settings besides the request's identity; no Instance field takes them.
RENDERING_KWARGS = ("apply_chat_template", "chat_template")


def task_request(task: Any, doc: dict[str, Any], arguments: tuple[Any, ...], idx: int, *,
                 request_type: str | None = None, **lm_eval_kwargs: Any) -> Any:
    """One request (an lm-eval ``Instance``; ``request_type`` defaults to the task's output type) for ``doc``.

    ``lm_eval_kwargs`` are the keyword arguments lm-eval passed to ``construct_requests``. lm-eval 0.4 passes the
    request's identity as ``metadata=(task name, doc_id, repeats)``; 0.5 passes ``doc_id=`` and expects the Instance
    to carry the task's name, repeats and target itself (its logged samples read the target from the Instance).
    """
    from lm_eval.api.instance import Instance

    request_type = request_type or task.OUTPUT_TYPE
    identity = {key: value for key, value in lm_eval_kwargs.items() if key not in RENDERING_KWARGS}
    if not LM_EVAL_05:
        return Instance(request_type=request_type, doc=doc, arguments=arguments, idx=idx, **identity)
    return Instance(request_type=request_type, doc=doc, arguments=arguments, idx=idx,
                    task_name=task.task_name, repeats=task.config.repeats, target=task.doc_to_target(doc),
                    doc_id=identity.pop("doc_id"), metadata=dict(identity.pop("metadata", None) or {}), **identity)


def aggregate_without_bootstrapping_task_statistics(task: Any,
                                                    bootstrap_iters: int | None) -> tuple[dict[str, Any], int]:
    """lm-eval 0.5's ``Task.aggregate``, with standard errors as lm-eval 0.4 gives them.

    lm-eval 0.5 bootstraps a standard error for every aggregation but ``mean``, re-running it ``bootstrap_iters``
    times (default 100,000) in a process pool. A task's own partition-level statistics (p-values, verdict flags,
    estimates with their own intervals) have no meaningful standard error, cannot be pickled as closures, and would
    cost 100,000 runs of their own tests; lm-eval 0.4 reports "N/A" for them, and so does this. lm-eval's own
    aggregations (``mean``, ``nanmean``, ...) keep their standard errors. Only lm-eval 0.5 calls
    ``Task.aggregate``; 0.4 aggregates outside the task.
    """
    aggregations = task.aggregation()
    lm_evals_own = {name for name, aggregation in aggregations.items()
                    if getattr(aggregation, "__module__", "").startswith("lm_eval.")}
    metrics: dict[str, Any] = {}
    sample_len = 0
    for scorer in task.scorers:
        for own, iters in ((True, bootstrap_iters), (False, 0)):
            docs = {doc_id: {name: value for name, value in doc.items() if (name in lm_evals_own) == own}
                    for doc_id, doc in scorer.reduced_docs.items()}
            result, count = scorer.aggregate(docs, bootstrap_iters=iters, aggregation_overrides=aggregations)
            metrics.update(result)
            sample_len = max(sample_len, count)
    return metrics, sample_len


def rolling_arguments(text: str) -> tuple[str, ...]:
    """A ``loglikelihood_rolling`` request's arguments: ``(text,)`` in lm-eval 0.4, ``("", text)`` in 0.5."""
    return ("", text) if LM_EVAL_05 else (text,)


def model_request(request_type: str, arguments: tuple[Any, ...], *, task_name: str, doc_id: int) -> Any:
    """An Instance to send straight to a built lm-eval model (no task, no doc), in either lm-eval version."""
    from lm_eval.api.instance import Instance

    if LM_EVAL_05:
        return Instance(request_type=request_type, doc={}, arguments=arguments, task_name=task_name, doc_id=doc_id)
    return Instance(request_type=request_type, doc={}, arguments=arguments, idx=0, metadata=(task_name, doc_id, 1))


def _first_repeat(logged: Any) -> Any:
    # lm-eval 0.5 logs a list per request, one response per repeat: [text, ...], [[logprob, is_greedy]] or [logprob].
    # lm-eval 0.4 logs the response: text, [logprob, is_greedy] (a two-item list of numbers) or logprob.
    if isinstance(logged, list) and logged and (len(logged) == 1 or isinstance(logged[0], (str, list))):
        return logged[0]
    return logged


def logged_responses(sample: Mapping[str, Any]) -> list[Any]:
    """A logged sample's filtered response to each of its requests, read from a samples file of lm-eval 0.4 or 0.5.

    The project's tasks repeat each request once, so a 0.5 entry's first repeat is the response.
    """
    return [_first_repeat(logged) for logged in sample["filtered_resps"]]


def rolling_loglikelihood(result: Any) -> float:
    """A ``loglikelihood_rolling`` result's log-likelihood: a float from lm-eval 0.4, ``(logprob, False)`` from 0.5."""
    return float(result[0] if isinstance(result, (tuple, list)) else result)


def task_index(task_manager: Any) -> Mapping[str, Any]:
    """A TaskManager's {name: Entry}: its ``task_index`` in lm-eval 0.4, ``_task_index`` in 0.5."""
    return task_manager._task_index if LM_EVAL_05 else task_manager.task_index


def _bare(key: str) -> str:
    return key.rpartition("::")[2]  # lm-eval 0.5 names a group's tasks ``group::task``


def built_tasks(task_manager: Any, names: Sequence[str]) -> dict[str, Any]:
    """Every plain Task lm-eval builds for task, group or tag ``names``, by bare name, in lm-eval's order."""
    return {_bare(key): task for key, task in task_manager.load(list(names))["tasks"].items()}


def built_for_evaluation(task_manager: Any, name: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """One task, group or tag built: (what ``simple_evaluate`` takes in its place, as built: the Task, the Group
    holding its subtasks, or the tag's Tasks; every plain Task by bare name, in lm-eval's order)."""
    loaded = task_manager.load([name])
    tasks = {_bare(key): task for key, task in loaded["tasks"].items()}
    group = (loaded.get("groups") or {}).get(name)
    return ((group,) if group is not None else tuple(tasks.values())), tasks


def index_task_folders(task_manager: Any, folders: Sequence[str]) -> None:
    """Add task folders written after ``task_manager`` was made to its index, so one manager serves a whole audit
    (its own partitions' task YAMLs are written from the ``--tasks`` benchmarks that manager loaded).

    lm-eval indexes its include paths only in TaskManager's constructor and has no public way to add one; in 0.4.13
    and 0.5 alike the index is the manager's ``_index`` dict, where ``load`` looks names up (a later folder's task
    overrides an earlier one's, as with include paths). The manager's name lists (``all_subtasks``, ...) keep the
    constructor's names: look names up with :func:`task_index`.
    """
    from lm_eval.tasks._index import TaskIndex

    task_manager._index.update(TaskIndex.build([Path(folder) for folder in folders]))


def post_scoring_request(lm: Any, prompt: str) -> Any:
    """POST the request lm-eval's API model ``lm`` would send to score ``prompt`` (its own payload, URL, headers);
    the ``requests`` response. Uses TemplateAPI internals (``_create_payload``, ``header``), hence here."""
    import requests

    payload = lm._create_payload(prompt, generate=False)
    return requests.post(lm.base_url, json=payload, headers=lm.header, verify=lm.verify_certificate,
                         timeout=lm.timeout)
