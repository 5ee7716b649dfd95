"""Render the per-level task YAMLs and the group YAML of every shipped sheet.

``python scripts/generate_task_configs.py`` writes them under task_configs/dcr/<bench>/.
Every one declares ``metadata.method: dcr`` (the family the report and the verdicts
look for); it sits in each file, not in ``_template_yaml``, because lm-eval's
``include`` merges top-level keys only and a file's own ``metadata`` would replace
the template's.
"""

from __future__ import annotations

from lm_eval_contam.dcr.schema import LEVELS
from lm_eval_contam.dcr.sheet import load_sheet, sheets_dir

VERSION = 1.0
METHOD = "dcr"  # metadata.method: the family name of the verdicts and the report renderer


def render_task_configs() -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted(sheets_dir().glob("*.yaml")):
        sheet = load_sheet(path)
        bench = sheet.benchmark
        header = f"# Generated from sheets/{path.name} by scripts/generate_task_configs.py; do not edit.\n"
        for level in LEVELS:
            files[f"{bench}/{sheet.level_task(level)}.yaml"] = (
                f"{header}include: ../_template_yaml\n"
                f"task: {sheet.level_task(level)}\n"
                f"metadata:\n  version: {VERSION}\n  method: {METHOD}\n"
                f"  dcr_sheet: {path.stem}\n  dcr_level: {level}\n"
            )
        tasks = "".join(f"  - {sheet.level_task(level)}\n" for level in LEVELS)
        files[f"{bench}/_{sheet.group}.yaml"] = (
            f"{header}# The DCR Factor and acc_adj are added after the run by lm_eval_contam.dcr.hook.\n"
            f"group: {sheet.group}\ntask:\n{tasks}metadata:\n  version: {VERSION}\n  method: {METHOD}\n"
        )
    return files
