"""Where the installed package keeps its task configs, and its version: the facts every layer may ask of the install."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from lm_eval_contam.core.errors import ContamError

__version__ = "0.3.0"
TEMPLATE = "_template_yaml"  # every method's task template, in task_dir()/<method>/


def task_dir() -> Path:
    """Directory of the project's lm-eval task configs (pass it to ``--include_path``).

    ``task_configs/`` is installed as the package ``lm_eval_contam.task_configs``,
    so this works for editable and non-editable installs alike.
    """
    spec = importlib.util.find_spec("lm_eval_contam.task_configs")
    if spec is None or not spec.submodule_search_locations:
        raise ContamError("lm_eval_contam.task_configs is missing from the installation; reinstall lm-eval-contam")
    return Path(next(iter(spec.submodule_search_locations)))


def package_template(package: str, name: str = TEMPLATE) -> str:
    """The path of a task template a package ships beside its modules (a plug-in's ``_template_yaml``), for a task
    YAML's ``include:``; found through the package, wherever it is installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ContamError(f"{package!r} is not an installed package: no template {name!r} to include")
    path = Path(next(iter(spec.submodule_search_locations))) / name
    if not path.is_file():
        raise ContamError(f"{package!r} ships no {name!r}", source=str(path))
    return str(path)

