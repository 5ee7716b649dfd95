"""The hook on a synthetic results dict, then end to end through lm_eval, the CLI run and adjust."""

from __future__ import annotations

import csv
import json
import math

import lm_eval
import pytest

from lm_eval_contam.cli import main
from lm_eval_contam.harness import post_process
from lm_eval_contam.methods.dcr import dcr_factor
from lm_eval_contam.methods.dcr.hook import apply_dcr
from lm_eval_contam.methods.dcr.results import scores_from_results

LEVEL_TASKS = [f"dcr_toy_sentiment_l{n}" for n in (1, 2, 3, 4)]


def _synthetic(scores=(0.7, 0.15, 0.5, 0.3), n=20) -> dict:
    results = {
        "results": {"contam_toy_sentiment": {"alias": "contam_toy_sentiment", "acc,none": 0.9456,
                                             "acc_stderr,none": 0.01}},
        "configs": {"contam_toy_sentiment": {"metadata": {"version": 1.0}}},
        "n-samples": {},
        "versions": {},
    }
    for level, (task, score) in enumerate(zip(LEVEL_TASKS, scores), start=1):
        results["results"][task] = {"alias": task, "contaminated,none": score, "unchecked,none": 0.0}
        results["configs"][task] = {"metadata": {"dcr_sheet": "toy_sentiment", "dcr_level": level}}
        results["n-samples"][task] = {"original": n, "effective": n}
    return results


def test_hook_adds_adjusted_rows_beside_the_raw_metric() -> None:
    results = post_process(_synthetic())
    factor = dcr_factor([0.7, 0.15, 0.5, 0.3])
    row = results["results"]["contam_toy_sentiment"]
    assert row["dcr_factor,none"] == factor
    assert row["acc_adj,none"] == pytest.approx(0.9456 * (1 - factor))
    assert 0 < row["acc_adj_stderr,none"] < 0.2
    assert row["dcr_factor_ci_low,none"] <= factor <= row["dcr_factor_ci_high,none"]
    group = results["results"]["dcr_toy_sentiment"]
    assert group["dcr_factor,none"] == factor and group["s3,none"] == 0.5
    assert results["higher_is_better"]["contam_toy_sentiment"]["acc_adj"] is True


def test_missing_pieces_are_messages_not_crashes(caplog) -> None:
    no_benchmark = _synthetic()
    del no_benchmark["results"]["contam_toy_sentiment"]
    evidence, _ = scores_from_results(no_benchmark)
    assert any("contam_toy_sentiment" in m and "not in this run" in m for m in apply_dcr(no_benchmark, evidence))

    no_metric = _synthetic()
    no_metric["results"]["contam_toy_sentiment"] = {"f1,none": 0.5}
    evidence, _ = scores_from_results(no_metric)
    assert any("reports no 'acc'" in m for m in apply_dcr(no_metric, evidence))

    partial = _synthetic()
    del partial["configs"]["dcr_toy_sentiment_l4"]
    evidence, messages = scores_from_results(partial)
    assert not evidence and "['L4'] did not run" in messages[0]

    all_manual = _synthetic(scores=(math.nan, 0.1, 0.2, 0.3))
    evidence, messages = scores_from_results(all_manual)
    assert not evidence and "dcr-export" in messages[0]

    plain = {"results": {"x": {"acc,none": 0.5}}, "configs": {"x": {"metadata": {}}}}
    with caplog.at_level("INFO", logger="lm_eval_contam.methods.dcr"):
        assert post_process(plain) == {"results": {"x": {"acc,none": 0.5}}, "configs": {"x": {"metadata": {}}}}
    assert "no DCR test sheet in this run" in caplog.text


@pytest.mark.slow
def test_simple_evaluate_then_hook(tiny_model_dir, task_manager_for) -> None:
    results = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={tiny_model_dir},dtype=float32",
        tasks=["contam_toy_sentiment", "dcr_toy_sentiment"], task_manager=task_manager_for(),
        device="cpu", batch_size=4, bootstrap_iters=100,
    )
    post_process(results)
    assert [results["results"][t]["unchecked,none"] for t in LEVEL_TASKS] == [0.25, 0.0, 0.0, 0.0]  # one manual L1 item
    assert all(results["configs"][t]["metadata"]["method"] == "dcr" for t in LEVEL_TASKS)
    row = results["results"]["contam_toy_sentiment"]
    s = [results["results"][t]["contaminated,none"] for t in LEVEL_TASKS]
    assert all(0.0 <= score <= 1.0 for score in s)
    assert row["dcr_factor,none"] == dcr_factor(s)
    assert row["acc_adj,none"] == pytest.approx(row["acc,none"] * (1 - dcr_factor(s)))


@pytest.mark.slow
def test_cli_run_then_adjust_and_manual_csv(tiny_model_dir, tmp_path, capsys, monkeypatch) -> None:
    # lm-eval bootstraps nanmean's stderr 100,000 times; in-process is faster than its worker pool here.
    monkeypatch.setenv("DISABLE_MULTIPROC", "1")
    out = tmp_path / "run"
    code = main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_model_dir},dtype=float32",
                 "--tasks", "contam_toy_sentiment,dcr_toy_sentiment", "--device", "cpu", "--batch_size", "4",
                 "--output_path", str(out), "--log_samples"])
    assert code == 0
    table = capsys.readouterr().out
    assert "acc_adj" in table and "dcr_factor" in table
    (original,) = [p for p in out.rglob("results_*.json")]
    saved = json.loads(original.read_text())
    row = saved["results"]["contam_toy_sentiment"]
    assert "acc_adj,none" in row

    assert main(["adjust", str(out)]) == 0
    adjusted_file = original.with_name(original.stem + ".dcr_adjusted.json")
    adjusted = json.loads(adjusted_file.read_text())["results"]["contam_toy_sentiment"]
    for key in ("acc_adj,none", "acc_adj_stderr,none", "dcr_factor,none", "dcr_factor_ci_low,none"):
        assert adjusted[key] == row[key]
    assert json.loads(original.read_text()) == saved  # the original is untouched
    assert "acc_adj" in capsys.readouterr().out

    assert main(["adjust", str(out), "--sheet-scores", "0.7,0.13,0.5,0.28"]) == 0
    second = original.with_name(original.stem + ".dcr_adjusted.1.json")
    by_hand = json.loads(second.read_text())["results"]["contam_toy_sentiment"]
    assert by_hand["dcr_factor,none"] == 0.4913
    assert by_hand["acc_adj,none"] == pytest.approx(row["acc,none"] * (1 - 0.4913))

    csv_path = tmp_path / "checks.csv"
    assert main(["dcr-export", str(out), "--out", str(csv_path)]) == 0
    with csv_path.open(newline="") as handle:
        table = list(csv.reader(handle))
    assert len(table) == 1 + 16
    for line in table[1:]:
        line[-1] = "1" if line[2] in ("1", "3") else "0"  # a person marks every L1 and L3 item contaminated
    with csv_path.open("w", newline="") as handle:
        csv.writer(handle).writerows(table)
    assert main(["adjust", str(out), "--check-csv", str(csv_path)]) == 0
    third = original.with_name(original.stem + ".dcr_adjusted.2.json")
    from_csv = json.loads(third.read_text())["results"]["contam_toy_sentiment"]
    assert from_csv["dcr_factor,none"] == dcr_factor([1.0, 0.0, 1.0, 0.0])
    assert main(["adjust", str(tmp_path / "nowhere")]) == 2
