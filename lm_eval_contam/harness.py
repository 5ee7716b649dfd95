"""What every method's lm-eval glue shares: task-manager factory, include paths, YAML data lines, post-processing.

The only module besides ``<method>/task.py`` that talks to lm-eval's task API;
jobs (audit) and the CLI call it, never the other way round.
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval_contam import task_dir
from lm_eval_contam.partitions import Partition

log = logging.getLogger("lm_eval_contam")


def include_paths(user_value: str | list[str] | tuple[str, ...] | None = None) -> list[str]:
    """The user's include path(s) first, then the project's task directory."""
    ours = str(task_dir())
    if user_value is None:
        return [ours]
    given = [user_value] if isinstance(user_value, str) else list(user_value)
    return [p for p in given if p != ours] + [ours]


def task_manager(include_path: str | list[str] | tuple[str, ...] | None = None, *, include_defaults: bool = False) -> Any:
    """lm-eval's TaskManager over the project's tasks (and lm-eval's own with ``include_defaults``)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=include_paths(include_path), include_defaults=include_defaults)


def data_lines(partition: Partition) -> list[str]:
    """How a task YAML loads the partition: by Hub path, or by the project's local-data hook."""
    spec = partition.dataset
    if spec.hf_path is None:
        return ["custom_dataset: !function lm_eval_contam.datafiles.load_partitions"]
    return [f"dataset_path: {spec.hf_path}", *([f"dataset_name: {spec.hf_name}"] if spec.hf_name else [])]


def post_process(results: dict[str, Any]) -> dict[str, Any]:
    """Add the project's derived rows to lm-eval's results: docs cut to the context window, DCR Factor, ``acc_adj``.

    A failing hook is logged, never raised: lm-eval has not saved the run yet, and
    the raw results must survive.
    """
    from lm_eval_contam.context_window import count_truncation
    from lm_eval_contam.dcr.hook import post_process_results

    for step, what in ((count_truncation, "Context-window check"), (post_process_results, "DCR post-processing")):
        try:
            results = step(results)
        except Exception:  # noqa: BLE001 - see docstring
            log.exception("%s failed; the run's lm-eval results are kept", what)
    return results
