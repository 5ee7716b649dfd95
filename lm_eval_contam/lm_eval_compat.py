"""The few places where the glue depends on lm-eval internals that differ between versions or backends.

Kept in one module so a new lm-eval release (or API model) changes one file.
"""

from __future__ import annotations

import sys
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
    index = task_manager.task_index
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
