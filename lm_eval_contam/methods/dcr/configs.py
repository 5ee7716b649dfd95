"""Render the per-level task YAMLs and the group YAML of every shipped sheet.

``python scripts/generate_task_configs.py`` writes them under task_configs/dcr/<bench>/.
Every one declares ``metadata.method: dcr`` (the family the report and the verdicts
look for); it sits in each file, not in ``_template_yaml``, because lm-eval's
``include`` merges top-level keys only and a file's own ``metadata`` would replace
the template's.
"""

from __future__ import annotations

from pathlib import Path

from lm_eval_contam.core.install import TEMPLATE
from lm_eval_contam.lmeval.task_yaml import Verbatim, thin_task_yaml
from lm_eval_contam.methods.dcr.schema import LEVELS
from lm_eval_contam.methods.dcr.sheet import load_sheet, sheets_dir

VERSION = 1.0
METHOD = "dcr"  # metadata.method: the family name of the verdicts and the report renderer


def template_path() -> Path:
    """The YAML every level task includes (``task_configs/dcr/_template_yaml``)."""
    return sheets_dir().parent / TEMPLATE


def level_task_yaml(task: str, sheet_ref: str, level: int, *, include: str) -> str:
    """One level task's YAML: the shared template, the task's name, and the sheet and level it asks."""
    return thin_task_yaml(header="", include=include, task=task, metadata={
        "version": VERSION, "method": Verbatim(METHOD), "dcr_sheet": Verbatim(sheet_ref), "dcr_level": level})


def shipped_task_configs() -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted(sheets_dir().glob("*.yaml")):
        sheet = load_sheet(path)
        bench = sheet.benchmark
        header = f"# Generated from sheets/{path.name} by scripts/generate_task_configs.py; do not edit.\n"
        for level in LEVELS:
            files[f"{bench}/{sheet.level_task(level)}.yaml"] = header + level_task_yaml(
                sheet.level_task(level), path.stem, level, include=f"../{TEMPLATE}")
        tasks = "".join(f"  - {sheet.level_task(level)}\n" for level in LEVELS)
        files[f"{bench}/_{sheet.group}.yaml"] = (
            f"{header}# The DCR Factor and acc_adj are added after the run by lm_eval_contam.methods.dcr.hook.\n"
            f"group: {sheet.group}\ntask:\n{tasks}metadata:\n  version: {VERSION}\n  method: {METHOD}\n"
        )
    return files
