"""The split-control study's rates (issue 49), from the per-item scores it ships (``scored/``), without the models.

``scripts/split_control_study.py`` scored every item of 4 free-text and 4 multiple-choice seeded datasets (splits
``train``: injected into the fine-tune at the papers' strength; ``test``: its never-injected sibling; ``extra``: 96
more, never injected) with the clean default model and the injected fine-tune, and a larger never-injected ``pool``
with the clean model. Here every verdict the audit computes with a split control is recomputed on them:

* the split-label test alone (the likelihood control mode: log-likelihood per byte) and on u (with the clean model as
  the reference: ``likelihood_control_reference``), each after the comparability check of the items compared, with
  the audit's rule (:func:`split_verdict`) but not all of its settings: fewer relabellings (999 for the test, 199 for
  the check, against the audit's 10,000 and 999, so a p near 0.05 can fall either side), the study's own seeded
  24-item draws, and no check on the reference's scores (on the shipped scores at 96 it would change no pair: its
  one-sided p is 0.118 or more on each);
* detection: the injected model, ``train`` vs ``test``; false positives: the injected model's sibling (``test`` vs
  ``extra``) and the clean model (``train`` vs ``test``, ``test`` vs ``extra``); at 96 items a side (every item) and at
  24 (the seeded sample the audit draws, and the mean over many 24-item draws of the same 96, overlapping);
* the same split-label verdict on what a multiple-choice benchmark's own requests compute (``letter_rates``: the
  gold letter's log-likelihood, its margin over the best wrong letter, acc), whose audited side costs no pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.core.jsonl import read_jsonl_objects
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.split_tests import cluster_label_test, rate_entry, texts_differ_test
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.kit.scoring import zlib_ratio

SCORED_DIR = Path(__file__).with_name("scored")
SHAPES = ("free text", "multiple choice")
SIZES = (24, 96)
DRAWS = 200  # 24-item draws per partition for the mean rate at 24


def scored(label: str, directory: Path = SCORED_DIR) -> list[dict[str, Any]]:
    """One model's shipped per-item scores (``clean``, ``injected`` or ``filler``), each with ``per_byte`` and ``zlib`` (per
    zlib-compressed byte, as the audit's zlib-normalised test scores the same text)."""
    return [{**row, "per_byte": float(row["loglikelihood"]) / int(row["bytes"]),
             "zlib": zlib_ratio(float(row["loglikelihood"]), str(row["text"]))}
            for row in read_jsonl_objects(directory / f"split_control_{label}.jsonl")]


def by_split(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """(dataset, split) -> its rows in row order."""
    found: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        found.setdefault((str(row["dataset"]), str(row["split"])), []).append(row)
    return {key: sorted(value, key=lambda row: int(row["row"])) for key, value in found.items()}


def split_verdict(audited: Sequence[Mapping[str, Any]], control: Sequence[Mapping[str, Any]], score: str, *,
                  seed: int = 0, n_resamples: int = 999) -> bool:
    """Flagged as the audit flags with a split control: the texts' comparability check passes and the one-sided
    split-label test of ``score`` has p <= alpha."""
    check = texts_differ_test([str(row["text"]) for row in audited], [str(row["text"]) for row in control], seed=seed,
                              n_resamples=199)
    if check.differ():
        return False
    scores = [float(row[score]) for row in (*audited, *control)]
    test = cluster_label_test(scores, [True] * len(audited) + [False] * len(control), seed=seed,
                              n_resamples=n_resamples)
    return test.pvalue <= ALPHA


def with_u(model: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The model's rows with ``u`` = (log p(model) - log p(reference)) / bytes of the same item."""
    theirs = {(row["dataset"], row["split"], row["row"]): row for row in reference}
    return [{**row, "u": (float(row["loglikelihood"]) - float(theirs[(row["dataset"], row["split"], row["row"])]
                                                               ["loglikelihood"])) / int(row["bytes"])}
            for row in model]


def _draw(rows: Sequence[Mapping[str, Any]], size: int, seed: int, *identity: object) -> list[Mapping[str, Any]]:
    if size >= len(rows):
        return list(rows)
    order = rng_for(seed, "split-control-study", *identity).permutation(len(rows))[:size]
    return [rows[int(index)] for index in sorted(order)]


def pair_rates(pairs: Sequence[tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]], score: str,
               size: int, *, draws: int = DRAWS) -> dict[str, dict[str, Any]]:
    """How many of the (audited, control) pairs are flagged at ``size`` items a side: ``seeded`` (one draw, the
    audit's) and, below the pairs' size, ``mean_over_draws`` (``draws`` overlapping draws per pair)."""
    seeded = sum(split_verdict(_draw(a, size, 0, "audited", i), _draw(c, size, 0, "control", i), score)
                 for i, (a, c) in enumerate(pairs))
    found = {"seeded": rate_entry(seeded, len(pairs))}
    if size < min(len(a) for a, _ in pairs):
        mean = sum(split_verdict(_draw(a, size, d, "audited", i), _draw(c, size, d, "control", i), score, seed=d,
                                 n_resamples=199)
                   for i, (a, c) in enumerate(pairs) for d in range(1, draws + 1)) / draws
        found["mean_over_draws"] = {**rate_entry(mean, len(pairs)), "draws_per_partition": draws}
    return found


def size_rates(model: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]],
               clean: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]] | None, datasets: Sequence[str],
               score: str, size: int, *, draws: int = DRAWS,
               filler: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]] | None = None) -> dict[str, Any]:
    """One test at one size: detection (``train`` vs ``test`` of the injected model), false positives on its siblings
    (``test`` vs ``extra``) and, given the clean model's splits, on the clean model (both pairs); given the filler-only
    fine-tune's, on it (both pairs: it saw neither split of either)."""
    entry = {"detection": pair_rates([(model[(d, "train")], model[(d, "test")]) for d in datasets], score, size,
                                     draws=draws),
             "false_positive_held_out": pair_rates([(model[(d, "test")], model[(d, "extra")]) for d in datasets],
                                                   score, size, draws=draws)}
    for column, null in (("false_positive_clean", clean), ("false_positive_filler", filler)):
        if null is not None:
            entry[column] = pair_rates([(null[(d, a)], null[(d, b)]) for d in datasets
                                        for a, b in (("train", "test"), ("test", "extra"))], score, size, draws=draws)
    return entry


def study_rates(clean: Sequence[Mapping[str, Any]], injected: Sequence[Mapping[str, Any]], *,
                sizes: Sequence[int] = SIZES, draws: int = DRAWS,
                filler: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Per shape, size and setting (the split control alone: ``likelihood_control``, per byte, and
    ``likelihood_control_zlib``, per zlib byte; with the clean model as the reference: ``likelihood_control_reference``):
    detection and false positives (given the filler-only fine-tune's scores, on it too: for the test on u, its only
    model null)."""
    clean_splits, injected_splits = by_split(clean), by_split(with_u(injected, clean))
    filler_splits = by_split(with_u(filler, clean)) if filler is not None else None
    found: dict[str, Any] = {}
    for shape in SHAPES:
        datasets = sorted({str(row["dataset"]) for row in injected if row["shape"] == shape})
        # u of the clean model against itself is 0: no clean-model null for the test on u
        for test, score, null in (("likelihood_control", "per_byte", clean_splits),
                                  ("likelihood_control_zlib", "zlib", clean_splits),
                                  ("likelihood_control_reference", "u", None)):
            for size in sizes:
                found.setdefault(test, {}).setdefault(shape, {})[str(size)] = size_rates(
                    injected_splits, null, datasets, score, size, draws=draws, filler=filler_splits)
    return found

LETTER_SCORES = ("gold_loglikelihood", "gold_margin", "correct")


def letter_statistics(letters: Sequence[float], answer: int) -> dict[str, float]:
    """An item's benchmark scores from its letters' log-likelihoods: the gold letter's, its margin over the best wrong
    letter, and acc (lm-eval's: the first likeliest letter is the gold one)."""
    gold = float(letters[answer])
    best_wrong = max(float(value) for index, value in enumerate(letters) if index != answer)
    first_likeliest = max(range(len(letters)), key=lambda index: (float(letters[index]), -index))
    return {"gold_loglikelihood": gold, "gold_margin": gold - best_wrong, "correct": float(first_likeliest == answer)}


def scored_letters(label: str, directory: Path = SCORED_DIR) -> list[dict[str, Any]]:
    """One model's shipped answer-letter scores of the multiple-choice items, with :func:`letter_statistics`."""
    return [{**row, **letter_statistics(row["letters"], int(row["answer"]))}
            for row in read_jsonl_objects(directory / f"split_control_letters_{label}.jsonl")]


def letter_rates(clean: Sequence[Mapping[str, Any]], injected: Sequence[Mapping[str, Any]], *,
                 sizes: Sequence[int] = SIZES, draws: int = DRAWS,
                 filler: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Per benchmark score and size, the split-label verdict's detection and false positives (multiple choice; given
    the filler-only fine-tune's scores, on it too)."""
    clean_splits, injected_splits = by_split(clean), by_split(injected)
    filler_splits = by_split(filler) if filler is not None else None
    datasets = sorted({str(row["dataset"]) for row in injected})
    return {score: {str(size): size_rates(injected_splits, clean_splits, datasets, score, size, draws=draws,
                                          filler=filler_splits)
                    for size in sizes} for score in LETTER_SCORES}
