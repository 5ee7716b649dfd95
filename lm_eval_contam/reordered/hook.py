"""After a run: ``<metric>_reordered`` (with its interval, gap and p) copied from each reordered task to its benchmark.

Works on lm-eval's own results dict (the one ``simple_evaluate`` returns and ``lm_eval run`` saves and prints), so
the rows appear in lm-eval's JSON and table beside the benchmark's ``acc`` (and DCR's ``acc_adj``), under the same
filter. A reordered task whose benchmark is not in the run is logged, never raised.
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval_contam.reordered.orders import METHOD
from lm_eval_contam.reordered.task import DERIVED

log = logging.getLogger("lm_eval_contam.reordered")


def reordered_rows(row: dict[str, Any]) -> dict[str, Any]:
    """The derived rows of a reordered task's results row (``acc_reordered,none``, …; no stderr, no alias)."""
    return {key: value for key, value in row.items()
            if "," in key and any(key.partition(",")[0].endswith(suffix) for suffix in DERIVED)}


def post_process_results(results: dict[str, Any]) -> dict[str, Any]:
    """The live hook: every reordered task's rows onto its benchmark's row."""
    for task, config in (results.get("configs") or {}).items():
        metadata = (config or {}).get("metadata") or {}
        if metadata.get("method") != METHOD:
            continue
        benchmark = str(metadata.get("reordered_benchmark"))
        row = (results.get("results") or {}).get(task)
        target = (results.get("results") or {}).get(benchmark)
        if row is None or target is None:
            log.warning("reordered task %s: %s is not in this run's results; no reordered score copied", task,
                        benchmark if target is None else task)
            continue
        target.update(reordered_rows(row))
        higher = results.setdefault("higher_is_better", {})
        higher.setdefault(benchmark, {}).update(higher.get(task) or {})
    return results
