"""Render the DCR Factor along two score paths to show the published jump at mean 0.02 (an SVG, no dependencies).

    python scripts/plot_dcr_threshold.py [task_configs/dcr/dcr_threshold.svg]

S = [s, 0, 0, 0] crosses mean 0.02 at s = 0.08, where the factor jumps from 0 to
about 0.21; S = [s, s, s, s] crosses it at s = 0.02. The aggregator is the
published one (lm_eval_contam.methods.dcr.dcr_factor_many); nothing here smooths it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lm_eval_contam.methods.dcr import dcr_factor_many
from lm_eval_contam.reportkit.charts import LineSeries, line_chart


def threshold_chart(points: int = 401, s_max: float = 0.4) -> str:
    s = np.linspace(0.0, s_max, points)
    one_level = np.zeros((points, 4))
    one_level[:, 0] = s
    all_levels = np.repeat(s[:, None], 4, axis=1)
    series = [
        LineSeries(name, tuple(zip(s.round(4).tolist(), dcr_factor_many(scores).tolist())))
        for name, scores in (("S = [s, 0, 0, 0]", one_level), ("S = [s, s, s, s]", all_levels))
    ]
    return line_chart(series, title="DCR Factor near the mean-0.02 threshold", x_label="s", y_label="DCR Factor",
                      y_max=0.5, width=560, height=300)


def main(out: str) -> None:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(threshold_chart(), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "task_configs/dcr/dcr_threshold.svg")
