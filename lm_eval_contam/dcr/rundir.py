"""Reading an lm-eval output directory: results JSON files, their samples, adjusted copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lm_eval_contam.dcr.checks import CheckRow, parse_check
from lm_eval_contam.errors import ContamError

ADJUSTED_SUFFIX = ".dcr_adjusted"


def results_files(output_path: str | Path) -> list[Path]:
    """lm-eval's ``results_<date>.json`` files under ``output_path`` (a file is taken as is)."""
    path = Path(output_path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ContamError("no such file or directory", source=str(path), field="output_path")
    found = sorted(p for p in path.rglob("results_*.json") if ADJUSTED_SUFFIX not in p.name)
    if not found:
        raise ContamError("no lm-eval results_*.json under this path", source=str(path), field="output_path")
    return found


def load_results(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ContamError(f"cannot read lm-eval results JSON: {error}", source=str(path)) from error


def adjusted_path(results_file: Path) -> Path:
    """``results_<date>.dcr_adjusted.json`` beside the original; numbered, never overwriting."""
    candidate = results_file.with_name(f"{results_file.stem}{ADJUSTED_SUFFIX}.json")
    number = 1
    while candidate.exists():
        candidate = results_file.with_name(f"{results_file.stem}{ADJUSTED_SUFFIX}.{number}.json")
        number += 1
    return candidate


def samples_file(results_file: Path, task: str) -> Path:
    """lm-eval's ``samples_<task>_<date>.jsonl`` written with ``results_<date>.json``."""
    date = results_file.stem.removeprefix("results_")
    path = results_file.with_name(f"samples_{task}_{date}.jsonl")
    if not path.is_file():
        raise ContamError(f"no samples file for {task}; rerun with --log_samples", source=str(path))
    return path


def check_rows(results_file: Path, level_tasks: dict[str, dict[int, str]]) -> list[CheckRow]:
    """One CSV row per logged DCR item: prompt, response, automatic result."""
    rows = []
    for sheet, tasks in sorted(level_tasks.items()):
        for level, task in sorted(tasks.items()):
            for line in samples_file(results_file, task).read_text(encoding="utf-8").splitlines():
                sample = json.loads(line)
                doc = sample["doc"]
                response = sample["filtered_resps"][0] if sample.get("filtered_resps") else sample["resps"][0][0]
                verdict = sample.get("contaminated")
                auto = None if verdict is None or verdict != verdict else bool(verdict)
                rows.append(CheckRow(
                    sheet=sheet, task=task, level=level, item_id=doc["item_id"],
                    check_kind=parse_check(json.loads(doc["check"])).kind, prompt=doc["prompt"],
                    response=response, reference=doc["reference"], auto_result=auto, contaminated=auto,
                ))
    return rows
