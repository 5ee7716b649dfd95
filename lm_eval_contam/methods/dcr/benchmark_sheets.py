"""An adjusted score beside every benchmark a run evaluates: each benchmark task gets a DCR sheet built from it.

For every plain lm-eval task a run names (directly or through a group) that no DCR sheet of the run already
adjusts and that is not one of this project's own tasks, :func:`adjustment_tasks` renders the task's docs
(:mod:`lm_eval_contam.lmeval.benchmark_docs`), builds its sheet (:func:`lm_eval_contam.methods.dcr.task_sheet.task_sheet`),
writes the sheet, its rows and its four level-task YAMLs into a folder of their own under
``$LM_EVAL_CONTAM_HOME/dcr_task_sheets/`` (named by the task and a hash of the content, so a folder is never
overwritten with something else and ``adjust`` / ``dcr-export`` find the sheet after the run), and returns
the YAML paths to add to the run's tasks. After the run the DCR hook reads the four levels and writes
``<metric>_adj`` (with its interval) beside every higher-is-better metric of the task.

A task that cannot have a sheet (no docs text, no gold answers, nothing WordNet can perturb) is logged with
why and evaluated without ``_adj``; the run goes on. ``--metadata '{"dcr_adjust": false}'`` turns this off for
the run, the same key in a task's own metadata for that task.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, LoadedBenchmark, eval_split, loaded_subtask
from lm_eval_contam.methods.dcr.configs import level_task_yaml, template_path
from lm_eval_contam.methods.dcr.schema import LEVELS
from lm_eval_contam.methods.dcr.sheet import load_sheet
from lm_eval_contam.methods.dcr.task_sheet import task_sheet
from lm_eval_contam.models.default_model import cache_home
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import write_jsonl
from lm_eval_contam.lmeval.lm_eval_compat import selected_task_configs
from lm_eval_contam.core.seeding import stable_hash

log = logging.getLogger("lm_eval_contam.methods.dcr")

SHEETS_FOLDER = "dcr_task_sheets"
SHEET_FILE, ROWS_FILE = "sheet.yaml", "rows.jsonl"
ADJUST_KEY = "dcr_adjust"  # run metadata: false turns the task-built sheets off


def sheets_home() -> Path:
    return cache_home() / SHEETS_FOLDER


def benchmark_tasks(configs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The plain tasks among a run's selected task configs that want a sheet built from them.

    Left out: this project's own tasks (``metadata.method``: the methods' tasks, DCR levels included), tasks whose
    metadata says ``dcr_adjust: false`` (the wiring probe) and every task a DCR sheet of the run already adjusts.
    """
    sheets = {str(metadata["dcr_sheet"]) for config in configs.values()
              if "dcr_sheet" in (metadata := config.get("metadata") or {})}  # one per sheet, not one per level task
    adjusted = {target.task for sheet in sheets for target in load_sheet(sheet).adjusts}
    wanted = []
    for name, config in configs.items():
        metadata = config.get("metadata") or {}
        if not metadata.get("method") and metadata.get(ADJUST_KEY) is not False and name not in adjusted:
            wanted.append(name)
    return wanted


def write_sheet(task: str, sheet: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], home: Path) -> list[Path]:
    """Write the sheet, its rows and its level-task YAMLs into their own folder; the YAML paths, L1 to L4.

    The folder is named by the task and a hash of sheet and rows: the same content finds its folder again and
    different content never overwrites it. The sheet is read back (validated) before any YAML is written.
    """
    digest = stable_hash(json.dumps(sheet, sort_keys=True), json.dumps(list(rows), sort_keys=True))[:12]
    folder = home / f"{sheet['benchmark']}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    sheet_path = folder / SHEET_FILE
    write_jsonl(folder / ROWS_FILE, rows)
    sheet_path.write_text(f"# Built from the lm-eval task {task!r} by lm_eval_contam.methods.dcr.benchmark_sheets; see "
                          f"lm_eval_contam/methods/dcr/task_sheet.py.\n" + yaml.safe_dump(dict(sheet), sort_keys=False,
                                                                                 allow_unicode=True),
                          encoding="utf-8")
    parsed = load_sheet(sheet_path)
    paths = []
    for level in LEVELS:
        path = folder / f"{parsed.level_task(level)}.yaml"
        path.write_text(level_task_yaml(parsed.level_task(level), str(sheet_path), level,
                                        include=str(template_path())), encoding="utf-8")
        paths.append(path)
    return paths


def task_level_yamls(name: str, task: Any, docs: Sequence[BenchmarkDoc], *, seed: int, home: Path) -> list[Path]:
    """The level-task YAMLs of the sheet built from one loaded lm-eval task and its rendered evaluation docs."""
    metrics = [metric for metric, higher in task.higher_is_better().items() if higher]
    sheet, rows = task_sheet(name, [asdict(doc) for doc in docs], split=eval_split(task), metrics=metrics,
                             description=str(task.config.description or ""), seed=seed)
    return write_sheet(name, sheet, rows, home)


def adjustment_tasks(tasks: Sequence[Any], task_manager: Any, metadata: Mapping[str, Any] | None = None,
                     loaded: Mapping[str, LoadedBenchmark] | None = None, *, home: Path | None = None) -> list[str]:
    """The level-task YAML paths to add to a run of ``tasks`` so every benchmark task gets ``<metric>_adj``.

    ``loaded``: benchmarks already built and rendered (``audit --tasks``), used as they are.
    """
    metadata = dict(metadata or {})
    if metadata.get(ADJUST_KEY) is False:
        return []
    seed = int(metadata.get("seed", 0))
    names = [task for task in tasks if isinstance(task, str)]
    added: list[str] = []
    for name in benchmark_tasks(selected_task_configs(task_manager, names)):
        try:
            task, docs = loaded_subtask(name, loaded or {}, task_manager)
            added += [str(path) for path in task_level_yamls(name, task, docs, seed=seed, home=home or sheets_home())]
        except ContamError as error:
            log.warning("no DCR-adjusted score for %s: %s", name, error)
    return added
