"""Render the DCR Factor along S = [s, 0, 0, 0] to show the jump at mean 0.02 (needs matplotlib).

    python scripts/plot_dcr_threshold.py task_configs/dcr/dcr_threshold.png
"""

from __future__ import annotations

import sys

import numpy as np

from lm_eval_contam.dcr import dcr_factor_many


def main(out: str) -> None:
    import matplotlib.pyplot as plt

    s = np.linspace(0.0, 1.0, 1001)
    scores = np.zeros((s.size, 4))
    scores[:, 0] = s
    plt.figure(figsize=(6, 3.5))
    plt.plot(s, dcr_factor_many(scores), label="S = [s, 0, 0, 0]")
    scores_all = np.repeat(s[:, None], 4, axis=1)
    plt.plot(s, dcr_factor_many(scores_all), label="S = [s, s, s, s]")
    plt.axvline(0.08, color="grey", linestyle=":", label="mean = 0.02 for [s,0,0,0]")
    plt.xlabel("s")
    plt.ylabel("DCR Factor")
    plt.legend()
    plt.tight_layout()
    plt.savefig(out, dpi=120)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "dcr_threshold.png")
