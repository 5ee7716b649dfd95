"""A reordered score beside every multiple-choice benchmark a run evaluates: each gets a reordered task built from it.

For every plain lm-eval ``multiple_choice`` task a run names (directly or through a group) that is not one of this
project's own tasks, :func:`adjustment_tasks` renders the task's docs (:mod:`lm_eval_contam.lmeval.benchmark_docs`), writes
each item in its original order and in its K reorderings (:mod:`.orders`) as rows, and the reordered task's YAML,
into a folder of their own under ``$LM_EVAL_CONTAM_HOME/reordered_tasks/`` (named by the task and a hash of the
content: the same content finds its folder again, different content never overwrites it), and returns the YAML paths
to add to the run's tasks. After the run :mod:`.hook` copies ``<metric>_reordered`` and its interval, gap and p to the
benchmark's row.

A task without a reorderable item (its options are not shown in its prompt, e.g. ARC-style continuations; every item
sorted or positional), a multiple-input task (one context per choice) or one without acc / acc_norm is logged with why
and evaluated without ``_reordered``; the run goes on. ``--metadata '{"reorderings": 0}'`` (``audit --reorderings 0``)
turns this off for the run, the same key in a task's own metadata for that task. An ``audit_id`` in the run's metadata
(``audit`` passes its own: ``audit.json``) goes into every reordered task's metadata and its folder's hash, so the
results record which audit ran them; ``run`` passes none and nothing is added.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lm_eval_contam.core.audit_identity import AUDIT_ID_KEY
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import TEMPLATE, task_dir
from lm_eval_contam.core.jsonl import read_jsonl_objects, write_jsonl
from lm_eval_contam.core.seeding import stable_hash
from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, LoadedBenchmark, loaded_subtask
from lm_eval_contam.lmeval.lm_eval_compat import selected_task_configs
from lm_eval_contam.lmeval.task_yaml import Verbatim, thin_task_yaml
from lm_eval_contam.methods.reordered.orders import (
    METADATA_KEY,
    METHOD,
    REFERENCE_ITEMS,
    REFERENCE_ITEMS_KEY,
    check_reference_items,
    check_reorderings,
    default_reorderings,
    reference_items,
    reference_share,
    reordered_docs,
    why_not_reordered,
)
from lm_eval_contam.methods.reordered.task import SCORED_METRICS
from lm_eval_contam.models.default_model import cache_home

log = logging.getLogger("lm_eval_contam.methods.reordered")

TASKS_FOLDER = "reordered_tasks"
DOCS_FILE = "docs.jsonl"
VERSION = 1.0


def tasks_home() -> Path:
    return cache_home() / TASKS_FOLDER


def template_path() -> Path:
    """The YAML every reordered task includes (``task_configs/reordered/_template_yaml``)."""
    return task_dir() / METHOD / TEMPLATE


def task_name(benchmark: str) -> str:
    return f"{METHOD}_{benchmark}"


def benchmark_tasks(configs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The plain tasks among a run's selected task configs (this project's own tasks, and a task whose metadata says
    ``reorderings: 0``, left out); only the multiple-choice ones among them get a reordered task."""
    return [name for name, config in configs.items()
            if not (metadata := config.get("metadata") or {}).get("method") and metadata.get(METADATA_KEY) != 0]


def task_rows(name: str, task: Any, docs: Sequence[BenchmarkDoc], *, reorderings: int, seed: int,
              for_reference: frozenset[int] | None = None) -> list[dict[str, Any]]:
    """Every item of one loaded benchmark task in its original order and its reorderings, as the reordered task's
    rows (``reference``: whether a reference model scores the item's forms, those in ``for_reference``, every item
    when None); a ContamError says why the task gets no reordered score."""
    if getattr(task, "multiple_input", False):
        raise ContamError("one context per choice (multiple input): the options are not listed in one prompt",
                          source=name, field="doc_to_text")
    raw_docs = list(task.eval_docs)
    rows: list[dict[str, Any]] = []
    for doc, raw in zip(docs, raw_docs):
        description = task.resolve_field(raw, task.config.description) or ""
        for form in reordered_docs(doc.index, doc.text, doc.choices, doc.choices.index(doc.target),
                                   reorderings=reorderings, seed=seed):
            rows.append({**asdict(form), "choices": list(form.choices), "moved": list(form.moved),
                         "description": str(description),
                         "reference": for_reference is None or doc.index in for_reference})
    if not any(row["order"] for row in rows):
        why = why_not_reordered(docs[0].text, docs[0].choices) if docs else "no docs"
        raise ContamError(f"no item can be reordered (the first: {why})", source=name, field="doc_to_choice")
    return rows


def write_task(benchmark: str, rows: Sequence[Mapping[str, Any]], *, metrics: Sequence[str], reorderings: int,
               seed: int, settings: Mapping[str, str], home: Path, most_for_reference: int = REFERENCE_ITEMS,
               audit_id: str | None = None) -> Path:
    """Write the rows and the reordered task's YAML into their own folder; the YAML's path. ``audit_id``: the
    auditing run's id, added to the metadata and the folder's hash (each audit its own folder); None adds nothing."""
    identity = () if audit_id is None else (audit_id,)  # none: the hash (and folder) an audit-less run always had
    digest = stable_hash(benchmark, json.dumps(list(rows), sort_keys=True), list(metrics), reorderings, seed,
                         sorted(settings.items()), most_for_reference, *identity)[:12]
    folder = home / f"{benchmark}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    docs_path = write_jsonl(folder / DOCS_FILE, rows)
    name = task_name(benchmark)
    path = folder / f"{name}.yaml"
    path.write_text(thin_task_yaml(
        header=f"# Built from the lm-eval task {benchmark!r} by lm_eval_contam.methods.reordered.benchmark_tasks.",
        include=str(template_path()), task=name,
        settings=[f"{key}: {json.dumps(value)}" for key, value in settings.items()],
        metadata={"version": VERSION, "method": Verbatim(METHOD), "reordered_benchmark": benchmark,
                  "reordered_docs": str(docs_path), "reordered_metrics": list(metrics), METADATA_KEY: reorderings,
                  REFERENCE_ITEMS_KEY: most_for_reference, "seed": seed,
                  **({} if audit_id is None else {AUDIT_ID_KEY: audit_id})}), encoding="utf-8")
    return path


def task_yaml(name: str, task: Any, docs: Sequence[BenchmarkDoc], *, reorderings: int, seed: int, home: Path,
              named_items: int | None = None, most_for_reference: int = REFERENCE_ITEMS,
              audit_id: str | None = None) -> Path:
    """The reordered task's YAML of one loaded benchmark task and its rendered evaluation docs; ``named_items``: the
    items of the task or group named (the reference's sample is drawn from it in proportion; default: this task's);
    ``audit_id``: see :func:`write_task`."""
    metrics = [metric for metric, higher in task.higher_is_better().items() if higher and metric in SCORED_METRICS]
    if not metrics:
        raise ContamError(f"it reports none of {', '.join(SCORED_METRICS)}", source=name, field="metric_list")
    size = reference_share(len(docs), len(docs) if named_items is None else named_items, most_for_reference)
    rows = task_rows(name, task, docs, reorderings=reorderings, seed=seed,
                     for_reference=None if size == len(docs) else reference_items(len(docs), size, seed, name))
    settings = {"target_delimiter": str(task.config.target_delimiter),
                "fewshot_delimiter": str(task.config.fewshot_delimiter)}
    return write_task(name, rows, metrics=metrics, reorderings=reorderings, seed=seed, settings=settings, home=home,
                      most_for_reference=most_for_reference, audit_id=audit_id)


def reference_doc_indices(metadata: Mapping[str, Any]) -> list[int] | None:
    """The docs (row positions) of a reordered task a reference model scores: the forms of the items its rows mark
    (``reference``); None when that is every row."""
    rows = read_jsonl_objects(Path(str(metadata["reordered_docs"])))
    chosen = [position for position, row in enumerate(rows) if row.get("reference", True)]
    return None if len(chosen) == len(rows) else chosen


def adjustment_tasks(tasks: Sequence[Any], task_manager: Any, metadata: Mapping[str, Any] | None = None,
                     loaded: Mapping[str, LoadedBenchmark] | None = None, *, home: Path | None = None) -> list[str]:
    """The reordered-task YAML paths to add to a run of ``tasks`` so every multiple-choice benchmark task gets
    ``<metric>_reordered``; ``loaded``: benchmarks already built and rendered (``audit --tasks``), used as they are.

    ``metadata``: the run's (``reorderings``: K per item, 0 turns it off; without it each task or group named gets
    :func:`default_reorderings` of its size, a group's counting every multiple-choice subtask: MMLU's 57 subjects
    cost about one more evaluation of MMLU, not four; ``reference_items``: about how many items of each task or
    group named a reference model scores, default :data:`REFERENCE_ITEMS`, 0: every item; ``seed``; ``audit_id``:
    the auditing run's id, stamped into every reordered task's metadata). A bad K or item count is refused before
    anything is written.
    """
    metadata = dict(metadata or {})
    given = metadata.get(METADATA_KEY)
    reorderings = None if given is None else check_reorderings(given)
    most_for_reference = check_reference_items(metadata.get(REFERENCE_ITEMS_KEY, REFERENCE_ITEMS))
    if reorderings == 0:
        return []
    seed = int(metadata.get("seed", 0))
    audit_id = metadata.get(AUDIT_ID_KEY)
    audit_id = None if audit_id is None else str(audit_id)
    built: dict[str, tuple[Any, Sequence[BenchmarkDoc], str]] = {}  # subtask -> its Task, docs and the name given
    for named in (task for task in tasks if isinstance(task, str)):
        for name in benchmark_tasks(selected_task_configs(task_manager, [named])):
            if name in built:
                continue
            try:
                task, docs = loaded_subtask(name, loaded or {}, task_manager)
            except ContamError as error:
                log.warning("no reordered score for %s: %s", name, error)
                continue
            if task.OUTPUT_TYPE != "multiple_choice":
                log.info("no reordered score for %s: it is not multiple choice (%s)", name, task.OUTPUT_TYPE)
                continue
            built[name] = (task, docs, named)
    items = Counter()  # the name given -> its multiple-choice items (a group's: every subtask's)
    for _task, docs, named in built.values():
        items[named] += len(docs)
    added: list[str] = []
    for name, (task, docs, named) in built.items():
        per_item = default_reorderings(items[named]) if reorderings is None else reorderings
        try:
            added.append(str(task_yaml(name, task, docs, reorderings=per_item, seed=seed, home=home or tasks_home(),
                                       named_items=items[named], most_for_reference=most_for_reference,
                                       audit_id=audit_id)))
        except ContamError as error:
            log.warning("no reordered score for %s: %s", name, error)
    return added
