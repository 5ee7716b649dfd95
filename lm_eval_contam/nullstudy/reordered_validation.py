"""The validation study's reordered pass (issue 31): ``acc_reordered``'s gap measured on real models, per shape.

Every multiple-choice partition of the study (the injected train splits and their never-injected test siblings, and
the fresh authored-order datasets written for the study) becomes an MMLU-style lm-eval ``multiple_choice`` benchmark
(the prompt lists the options, the choices are the letters; the study's items rendered exactly as they were injected),
and its reordered task is built as ``audit --tasks`` / ``run --tasks`` build it
(:func:`lm_eval_contam.methods.reordered.benchmark_tasks.adjustment_tasks`, K stated explicitly) and scored with it in one
lm-eval call, the rows copied as the live hook copies them (:func:`lm_eval_contam.methods.reordered.hook.post_process_results`).
Each model x partition run is kept as one JSON file (the benchmark's row and every form's 0/1 score), so a stopped pass
resumes where it stopped.

Models: the clean default model (every partition is unseen by it), the filler-only fine-tune (the injected model's
recipe with the contaminant left out: every partition unseen) and the injected fine-tune (train splits injected, test
splits held-out siblings; the fresh datasets are not run on it, as in the other passes). A partition is flagged when
its gap's 95 % interval lies above 0 (also counted: the exact p below ALPHA); on the fine-tunes the gap less the clean
model's gap on the same items (:func:`lm_eval_contam.methods.reordered.stats.reference_gap_score`) is counted too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lm_eval_contam.contaminate import MANIFEST_FILE
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects, write_jsonl
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.reordered.stats import ItemScores, item_scores, reference_gap_score, reordered_score
from lm_eval_contam.nullstudy.corpus import mc_prompt_task_yaml, render_mc
from lm_eval_contam.nullstudy.design import McPartition
from lm_eval_contam.nullstudy.rates import flag_rate
from lm_eval_contam.nullstudy.validation import (
    FRESH_DIR,
    FRESH_SPLITS,
    MODEL_DIRS,
    RATES_KEY,
    ValidationSettings,
    check_same_study,
    prepare,
    render_question,
    train_injected_model,
    write_mc_data,
)

REORDERED_PASS = "reordered"
REORDERINGS = 4  # stated, not the package default (which may change): the measured rates are for K = 4
GAP_KEY = "acc_reordered_gap"
REFERENCE_GAP_KEY = "acc_reordered_gap_vs_reference"
MODEL_ORDER = ("clean", "filler", "injected")
# The partition role on each model, as the validation study counts it (RATE_ROLES' columns).
COLUMNS: dict[str, str] = {"injected": "detection", "sibling": "false_positive_held_out",
                           "unseen": "false_positive_clean", "filler": "false_positive_filler"}
STUDY_SHAPE, FRESH_SHAPE = "multiple choice", "fresh multiple choice"


def mc_partitions(settings: ValidationSettings, study_dir: Path) -> list[McPartition]:
    """The study's MC partitions (train: injected, test: sibling), then the fresh MC datasets' splits (unseen)."""
    found = []
    for dataset in write_mc_data(settings, study_dir):
        for split, role in (("train", "injected"), ("test", "sibling")):
            rows = tuple({"prompt": render_mc(row), "answer": int(row["answer"])}
                         for row in dataset.dataset.splits[split])
            found.append(McPartition(f"{dataset.dataset.key}_{split}", role, STUDY_SHAPE, rows))  # type: ignore[arg-type]
    firsts = sorted(FRESH_DIR.glob("mc_*_a.jsonl"))[: settings.fresh_per_shape]
    for split in FRESH_SPLITS:  # split a of every fresh dataset first, as the other passes order them
        for first in firsts:
            topic = first.stem[len("mc_"): -len("_a")]
            rows = tuple({"prompt": render_question(row["question"], row["choices"]), "answer": int(row["answer"])}
                         for row in read_jsonl_objects(FRESH_DIR / f"mc_{topic}_{split}.jsonl"))
            found.append(McPartition(f"fresh_mc_{topic}_{split}", "unseen", FRESH_SHAPE, rows))
    return found


def write_benchmark(partition: McPartition, folder: Path) -> Path:
    """The partition as a plain MMLU-style lm-eval task (its data and YAML under ``folder``); the YAML's path."""
    folder.mkdir(parents=True, exist_ok=True)
    data = write_jsonl(folder / f"{partition.name}.jsonl", [dict(row) for row in partition.rows])
    path = folder / f"{partition.name}.yaml"
    path.write_text(mc_prompt_task_yaml(partition.name, {"test": str(data)}), encoding="utf-8")
    return path


def run_path(study_dir: Path, label: str, partition: McPartition) -> Path:
    return study_dir / "runs_reordered" / label / f"{partition.name}.json"


def evaluate_partition(lm: Any, label: str, partition: McPartition, study_dir: Path, *, seed: int = 0,
                       batch_size: int = 8) -> dict[str, Any]:
    """The benchmark and its reordered task on one model, in one lm-eval call, through the project's own adjustment
    code and hook; kept under ``runs_reordered/<label>/`` (an existing file is read, not re-run)."""
    path = run_path(study_dir, label, partition)
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    import lm_eval

    from lm_eval_contam import harness
    from lm_eval_contam.methods.reordered.benchmark_tasks import adjustment_tasks, task_name
    from lm_eval_contam.methods.reordered.hook import post_process_results

    folder = study_dir / "reordered_benchmarks"
    write_benchmark(partition, folder)
    manager = harness.task_manager(str(folder))
    added = adjustment_tasks([partition.name], manager, {"reorderings": REORDERINGS, "seed": seed},
                             home=study_dir / "reordered_tasks")
    if not added:
        raise ContamError("no reordered task was built (no item lists its options?)", source=partition.name)
    started = time.perf_counter()
    results = lm_eval.simple_evaluate(model=lm, tasks=[partition.name, *added], batch_size=batch_size,
                                      log_samples=True, apply_chat_template=False, task_manager=manager)
    results = post_process_results(results)
    reordered = task_name(partition.name)
    row = {key.partition(",")[0]: value for key, value in results["results"][partition.name].items()
           if "," in key and not key.partition(",")[0].endswith("_stderr")}
    records = sorted((int(s["doc"]["item"]), int(s["doc"]["order"]), float(s["acc_reordered"]["correct"]))
                     for s in results["samples"][reordered])
    found = {"model": label, "partition": partition.name, "role": partition.role, "shape": partition.shape,
             "reorderings": REORDERINGS, "seed": seed, "row": row, "records": [list(r) for r in records],
             "seconds": round(time.perf_counter() - started, 1)}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)  # written whole or not at all: a killed run leaves no half file
    return found


def planned(partitions: Sequence[McPartition], label: str) -> list[McPartition]:
    """The injected model skips the fresh (clean-only) datasets, as in the study's other passes."""
    return [p for p in partitions if not (label == "injected" and p.shape == FRESH_SHAPE)]


def study_models(settings: ValidationSettings, study_dir: Path, base_model: str) -> list[tuple[str, Path]]:
    """The clean model, the filler-only fine-tune and the injected one. A study folder whose fine-tunes are trained
    (their manifests written; the folder's settings the same) uses them as they are (a folder or a link to another
    study's, e.g. one the other passes trained); otherwise they are trained here as the other passes train them."""
    study_dir = study_dir.resolve()
    check_same_study(settings, study_dir)
    if not all((study_dir / folder / MANIFEST_FILE).is_file() for folder in MODEL_DIRS.values()):
        _, world, mc = prepare(settings, study_dir)
        train_injected_model(world, mc, settings, base_model, study_dir)
        train_injected_model(world, mc, settings, base_model, study_dir, filler_only=True)
    return [("clean", Path(base_model)), *((label, study_dir / MODEL_DIRS[label]) for label in ("filler", "injected"))]


def run_reordered_pass(settings: ValidationSettings, study_dir: Path, models: Sequence[tuple[str, Path]], *,
                       echo: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Every model on its partitions (one model loaded at a time; each partition's run kept once written)."""
    from lm_eval.models.huggingface import HFLM

    study_dir = study_dir.resolve()
    partitions = mc_partitions(settings, study_dir)
    found = []
    for label, model_dir in models:
        todo = planned(partitions, label)
        if all(run_path(study_dir, label, p).is_file() for p in todo):
            found += [evaluate_partition(None, label, p, study_dir, seed=settings.seed) for p in todo]
            continue
        lm = HFLM(pretrained=str(model_dir), dtype="float32", batch_size=settings.batch_size, device="cpu")
        for number, partition in enumerate(todo, start=1):
            run = evaluate_partition(lm, label, partition, study_dir, seed=settings.seed,
                                     batch_size=settings.batch_size)
            row = run["row"]
            echo(f"[{label} {number}/{len(todo)}] {partition.name}: acc {row['acc']:.3f}, acc_reordered "
                 f"{row['acc_reordered']:.3f}, gap {row['acc_reordered_gap']:+.3f} "
                 f"[{row['acc_reordered_gap_ci_low']:+.3f}, {row['acc_reordered_gap_ci_high']:+.3f}], "
                 f"p {row['acc_reordered_p']:.4f} ({run['seconds']} s)")
            found.append(run)
        del lm
    return found


def collect_runs(study_dir: Path) -> list[dict[str, Any]]:
    """Every kept run of the pass (whatever models and partitions are done)."""
    return [json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(study_dir.resolve().glob("runs_reordered/*/*.json"))]


def _items(run: Mapping[str, Any]) -> list[ItemScores]:
    return item_scores({"item": item, "order": order, "correct": correct} for item, order, correct in run["records"])


def reference_gaps(runs: Sequence[Mapping[str, Any]], reference: str = "clean") -> dict[tuple[str, str], dict]:
    """Per (fine-tune, partition): its gap less the reference model's on the same items, with interval and p."""
    theirs = {run["partition"]: run for run in runs if run["model"] == reference}
    found = {}
    for run in runs:
        if run["model"] == reference or run["partition"] not in theirs:
            continue
        score = reference_gap_score(_items(run), _items(theirs[run["partition"]]), seed=int(run.get("seed", 0)),
                                    name=f"{run['model']}/{run['partition']}")
        found[(run["model"], run["partition"])] = {"gap": score.gap, "ci_low": score.gap_interval.low,
                                                   "ci_high": score.gap_interval.high, "p": score.pvalue}
    return found


def run_role(run: Mapping[str, Any]) -> str:
    """The partition's role as counted: its own on the injected model, unseen on the clean one, filler on the
    filler-only fine-tune."""
    return {"injected": str(run["role"]), "filler": "filler"}.get(str(run["model"]), "unseen")


def _counted(flags: Sequence[bool]) -> dict[str, Any]:
    rate = flag_rate(sum(flags), len(flags))
    ci = rate.confidence_interval
    return {"k": rate.k, "flagged": rate.flagged, "rate": round(rate.statistic, 4),
            "ci": [round(ci.low, 4), round(ci.high, 4)]}


def _summary(gaps: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """Flagged by the interval (low end above 0: the entry's k / flagged / rate / ci) and by the p (``p_below_alpha``),
    the interval's coverage of 0, and the gaps' mean, spread and range."""
    values = np.array([gap["gap"] for gap in gaps])
    return {**_counted([gap["ci_low"] > 0 for gap in gaps]),
            "p_below_alpha": _counted([gap["p"] < ALPHA for gap in gaps]),
            "interval_contains_0": round(float(np.mean([gap["ci_low"] <= 0 <= gap["ci_high"] for gap in gaps])), 4),
            "mean_gap": round(float(values.mean()), 4),
            "sd_gap": round(float(values.std(ddof=1)), 4) if len(values) > 1 else 0.0,
            "min_gap": round(float(values.min()), 4), "max_gap": round(float(values.max()), 4)}


def _gap(run: Mapping[str, Any]) -> dict[str, float]:
    row = run["row"]
    return {"gap": float(row["acc_reordered_gap"]), "ci_low": float(row["acc_reordered_gap_ci_low"]),
            "ci_high": float(row["acc_reordered_gap_ci_high"]), "p": float(row["acc_reordered_p"])}


def _entries(labelled: Iterable[tuple[str, str, Mapping[str, float]]]) -> dict[str, Any]:
    """``labelled``: (role, shape, gap) -> the entry of each rate column, over both shapes and ``by_shape``."""
    labelled = list(labelled)
    entry: dict[str, Any] = {}
    for role, column in COLUMNS.items():
        gaps = [gap for found, _, gap in labelled if found == role]
        if gaps:
            entry[column] = _summary(gaps)
    for shape in (STUDY_SHAPE, FRESH_SHAPE):
        for role, column in COLUMNS.items():
            gaps = [gap for found, at, gap in labelled if found == role and at == shape]
            if gaps:
                entry.setdefault("by_shape", {}).setdefault(shape, {})[column] = _summary(gaps)
    return entry


def _pooled_items(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[ItemScores]]:
    """Every run's items under one index per (partition, item), by partition: one benchmark of all their items."""
    partitions = sorted({str(run["partition"]) for run in runs})
    return {str(run["partition"]): [ItemScores(partitions.index(str(run["partition"])) * 100_000 + item.item,
                                               item.original, item.reordered) for item in _items(run)]
            for run in runs}


def pooled(runs: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The runs' items as one benchmark (what a benchmark of that many items would show): its gap, interval and exact
    p; with ``reference`` (the clean model's runs of the same partitions) the gap less the reference's instead."""
    mine = [item for items in _pooled_items(runs).values() for item in items]
    if reference:
        theirs = [item for items in _pooled_items(reference).values() for item in items]
        versus = reference_gap_score(mine, theirs, name="pooled")
        return {"items": versus.n_items, "gap": round(versus.gap, 4),
                "ci": [round(versus.gap_interval.low, 4), round(versus.gap_interval.high, 4)],
                "p": round(versus.pvalue, 4)}
    score = reordered_score(mine, name="pooled")
    return {"items": score.n_items, "gap": round(score.gap, 4),
            "ci": [round(score.gap_interval.low, 4), round(score.gap_interval.high, 4)], "p": round(score.pvalue, 6)}


def _add_pooled(entry: dict[str, Any], runs: Sequence[Mapping[str, Any]], *, versus: bool) -> None:
    """Each column's (and shape's) runs pooled into one benchmark, beside its per-partition counts."""
    clean = {str(run["partition"]): run for run in runs if run["model"] == "clean"}
    for role, column in COLUMNS.items():
        for shape, target in ((None, entry), *((at, (entry.get("by_shape") or {}).get(at) or {})
                                               for at in (STUDY_SHAPE, FRESH_SHAPE))):
            mine = [run for run in runs if run_role(run) == role and (shape is None or run["shape"] == shape)
                    and not (versus and (run["model"] == "clean" or run["partition"] not in clean))]
            if mine and column in target:
                target[column]["pooled"] = pooled(mine, [clean[str(run["partition"])] for run in mine]
                                                  if versus else ())


def reordered_rates(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The rates of the gap (raw - reordered) and of the gap less the clean model's, per column and shape."""
    if not runs:
        raise ContamError("no run of the reordered pass to count", field="runs_reordered")
    plain = _entries((run_role(run), str(run["shape"]), _gap(run)) for run in runs)
    by_model: dict[str, Any] = {}
    for label in MODEL_ORDER:
        mine = [run for run in runs if run["model"] == label]
        if mine:
            by_model[label] = {
                shape: {"k": len(at), "mean_acc": round(float(np.mean([r["row"]["acc"] for r in at])), 4),
                        "mean_acc_reordered": round(float(np.mean([r["row"]["acc_reordered"] for r in at])), 4),
                        "mean_gap": round(float(np.mean([r["row"]["acc_reordered_gap"] for r in at])), 4)}
                for shape in (STUDY_SHAPE, FRESH_SHAPE) if (at := [r for r in mine if r["shape"] == shape])}
    differenced = reference_gaps(runs)
    by_key = {(str(run["model"]), str(run["partition"])): run for run in runs}
    versus = _entries((run_role(by_key[key]), str(by_key[key]["shape"]), gap) for key, gap in differenced.items())
    _add_pooled(plain, runs, versus=False)
    _add_pooled(versus, runs, versus=True)
    return {GAP_KEY: {"title": "acc_reordered gap (acc − acc_reordered), 95 % interval above 0", **plain,
                      "by_model": by_model},
            REFERENCE_GAP_KEY: {"title": "acc_reordered gap less the clean (reference) model's on the same items, "
                                         "95 % interval above 0", **versus}}


def rates_entry(runs: Sequence[Mapping[str, Any]], *, command: str, date: str,
                settings: ValidationSettings) -> dict[str, Any]:
    """The shipped ``benchmark_adjustments`` entries: the rates, with the command, date and design they come from."""
    design = {"reorderings": REORDERINGS, "items_per_partition": settings.rows_per_partition,
              "models": sorted({str(run["model"]) for run in runs}, key=MODEL_ORDER.index),
              "model_partition_runs": len(runs),
              "scoring_seconds": round(sum(float(run.get("seconds") or 0.0) for run in runs), 1),
              "flagged": "the gap's 95 % percentile bootstrap interval (2,000 resamples over items) lies above 0; "
                         "p_below_alpha: the exact one-sided p < 0.05",
              "injection": f"lr {settings.learning_rate:g}, {settings.epochs} epochs, {settings.share:.0%} share"}
    return {key: {**entry, "command": command, "date": date, "design": design}
            for key, entry in reordered_rates(runs).items()}


def ship(entries: Mapping[str, Any], path: Path) -> None:
    """Merge the entries under ``benchmark_adjustments`` of a rates file, every other key kept as it is."""
    document = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    document.setdefault(RATES_KEY, {}).update(entries)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def markdown(entries: Mapping[str, Any]) -> str:
    """Per key and shape: flagged by the interval and by the p on each model, and the mean gap ± its spread."""

    def cell(entry: Mapping[str, Any] | None) -> str:
        if not entry:
            return "—"
        low, high = entry["ci"]
        p = entry["p_below_alpha"]
        whole = entry.get("pooled")
        pooled_text = (f"; pooled ({whole['items']} items) {whole['gap']:+.3f} [{whole['ci'][0]:+.3f}, "
                       f"{whole['ci'][1]:+.3f}], p {whole['p']:.3g}" if whole else "")
        return (f"{entry['flagged']}/{entry['k']} [{100 * low:.0f}, {100 * high:.0f} %]; p<.05 {p['flagged']}/{p['k']}; "
                f"gap {entry['mean_gap']:+.3f} ± {entry['sd_gap']:.3f}{pooled_text}")

    lines = ["| number | shape | clean model (unseen) | filler-only fine-tune | injected model: held-out siblings | "
             "injected model: injected |", "|---|---|---|---|---|---|"]
    for key, entry in entries.items():
        for shape, found in (entry.get("by_shape") or {}).items():
            lines.append(f"| `{key}` | {shape} | {cell(found.get('false_positive_clean'))} | "
                         f"{cell(found.get('false_positive_filler'))} | {cell(found.get('false_positive_held_out'))} | "
                         f"{cell(found.get('detection'))} |")
    return "\n".join(lines) + "\n"
