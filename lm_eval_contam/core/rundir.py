"""The one reader of lm-eval output directories, for the report, the verdicts, ``adjust``, ``dcr-export`` and ``judge``.

A run directory is an audit (``audit.json`` names each model's label, injection
manifest and ``run_dir``) or one or more lm-eval ``--output_path`` directories,
every directory holding ``results_*.json`` files being one model. Several results
files of one model are merged, the latest file winning per task; each task is
paired with its ``samples_<task>_<date>.jsonl``. Files derived from a run sit
beside its originals with a suffix (``.dcr_adjusted``, ``.judge_b``) and never
replace them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lm_eval_contam.core.audit_identity import AUDIT_FILE, AUDIT_ID_KEY
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.result_numbers import count_problem, interval_problems, number_problem, row_value_problem

ADJUSTED_SUFFIX = ".dcr_adjusted"
FILTER = "none"  # the project's tasks define no filters
# lm-eval's date ids ("2024-05-01T12-00-00.123456") hold no underscore, so the task is
# everything between "samples_" and the last underscore.
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>[^_]+)\.jsonl$")
_RESULTS_NAME = re.compile(r"^results_(?P<date>[^_]+?)(?P<adjusted>" + re.escape(ADJUSTED_SUFFIX) + r"(?:\.(?P<copy>\d+))?)?\.json$")


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ContamError(f"cannot read: {error.strerror or error}", source=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ContamError(f"not valid JSON ({error})", source=str(path)) from None


def read_results(path: Path) -> dict[str, Any]:
    """One lm-eval ``results_*.json``, its numbers checked against what the project's tasks write
    (:func:`check_results_numbers`)."""
    results = read_json(path)
    if not isinstance(results, dict) or not isinstance(results.get("results"), dict):
        raise ContamError("not an lm-eval results file (no 'results' object)", source=str(path), field="results")
    check_results_numbers(results, path)
    return results


def check_results_numbers(results: Mapping[str, Any], path: Path) -> None:
    """Refuse a results file holding a number its kind does not allow (:mod:`~lm_eval_contam.core.result_numbers`),
    naming the file, the task and the field; and one whose ``results`` object is empty (nothing was read back)."""
    if not results["results"]:
        raise ContamError("not an lm-eval results file: its 'results' object is empty", source=str(path),
                          field="results")
    configs = results.get("configs") if isinstance(results.get("configs"), dict) else {}
    methods = {task: ((config.get("metadata") if isinstance(config, dict) else None) or {}).get("method")
               for task, config in configs.items()}
    for task, method in methods.items():  # a deleted row would silently leave its tests out (and the Holm set)
        if method and task not in results["results"]:
            raise ContamError(f"task {task}: its row is missing from 'results' (the run's configs hold the task, "
                              f"method {method})", source=str(path), field="results")
    for task, row in results["results"].items():
        if not isinstance(row, dict):
            raise ContamError(f"task {task}: its row is {type(row).__name__} {row!r:.60}; expected an object of "
                              "metrics", source=str(path), field=f"results.{task}")
        for key, value in row.items():
            problem = row_value_problem(str(key).partition(",")[0], value, methods.get(task))
            if problem:
                raise ContamError(f"task {task}: {problem}", source=str(path), field=str(key))
        for key, problem in interval_problems(row):
            raise ContamError(f"task {task}: {problem}", source=str(path), field=key)
    for task, counts in (results.get("n-samples") or {}).items():
        for key, value in (counts.items() if isinstance(counts, dict) else ()):
            problem = count_problem(value)
            if problem:
                raise ContamError(f"task {task}: {problem}", source=str(path), field=f"n-samples.{key}")


def results_files(output_path: str | Path) -> list[Path]:
    """lm-eval's original ``results_<date>.json`` files under ``output_path`` (a file is taken as is)."""
    path = Path(output_path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ContamError("no such file or directory", source=str(path), field="output_path")
    found = sorted(p for p in path.rglob("results_*.json") if ADJUSTED_SUFFIX not in p.name)
    if not found:
        raise ContamError("no lm-eval results_*.json under this path", source=str(path), field="output_path")
    return found


def samples_files(path: Path) -> list[Path]:
    """Logged-sample files under ``path`` (an output directory or one file)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ContamError("no such file or directory", source=str(path))
    return sorted(path.rglob("samples_*.jsonl"))


def samples_file(results_file: Path, task: str) -> Path:
    """lm-eval's ``samples_<task>_<date>.jsonl`` written with ``results_<date>.json``."""
    date = results_file.stem.removeprefix("results_")
    path = results_file.with_name(f"samples_{task}_{date}.jsonl")
    if not path.is_file():
        raise ContamError(f"no samples file for {task}; rerun with --log_samples", source=str(path))
    return path


def derived_path(original: Path, suffix: str, extension: str = ".json") -> Path:
    """``<stem><suffix><extension>`` beside ``original``; numbered ``.1``, ``.2``… so nothing is overwritten."""
    stem = original.name.removesuffix(original.suffix)
    candidate = original.with_name(f"{stem}{suffix}{extension}")
    number = 1
    while candidate.exists():
        candidate = original.with_name(f"{stem}{suffix}.{number}{extension}")
        number += 1
    return candidate


def adjusted_path(results_file: Path) -> Path:
    """``results_<date>.dcr_adjusted.json`` beside the original; numbered, never overwriting."""
    return derived_path(results_file, ADJUSTED_SUFFIX)


def number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


@dataclass(frozen=True)
class TaskFiles:
    """Where one task's numbers and logged samples came from."""

    results_file: Path
    samples_file: Path | None


@dataclass(frozen=True)
class ModelResults:
    """One model's merged lm-eval results (the shape of one ``results_*.json``) and its files per task."""

    label: str
    model: str  # lm-eval backend and model_args, as the results record them
    directory: Path
    results: Mapping[str, Any]  # "results", "configs", "n-samples", "group_subtasks", "higher_is_better"
    files: Mapping[str, TaskFiles]
    injection: Mapping[str, Any] | None = None  # the contamination manifest, when an audit injected this model
    # The checkpoint the model was fine-tuned from, run on the same tasks (audit --reference-model): its per-text
    # scores difference the model's (u = log p(model) - log p(reference)).
    reference: ModelResults | None = None

    def config(self, task: str) -> dict[str, Any]:
        return dict((self.results.get("configs") or {}).get(task) or {})

    def metadata(self, task: str) -> dict[str, Any]:
        return dict(self.config(task).get("metadata") or {})

    def row(self, task: str) -> dict[str, Any]:
        return dict((self.results.get("results") or {}).get(task) or {})

    def n_instances(self, task: str) -> int | None:
        count = ((self.results.get("n-samples") or {}).get(task) or {}).get("effective")
        return int(count) if isinstance(count, (int, float)) else None

    def number(self, task: str, metric: str) -> float:
        """A task's metric under the project's filter; a missing or non-numeric value is an error naming the file."""
        value = number_or_none(self.row(task).get(f"{metric},{FILTER}"))
        if value is None:
            raise ContamError(f"{task} has no number for {metric!r} (got {self.row(task).get(f'{metric},{FILTER}')!r})",
                              source=str(self.files[task].results_file), field=f"{metric},{FILTER}")
        return value

    def samples(self, task: str) -> list[dict[str, Any]]:
        """The task's logged samples (empty when the run did not log them); a per-sample metric out of its range (see
        :func:`number_problem`) is refused, naming the file, the line and the field."""
        path = self.files[task].samples_file
        samples = read_jsonl_objects(path) if path is not None else []
        for line, sample in enumerate(samples, start=1):
            for key, value in sample.items():
                problem = number_problem(key, value)
                if problem:
                    raise ContamError(f"task {task}: {problem}", source=f"{path}:{line}", field=key)
        return samples

    @property
    def limit(self) -> int | float | None:
        """lm-eval's ``--limit`` of the run (None for a full run): then the instances are not the method's sample."""
        limit = (self.results.get("config") or {}).get("limit")
        return limit if isinstance(limit, (int, float)) and not isinstance(limit, bool) else None

    def partition(self, task: str) -> Partition:
        """The partition a task tested, from its YAML's metadata and its split."""
        return Partition.from_task_metadata(self.metadata(task), str(self.config(task).get("test_split")))

    def seed(self, task: str) -> int:
        return int(self.metadata(task).get("seed", 0))

    def records(self, task: str, metric: str) -> list[dict[str, Any]]:
        """Each logged doc's record of ``task`` (under ``metric``), in the samples' order."""
        return [sample.get(metric) or {} for sample in self.samples(task)]

    def reference_records(self, task: str, metric: str) -> dict[str, dict[str, Any]] | None:
        """The reference model's logged record of each doc of ``task`` (under ``metric``), by the record's
        ``identity``; None without a reference run of the task. A record the reference lacks, or one of another
        identity, is the caller's to refuse."""
        if self.reference is None or task not in (self.reference.results.get("results") or {}):
            return None
        return {str(record.get("identity")): record for record in self.reference.records(task, metric)}

    def tasks_of(self, family: str) -> list[str]:
        """The run's tasks whose ``metadata.method`` is ``family``, sorted."""
        return sorted(task for task in (self.results.get("results") or {})
                      if self.metadata(task).get("method") == family)


@dataclass(frozen=True)
class Run:
    path: Path
    models: tuple[ModelResults, ...]
    audit: Mapping[str, Any] | None = None  # audit.json's settings/partitions, when it is an audit


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
    # The samples written with this results file; else the task's latest.
    chosen = by_date.get(_results_date(results_file)) or (by_date[max(by_date)] if by_date else None)
    return TaskFiles(results_file, chosen)


def _model_description(results: Mapping[str, Any]) -> str:
    config = results.get("config") or {}
    model, args = config.get("model"), config.get("model_args")
    if isinstance(args, dict):
        args = ",".join(f"{key}={value}" for key, value in args.items())
    return " ".join(str(part) for part in (model, args) if part) or str(results.get("model_name", ""))


def _recorded_model(results: Mapping[str, Any]) -> str | None:
    """The model a results file says answered: lm-eval's backend and ``model_name`` (what its ``model_args`` name by
    ``pretrained``, ``peft``, ``model``...; settings such as the batch size left out); None when it records neither."""
    backend, name = (results.get("config") or {}).get("model"), results.get("model_name")
    if not backend and not name:
        return None
    return " ".join(str(part) for part in (backend, name) if part)


def load_model_dir(directory: Path, *, label: str | None = None, model: str | None = None,
                   injection: Mapping[str, Any] | None = None, reference: ModelResults | None = None,
                   audit_id: Any = None) -> ModelResults:
    """One model's results files merged, the latest file winning per task; a file another model wrote (lm-eval's
    ``model_name``) is refused, never read as this model's, and so is one holding a task run by another audit than
    ``audit_id`` (:func:`check_audit_id`)."""
    files = results_by_date(directory)
    if not files:
        raise ContamError("no lm-eval results_*.json here", source=str(directory))
    samples = _samples_by_task(directory)
    merged: dict[str, dict[str, Any]] = {
        "results": {}, "configs": {}, "n-samples": {}, "group_subtasks": {}, "higher_is_better": {}, "config": {},
        "benchmark_scoring": {},  # how an audit scored its benchmark tasks (audit.benchmark_scoring)
        "not_run": {}}  # the tasks an audit left out, their method unable to run on the partition (registry.NOT_RUN_KEY)
    task_files: dict[str, TaskFiles] = {}
    latest: dict[str, Any] = {}
    first: tuple[Path, str] | None = None  # the first file that names its model, and that model
    for path in files:
        latest = read_results(path)
        check_audit_id(latest, path, audit_id)
        answered = _recorded_model(latest)
        if answered is not None and first is None:
            first = (path, answered)
        elif answered is not None and first is not None and answered != first[1]:
            raise ContamError(f"the run of another model ({answered}) sits in the folder of {first[1]} "
                              f"({first[0].name}); its tasks would be read as that model's: move it to its own folder",
                              source=str(path), field="model_name")
        for section, entries in merged.items():
            entries.update(latest.get(section) or {})
        for task in latest["results"]:
            task_files[task] = _task_files(path, task, samples)
    return ModelResults(
        label=label or str(latest.get("model_name") or directory.name),
        model=model or _model_description(latest),
        directory=directory,
        results=merged,
        files=task_files,
        injection=injection,
        reference=reference,
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
            loaded = load_model_dir(directory, label=label, model=model, injection=entry.get("injection"),
                                    reference=_reference_run(path, audit_file, entry, where, audit.get(AUDIT_ID_KEY)),
                                    audit_id=audit.get(AUDIT_ID_KEY))
            check_tasks_of_this_audit(loaded, entry.get("tasks"), f"{where}.tasks", path)
            runs.append(loaded)
    return Run(path=path, models=tuple(runs), audit={k: v for k, v in audit.items() if k != "models"})


def _ran_names(recorded: Any) -> set[str]:
    """The task names an audit recorded for one model (``audit.json`` ``models[i].tasks``: lm-eval task and group
    names, or task YAML paths, whose task is named in the YAML, else after the file)."""
    names: set[str] = set()
    for task in recorded:
        names.add(str(task))
        if str(task).endswith((".yaml", ".yml")):
            yaml_path = Path(str(task))
            names.add(yaml_path.stem)
            try:
                import yaml

                named = (yaml.safe_load(yaml_path.read_text(encoding="utf-8")) or {}).get("task")
            except Exception:  # noqa: BLE001 - a YAML moved, unreadable or with lm-eval's !function tags: its stem
                named = None
            if isinstance(named, str):
                names.add(named)
    return names


def _written_under(config: Mapping[str, Any], folder: Path) -> bool:
    """Whether a task's YAML was written under ``folder`` (its metadata's ``config_source``: the audit's own tasks)."""
    source = (config.get("metadata") or {}).get("config_source") if isinstance(config, Mapping) else None
    if not isinstance(source, str) or not source:
        return False
    try:
        return Path(source).resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


def check_audit_id(results: Mapping[str, Any], results_file: Path, audit_id: Any) -> None:
    """Every task of a results file whose metadata records an audit id (``audit`` writes its id into the metadata of
    every task YAML it writes: ``audit.json`` ``audit_id``) records this audit's: the results of another audit of the
    same tasks by the same model (another folder, ``--sample``...), copied into this one's folder, bear the same task
    names, and the latest file winning per task would read their numbers as this audit's. Only the key is compared
    (a reference model's run adds ``all_orders`` to a task's metadata); an audit.json recording no id, and tasks whose
    metadata records none (an earlier version's, lm-eval's own benchmarks, the adjustments' tasks ``run`` writes
    under the cache home; an audit's carry its id), are not checked."""
    if audit_id is None:
        return
    configs = results.get("configs") if isinstance(results.get("configs"), dict) else {}
    foreign: dict[Any, list[str]] = {}
    for task, config in sorted(configs.items()):
        metadata = config.get("metadata") if isinstance(config, dict) else None
        if isinstance(metadata, dict) and AUDIT_ID_KEY in metadata and metadata[AUDIT_ID_KEY] != audit_id:
            foreign.setdefault(json.dumps(metadata[AUDIT_ID_KEY], default=str), []).append(str(task))
    for found, tasks in foreign.items():
        named = ", ".join(tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
        raise ContamError(f"holds task(s) {named} run by another audit ({AUDIT_ID_KEY} {found}, this audit's "
                          f"{AUDIT_FILE} records {json.dumps(audit_id, default=str)}): the results of another audit of "
                          "the same model; move the file to its own folder", source=str(results_file),
                          field=f"configs.{tasks[0]}.metadata.{AUDIT_ID_KEY}")


def check_tasks_of_this_audit(model: ModelResults, recorded: Any, field: str, audit_dir: Path | None = None) -> None:
    """Every task in a model's results folder is one the audit ran for it (``audit.json`` records them per model):
    a results file of another audit of the same model, copied or left there, is refused, naming the file, rather
    than adding its partitions to this audit's report (one of another model is refused by ``model_name``, one of
    another audit of the same tasks by its audit id, :func:`check_audit_id`). Groups
    lm-eval adds as rows count as run when their subtasks were, and a group's subtasks when the group was; rows with
    no config (lm-eval ran no such task) are not tasks; a task whose YAML the audit wrote under ``audit_dir`` is its
    own (an earlier run of the same audit with other ``--methods``); an audit.json of an earlier version, recording no
    tasks, is not checked."""
    if not isinstance(recorded, list) or not recorded:
        return
    ran = _ran_names(recorded)
    groups = {str(group): [str(task) for task in subtasks] for group, subtasks in
              (model.results.get("group_subtasks") or {}).items() if isinstance(subtasks, list)}
    grown = True
    while grown:  # down from a group that ran, up to a group whose subtasks all ran
        before = len(ran)
        for group, subtasks in groups.items():
            if group in ran:
                ran.update(subtasks)
            elif subtasks and all(task in ran for task in subtasks):
                ran.add(group)
        grown = len(ran) > before
    configs = model.results.get("configs") or {}
    foreign: dict[Path, list[str]] = {}
    for task, files in model.files.items():
        # A row without a config is not a task lm-eval ran but one written beside them (a DCR sheet's factor).
        if task not in ran and task in configs and not (audit_dir and _written_under(configs[task], audit_dir)):
            foreign.setdefault(files.results_file, []).append(task)
    for results_file, tasks in sorted(foreign.items()):
        named = ", ".join(sorted(tasks)[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
        raise ContamError(f"holds task(s) {named}, which this audit did not run for {model.label!r} (its audit.json "
                          f"{field} lists what it ran): the results of another audit or run; move the file to its own "
                          "folder", source=str(results_file), field="tasks")


def _reference_run(path: Path, audit_file: Path, entry: Mapping[str, Any], where: str,
                   audit_id: Any = None) -> ModelResults | None:
    """The reference model's run recorded beside a model's (``audit --reference-model``), if any."""
    reference = entry.get("reference")
    if reference is None:
        return None
    if not isinstance(reference, dict) or not reference.get("run_dir"):
        raise ContamError("a reference needs its run_dir", source=str(audit_file), field=f"{where}.reference")
    directories = _model_dirs(path / str(reference["run_dir"]))
    if len(directories) != 1:
        raise ContamError(f"expected one lm-eval results folder under {reference['run_dir']}, found {len(directories)}",
                          source=str(audit_file), field=f"{where}.reference.run_dir")
    model = " ".join(str(reference[key]) for key in ("model", "model_args") if reference.get(key)) or None
    if model is not None and reference.get("found_by"):  # found by the audit, not given: the report says how
        model = f"{model} (found: {reference['found_by']})"
    loaded = load_model_dir(directories[0], label=f"{entry['label']} (reference)", model=model, audit_id=audit_id)
    check_tasks_of_this_audit(loaded, reference.get("tasks"), f"{where}.reference.tasks", path)
    return loaded


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
