"""Cost of the split control's statistics beside the forward passes it needs, measured side by side in one process.

    python scripts/bench_split_checks.py [--sizes 24,96,384,1531,2000] [--passes 96] [--no-model]

For each size (items a side; 1,531 is all of MMLU's validation split, 2,000 the default ``--control-items``), on rendered
multiple-choice items built from the shipped fresh items (lm_eval_contam/nullstudy/fresh/mc_*.jsonl, each numbered
so that every text is distinct; the statistics' cost depends on the items' count and lengths, not their words):
1. ``shared_context_clusters``: the units the tests relabel (passage lines and option sets shared between items);
2. ``texts_differ_test``: the comparability check of the items compared (999 relabellings of a kernel on character
   3-gram profiles, quadratic in the items);
3. ``cluster_label_test``: the split-label test itself (10,000 relabellings of one score per item).
Then the default model's rolling log-likelihood of ``--passes`` of the same texts (the per-byte score, one pass per
item), whose seconds per item give each size's passes (2 x size) at that rate: the statistics' share of the work.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from lm_eval_contam.core.split_tests import cluster_label_test, shared_context_clusters, texts_differ_test

FRESH = Path(__file__).resolve().parents[1] / "lm_eval_contam" / "nullstudy" / "fresh"


def rendered_items(count: int) -> tuple[list[str], list[list[str]]]:
    """``count`` distinct rendered items (MMLU's prompt) and their options, the shipped fresh items numbered."""
    rows = [json.loads(line) for path in sorted(FRESH.glob("mc_*.jsonl")) for line in path.read_text().splitlines()]
    texts, choices = [], []
    for index in range(count):
        row = rows[index % len(rows)]
        options = [f"{choice} ({index})" for choice in row["choices"]]
        lettered = "\n".join(f"{letter}. {option}" for letter, option in zip("ABCD", options))
        texts.append(f"{row['question'].strip()} (item {index})\n{lettered}\nAnswer:")
        choices.append(options)
    return texts, choices


def timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    found = call()
    return time.perf_counter() - started, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="24,96,384,1531,2000", help="items a side, comma-separated")
    parser.add_argument("--passes", type=int, default=96, help="texts the default model scores (its rate)")
    parser.add_argument("--no-model", action="store_true", help="the statistics only")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    texts, choices = rendered_items(2 * max(sizes))
    per_pass = None
    if not args.no_model:
        from lm_eval_contam.models.default_model import default_model_path
        from lm_eval_contam.nullstudy.scoring import rolling_loglikelihoods

        model = str(default_model_path())
        rolling_loglikelihoods(model, texts[:8])  # load and warm up outside the timing
        seconds, _ = timed(lambda: rolling_loglikelihoods(model, texts[: args.passes]))
        per_pass = seconds / args.passes
        print(f"default model, rolling log-likelihood: {args.passes} items in {seconds:.1f} s "
              f"({per_pass * 1000:.0f} ms an item)")
    print("| items a side | clusters (s) | comparability check (s) | split-label test (s) | statistics (s) | "
          "passes (2 x size) at the measured rate (s) | statistics / passes |")
    print("|---|---|---|---|---|---|---|")
    scores = np.random.default_rng(0).normal(size=2 * max(sizes))
    for size in sizes:
        both, options = texts[: 2 * size], choices[: 2 * size]
        labels = [True] * size + [False] * size
        cluster_s, clusters = timed(lambda: shared_context_clusters(both, options))
        check_s, _ = timed(lambda: texts_differ_test(both[:size], both[size:], clusters))
        label_s, _ = timed(lambda: cluster_label_test(scores[: 2 * size], labels, clusters))
        total = cluster_s + check_s + label_s
        passes = f"{2 * size * per_pass:.1f}" if per_pass else "—"
        share = f"{total / (2 * size * per_pass):.3f}" if per_pass else "—"
        print(f"| {size:,} | {cluster_s:.2f} | {check_s:.2f} | {label_s:.2f} | {total:.2f} | {passes} | {share} |")


if __name__ == "__main__":
    main()
