"""``audit --tasks <MC task> --reference-model <base>``: the reference-differenced tests on models whose contamination
we know (issue 28).

Two fine-tunes of one tiny base model: one trained on the audited multiple-choice items as the benchmark renders them
(with other items of the same author and format), one on the other items only (it learns the format and the author's
habits, none of the audited items). Audited against the base, the option-order test on u flags the first and not the
second; the report names the reference. ``run --reference-model`` puts the same tests in lm-eval's own results.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from question_mc_task import TASK_YAML

from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.methods.optionorder.orders import item_from_row, render
from lm_eval_contam.models.training import train_on_texts

EPOCHS = 40  # the tiny model memorises the twelve items' option orders (12 epochs left p near 0.05)
WORDS = ["saw", "spoon", "pillow", "kettle", "horse", "hen", "goat", "cow", "iron", "copper", "mercury", "tin",
         "piano", "flute", "drum", "harp", "lung", "heart", "liver", "kidney", "oxygen", "helium", "neon", "argon"]


def items(offset: int) -> list[dict]:
    """Twelve items: four options each in a seeded random order (what the study's datasets have), none sorted."""
    import numpy as np

    rng = np.random.default_rng(offset)
    found = []
    for i in range(12):
        picked = [WORDS[int(k)] for k in rng.choice(len(WORDS), size=4, replace=False)]
        found.append({"question": f"Which thing is item {offset + i}?", "choices": picked, "answer": i % 4})
    return found


def rendered(item: dict) -> str:
    """The item as the option-order test renders its original order (the form a leak would carry)."""
    parsed = item_from_row({"text": f"Question: {item['question']}\nAnswer:", "choices": item["choices"]})
    return render(parsed, range(4))


@pytest.fixture(scope="module")
def study(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two fine-tunes, the audited items as an lm-eval task and as a partition, and each model's run of the
    partition's option-order task (through the studies' evaluation path)."""
    from lm_eval_contam import task_dir
    from lm_eval_contam.core.partitions import Partition
    from lm_eval_contam.core.registry import RenderTarget
    from lm_eval_contam.methods.optionorder.method import render_task_configs
    from lm_eval_contam.nullstudy.design import StudySettings
    from lm_eval_contam.nullstudy.study import evaluate

    root = tmp_path_factory.mktemp("reference_models")
    audited, others = items(0), items(100)
    found = {"base": tiny_model_dir}
    for name, texts in (("injected", audited + others), ("filler", others)):
        found[name] = root / name
        train_on_texts(tiny_model_dir, [rendered(item) for item in texts] * 2, out_dir=found[name], epochs=EPOCHS,
                       learning_rate=3e-3, batch_size=4, seed=0)
    data = root / "items.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in audited))
    (root / "tasks").mkdir()
    (root / "tasks" / "items_mc.yaml").write_text(TASK_YAML.format(name="items_mc", data=data))
    found["tasks"] = root / "tasks"
    rows = root / "partition_test.jsonl"  # as `audit --tasks` writes a benchmark's partition
    rows.write_text("".join(json.dumps({"text": f"Question: {item['question']}\nAnswer:", "choices": item["choices"],
                                        "answer": item["choices"][item["answer"]], "doc_index": i}) + "\n"
                            for i, item in enumerate(audited)))
    partition = Partition.from_task_metadata({"dataset_name": "Items", "data_files": {"test": str(rows)},
                                              "task_type": "question", "text_field": "text", "label_field": "answer",
                                              "columns": ["text", "answer"]}, "test")
    (root / "partition_tasks").mkdir()
    configs = render_task_configs(partition, RenderTarget(task_dir(), root / "options.json", reference=True))
    for name, text in configs.items():
        (root / "partition_tasks" / f"{name}.yaml").write_text(text)
    found["partition_tasks"], (found["task"],) = root / "partition_tasks", list(configs)
    settings = StudySettings(batch_size=32)
    for name in ("base", "injected", "filler"):
        found[f"run_{name}"] = evaluate(root / "partition_tasks", list(configs), found[name], root / "runs" / name,
                                        settings)
    return found


def _verdicts(study: dict[str, Path], model: str, reference: str | None) -> dict[str, object]:
    from lm_eval_contam.core.rundir import load_model_dir
    from lm_eval_contam.methods.optionorder.verdicts import verdicts

    base = load_model_dir(study[f"run_{reference}"], label=reference) if reference else None
    return {v.test: v for v in verdicts(load_model_dir(study[f"run_{model}"], label=model, reference=base))}


def test_on_u_the_fine_tune_on_the_items_is_flagged_and_the_one_on_other_items_of_the_format_is_not(
        study: dict[str, Path]) -> None:
    injected = _verdicts(study, "injected", "base")
    assert set(injected) == {"option_order", "option_order_arrangement", "option_order_reference",
                             "option_order_reference_fixed_answer", "option_order_reference_residualised"}
    on_u = injected["option_order_reference"]
    # Every item the test can use (an item whose original order happens to be sorted is left out).
    assert on_u.flagged and on_u.pvalue < 0.01 and on_u.n == injected["option_order"].n >= 11
    assert on_u.evidence.per_unit in (23, 24)
    assert injected["option_order_reference_fixed_answer"].pvalue < 0.05
    assert injected["option_order_reference_fixed_answer"].evidence.per_unit == 6  # 3! orders keep the answer
    assert injected["option_order_reference_residualised"].pvalue < 0.01
    # The slope it took out is on its evidence (the report's facts); the other tests on u take none.
    assert injected["option_order_reference_residualised"].evidence.slope is not None
    assert injected["option_order_reference"].evidence.slope is None
    filler = _verdicts(study, "filler", "base")
    assert not any(filler[test].flagged for test in ("option_order_reference", "option_order_reference_fixed_answer",
                                                     "option_order_reference_residualised"))
    # Its own reference: u is 0 for every text, so nothing stands out (p = 1).
    itself = _verdicts(study, "filler", "filler")["option_order_reference"]
    assert itself.pvalue == 1.0 and itself.statistic == 0.0
    # Without a reference only the model's own scores are tested.
    assert set(_verdicts(study, "injected", None)) == {"option_order", "option_order_arrangement"}


def test_audit_with_a_reference_model_runs_it_on_the_referenced_tasks_and_reports_it(
        study: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(study["injected"]), "--label", "tuned", "--reference-model",
                     str(study["base"]), "--include_path", str(study["tasks"]), "--tasks", "items_mc",
                     "--no-likelihood", "--max_gen_toks", "4", "--batch_size", "32", "--output_path", str(out)]) == 0
    reference = json.loads((out / "audit.json").read_text())["models"][0]["reference"]
    assert reference["run_dir"] == "runs/tuned.reference" and reference["tasks"] == ["optionorder_task_items_mc_test"]
    on_u = next(v for v in collect(load_run(out)) if v.test == "option_order_reference")
    assert on_u.flagged and on_u.evidence.reference == f"hf pretrained={study['base']}"
    report = (out / "report.md").read_text()
    assert "Option order on u, against the reference model (ours)" in report
    assert f"reference: hf pretrained={study['base']}" in report  # the models table names it


def test_a_reference_model_that_is_not_there_is_refused_before_anything_is_written(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "refused"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--reference-model", str(tmp_path / "missing"),
                     "--partitions", "toy_news:test", "--output_path", str(out)]) == 2
    assert not out.exists()
    assert "missing" in capsys.readouterr().err


def _run(study: dict[str, Path], model: str, reference: str, out: Path) -> list[str]:
    """``lm-eval-contam run`` of the partition's option-order task with a reference model (its argv)."""
    return ["run", "--model", "hf", "--model_args", f"pretrained={study[model]}", "--reference-model", reference,
            "--include_path", str(study["partition_tasks"]), "--tasks", str(study["task"]), "--batch_size", "32",
            "--device", "cpu", "--output_path", str(out)]


def _results(out: Path) -> dict:
    (path,) = out.rglob("results_*.json")
    return json.loads(path.read_text())


def test_run_with_a_reference_model_adds_the_audits_tests_on_u_to_the_tasks_row_in_lm_evals_results(
        study: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    assert cli_main(_run(study, "injected", str(study["base"]), tmp_path / "tuned")) == 0
    results = _results(tmp_path / "tuned")
    row = results["results"][str(study["task"])]
    # The audit's verdicts on the same model, reference and docs: the same tests, the same numbers.
    audited = _verdicts(study, "injected", "base")
    for test in ("option_order_reference", "option_order_reference_fixed_answer",
                 "option_order_reference_residualised"):
        assert row[f"{test}_pvalue,none"] == pytest.approx(audited[test].pvalue, abs=2e-4)
        assert row[f"{test}_z,none"] == pytest.approx(audited[test].statistic, rel=1e-3)
        assert results["higher_is_better"][str(study["task"])][f"{test}_pvalue"] is False
    assert row["option_order_reference_pvalue,none"] < 0.01 and row["option_order_reference_z,none"] > 2
    assert results["config"]["reference_model"] == f"hf pretrained={study['base']}"
    assert "samples" not in results  # logged for u, not asked for: not written into the results
    assert "option_order_reference_pvalue" in capsys.readouterr().out  # lm-eval's own table shows it

    # The model against itself (u is 0 for every text: nothing could stand out) is refused before any request.
    assert cli_main(_run(study, "base", str(study["base"]), tmp_path / "itself")) == 2
    assert _error_line(capsys) == (f"lm-eval-contam run: error: field '--reference-model': the reference model is the "
                                   f"audited model: '{study['base']}' has the same weights as 'hf:pretrained="
                                   f"{study['base']}' (every file's sha256); a reference must be the checkpoint it "
                                   "was fine-tuned from")
    assert not (tmp_path / "itself").exists()


def _error_line(capsys: pytest.CaptureFixture) -> str:
    """The command's error: one line (lm-eval's log lines of an earlier run's handler may precede it)."""
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lm-eval-contam run: error:")]
    return line


def test_run_refuses_a_reference_model_that_is_not_there_or_has_nothing_to_score_in_one_line(
        study: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "refused"
    assert cli_main(_run(study, "injected", str(tmp_path / "missing"), out)) == 2
    assert "missing" in _error_line(capsys)
    plain = ["run", "--model", "hf", "--model_args", f"pretrained={study['injected']}", "--reference-model",
             str(study["base"]), "--include_path", str(study["tasks"]), "--tasks", "items_mc", "--output_path", str(out)]
    assert cli_main(plain) == 2  # lm-eval's own multiple-choice task: no test differences the two models
    assert "nothing for the reference model to score" in _error_line(capsys)
    assert cli_main(["run", "--reference-model"]) == 2
    assert "--reference-model" in _error_line(capsys)
    assert not out.exists()
