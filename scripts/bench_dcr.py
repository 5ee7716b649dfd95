"""Speed of the DCR Factor: scikit-fuzzy reference vs the vectorised path, and the 10k-resample CI.

    python scripts/bench_dcr.py [--vectors 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lm_eval_contam.methods.dcr import bootstrap_dcr_factor, dcr_factor_many, dcr_factor_reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vectors", type=int, default=2000)
    args = parser.parse_args()
    vectors = np.random.default_rng(0).random((args.vectors, 4))
    start = time.perf_counter()
    reference = [dcr_factor_reference(v) for v in vectors]
    reference_s = time.perf_counter() - start
    start = time.perf_counter()
    fast = dcr_factor_many(vectors)
    fast_s = time.perf_counter() - start
    assert np.array_equal(fast, reference)
    per_ref, per_fast = reference_s / args.vectors, fast_s / args.vectors
    print(f"skfuzzy reference: {per_ref * 1e6:.1f} us/vector; vectorised: {per_fast * 1e6:.2f} us/vector; "
          f"speed-up {per_ref / per_fast:.0f}x over {args.vectors} vectors")
    items = [np.r_[np.ones(14), np.zeros(6)], np.r_[np.ones(3), np.zeros(17)],
             np.r_[np.ones(10), np.zeros(10)], np.r_[np.ones(6), np.zeros(14)]]
    start = time.perf_counter()
    result = bootstrap_dcr_factor(items, n_resamples=10_000, seed=0)
    print(f"10,000-resample CI: {time.perf_counter() - start:.2f} s -> factor {result.statistic} "
          f"[{result.confidence_interval.low:.4f}, {result.confidence_interval.high:.4f}]")


if __name__ == "__main__":
    main()
