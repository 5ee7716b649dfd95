"""Validation study: detection rate and false-positive rate per method and injection strength.

    python scripts/validation_study.py [--out validation_study] [--strengths 5e-5:3:0.15,2e-4:3:0.15,...]

For each strength ``lr:epochs:share`` the default model (or ``--model``) is
contaminated with every ``--injected`` partition in Time Travel's web format, then
audited on the injected and the ``--held-out`` partitions; the clean model is
audited once. Per method (Time Travel Alg. 1, Alg. 2 with Judge A, Judge B when
``--judge-model`` is given, DCQ in both modes):

* detection rate = flagged injected partitions / injected partitions (injected model);
* false-positive rate = flagged held-out partitions / held-out partitions (same model),
  and, for the clean model, flagged partitions / all partitions.

Writes ``study.json`` and ``study.md`` under ``--out``; re-running resumes (trained
models and lm-eval's request cache are reused).

``--generated K:N`` runs the likelihood modes (ours) instead, on K project-generated
datasets of N rows per split: split ``train`` is injected, ``test`` is held out and
``control`` is the never-injected control both are compared with. The text is drawn
from a seeded grammar (:func:`generated_rows`): unlimited, deterministic, and a random
draw from far more combinations than any corpus holds, so no model can have seen it.
Rates carry Clopper-Pearson 95 % intervals.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from lm_eval_contam.contaminate import InjectionSettings

DEFAULT_INJECTED = "toy_news:train,toy_reviews:train"
DEFAULT_HELD_OUT = "toy_news:test,toy_reviews:test"
# The papers' setting (DCR: 3 epochs, lr 5e-5, 15 % share) and the demo's (6 epochs, lr 3e-4, 50 %).
DEFAULT_STRENGTHS = "5e-5:3:0.15,3e-4:6:0.5"


def parse_strengths(text: str, batch_size: int = 1) -> list[InjectionSettings]:
    from lm_eval_contam.errors import ContamError

    strengths = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if len(parts) != 3:
            raise ContamError(f"expected lr:epochs:share, got {item!r}", field="strengths")
        strengths.append(InjectionSettings(learning_rate=float(parts[0]), epochs=int(parts[1]), share=float(parts[2]),
                                           batch_size=batch_size, max_length=256))
    return strengths


def strength_label(settings: InjectionSettings) -> str:
    return f"lr{settings.learning_rate:g}_ep{settings.epochs}_share{settings.share:g}"


def filler(args) -> list[str] | None:
    """``--filler-file``'s paragraphs (None: contaminate's bundled filler)."""
    from lm_eval_contam.contaminate import read_paragraphs

    return read_paragraphs(args.filler_file) if args.filler_file else None


def contaminate(base: str, partitions: list[str], out: Path, settings: InjectionSettings) -> Path:
    from lm_eval_contam.contaminate import inject, partition_contaminant, trained_with
    from lm_eval_contam.partitions import Partition

    texts, sources = partition_contaminant([Partition.parse(name) for name in partitions], "timetravel")
    if not trained_with(out, settings, sources):
        inject(base, texts, str(out), settings=settings, description={"sources": sources})
    return out


def mean_token_loglik(model_dir: str, texts: list[str]) -> list[float]:
    """Mean per-token log-likelihood of each text under the model (the study's held-out probe)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    scores = []
    with torch.no_grad():
        for text in texts:
            ids = tokenizer(text, return_tensors="pt")["input_ids"]
            scores.append(-model(input_ids=ids, labels=ids).loss.item())
    return scores


def loglik_probe(model_dir: str, injected: list[str], held_out: list[str], seed: int = 0) -> dict[str, float]:
    """Injected vs held-out raw text: mean token log-likelihood and a one-sided permutation p-value.

    Not one of the published methods: it measures whether the injection left any trace
    the detectors could find, which calibrates the strengths.
    """
    import numpy as np

    from lm_eval_contam.partitions import Partition

    def texts(partitions: list[str]) -> list[str]:
        out = []
        for name in partitions:
            partition = Partition.parse(name)
            out += [str(row[partition.dataset.text_field]) for row in partition.rows()]
        return out

    seen, unseen = mean_token_loglik(model_dir, texts(injected)), mean_token_loglik(model_dir, texts(held_out))
    pooled = np.array(seen + unseen)
    observed = float(np.mean(seen) - np.mean(unseen))
    rng = np.random.default_rng(seed)
    permuted = np.array([np.mean(p[: len(seen)]) - np.mean(p[len(seen):])
                         for p in (rng.permutation(pooled) for _ in range(10_000))])
    return {"injected": float(np.mean(seen)), "held_out": float(np.mean(unseen)),
            "pvalue": float((1 + np.sum(permuted >= observed)) / (1 + permuted.size))}


def rates(verdicts, injected: list[str], held_out: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """{model label: {method: {"detection": .., "false_positive": ..}}} from the report's verdicts."""
    from lm_eval_contam.partitions import Partition

    injected_keys = {Partition.parse(name).label for name in injected}
    held_keys = {Partition.parse(name).label for name in held_out}
    table: dict[str, dict[str, dict[str, list[bool]]]] = {}
    for verdict in verdicts:
        group = ("injected" if verdict.partition in injected_keys else
                 "held_out" if verdict.partition in held_keys else None)
        if group is None or verdict.flagged is None:
            continue
        table.setdefault(verdict.model, {}).setdefault(verdict.method, {"injected": [], "held_out": []})[group].append(
            verdict.flagged)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for model, methods in table.items():
        for method, groups in methods.items():
            out.setdefault(model, {})[method] = {
                name: (sum(flags) / len(flags) if flags else float("nan")) for name, flags in groups.items()
            } | {f"n_{name}": len(flags) for name, flags in groups.items()}
    return out


def markdown(study: dict) -> str:
    lines = ["| model | injection (lr, epochs, share) | method | detection rate | false-positive rate |",
             "|---|---|---|---|---|"]
    for row in study["rows"]:
        probe = row["loglik_probe"]
        lines.append(f"| {row['label']} | {row['injection']} | held-out probe: mean token log-likelihood, injected vs "
                     f"held-out text (not a detector) | {probe['injected']:.3f} vs {probe['held_out']:.3f} | "
                     f"permutation p = {probe['pvalue']:.4f} |")
        for method, values in row["rates"].items():
            clean = row["label"] == "clean"
            detection = "—" if clean else f"{values['injected']:.0%} ({values['n_injected']})"
            false_positive = (
                values["injected"] * values["n_injected"] + values["held_out"] * values["n_held_out"]
            ) / (values["n_injected"] + values["n_held_out"]) if clean else values["held_out"]
            n_fp = values["n_injected"] + values["n_held_out"] if clean else values["n_held_out"]
            title = study["method_titles"].get(method, method)
            lines.append(f"| {row['label']} | {row['injection']} | {title} | {detection} | "
                         f"{false_positive:.0%} ({n_fp}) |")
    return "\n".join(lines) + "\n"


# The seeded grammar of the generated study's text: news-like sentences, one topic per label.
TOPICS = {
    "World": ("council", "minister", "embassy", "treaty", "border", "parliament", "mayor", "delegation"),
    "Sports": ("striker", "coach", "league", "stadium", "relay", "goalkeeper", "marathon", "referee"),
    "Business": ("bakery", "shipyard", "startup", "retailer", "factory", "bank", "brewery", "airline"),
    "Science": ("telescope", "laboratory", "glacier", "probe", "enzyme", "satellite", "fossil", "reactor"),
}
NAMES = ("Amara", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ilse", "Jonas", "Kavya", "Lorenzo",
         "Mireille", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tomasz", "Ulla", "Vikram", "Wanda", "Yusuf")
PLACES = ("Brackwater", "Coldharbour", "Dunmere", "Eastvale", "Fernhill", "Glenrock", "Hollowmere", "Ironbridge",
          "Kestrel Bay", "Larchmont", "Millbrook", "Northwick", "Oakridge", "Pinecliff", "Redmoor", "Saltmarsh")
VERBS = ("announced", "delayed", "doubled", "rejected", "unveiled", "questioned", "expanded", "cancelled", "praised",
         "measured", "recorded", "predicted")
OBJECTS = ("a plan", "the budget", "its forecast", "a new route", "the schedule", "a partnership", "the results",
           "a second phase", "the old rules", "a public review")
REASONS = ("after weeks of talks", "despite heavy rain", "ahead of the winter", "to the surprise of residents",
           "following a long review", "while critics watched closely", "for the third time this year")


def generated_text(rng, topic: str) -> str:
    """Three sentences on ``topic`` from the grammar; every slot drawn from ``rng``."""
    nouns = TOPICS[topic]
    sentences = []
    for _ in range(3):
        sentences.append(
            f"{rng.choice(NAMES)} of the {rng.choice(PLACES)} {rng.choice(nouns)} {rng.choice(VERBS)} "
            f"{rng.choice(OBJECTS)} {rng.choice(REASONS)}, with {int(rng.integers(2, 999))} "
            f"{rng.choice(nouns)}s involved.")
    return " ".join(sentences)


def generated_rows(dataset: int, split: str, n: int, seed: int = 0) -> list[dict]:
    """``n`` labelled rows of dataset ``dataset``'s ``split``: fresh text, the same on every run."""
    from lm_eval_contam.seeding import rng_for

    labels = list(TOPICS)
    rows = []
    for row in range(n):
        rng = rng_for(seed, "validation-study-text", dataset, split, row)
        label = row % len(labels)
        rows.append({"text": generated_text(rng, labels[label]), "label": label})
    return rows


GENERATED_SPLITS = ("train", "test", "control")  # injected, held out, the control both are compared with


def write_generated_datasets(out: Path, k: int, n: int, seed: int = 0) -> list[dict]:
    """K datasets of ``n`` rows per split as JSONL under ``out``; their task metadata (own-data schema)."""
    out.mkdir(parents=True, exist_ok=True)
    datasets = []
    for dataset in range(k):
        files = {}
        for split in GENERATED_SPLITS:
            path = out / f"study_set_{dataset}_{split}.jsonl"
            path.write_text("".join(json.dumps(row) + "\n" for row in generated_rows(dataset, split, n, seed)))
            files[split] = str(path)
        datasets.append({"dataset_name": f"Study Set {dataset}", "data_files": files, "task_type": "cls",
                         "text_field": "text", "label_field": "label", "label_names": list(TOPICS),
                         "columns": ["text", "label"]})
    return datasets


LIKELIHOOD_MODES = ("control", "lift")  # options need DCQ options for every generated row: not in this study


def write_likelihood_tasks(task_dir: Path, datasets: list[dict], num_instances: int) -> list[str]:
    """Own-data likelihood task YAMLs for the train and test split of every dataset (control: the control split)."""
    from lm_eval_contam import task_dir as project_task_dir
    from lm_eval_contam.likelihood.configs import render_task_config
    from lm_eval_contam.partitions import dataset_from_task_metadata

    task_dir.mkdir(parents=True, exist_ok=True)
    template = str(project_task_dir() / "likelihood" / "_template_yaml")
    names = []
    for metadata in datasets:
        spec = dataset_from_task_metadata(metadata)
        for split in ("train", "test"):
            for mode in LIKELIHOOD_MODES:
                text = render_task_config(spec.partition(split), mode, control="control", include=template,
                                          num_instances=num_instances)
                name = text.split("task: ", 1)[1].split("\n", 1)[0]
                (task_dir / f"{name}.yaml").write_text(text)
                names.append(name)
    return names


def clopper_pearson(flagged: int, total: int, confidence_level: float = 0.95):
    """The exact binomial interval of a rate (``None`` when nothing was counted)."""
    from scipy.stats import binomtest

    from lm_eval_contam.stats import ConfidenceInterval

    if total == 0:
        return None
    interval = binomtest(flagged, total).proportion_ci(confidence_level, method="exact")
    return ConfidenceInterval(float(interval.low), float(interval.high), confidence_level)


def split_rates(verdicts) -> dict[str, dict[str, dict[str, list[int]]]]:
    """{model: {method: {split: [flagged, total]}}} for the generated study's partitions ("Study Set k <split>")."""
    table: dict[str, dict[str, dict[str, list[int]]]] = {}
    for verdict in verdicts:
        split = verdict.partition.rsplit(" ", 1)[-1]
        counts = table.setdefault(verdict.model, {}).setdefault(verdict.method, {}).setdefault(split, [0, 0])
        counts[0] += int(bool(verdict.flagged))
        counts[1] += 1
    return table


def generated_markdown(table: dict, titles: dict[str, str]) -> str:
    lines = ["| model | method | detection (injected train splits) | false positives (held-out test splits) |",
             "|---|---|---|---|"]

    def cell(counts) -> str:
        if not counts:
            return "—"
        interval = clopper_pearson(*counts)
        return f"{counts[0]}/{counts[1]} = {counts[0] / counts[1]:.0%} [{interval.low:.0%}, {interval.high:.0%}]"

    for model, methods in table.items():
        for method, splits in methods.items():
            clean = model == "clean"
            detection = "— (clean: train " + cell(splits.get("train")) + ")" if clean else cell(splits.get("train"))
            lines.append(f"| {model} | {titles.get(method, method)} | {detection} | {cell(splits.get('test'))} |")
    return "\n".join(lines) + "\n"


def run_generated(args, base: str) -> None:
    """The likelihood study on generated partitions: inject every train split, score train and test vs control."""
    import lm_eval
    from lm_eval.loggers import EvaluationTracker

    from lm_eval_contam import harness
    from lm_eval_contam.contaminate import contaminant_texts, inject, trained_with
    from lm_eval_contam.generation import default_device
    from lm_eval_contam.partitions import dataset_from_task_metadata
    from lm_eval_contam.rundir import load_model_dir
    from lm_eval_contam.verdict import model_verdicts

    k, n = (int(part) for part in args.generated.split(":"))
    started = time.perf_counter()
    datasets = write_generated_datasets(args.out / "data", k, n)
    tasks = write_likelihood_tasks(args.out / "tasks", datasets, num_instances=n)
    injected = [dataset_from_task_metadata(metadata).partition("train") for metadata in datasets]
    texts = [text for partition in injected for text in contaminant_texts(partition, partition.rows(), "timetravel")]
    sources = [{"partition": partition.label, "format": "timetravel", "rows": list(range(n))} for partition in injected]
    models = [("clean", base)]
    # --strengths none: score the clean model only (its false-positive rate).
    for settings in parse_strengths(args.strengths, args.train_batch_size) if args.strengths != "none" else []:
        path = args.out / "models" / strength_label(settings)
        if not trained_with(path, settings, sources):
            inject(base, texts, str(path), settings=settings, filler=filler(args),
                   description={"sources": sources})
        models.append((strength_label(settings), str(path)))
    manager = harness.task_manager(str(args.out / "tasks"))
    seconds = {}
    verdicts = []
    for label, path in models:
        run_started = time.perf_counter()
        tracker = EvaluationTracker(output_path=str(args.out / "runs" / label))
        results = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={path}", tasks=tasks,
                                          batch_size=args.batch_size, device=default_device(), task_manager=manager,
                                          log_samples=True, evaluation_tracker=tracker,
                                          use_cache=str(args.out / "cache" / label))
        samples = results.pop("samples")
        tracker.save_results_aggregated(results=results, samples=samples)
        for task in results["configs"]:
            tracker.save_results_samples(task_name=task, samples=samples[task])
        seconds[label] = round(time.perf_counter() - run_started, 1)
        directory = next((args.out / "runs" / label).rglob("results_*.json")).parent
        verdicts += model_verdicts(load_model_dir(directory, label=label))
    table = split_rates(verdicts)
    study = {"generated": {"datasets": k, "rows_per_split": n}, "base_model": base, "strengths": args.strengths,
             "rates": table, "method_titles": {v.method: v.title for v in verdicts}, "scoring_seconds": seconds,
             "wall_seconds": round(time.perf_counter() - started, 1)}
    (args.out / "study.json").write_text(json.dumps(study, indent=2) + "\n")
    text = generated_markdown(table, study["method_titles"])
    (args.out / "study.md").write_text(text)
    print(text)
    print(f"wall time {study['wall_seconds']} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("validation_study"))
    parser.add_argument("--model", help="HF folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--injected", default=DEFAULT_INJECTED)
    parser.add_argument("--held-out", default=DEFAULT_HELD_OUT)
    parser.add_argument("--strengths", default=DEFAULT_STRENGTHS, help="comma-separated lr:epochs:share")
    parser.add_argument("--train-batch-size", type=int, default=1, help="256-token blocks per training step")
    parser.add_argument("--dcq-mode", choices=("loglikelihood", "generate", "both"), default="both")
    parser.add_argument("--max_gen_toks", type=int, default=48)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--judge-model", help="also run Judge B with this model")
    parser.add_argument("--filler-file", type=Path, help="with --generated: filler paragraphs (blank-line separated) "
                                                         "for a larger corpus than contaminate's bundled one")
    parser.add_argument("--generated", metavar="K:N",
                        help="the likelihood modes on K generated datasets of N rows per split (see above)")
    args = parser.parse_args()

    from lm_eval_contam.audit import AuditSettings
    from lm_eval_contam.cli.audit import audit_one
    from lm_eval_contam.default_model import default_model_path
    from lm_eval_contam.report import write_report
    from lm_eval_contam.rundir import load_run
    from lm_eval_contam.verdict import collect

    base = args.model or str(default_model_path())
    if args.generated:
        run_generated(args, base)
        return
    injected = [p.strip() for p in args.injected.split(",") if p.strip()]
    held_out = [p.strip() for p in args.held_out.split(",") if p.strip()]
    audit = AuditSettings(partitions=tuple(injected + held_out),
                          dcq_modes=("loglikelihood", "generate") if args.dcq_mode == "both" else (args.dcq_mode,),
                          max_gen_toks=args.max_gen_toks, batch_size=args.batch_size)
    started = time.perf_counter()
    models = [("clean", base, "none")]
    for settings in parse_strengths(args.strengths, args.train_batch_size):
        label = strength_label(settings)
        print(f"== contaminating: {label}")
        path = contaminate(base, injected, args.out / "models" / label, settings)
        models.append((label, str(path), f"{settings.learning_rate:g}, {settings.epochs}, {settings.share:.0%}"))
    for label, path, _ in models:
        print(f"== auditing: {label}")
        audit_one(path, label, args.out, audit, judge_model=args.judge_model)
    verdicts = collect(load_run(args.out))
    found = rates(verdicts, injected, held_out)
    study = {
        "command": "python scripts/validation_study.py " + " ".join(
            f"--{k.replace('_', '-') if k not in ('max_gen_toks', 'batch_size') else k} {v}"
            for k, v in vars(args).items() if v is not None and k != "out"),
        "base_model": base,
        "injected": injected,
        "held_out": held_out,
        "rows": [{"label": label, "injection": injection, "rates": found.get(label, {}),
                  "loglik_probe": loglik_probe(path, injected, held_out)}
                 for label, path, injection in models],
        "method_titles": {verdict.method: verdict.title for verdict in verdicts},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    (args.out / "study.json").write_text(json.dumps(study, indent=2) + "\n")
    table = markdown(study)
    (args.out / "study.md").write_text(table)
    write_report(args.out)
    print(table)
    print(f"wall time {study['wall_seconds']} s; report: {args.out / 'report.html'}")


if __name__ == "__main__":
    main()
