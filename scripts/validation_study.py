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
import sys
import time
from pathlib import Path

from lm_eval_contam.contaminate import InjectionSettings

DEFAULT_INJECTED = "toy_news:train,toy_reviews:train"
DEFAULT_HELD_OUT = "toy_news:test,toy_reviews:test"
# The papers' setting (DCR: 3 epochs, lr 5e-5, 15 % share) and the demo's (6 epochs, lr 3e-4, 50 %).
DEFAULT_STRENGTHS = "5e-5:3:0.15,3e-4:6:0.5"
REORDERED_PASS = "reordered"  # lm_eval_contam.nullstudy.reordered_validation.REORDERED_PASS (imported late there)


def parse_strengths(text: str, batch_size: int = 1) -> list[InjectionSettings]:
    from lm_eval_contam.core.errors import ContamError

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


def contaminate(base: str, partitions: list[str], out: Path, settings: InjectionSettings) -> Path:
    from lm_eval_contam.contaminate import inject, partition_contaminant, trained_with
    from lm_eval_contam.core.partitions import Partition

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

    from lm_eval_contam.core.partitions import Partition

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
    from lm_eval_contam.core.partitions import Partition

    injected_keys = {Partition.parse(name).label for name in injected}
    held_keys = {Partition.parse(name).label for name in held_out}
    table: dict[str, dict[str, dict[str, list[bool]]]] = {}
    for verdict in verdicts:
        group = ("injected" if verdict.partition in injected_keys else
                 "held_out" if verdict.partition in held_keys else None)
        if group is None or verdict.flagged is None:
            continue
        table.setdefault(verdict.model, {}).setdefault(verdict.test, {"injected": [], "held_out": []})[group].append(
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


def run_papers_strength(args) -> None:
    """The K >= 8 study at the papers' strength on the default model (lm_eval_contam.nullstudy.validation)."""
    import datetime
    import shlex

    from lm_eval_contam.core.registry import referenced_tests
    from lm_eval_contam.models.default_model import default_model_path
    from lm_eval_contam.nullstudy.pooled_power import (
        POOLED_FILE,
        partition_spreads,
        pooled_rates,
        projected_rates,
        projected_table,
        spread_table,
    )
    from lm_eval_contam.nullstudy.pooled_power import markdown_table as pooled_markdown
    from lm_eval_contam.nullstudy.validation import (
        ValidationSettings,
        collect,
        compute_seconds,
        rates_document,
        run_validation,
        scored_runs,
        write_outputs,
    )
    from lm_eval_contam.verdicts.detection_rates import VALIDATION_RATES_FILE

    settings = ValidationSettings(partitions=args.partitions, mc_partitions=args.partitions,
                                  rows_per_partition=args.rows,
                                  max_gen_toks=args.max_gen_toks or ValidationSettings.max_gen_toks,
                                  batch_size=args.batch_size)
    base = args.model or str(default_model_path())
    passes = args.passes.split(",") if args.passes else ["likelihood"]
    if REORDERED_PASS in passes:  # not a verdict pass: its own runs and its own entries of the rates file
        run_reordered(args, settings, base)
        passes = [name for name in passes if name != REORDERED_PASS]
        if not passes:
            return
    if not args.collect:
        run_validation(settings, args.out, base, passes=passes)
    labelled, combined_passes = collect(settings, args.out, base)  # every pass scored so far, not only this call's
    document = rates_document(
        # The command that scores it all (a --collect call only reads what it scored).
        labelled, command="python " + shlex.join(["scripts/validation_study.py",
                                                  *(arg for arg in sys.argv[1:] if arg != "--collect")]),
        date=datetime.date.today().isoformat(), design=settings.design(args.model or "SmolLM2-135M-Instruct (embedded)"),
        scored=scored_runs(args.out.resolve()), combined_passes=combined_passes,
        compute_seconds=compute_seconds(args.out.resolve()), prior=carried_rates(args),
        measured_keys=args.measure.split(",") if args.measure else None)
    write_outputs(document, args.out, ship_to=VALIDATION_RATES_FILE if args.write_rates else None)
    # The reference-differenced relabelling tests with the study's partitions pooled: detection and false positives
    # at 2x, 4x, 8x the items, the same sizes projected by resampling partitions, and each group's spread of partition
    # statistics (docs/studies/validation-study.md quotes all three).
    tests = sorted(referenced_tests())
    pooled = "\n".join((pooled_markdown(pooled_rates(labelled, tests)), projected_table(projected_rates(labelled, tests)),
                        spread_table(partition_spreads(labelled, tests))))
    (args.out / POOLED_FILE).write_text(pooled, encoding="utf-8")
    print(pooled)


def carried_rates(args) -> dict:
    """The document whose entries the rates keep where this call measures nothing: with --measure, the shipped file as
    it is now (what --measure promises: an entry measured since the study began, e.g. by another pass, is kept);
    otherwise the rates shipped when the study began."""
    from lm_eval_contam.nullstudy.validation import prior_rates
    from lm_eval_contam.verdicts.detection_rates import VALIDATION_RATES_FILE

    if args.measure and VALIDATION_RATES_FILE.is_file():
        return json.loads(VALIDATION_RATES_FILE.read_text(encoding="utf-8"))
    return prior_rates(args.out.resolve())


def run_reordered(args, settings, base: str) -> None:
    """The reordered pass (issue 31): acc_reordered's gap on the clean, filler-only and injected models over every
    multiple-choice partition; its rates under ``benchmark_adjustments`` (only those keys shipped with --write-rates)."""
    import datetime
    import shlex

    from lm_eval_contam.nullstudy.reordered_validation import (
        collect_runs,
        markdown,
        rates_entry,
        run_reordered_pass,
        ship,
        study_models,
    )
    from lm_eval_contam.verdicts.detection_rates import VALIDATION_RATES_FILE

    if not args.collect:
        run_reordered_pass(settings, args.out, study_models(settings, args.out, base))
    entries = rates_entry(collect_runs(args.out), date=datetime.date.today().isoformat(), settings=settings,
                          command="python " + shlex.join(["scripts/validation_study.py",
                                                          *(arg for arg in sys.argv[1:] if arg != "--collect")]))
    ship(entries, args.out / "reordered_rates.json")
    (args.out / "reordered_rates.md").write_text(markdown(entries), encoding="utf-8")
    if args.write_rates:
        ship(entries, VALIDATION_RATES_FILE)
    print(markdown(entries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("validation_study"))
    parser.add_argument("--model", help="HF folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--injected", default=DEFAULT_INJECTED)
    parser.add_argument("--held-out", default=DEFAULT_HELD_OUT)
    parser.add_argument("--strengths", default=DEFAULT_STRENGTHS, help="comma-separated lr:epochs:share")
    parser.add_argument("--train-batch-size", type=int, default=1, help="256-token blocks per training step")
    parser.add_argument("--dcq-mode", choices=("loglikelihood", "generate", "both"), default="both")
    parser.add_argument("--max_gen_toks", type=int, help="Time Travel completions (default 48; --papers: 32)")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--judge-model", help="also run Judge B with this model")
    parser.add_argument("--papers", action="store_true",
                        help="the K >= 8 study at the papers' strength on the default model (see above)")
    parser.add_argument("--partitions", type=int, default=8,
                        help="with --papers: injected (and as many held-out) partitions of each shape")
    parser.add_argument("--rows", type=int, default=24,
                        help="with --papers: instances per partition of the generated datasets (their train splits "
                             "are the injected contaminant, and the filler is sized to it, so every fine-tune "
                             "changes with --rows; the fresh natural-text partitions keep their 24)")
    parser.add_argument("--passes", help="with --papers: comma-separated scoring passes, cheapest first "
                                         "(default: likelihood; also: generation, quiz — free-text partitions; "
                                         "reference — both shapes, with the filler-only fine-tune; "
                                         "control_reference — the likelihood control mode against the reference, "
                                         "both shapes, all three models; sentence_order — free text, all three "
                                         "models; reordered — "
                                         "acc_reordered's gap on every multiple-choice partition, all three models)")
    parser.add_argument("--measure", help="with --papers: comma-separated rate keys this call measures (default: "
                                           "every verdict scored); the others keep the shipped entries")
    parser.add_argument("--collect", action="store_true",
                        help="with --papers: score nothing, write the rates from the runs already done")
    parser.add_argument("--write-rates", action="store_true",
                        help="with --papers: also update the shipped lm_eval_contam/verdicts/validation_rates.json")
    args = parser.parse_args()

    from lm_eval_contam.audit.job import AuditSettings
    from lm_eval_contam.cli.audit import audit_one
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.lmeval.generation import ModelSpec
    from lm_eval_contam.models.default_model import default_model_path
    from lm_eval_contam.report import write_report
    from lm_eval_contam.verdicts.verdict import collect

    if args.papers:
        from lm_eval_contam.nullstudy.validation import PASSES

        unknown = [name for name in (args.passes or "").split(",")
                   if name and name not in PASSES and name != REORDERED_PASS]
        if unknown:
            parser.error(f"--passes: unknown pass(es) {', '.join(unknown)}; known: {', '.join([*PASSES, REORDERED_PASS])}")
        run_papers_strength(args)
        return
    base = args.model or str(default_model_path())
    injected = [p.strip() for p in args.injected.split(",") if p.strip()]
    held_out = [p.strip() for p in args.held_out.split(",") if p.strip()]
    audit = AuditSettings(partitions=tuple(injected + held_out),
                          quiz_modes=("loglikelihood", "generate") if args.dcq_mode == "both" else (args.dcq_mode,),
                          max_gen_toks=args.max_gen_toks or 48, batch_size=args.batch_size)
    started = time.perf_counter()
    models = [("clean", base, "none")]
    for settings in parse_strengths(args.strengths, args.train_batch_size):
        label = strength_label(settings)
        print(f"== contaminating: {label}")
        path = contaminate(base, injected, args.out / "models" / label, settings)
        models.append((label, str(path), f"{settings.learning_rate:g}, {settings.epochs}, {settings.share:.0%}"))
    for label, path, _ in models:
        print(f"== auditing: {label}")
        audit_one(ModelSpec.parse(path), label, args.out, audit, judge_model=args.judge_model)
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
        "method_titles": {verdict.test: verdict.title for verdict in verdicts},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    (args.out / "study.json").write_text(json.dumps(study, indent=2) + "\n")
    table = markdown(study)
    (args.out / "study.md").write_text(table)
    write_report(args.out)
    print(table)
    print(f"wall time {study['wall_seconds']} s; report: {args.out / 'report.html'}")


if __name__ == "__main__":
    from lm_eval_contam.core.errors import ContamError

    try:
        main()
    except ContamError as error:  # bad input or a folder of another study: one line, exit 2
        print(f"validation_study.py: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
