"""The split-control study (issue 49): detection and false positives of the split-control test at 24 and 96 items.

    python scripts/split_control_study.py train [--model injected|filler]   # the fine-tune (resumes)
    python scripts/split_control_study.py score [--model filler]            # per-item scores, clean + injected
    python scripts/split_control_study.py letters [--model filler]          # the answer letters' scores
    python scripts/split_control_study.py audit [--model injected|filler|clean] [--reference] [--free-text]  # the audit
    python scripts/split_control_study.py rates                              # rates from the shipped scores

One fine-tune of the default model at the papers' strength (lr 5e-5, 3 epochs, 15 % share; the validation study's
trainer, :func:`lm_eval_contam.nullstudy.validation.train_injected_model`) on 4 free-text and 4 multiple-choice
datasets' ``train`` splits of 96 items. Each dataset also has a ``test`` split (its never-injected sibling, the
injected split's control) and an ``extra`` split of 96 more from the same seeded pool (never injected either: the
sibling's own control, so the sibling is audited as a second split would be).

``score`` computes, for the clean and the injected model, every item's rolling log-likelihood per byte of the text
the likelihood control mode scores (:func:`lm_eval_contam.kit.instances.instance_text`) and writes them to
``lm_eval_contam/nullstudy/scored/split_control_<model>.jsonl`` as they come (one file per model, one row per item):
the rates are recomputed from those files without the models (``rates``).

``audit`` runs ``audit --tasks`` itself on the 4 multiple-choice datasets of 96 items (``--free-text``: the 4
free-text ones, as ``generate_until`` tasks answering the row's label) (the split control on every item, the other
tests on their default sample), each as two local tasks (:mod:`lm_eval_contam.nullstudy.split_audit`: injected vs sibling, sibling vs extra), and keeps every
verdict's p-value and decision in ``scored/split_audit_<model>.jsonl``.

``letters`` scores what a multiple-choice benchmark's own requests compute, for every multiple-choice item: the
log-likelihood of each answer letter after the rendered item (one pass per item), into
``scored/split_control_letters_<model>.jsonl``: the statistics the audited side gets free from the benchmark run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

STUDY_ROWS = 96
STUDY_PARTITIONS = 4  # per shape
EXTRA_SPLIT = "extra"


def settings():
    from lm_eval_contam.nullstudy.validation import ValidationSettings

    return ValidationSettings(partitions=STUDY_PARTITIONS, mc_partitions=STUDY_PARTITIONS,
                              rows_per_partition=STUDY_ROWS)


def study_inputs(out: Path):
    from lm_eval_contam.nullstudy.study import write_world_data
    from lm_eval_contam.nullstudy.validation import write_mc_data

    chosen = settings()
    return chosen, write_world_data(chosen.world(), 0, out), write_mc_data(chosen, out)


def train(out: Path, model_label: str) -> Path:
    """The injected fine-tune, or (``filler``) the filler-only one: the same recipe and corpus without the injected
    splits, the null of the tests a reference differences."""
    from lm_eval_contam.models.default_model import default_model_path
    from lm_eval_contam.nullstudy.validation import train_injected_model

    chosen, world, mc = study_inputs(out)
    started = time.perf_counter()
    model = train_injected_model(world, mc, chosen, str(default_model_path()), out,
                                 filler_only=model_label == "filler")
    print(f"{model_label} model: {model} ({time.perf_counter() - started:.0f} s)")
    return model


POOL_SPLIT, POOL_ROWS = "pool", 250  # more never-injected items per dataset: the clean model's pool for the level
SCORED_DIR = Path(__file__).resolve().parents[1] / "lm_eval_contam" / "nullstudy" / "scored"


def study_items(out: Path, *, pool: bool) -> list[dict]:
    """Every item the study scores, as the likelihood control mode scores it (the instance text: a free-text row's
    text; a multiple-choice row rendered as ``audit --tasks`` renders it, without its answer)."""
    from lm_eval_contam.nullstudy.corpus import make_dataset, make_mc_dataset, render_mc
    from lm_eval_contam.nullstudy.study import _vocabulary

    nouns, adjectives = _vocabulary()
    splits = {"train": STUDY_ROWS, "test": STUDY_ROWS, EXTRA_SPLIT: STUDY_ROWS, **({POOL_SPLIT: POOL_ROWS} if pool else {})}
    items = []
    for shape, make, render in (("free text", make_dataset, lambda row: str(row["text"])),
                                ("multiple choice", make_mc_dataset, render_mc)):
        for index in range(STUDY_PARTITIONS):
            for split, rows in splits.items():
                dataset = make(settings().seed, index, nouns, adjectives, rows_per_split=rows, splits=(split,))
                items += [{"shape": shape, "dataset": dataset.display_name, "split": split, "row": number,
                           "text": render(row)} for number, row in enumerate(dataset.splits[split])]
    return items


def study_models(out: Path, model_label: str | None) -> list[tuple[str, str]]:
    """(label, model directory) of the models a scoring step scores: the clean and the injected model, or the one
    named (``filler``: the filler-only fine-tune)."""
    from lm_eval_contam.models.default_model import default_model_path
    from lm_eval_contam.nullstudy.validation import MODEL_DIRS

    models = {"clean": str(default_model_path()), **{label: str(out / MODEL_DIRS[label])
                                                     for label in ("injected", "filler")}}
    return [(label, models[label]) for label in ((model_label,) if model_label else ("clean", "injected"))]


def score(out: Path, model_label: str | None = None) -> None:
    """Per-item scores of the clean model (the study's items and the pool) and of the injected model (the study's
    items), or of the one model named; each model's file written once it is complete (a finished file is kept and
    not scored again)."""
    from lm_eval_contam.core.jsonl import write_jsonl
    from lm_eval_contam.nullstudy.scoring import rolling_loglikelihoods

    for label, model_dir in study_models(out, model_label):
        target = SCORED_DIR / f"split_control_{label}.jsonl"
        if target.is_file():
            continue
        items = study_items(out, pool=label == "clean")
        started = time.perf_counter()
        scores = rolling_loglikelihoods(model_dir, [item["text"] for item in items])
        write_jsonl(target, [{**item, "loglikelihood": round(value, 4), "bytes": len(item["text"].encode("utf-8"))}
                             for item, value in zip(items, scores)])
        print(f"{label}: {len(items)} items in {time.perf_counter() - started:.0f} s -> {target}")


def letters(out: Path, model_label: str | None = None) -> None:
    """Each multiple-choice item's answer-letter log-likelihoods by the clean and the injected model, or by the one
    named (a finished file is kept and not scored again)."""
    from lm_eval_contam.core.jsonl import write_jsonl
    from lm_eval_contam.nullstudy.corpus import MC_LETTERS, make_mc_dataset, render_mc
    from lm_eval_contam.nullstudy.scoring import letter_loglikelihoods
    from lm_eval_contam.nullstudy.study import _vocabulary

    nouns, adjectives = _vocabulary()
    rows = [{"dataset": dataset.display_name, "split": split, "row": number, "answer": int(row["answer"]),
             "item": row}
            for index in range(STUDY_PARTITIONS) for split in ("train", "test", EXTRA_SPLIT)
            for dataset in [make_mc_dataset(settings().seed, index, nouns, adjectives, rows_per_split=STUDY_ROWS,
                                            splits=(split,))]
            for number, row in enumerate(dataset.splits[split])]
    for label, model_dir in study_models(out, model_label):
        target = SCORED_DIR / f"split_control_letters_{label}.jsonl"
        if target.is_file():
            continue
        started = time.perf_counter()
        scores = letter_loglikelihoods(model_dir, [render_mc(row["item"]) for row in rows], MC_LETTERS)
        write_jsonl(target, [{**{k: v for k, v in row.items() if k != "item"}, "text": render_mc(row["item"]),
                              "letters": [round(value, 4) for value in values]} for row, values in zip(rows, scores)])
        print(f"{label}: {len(rows)} items in {time.perf_counter() - started:.0f} s -> {target}")


# The audit's methods: every default one but Time Travel (its own 10 instances and up to 500 new tokens
# each) and DCR (an adjustment, no flag), whose generations are a fixed cost per benchmark that the sample leaves alone.
AUDIT_METHODS = "likelihood,incontext,optionorder,dcq,reordered"
# With the reference, without the reordered options: its gap is exploratory (it flags nothing and never enters the
# Holm set), and its forms were 15,360 of the model's 23,424 requests, the reference scoring them all again.
REFERENCE_AUDIT_METHODS = "likelihood,incontext,optionorder,dcq"


# Free text: every default method that applies but Time Travel and DCR (as above); the reference adds its tests on u.
FREE_TEXT_AUDIT_METHODS = "likelihood,incontext,dcq"


def audit(out: Path, model_label: str, *, batch_size: int, reference: bool, methods: str | None = None,
          free_text: bool = False) -> None:
    """``audit --tasks`` of the study's 8 multiple-choice tasks (``free_text``: its 8 free-text tasks) on one model,
    with no flag but ``--methods`` (the audit resumes from lm-eval's cache): as a user audits a 96-item benchmark with
    a 96-item second split, the split control on every item and the other tests on their default sample; then every
    verdict's row into ``scored/split_audit_<label>.jsonl`` (free text ``split_audit_free_text_<label>.jsonl``).
    ``reference``: with the checkpoint it was fine-tuned from (the clean default model) as ``--reference-model``
    too, labelled ``<model>_with_reference``: the reference-differenced tests beside the split control, as a user
    with the base model audits. ``methods``: the audit's ``--methods`` (default :data:`AUDIT_METHODS`,
    :data:`REFERENCE_AUDIT_METHODS` with the reference, :data:`FREE_TEXT_AUDIT_METHODS` for free text)."""
    from lm_eval_contam.cli import main as cli_main
    from lm_eval_contam.core.jsonl import write_jsonl
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.models.default_model import default_model_path
    from lm_eval_contam.nullstudy.split_audit import (
        FREE_TEXT,
        MULTIPLE_CHOICE,
        rates_table,
        shipped_name,
        verdict_rows,
        write_tasks,
    )
    from lm_eval_contam.nullstudy.validation import MODEL_DIRS

    shape = FREE_TEXT if free_text else MULTIPLE_CHOICE
    tasks_dir = out / ("audit_tasks_free_text" if free_text else "audit_tasks")
    roles = write_tasks(tasks_dir, settings().seed, datasets=STUDY_PARTITIONS, rows=STUDY_ROWS, shape=shape)
    model = default_model_path() if model_label == "clean" else out / MODEL_DIRS[model_label]
    label = audit_label(model_label, reference=reference)
    target = out / (f"audit_free_text_{label}" if free_text else f"audit_{label}")
    started = time.perf_counter()
    with_reference = ["--reference-model", str(default_model_path())] if reference else []
    methods = methods or (FREE_TEXT_AUDIT_METHODS if free_text else REFERENCE_AUDIT_METHODS if reference
                          else AUDIT_METHODS)
    code = cli_main(["audit", "--model", str(model), *with_reference, "--label", model_label, "--include_path",
                     str(tasks_dir), "--tasks", ",".join(roles), "--methods", methods,
                     "--no-chat-template", "--batch_size", str(batch_size), "--no-report", "--output_path",
                     str(target)])
    if code:
        raise SystemExit(code)
    rows = verdict_rows(load_run(target), roles, label)
    shipped = write_jsonl(SCORED_DIR / shipped_name(label, shape), rows)  # from the audit's own directory
    print(f"{label}: {len(roles)} tasks audited in {time.perf_counter() - started:.0f} s -> {shipped}")
    print(rates_table(rows))


AUDITED = ("injected", "clean", "injected_with_reference", "filler", "filler_with_reference")  # the audits rates() reads, where shipped


def audit_label(model_label: str, *, reference: bool) -> str:
    """The audit's name in the shipped rows and rates: the model, ``_with_reference`` where the base was given."""
    return f"{model_label}_with_reference" if reference else model_label


RATES_FILE = SCORED_DIR.parents[1] / "verdicts" / "split_control_rates.json"


def rates() -> None:
    """The rates recomputed from the shipped scores, into the shipped rates file's ``tests`` (per byte, zlib and on
    u), ``benchmark_scores`` (the answer letters' statistics, multiple choice) and ``audit_96`` (the whole audit's
    verdicts at 96, from the shipped rows of each model audited; free text ``audit_96_free_text``; per shape, the
    tests each combined verdict's Holm set held there: ``audit_96_holm_sets``); the rest kept."""
    from lm_eval_contam.nullstudy.split_audit import (FREE_TEXT, MULTIPLE_CHOICE, audit_rates, holm_sets, scored_rows,
                                                      shipped_name)
    from lm_eval_contam.verdicts.detection_rates import WHOLE_AUDIT_HOLM_SETS_KEY as HOLM_SETS_KEY
    from lm_eval_contam.nullstudy.split_control import letter_rates, scored, scored_letters, study_rates

    document = json.loads(RATES_FILE.read_text(encoding="utf-8"))
    document[HOLM_SETS_KEY] = {}
    filler_scored = (SCORED_DIR / "split_control_filler.jsonl").is_file()  # the filler-only fine-tune's, where shipped
    document["tests"] = study_rates(scored("clean"), scored("injected"),
                                    filler=scored("filler") if filler_scored else None)
    filler_letters = (SCORED_DIR / "split_control_letters_filler.jsonl").is_file()
    document["benchmark_scores"] = letter_rates(scored_letters("clean"), scored_letters("injected"),
                                                filler=scored_letters("filler") if filler_letters else None)
    for key, shape in (("audit_96", MULTIPLE_CHOICE), ("audit_96_free_text", FREE_TEXT)):
        audited = [model for model in AUDITED if (SCORED_DIR / shipped_name(model, shape)).is_file()]
        if audited:
            document[key] = {model: audit_rates(scored_rows(model, shape=shape)) for model in audited}
            document[HOLM_SETS_KEY][shape] = holm_sets([row for model in audited
                                                        for row in scored_rows(model, shape=shape)])
    RATES_FILE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({key: document[key] for key in ("tests", "benchmark_scores", "audit_96", "audit_96_free_text",
                                                     HOLM_SETS_KEY)
                      if key in document},
                     indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("train", "score", "letters", "audit", "rates"))
    parser.add_argument("--out", type=Path, default=Path("out_split_study"))
    parser.add_argument("--model", choices=("injected", "filler", "clean"), default="injected",
                        help="which model (train: injected or filler; score, letters: injected scores the clean and "
                             "the injected model, filler the filler-only fine-tune)")
    parser.add_argument("--reference", action="store_true",
                        help="audit: with the clean default model as --reference-model too")
    parser.add_argument("--methods", help=f"audit: its --methods (default {AUDIT_METHODS}; with --reference "
                                           f"{REFERENCE_AUDIT_METHODS})")
    parser.add_argument("--free-text", action="store_true",
                        help=f"audit: the 8 free-text tasks (methods {FREE_TEXT_AUDIT_METHODS}) instead of the "
                             "multiple-choice ones")
    parser.add_argument("--batch_size", type=int, default=8)
    args = parser.parse_args()
    if args.step == "train":
        if args.model == "clean":
            parser.error("train: --model injected or filler")
        train(args.out.resolve(), args.model)
    elif args.step == "audit":
        audit(args.out.resolve(), args.model, batch_size=args.batch_size, reference=args.reference,
              methods=args.methods, free_text=args.free_text)
    elif args.step in ("score", "letters"):
        if args.model == "clean":
            parser.error(f"{args.step}: --model injected (the clean and the injected model) or filler")
        (score if args.step == "score" else letters)(args.out.resolve(), None if args.model == "injected" else "filler")
    else:
        rates()


if __name__ == "__main__":
    from lm_eval_contam.core.errors import ContamError

    try:
        main()
    except ContamError as error:
        print(f"split_control_study.py: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
