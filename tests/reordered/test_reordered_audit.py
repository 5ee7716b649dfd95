"""``audit --tasks`` on a local MMLU-style multiple-choice task (the prompt lists the options, the choices are the
letters): ``acc_reordered`` with its interval, the gap and its p beside ``acc`` (and ``acc_adj``) in lm-eval's results
JSON, the printed table and the report's first screen (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from listed_mc_task import ITEMS, write_listed_mc_task

from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.registry import registered_methods
from lm_eval_contam.methods.reordered.orders import reference_items


def test_audit_tasks_writes_acc_reordered_beside_acc(tiny_model_dir: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.methods.reordered.stats import item_scores, reordered_score

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    tasks = write_listed_mc_task(tmp_path)
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(tasks),
                     "--tasks", "listed_mc", "--max_gen_toks", "4", "--batch_size", "16", "--no-likelihood",
                     "--reorderings", "3", "--output_path", str(out)]) == 0

    model = load_run(out).models[0]
    # The adjustment tasks the audit added (under the cache home) record its id, as its own tasks do (issue 51).
    audit_id = json.loads((out / "audit.json").read_text())["audit_id"]
    adjusting = {task: config["metadata"] for task, config in model.results["configs"].items()
                 if config.get("metadata", {}).get("method") in ("reordered", "dcr")}
    assert "reordered_listed_mc" in adjusting and all(found.get("audit_id") == audit_id for found in adjusting.values())
    row = model.results["results"]["listed_mc"]
    acc, reordered = row["acc,none"], row["acc_reordered,none"]
    assert row["acc_reordered_ci_low,none"] <= reordered <= row["acc_reordered_ci_high,none"]
    assert row["acc_reordered_gap_ci_low,none"] <= row["acc_reordered_gap,none"] <= row["acc_reordered_gap_ci_high,none"]
    assert 0.0 < row["acc_reordered_p,none"] <= 1.0
    assert (row["acc_reordered_items,none"], row["acc_reordered_reordered_items,none"], row["acc_reordered_k,none"]) \
        == (len(ITEMS), len(ITEMS), 3)
    # The original order, scored in the reordered task's own requests, is the benchmark's own score (zero-shot, the
    # benchmark's chat setting): the gap is acc - acc_reordered.
    assert row["acc_reordered_original,none"] == pytest.approx(acc)
    assert row["acc_reordered_gap,none"] == pytest.approx(acc - reordered)
    assert row["acc_norm_reordered_original,none"] == pytest.approx(row["acc_norm,none"])  # acc_norm gets its own
    assert row["acc_norm_reordered_ci_low,none"] <= row["acc_norm_reordered,none"] <= \
        row["acc_norm_reordered_ci_high,none"]

    # The logged per-form samples give the same numbers (the items' forms, grouped by item).
    samples = model.files["reordered_listed_mc"].samples_file
    records = [json.loads(line)["acc_reordered"] for line in samples.read_text().splitlines()]
    assert sorted((r["item"], r["order"]) for r in records) == [(i, k) for i in range(len(ITEMS)) for k in range(4)]
    recomputed = reordered_score(item_scores(records))
    assert recomputed.reordered == pytest.approx(reordered) and recomputed.pvalue == pytest.approx(
        row["acc_reordered_p,none"])

    printed = capsys.readouterr().out
    assert "acc_reordered" in printed  # lm-eval's printed table
    report = (out / "report.md").read_text()
    first_screen = report.split("## Benchmark scores", 1)[1].split("\n## ", 1)[0]
    assert "options reordered (95 % CI)" in first_screen and "gap: original − reordered" in first_screen
    line = next(line for line in first_screen.splitlines() if "listed_mc" in line and "acc,none" in line)
    assert (f"{reordered:.4f} (95 % CI {row['acc_reordered_ci_low,none']:.4f}–"
            f"{row['acc_reordered_ci_high,none']:.4f})") in line
    assert f"{row['acc_reordered_gap,none']:.4f}" in line and "p = " in line
    page = (out / "report.html").read_text()
    first = page[page.index('id="benchmarks"'):page.index("</table>", page.index('id="benchmarks"'))]
    assert "options reordered (95 % CI)" in first and f"{reordered:.4f} (95 % CI" in first


def test_run_tasks_writes_acc_reordered_with_the_metadata_knob(tiny_model_dir: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    tasks = write_listed_mc_task(tmp_path)
    out = tmp_path / "run"
    assert cli_main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_model_dir},dtype=float32",
                     "--tasks", "listed_mc", "--include_path", str(tasks), "--device", "cpu", "--batch_size", "8",
                     "--metadata", '{"reorderings": 2}', "--output_path", str(out)]) == 0
    (results_file,) = out.rglob("results_*.json")
    row = json.loads(results_file.read_text())["results"]["listed_mc"]
    assert row["acc_reordered_k,none"] == 2 and row["acc_reordered_items,none"] == len(ITEMS)
    assert row["acc_reordered_original,none"] == pytest.approx(row["acc,none"])
    assert row["acc_reordered_ci_low,none"] <= row["acc_reordered,none"] <= row["acc_reordered_ci_high,none"]
    assert "acc_reordered" in capsys.readouterr().out
    # The reordered task's folder is under the cache home, named by the benchmark and a hash of its content.
    (docs,) = (tmp_path / "home" / "reordered_tasks").glob("listed_mc-*/docs.jsonl")
    assert len(docs.read_text().splitlines()) == len(ITEMS) * 3


def test_audit_refuses_a_bad_reorderings_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "audit"
    assert cli_main(["audit", "--tasks", "listed_mc", "--reorderings", "30", "--output_path", str(out)]) == 2
    assert "'reorderings' is 30; expected a whole number from 0 (off) to 23" in capsys.readouterr().err
    assert cli_main(["audit", "--tasks", "listed_mc", "--reference-items", "-1", "--output_path", str(out)]) == 2
    assert ("--reference-items: field 'reference_items': got -1; expected a whole number of items, 2 or more (0: "
            "every item; the gap's interval and p pair two or more)") in capsys.readouterr().err
    assert cli_main(["audit", "--tasks", "listed_mc", "--reference-items", "500", "--output_path", str(out)]) == 2
    assert ("field '--reference-items': sets how many items the reference model scores, and this audit has none: leave it "
            "out, or give --reference-model") in capsys.readouterr().err
    assert not out.exists()


def test_audit_methods_runs_only_the_methods_named(tiny_model_dir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path",
                     str(write_listed_mc_task(tmp_path)), "--tasks", "listed_mc", "--methods", "reordered",
                     "--batch_size", "16", "--no-report", "--output_path", str(out)]) == 0
    # The benchmark itself and its reordered task; no other method's task (without --methods: seven more; the
    # sentence-order test runs only with a reference).
    assert sorted(load_run(out).models[0].results["configs"]) == ["listed_mc", "reordered_listed_mc"]
    assert json.loads((out / "audit.json").read_text())["settings"]["skip_methods"] == [
        method.name for method in registered_methods() if method.name != "reordered"]


def test_audit_refuses_a_method_that_is_not_registered_before_writing(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "audit"
    assert cli_main(["audit", "--tasks", "listed_mc", "--methods", "reordered,optionordr", "--output_path",
                     str(out)]) == 2
    err = capsys.readouterr().err
    known = ", ".join(method.name for method in registered_methods())
    assert err.count("\n") == 1 and f"field '--methods': no registered method 'optionordr' (known: {known})" in err
    assert not out.exists()


def test_the_original_order_costs_no_forward_pass_beside_the_benchmark(counted_hf_model, tmp_path: Path) -> None:
    # Requests the benchmark already makes are not made again: the reordered task's original forms are the
    # benchmark's own requests, which lm-eval's HF backend answers with one pass (and the four letters of a form share
    # it), so the reordered score costs K passes per item, not K + 1 (docs/guide/cost.md).
    import lm_eval

    from lm_eval_contam import harness

    tasks = write_listed_mc_task(tmp_path)
    manager = harness.task_manager(str(tasks))
    added = harness.adjustment_tasks(["listed_mc"], manager, metadata={"reorderings": 3}, like_benchmark=True)
    model, calls = counted_hf_model
    results = lm_eval.simple_evaluate(model=model, tasks=["listed_mc", *added], task_manager=manager)
    assert harness.post_process(results)["results"]["listed_mc"]["acc_reordered_k,none"] == 3
    assert calls == [1] * (len(ITEMS) * (1 + 3))  # one pass per item, and one per reordering


def test_audit_with_a_reference_model_subtracts_its_gap_item_by_item(tiny_model_dir: Path, tiny_model_copy: Path,
                                                                     tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    tasks = write_listed_mc_task(tmp_path)
    out = tmp_path / "audit"
    # A reference with the model's own weights (a copy with a card added: the model itself is refused as its own
    # reference): every item's gap is the reference's, so the difference is 0 with no spread. --reference-items 4:
    # the reference scores the forms of 4 of the 6 items (the seeded sample), the model every item.
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(tasks),
                     "--tasks", "listed_mc", "--max_gen_toks", "4", "--batch_size", "16", "--no-likelihood",
                     "--reorderings", "3", "--reference-model", str(tiny_model_copy), "--reference-items", "4",
                     "--output_path", str(out)]) == 0
    model = load_run(out).models[0]
    row = model.results["results"]["listed_mc"]
    assert (row["acc_reordered_gap_vs_reference,none"], row["acc_reordered_gap_vs_reference_ci_low,none"],
            row["acc_reordered_gap_vs_reference_ci_high,none"], row["acc_reordered_gap_vs_reference_p,none"],
            row["acc_reordered_gap_vs_reference_items,none"], row["acc_reordered_items,none"]) == \
        (0.0, 0.0, 0.0, 1.0, 4.0, 6.0)
    assert "acc_norm_reordered_gap_vs_reference,none" in row
    assert "reference_samples" not in model.results  # handed to the hook, never saved
    assert model.reference is not None
    scored = {sample["doc"]["item"] for sample in model.reference.samples("reordered_listed_mc")}
    assert scored == reference_items(len(ITEMS), 4, 0, "listed_mc")
    assert len(model.reference.samples("reordered_listed_mc")) == 4 * (1 + 3)  # each sampled item and its reorderings
    line = next(line for line in (out / "report.md").read_text().splitlines()
                if "listed_mc" in line and "acc,none" in line)
    assert "less the reference model's gap on 4 items: 0.0000 (95 % CI 0.0000–0.0000), p = 1" in line
