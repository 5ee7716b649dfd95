"""An adjusted score beside every benchmark a run evaluates: each benchmark task gets a DCR sheet built from it.

For every plain lm-eval task a run names (directly or through a group) that no DCR sheet of the run already
adjusts and that is not one of this project's own tasks, :func:`adjustment_tasks` renders the task's docs
(:mod:`lm_eval_contam.lmeval.benchmark_docs`), builds its sheet (:func:`lm_eval_contam.methods.dcr.task_sheet.task_sheet`),
writes the sheet, its rows and its four level-task YAMLs into a folder of their own under
``$LM_EVAL_CONTAM_HOME/dcr_task_sheets/`` (named by the task and a hash of the content, so a folder is never
overwritten with something else and ``adjust`` / ``dcr-export`` find the sheet after the run), and returns
the YAML paths to add to the run's tasks. After the run the DCR hook reads the four levels and writes
``<metric>_adj`` (with its interval) beside every higher-is-better metric of the task.

A group the run names (``mmlu``, nested groups and all) gets ONE sheet instead, its items drawn across the
subtasks in proportion to their sizes (:func:`lm_eval_contam.methods.dcr.task_sheet.group_sheet`); its factor is the
group's and adjusts every subtask's metrics and the group rows' (one sheet's generations instead of one per
subtask: docs/guide/cost.md). ``--metadata '{"dcr_per_subtask": true}'`` (``audit --dcr-per-subtask``) gives each subtask
its own sheet, as before.

A task that cannot have a sheet (no docs text, no gold answers, nothing WordNet can perturb) is logged with
why and evaluated without ``_adj``; the run goes on. ``--metadata '{"dcr_adjust": false}'`` turns this off for
the run, the same key in a task's own metadata for that task. An ``audit_id`` in the run's metadata (``audit``
passes its own: ``audit.json``) goes into every level task's metadata and its folder's hash, so the results record
which audit ran them; ``run`` passes none and nothing is added.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from lm_eval_contam.core.audit_identity import AUDIT_ID_KEY
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import write_jsonl
from lm_eval_contam.core.seeding import stable_hash
from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, LoadedBenchmark, eval_split, load_tasks, loaded_subtask
from lm_eval_contam.lmeval.lm_eval_compat import selected_task_configs, task_index
from lm_eval_contam.lmeval.task_yaml import with_metadata
from lm_eval_contam.methods.dcr.configs import level_task_yaml, template_path
from lm_eval_contam.methods.dcr.schema import LEVELS
from lm_eval_contam.methods.dcr.sheet import load_sheet
from lm_eval_contam.methods.dcr.task_sheet import group_sheet, task_sheet
from lm_eval_contam.models.default_model import cache_home

log = logging.getLogger("lm_eval_contam.methods.dcr")

SHEETS_FOLDER = "dcr_task_sheets"
SHEET_FILE, ROWS_FILE = "sheet.yaml", "rows.jsonl"
ADJUST_KEY = "dcr_adjust"  # run metadata: false turns the task-built sheets off
PER_SUBTASK_KEY = "dcr_per_subtask"  # run metadata: true gives each subtask of a group its own sheet


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


def write_sheet(task: str, sheet: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], home: Path,
                audit_id: str | None = None) -> list[Path]:
    """Write the sheet, its rows and its level-task YAMLs into their own folder; the YAML paths, L1 to L4.

    The folder is named by the task and a hash of sheet and rows (and ``audit_id``, the auditing run's id, when
    given: each audit its own folder, the id in every level task's metadata): the same content finds its folder again
    and different content never overwrites it. The sheet is read back (validated) before any YAML is written.
    """
    identity = () if audit_id is None else (audit_id,)  # none: the hash (and folder) an audit-less run always had
    digest = stable_hash(json.dumps(sheet, sort_keys=True), json.dumps(list(rows), sort_keys=True), *identity)[:12]
    folder = home / f"{sheet['benchmark']}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    sheet_path = folder / SHEET_FILE
    write_jsonl(folder / ROWS_FILE, rows)
    kind = "group" if "drawn_across" in sheet else "task"
    sheet_path.write_text(f"# Built from the lm-eval {kind} {task!r} by lm_eval_contam.methods.dcr.benchmark_sheets; see "
                          f"lm_eval_contam/methods/dcr/task_sheet.py.\n" + yaml.safe_dump(dict(sheet), sort_keys=False,
                                                                                 allow_unicode=True),
                          encoding="utf-8")
    parsed = load_sheet(sheet_path)
    paths = []
    for level in LEVELS:
        path = folder / f"{parsed.level_task(level)}.yaml"
        text = level_task_yaml(parsed.level_task(level), str(sheet_path), level, include=str(template_path()))
        path.write_text(text if audit_id is None else with_metadata(text, AUDIT_ID_KEY, audit_id), encoding="utf-8")
        paths.append(path)
    return paths


def higher_metrics(task: Any) -> list[str]:
    """The metrics of a built lm-eval task where higher is better (those a sheet adjusts)."""
    return [metric for metric, higher in task.higher_is_better().items() if higher]


def task_level_yamls(name: str, task: Any, docs: Sequence[BenchmarkDoc], *, seed: int, home: Path,
                     audit_id: str | None = None) -> list[Path]:
    """The level-task YAMLs of the sheet built from one loaded lm-eval task and its rendered evaluation docs."""
    sheet, rows = task_sheet(name, [asdict(doc) for doc in docs], split=eval_split(task), metrics=higher_metrics(task),
                             description=str(task.config.description or ""), seed=seed)
    return write_sheet(name, sheet, rows, home, audit_id)


def group_targets(benchmark: LoadedBenchmark, subtasks: Sequence[str]) -> list[tuple[str, str]]:
    """What a group's one factor adjusts: every subtask's higher-is-better metrics, then each group row of the tree
    (the group and its nested groups) for each of those metrics it aggregates."""
    targets = [(name, metric) for name in subtasks for metric in higher_metrics(benchmark[name])]
    adjusted = {metric for _, metric in targets}
    groups = [group for group in benchmark.evaluated if hasattr(group, "get_all_groups")]
    for group in [tree for top in groups for tree in (top, *top.get_all_groups())]:
        aggregated = [str(entry.metric) for entry in group.aggregate_metric_list or ()]
        targets += [(group.name, metric) for metric in dict.fromkeys(aggregated) if metric in adjusted]
    return targets


def group_level_yamls(benchmark: LoadedBenchmark, subtasks: Sequence[str], *, seed: int, home: Path,
                      audit_id: str | None = None) -> list[Path]:
    """The level-task YAMLs of one sheet for an lm-eval group, drawn across ``subtasks`` (those of its subtasks
    that want a sheet)."""
    splits = {eval_split(benchmark[name]) for name in subtasks}
    sheet, rows = group_sheet(benchmark.name, {name: [asdict(doc) for doc in benchmark.docs[name]] for name in subtasks},
                              split=splits.pop() if len(splits) == 1 else "evaluation",
                              adjusts=group_targets(benchmark, subtasks), seed=seed)
    return write_sheet(benchmark.name, sheet, rows, home, audit_id)


def is_group(name: str, task_manager: Any) -> bool:
    """An lm-eval group (its YAML says ``group:``; a tag is not one: its tasks share no row of results)."""
    entry = task_index(task_manager).get(name)
    return entry is not None and "group" in (entry.cfg or {})


def adjustment_tasks(tasks: Sequence[Any], task_manager: Any, metadata: Mapping[str, Any] | None = None,
                     loaded: Mapping[str, LoadedBenchmark] | None = None, *, home: Path | None = None) -> list[str]:
    """The level-task YAML paths to add to a run of ``tasks`` so every benchmark task gets ``<metric>_adj``.

    A group named in ``tasks`` gets one sheet drawn across its subtasks (:func:`group_level_yamls`), unless the run
    metadata says ``dcr_per_subtask: true``; every other benchmark task its own sheet. ``loaded``: benchmarks already
    built and rendered (``audit --tasks``), used as they are. ``audit_id`` in ``metadata``: the auditing run's id,
    stamped into every level task's metadata (:func:`write_sheet`).
    """
    metadata = dict(metadata or {})
    if metadata.get(ADJUST_KEY) is False:
        return []
    seed = int(metadata.get("seed", 0))
    audit_id = None if metadata.get(AUDIT_ID_KEY) is None else str(metadata[AUDIT_ID_KEY])
    home = home or sheets_home()
    names = [task for task in tasks if isinstance(task, str)]
    wanted = benchmark_tasks(selected_task_configs(task_manager, names))
    added: list[str] = []
    groups = [] if metadata.get(PER_SUBTASK_KEY) is True else [name for name in dict.fromkeys(names)
                                                                  if is_group(name, task_manager)]
    for group in groups:
        try:
            benchmark = (loaded or {}).get(group) or load_tasks([group], task_manager)[group]
            subtasks = [name for name in benchmark if name in wanted]
            if subtasks:
                added += [str(path) for path in group_level_yamls(benchmark, subtasks, seed=seed, home=home,
                                                                  audit_id=audit_id)]
                wanted = [name for name in wanted if name not in subtasks]  # one factor per subtask: its group's
        except ContamError as error:
            log.warning("no DCR-adjusted score for the group %s: %s", group, error)
    for name in wanted:
        try:
            task, docs = loaded_subtask(name, loaded or {}, task_manager)
            added += [str(path) for path in task_level_yamls(name, task, docs, seed=seed, home=home,
                                                             audit_id=audit_id)]
        except ContamError as error:
            log.warning("no DCR-adjusted score for %s: %s", name, error)
    return added
