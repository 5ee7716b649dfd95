"""Reading a run directory for the report: an audit (``audit.json``) or plain lm-eval output paths.

An audit directory follows the audit contract: ``audit.json`` names each model's
label, injection manifest and ``run_dir``. Anything else is taken as one or more
lm-eval ``--output_path`` directories: every directory holding ``results_*.json``
files is one model. Several results files of one model are merged, the latest
file winning per task; each task is paired with its ``samples_<task>_<date>.jsonl``
and, for Time Travel, the ``.judge_b.json`` written by ``lm-eval-contam judge``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lm_eval_contam.dcr.rundir import ADJUSTED_SUFFIX
from lm_eval_contam.errors import ContamError
from lm_eval_contam.jsonl import read_jsonl_objects
from lm_eval_contam.timetravel.verdicts import SUFFIX as JUDGE_B_SUFFIX

AUDIT_FILE = "audit.json"
# lm-eval's date ids ("2024-05-01T12-00-00.123456") hold no underscore, so the task is
# everything between "samples_" and the last underscore.
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>[^_]+)\.jsonl$")
_RESULTS_NAME = re.compile(r"^results_(?P<date>[^_]+?)(?P<adjusted>" + re.escape(ADJUSTED_SUFFIX) + r"(?:\.(?P<copy>\d+))?)?\.json$")


@dataclass(frozen=True)
class TaskFiles:
    """Where one task's numbers and logged samples came from."""

    results_file: Path
    samples_file: Path | None
    judge_b_file: Path | None


@dataclass(frozen=True)
class ModelRun:
    """One model's merged lm-eval results (the shape of one ``results_*.json``) and its files per task."""

    label: str
    model: str  # lm-eval backend and model_args, as the results record them
    directory: Path
    results: Mapping[str, Any]  # "results", "configs", "n-samples", "group_subtasks", "higher_is_better"
    files: Mapping[str, TaskFiles]
    injection: Mapping[str, Any] | None = None  # the contamination manifest, when an audit injected this model


@dataclass(frozen=True)
class Run:
    path: Path
    models: tuple[ModelRun, ...]
    audit: Mapping[str, Any] | None = None  # audit.json's settings/partitions, when it is an audit


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ContamError(f"cannot read: {error.strerror or error}", source=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ContamError(f"not valid JSON ({error})", source=str(path)) from None


def read_samples(path: Path) -> list[dict[str, Any]]:
    """lm-eval's logged samples, one JSON object a line."""
    return read_jsonl_objects(path)


def read_judge_b(path: Path) -> dict[str, Any]:
    """A ``.judge_b.json`` summary (see lm_eval_contam.timetravel.verdicts.write_verdicts)."""
    verdicts = read_json(path)
    if not isinstance(verdicts, dict):
        raise ContamError("expected a JSON object", source=str(path))
    for field in ("alg2_contaminated", "exact_matches", "near_exact_matches", "instances"):
        if field not in verdicts:
            raise ContamError("missing; rerun lm-eval-contam judge", source=str(path), field=field)
    return verdicts


def _results_date(path: Path) -> str:
    match = _RESULTS_NAME.match(path.name)
    return match["date"] if match else path.stem


def _adjusted_copy_number(path: Path) -> int:
    match = _RESULTS_NAME.match(path.name)
    return -1 if not match or not match["adjusted"] else int(match["copy"] or 0)


def results_by_date(directory: Path) -> list[Path]:
    """The directory's results files, oldest first; a ``dcr_adjusted`` copy (the latest) stands in for its original.

    ``lm-eval-contam adjust`` writes the original's numbers plus the DCR rows into
    the copy, so reading it shows the adjusted accuracy the user asked for.
    """
    by_date: dict[str, Path] = {}
    for path in directory.glob("results_*.json"):
        date = _results_date(path)
        if date not in by_date or _adjusted_copy_number(path) > _adjusted_copy_number(by_date[date]):
            by_date[date] = path
    return [by_date[date] for date in sorted(by_date)]


def _samples_by_task(directory: Path) -> dict[str, dict[str, Path]]:
    """task → {date → samples file}."""
    found: dict[str, dict[str, Path]] = {}
    for path in directory.glob("samples_*.jsonl"):
        match = _SAMPLES_NAME.match(path.name)
        if match:
            found.setdefault(match["task"], {})[match["date"]] = path
    return found


def _task_files(results_file: Path, task: str, samples: Mapping[str, Mapping[str, Path]]) -> TaskFiles:
    by_date = samples.get(task, {})
    date = _results_date(results_file)
    # The samples written with this results file; else the task's latest.
    chosen = by_date.get(date) or (by_date[max(by_date)] if by_date else None)
    judge_b = chosen.with_name(chosen.name.removesuffix(".jsonl") + JUDGE_B_SUFFIX) if chosen else None
    return TaskFiles(results_file, chosen, judge_b if judge_b and judge_b.is_file() else None)


def _results_json(path: Path) -> dict[str, Any]:
    results = read_json(path)
    if not isinstance(results, dict) or not isinstance(results.get("results"), dict):
        raise ContamError("not an lm-eval results file (no 'results' object)", source=str(path), field="results")
    return results


def _model_description(results: Mapping[str, Any]) -> str:
    config = results.get("config") or {}
    model, args = config.get("model"), config.get("model_args")
    if isinstance(args, dict):
        args = ",".join(f"{key}={value}" for key, value in args.items())
    return " ".join(str(part) for part in (model, args) if part) or str(results.get("model_name", ""))


def load_model_dir(directory: Path, *, label: str | None = None, model: str | None = None,
                   injection: Mapping[str, Any] | None = None) -> ModelRun:
    """One model's results files merged, the latest file winning per task."""
    files = results_by_date(directory)
    if not files:
        raise ContamError("no lm-eval results_*.json here", source=str(directory))
    samples = _samples_by_task(directory)
    merged: dict[str, dict[str, Any]] = {
        "results": {}, "configs": {}, "n-samples": {}, "group_subtasks": {}, "higher_is_better": {}}
    task_files: dict[str, TaskFiles] = {}
    latest: dict[str, Any] = {}
    for path in files:
        latest = _results_json(path)
        for section, entries in merged.items():
            entries.update(latest.get(section) or {})
        for task in latest["results"]:
            task_files[task] = _task_files(path, task, samples)
    return ModelRun(
        label=label or str(latest.get("model_name") or directory.name),
        model=model or _model_description(latest),
        directory=directory,
        results=merged,
        files=task_files,
        injection=injection,
    )


def _model_dirs(root: Path) -> list[Path]:
    return sorted({path.parent for path in root.rglob("results_*.json")})


def _load_audit(path: Path) -> Run:
    audit_file = path / AUDIT_FILE
    audit = read_json(audit_file)
    models = audit.get("models") if isinstance(audit, dict) else None
    if not isinstance(models, list) or not models:
        raise ContamError("expected a non-empty list of models", source=str(audit_file), field="models")
    runs = []
    for number, entry in enumerate(models):
        where = f"models[{number}]"
        if not isinstance(entry, dict) or not entry.get("label") or not entry.get("run_dir"):
            raise ContamError("each model needs a label and a run_dir", source=str(audit_file), field=where)
        run_dir = path / str(entry["run_dir"])
        if not run_dir.is_dir():
            raise ContamError(f"run_dir {run_dir} does not exist", source=str(audit_file), field=f"{where}.run_dir")
        directories = _model_dirs(run_dir)
        if not directories:
            raise ContamError("no lm-eval results_*.json under this model's run_dir", source=str(run_dir))
        for directory in directories:
            # One model per run_dir by contract; extra subdirectories keep their name in the label.
            label = str(entry["label"]) if len(directories) == 1 else f"{entry['label']}/{directory.name}"
            model = " ".join(str(entry[key]) for key in ("model", "model_args") if entry.get(key)) or None
            runs.append(load_model_dir(directory, label=label, model=model, injection=entry.get("injection")))
    return Run(path=path, models=tuple(runs), audit={k: v for k, v in audit.items() if k != "models"})


def load_run(path: str | Path) -> Run:
    """An audit directory, or lm-eval output path(s) with one model per results directory."""
    path = Path(path)
    if not path.is_dir():
        raise ContamError("no such directory", source=str(path), field="output_path")
    if (path / AUDIT_FILE).is_file():
        return _load_audit(path)
    directories = _model_dirs(path)
    if not directories:
        raise ContamError("no lm-eval results_*.json under this path (run lm-eval with --output_path)",
                          source=str(path), field="output_path")
    models = [load_model_dir(directory) for directory in directories]
    labels = [model.label for model in models]
    if len(set(labels)) < len(labels):
        # The same model in several output paths: tell them apart by where they sit.
        models = [replace(model, label=str(model.directory.relative_to(path))) for model in models]
    return Run(path=path, models=tuple(models))
