"""The reordered score's gap test simulated per K (docs/guide/reordered.md, "The knob"): interval width and power.

Items of random difficulty (0.1-0.9), each form right independently, a fifth of the items not reorderable, the
original order right with probability +BOOST: the mean width of the gap's 95 % interval and the share of runs with
p <= 0.05, per number of reorderings K. A simulation, not a model: it sizes the default K, it measures no model.

With ``--reference-items S``: the gap less a reference model's (``acc_reordered_gap_vs_reference``) at K
reorderings (``--k``, default 1: the default K from 1,000 items), the reference scoring every item and scoring a
seeded sample of S (as ``audit --reference-items S`` draws it); the reference is drawn alike on the same items (the
same difficulty, independent draws, no boost), the audited model with +BOOST (``--boost 0``: the level).

    python scripts/simulate_reordered.py [--items 200] [--runs 200] [--boost 0.1]
    python scripts/simulate_reordered.py --reference-items 1000 --items 5700 --runs 100 --boost 0.05
"""

from __future__ import annotations

import argparse

import numpy as np

from lm_eval_contam.methods.reordered.orders import reference_items
from lm_eval_contam.methods.reordered.stats import ItemScores, reference_gap_score, reordered_score


def simulated(rng: np.random.Generator, n: int, k: int, boost: float) -> list[ItemScores]:
    items = []
    for index in range(n):
        p = rng.uniform(0.1, 0.9)
        reorderable = rng.random() < 0.8
        original = float(rng.random() < min(1.0, p + boost))
        items.append(ItemScores(index, original, tuple(float(x) for x in rng.random(k) < p) if reorderable else ()))
    return items


def simulated_pair(rng: np.random.Generator, n: int, k: int,
                   boost: float) -> tuple[list[ItemScores], list[ItemScores]]:
    """The audited model's items (original right with +boost) and a reference's on the same items (no boost)."""
    mine, theirs = [], []
    for index in range(n):
        p = rng.uniform(0.1, 0.9)
        forms = k if rng.random() < 0.8 else 0
        mine.append(ItemScores(index, float(rng.random() < min(1.0, p + boost)),
                               tuple(float(x) for x in rng.random(forms) < p)))
        theirs.append(ItemScores(index, float(rng.random() < p), tuple(float(x) for x in rng.random(forms) < p)))
    return mine, theirs


def reference_table(items: int, sample: int, k: int, runs: int, boost: float) -> None:
    """Width and share of p <= 0.05 of the gap less the reference's, the reference on every item and on a sample."""
    rng = np.random.default_rng(33)
    found: dict[str, list] = {"every item": [], "sample": []}
    for run in range(runs):
        mine, theirs = simulated_pair(rng, items, k, boost)
        chosen = reference_items(items, min(sample, items), run, "simulated")
        found["every item"].append(reference_gap_score(mine, theirs, seed=run))
        found["sample"].append(reference_gap_score(mine, [item for item in theirs if item.item in chosen], seed=run))
    print(f"{items} items, K = {k}, boost {boost}, {runs} runs")
    print("reference scores  items paired  gap-vs-reference CI width  share p <= 0.05")
    for name, scores in found.items():
        width = np.mean([s.gap_interval.high - s.gap_interval.low for s in scores])
        share = np.mean([s.pvalue <= 0.05 for s in scores])
        print(f"{name:<16}  {scores[0].n_items:<12}  {width:.4f}                     {share:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--boost", type=float, default=0.1)
    parser.add_argument("--reference-items", type=int, help="the gap less a reference's, the reference on a sample")
    parser.add_argument("--k", type=int, default=1, help="reorderings per item with --reference-items")
    args = parser.parse_args()
    if args.reference_items is not None:
        reference_table(args.items, args.reference_items, args.k, args.runs, args.boost)
        return
    print("K  gap CI width  power (p <= 0.05)")
    for k in (1, 2, 4, 8):
        rng = np.random.default_rng(33)
        scores = [reordered_score(simulated(rng, args.items, k, args.boost), n_resamples=500, seed=run)
                  for run in range(args.runs)]
        width = np.mean([s.gap_interval.high - s.gap_interval.low for s in scores])
        power = np.mean([s.pvalue <= 0.05 for s in scores])
        print(f"{k}  {width:.4f}        {power:.3f}")


if __name__ == "__main__":
    main()
