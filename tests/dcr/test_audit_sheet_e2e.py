"""``audit --dcr-sheet``: a DCR sheet planned through its method's own input (registry), end to end on a tiny model.

The sheet's group and the benchmark it adjusts run in one audit; the benchmark's raw metric gets ``acc_adj`` beside
it, the audit records the input under ``method_inputs``, and the report shows the sheet's section.
"""

from __future__ import annotations

import json

from lm_eval_contam.cli import main as cli_main


def test_audit_runs_the_sheet_and_its_benchmark_with_the_adjusted_metric(tiny_model_dir, tmp_path) -> None:
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--dcr-sheet", "toy_sentiment",
                     "--partitions", "toy_news:train", "--limit", "2", "--no-likelihood", "--max_gen_toks", "4", "--batch_size", "16", "--output_path", str(out)]) == 0
    audit = json.loads((out / "audit.json").read_text())
    assert audit["method_inputs"] == {"dcr": {"tasks": ["dcr_toy_sentiment"], "benchmark_tasks": ["contam_toy_sentiment"]}}
    (results_file,) = sorted((out / "runs" / "tiny").rglob("results_*.json"))
    results = json.loads(results_file.read_text())["results"]
    benchmark = results["contam_toy_sentiment"]
    assert 0.0 <= benchmark["acc,none"] <= 1.0 and "acc_adj,none" in benchmark
    assert benchmark["acc_adj,none"] <= benchmark["acc,none"]
    assert "dcr_factor,none" in results["dcr_toy_sentiment"]
    assert "##### DCR — dcr_toy_sentiment (sheet toy_sentiment)" in (out / "report.md").read_text()
