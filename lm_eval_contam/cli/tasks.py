"""``lm-eval-contam tasks``: list the project's tasks, groups and tags."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass

from lm_eval_contam.core.install import task_dir
from lm_eval_contam.harness import task_manager
from lm_eval_contam.lmeval.lm_eval_compat import task_index


@dataclass(frozen=True)
class TaskRow:
    name: str
    kind: str  # task | group | tag
    dataset: str
    output_type: str
    tags: str


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tasks",
        help="list the lm-eval-contam tasks and groups with their datasets and output types",
        description="List the tasks, groups and tags lm-eval finds in the lm-eval-contam task directory.",
    )
    parser.add_argument("pattern", nargs="?", default="", help="only names containing this text")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    parser.set_defaults(func=_main, every_method=True)  # plans or runs the methods: a broken plug-in stops it


def _dataset_of(cfg: dict) -> str:
    if cfg.get("custom_dataset"):
        metadata = cfg.get("metadata") or {}
        return str(metadata.get("dataset") or metadata.get("dataset_name") or metadata.get("dcr_sheet")
                   or "shipped with lm-eval-contam")
    path = cfg.get("dataset_path") or ""
    name = cfg.get("dataset_name")
    return f"{path} ({name})" if name else str(path)


def task_rows(pattern: str = "") -> list[TaskRow]:
    """One row per task, group and tag under :func:`task_dir`, sorted by kind then name."""
    manager = task_manager()  # the project's task directory only
    subtasks, groups, tags = set(manager.all_subtasks), set(manager.all_groups), set(manager.all_tags)
    rows = []
    for name, entry in task_index(manager).items():
        if pattern not in name:
            continue
        cfg = entry.cfg or {}
        if name in subtasks:
            rows.append(
                TaskRow(name, "task", _dataset_of(cfg), str(cfg.get("output_type", "")), ",".join(sorted(entry.tags)))
            )
        elif name in groups:
            members = cfg.get("task") or []
            count = len(members) if isinstance(members, list) else 1
            rows.append(TaskRow(name, "group", f"{count} tasks", "", ",".join(sorted(entry.tags))))
        elif name in tags:
            rows.append(TaskRow(name, "tag", "", "", ""))
    order = {"group": 0, "tag": 1, "task": 2}
    return sorted(rows, key=lambda row: (order[row.kind], row.name))


def _main(args: argparse.Namespace) -> int:
    rows = task_rows(args.pattern)
    if args.json:
        print(json.dumps([asdict(row) for row in rows], indent=2))
        return 0
    from tabulate import tabulate

    print(tabulate([asdict(row) for row in rows], headers="keys", tablefmt="github"))
    print(f"\n{len(rows)} entries under {task_dir()}")
    return 0
