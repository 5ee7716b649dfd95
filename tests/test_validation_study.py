"""The validation study's bookkeeping: strengths parsing and detection / false-positive rates from verdicts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from lm_eval_contam.errors import ContamError
from lm_eval_contam.verdict import Verdict

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "validation_study.py"
spec = importlib.util.spec_from_file_location("validation_study", SCRIPT)
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)


def test_strengths_parse_and_label() -> None:
    papers, strong = study.parse_strengths("5e-5:3:0.15,3e-4:6:0.5")
    assert (papers.learning_rate, papers.epochs, papers.share, papers.batch_size) == (5e-5, 3, 0.15, 1)
    assert study.strength_label(strong) == "lr0.0003_ep6_share0.5"
    with pytest.raises(ContamError, match="lr:epochs:share"):
        study.parse_strengths("5e-5:3")


def _verdict(model: str, dataset: str, split: str, method: str, flagged: bool) -> Verdict:
    return Verdict(model=model, partition=f"{dataset} {split}", family=method.partition("_")[0], method=method,
                   title=method, task="t", flagged=flagged, statistic=None, pvalue=None, confidence_interval=None,
                   n=None, null="", rule="", evidence=None)


def test_rates_split_injected_from_held_out_partitions() -> None:
    verdicts = [
        _verdict("strong", "Toy News", "train", "tt_alg1", True),
        _verdict("strong", "Toy Reviews", "train", "tt_alg1", False),
        _verdict("strong", "Toy News", "test", "tt_alg1", True),
        _verdict("strong", "Toy Reviews", "test", "tt_alg1", False),
        _verdict("strong", "Toy Pairs", "test", "tt_alg1", True),  # in neither list: ignored
        _verdict("clean", "Toy News", "train", "dcq_loglikelihood", False),
    ]
    rates = study.rates(verdicts, ["toy_news:train", "toy_reviews:train"], ["toy_news:test", "toy_reviews:test"])
    assert rates["strong"]["tt_alg1"] == {"injected": 0.5, "held_out": 0.5, "n_injected": 2, "n_held_out": 2}
    assert rates["clean"]["dcq_loglikelihood"]["injected"] == 0.0
    assert rates["clean"]["dcq_loglikelihood"]["n_held_out"] == 0


def test_papers_strength_study_runs_resumes_and_ships_rates(tiny_model_dir: Path, tmp_path: Path) -> None:
    """The K >= 8 study's pipeline at toy size: inject, score both models per partition, tally, load as shipped."""
    import json

    from lm_eval_contam.detection_rates import measured_detection, parse_detection
    import shutil

    from lm_eval_contam.nullstudy.validation import (
        PASSES, ValidationSettings, collect, compute_seconds, markdown_table, rates_document, run_validation,
        scored_runs,
    )

    settings = ValidationSettings(partitions=1, rows_per_partition=10, epochs=1, learning_rate=1e-3, share=0.5,
                                  max_gen_toks=2, batch_size=10)
    labelled = run_validation(settings, tmp_path / "study", str(tiny_model_dir), progress=False)
    runs = sorted(path.relative_to(tmp_path / "study" / "runs").as_posix()
                  for path in (tmp_path / "study" / "runs").glob("*/*") if path.is_dir())
    assert runs == ["clean/quick_kettle_0_test", "clean/quick_kettle_0_train", "injected/quick_kettle_0_test",
                    "injected/quick_kettle_0_train"]
    assert scored_runs(tmp_path / "study") == {"generation_and_likelihood": 4, "quiz": 4}
    quiz = sorted(path.name for path in (tmp_path / "study" / "runs" / "clean" / "quick_kettle_0_test" / "quiz")
                  .rglob("samples_*.jsonl"))
    assert [name.split("_2")[0] for name in quiz] == ["samples_dcq_quick_kettle_0_test_ll",
                                                     "samples_likelihood_quick_kettle_0_test_options"]
    manifest = json.loads((tmp_path / "study" / "model" / "contamination_manifest.json").read_text())
    assert manifest["settings"]["learning_rate"] == 1e-3 and manifest["corpus"]["contaminant_share"] <= 0.5
    assert not (tmp_path / "study" / "model" / "training_checkpoint.pt").exists()
    combined = [(v.model, v.partition, role) for v, role in labelled if v.method == "partition_combined"]
    assert combined == [("injected", "Quick Kettle 0 train", "injected"), ("injected", "Quick Kettle 0 test", "sibling"),
                        ("clean", "Quick Kettle 0 train", "unseen"), ("clean", "Quick Kettle 0 test", "unseen")]
    # A second call finds every step done and gives the same verdicts without training or scoring again.
    def decisions(found: list) -> list:
        return [(v.model, v.partition, v.method, v.variant, v.flagged, role) for v, role in found]

    assert decisions(run_validation(settings, tmp_path / "study", str(tiny_model_dir), progress=False)) == \
        decisions(labelled)

    # Collecting only the first pass: the combined verdict rests on its tests alone.
    first = run_validation(settings, tmp_path / "study", str(tiny_model_dir), passes=["generation_and_likelihood"],
                           run_missing=False, progress=False)
    assert not {v.method for v, _ in first} & {"dcq_loglikelihood", "likelihood_options"}
    assert {v.method for v, _ in labelled} >= {"dcq_loglikelihood", "likelihood_options", "partition_combined"}

    # A quiz pass scored on one run only: its tests' rates over that run; the combined verdict over the first pass.
    for run in sorted((tmp_path / "study" / "runs").glob("*/*/quiz"))[1:]:
        shutil.rmtree(run)
    partial, combined_passes = collect(settings, tmp_path / "study", str(tiny_model_dir))
    assert combined_passes == ["generation_and_likelihood"]
    assert sum(v.method == "dcq_loglikelihood" for v, _ in partial) == 1
    assert sum(v.method == "partition_combined" for v, _ in partial) == 4
    assert [v.n for v, _ in partial if v.method == "partition_combined"] == [
        v.n for v, _ in first if v.method == "partition_combined"]

    document = rates_document(labelled, command="cmd", date="2026-11-25", design=settings.design("tiny"),
                              scored=scored_runs(tmp_path / "study"), combined_passes=list(PASSES),
                              compute_seconds=compute_seconds(tmp_path / "study"))
    assert document["passes"]["quiz"]["model_partition_runs"] == 1
    assert document["partition_combined_over"] == list(PASSES) and document["compute_seconds"] > 0
    assert document["design"]["injected_partitions"] == 1 and document["design"]["learning_rate"] == 1e-3
    entry = document["methods"]["partition_combined"]
    assert entry["detection"]["k"] == 1 and entry["false_positive_held_out"]["k"] == 1
    assert entry["false_positive_clean"]["k"] == 2
    assert "| `partition_combined` |" in markdown_table(document)
    rates = parse_detection(document)
    verdict = next(v for v, _ in labelled if v.method == "partition_combined")
    found = measured_detection(verdict, rates)
    assert found is not None and found.text().endswith(
        "at the papers' strength (lr 0.001, 1 epochs, 50 % share), on the default model")


def test_detection_rate_text_and_bad_document() -> None:
    from lm_eval_contam.detection_rates import parse_detection

    document = {"design": {"learning_rate": 5e-5, "epochs": 3, "share": 0.15}, "command": "c", "date": "d",
                "methods": {"m": {"detection": {"k": 8, "flagged": 5, "rate": 0.625, "ci": [0.2449, 0.9148]}}}}
    assert parse_detection(document)["m"].text() == (
        "detects 5/8 = 62 % (95 % CI 24–91 %) at the papers' strength (lr 5e-05, 3 epochs, 15 % share), "
        "on the default model")
    del document["methods"]["m"]["detection"]["k"]
    with pytest.raises(ContamError, match="methods.m"):
        parse_detection(document)


def test_wordnet_glosses_make_english_filler(tmp_path: Path) -> None:
    from lm_eval_contam.nullstudy.validation import GLOSSES_PER_PARAGRAPH, gloss_paragraphs

    for part in ("noun", "verb", "adj", "adv"):
        (tmp_path / f"data.{part}").write_text(
            "  1 licence header line\n" + "".join(f"0000{i} 03 n 01 w{i} 0 000 | {part} gloss {i}; \"ex {i}\"  \n"
                                                  for i in range(7)))
    paragraphs = gloss_paragraphs(tmp_path)
    assert len(paragraphs) == 3 and paragraphs[0].startswith('noun gloss 0; "ex 0". noun gloss 1')
    assert sum(p.count("gloss") for p in paragraphs) == 28 and paragraphs[0].count("gloss") == GLOSSES_PER_PARAGRAPH


def test_clean_model_false_positives_take_a_test_out_of_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test the validation study saw flagging never-seen partitions on the clean default model stops driving."""
    from lm_eval_contam import verdict as verdict_module
    from lm_eval_contam.report.layout import over_level_line

    document = {"command": "c", "date": "d", "methods": {
        "tt_alg1_permutation:instruct": {"false_positive_clean": {"k": 16, "flagged": 4, "rate": 0.25,
                                                                  "ci": [0.0727, 0.5238]}},
        "likelihood_control:control": {"detection": {"k": 8, "flagged": 6, "rate": 0.75, "ci": [0.3491, 0.9681]},
                                       "false_positive_clean": {"k": 16, "flagged": 1, "rate": 0.0625,
                                                                "ci": [0.0016, 0.3023]}}}}
    rates = verdict_module.clean_model_rates(document)
    assert rates["tt_alg1_permutation:instruct"].text() == "25.0 % (4/16; 95 % CI 7.3–52.4 %)"
    monkeypatch.setattr(verdict_module, "shipped_rates", lambda: {})
    monkeypatch.setattr(verdict_module, "shipped_clean_model_rates", lambda: rates)

    def test(method: str, variant: str, pvalue: float) -> Verdict:
        return Verdict(model="m", partition="P", family=method.split("_")[0], method=method, title=method,
                       task=method, flagged=pvalue <= 0.05, statistic=None, pvalue=pvalue, confidence_interval=None,
                       n=10, null="", rule="", evidence=None, variant=variant)

    (row,) = verdict_module.partition_verdicts([test("tt_alg1_permutation", "instruct", 0.004),
                                                test("likelihood_control", "control", 0.2)])
    assert [v.method for v, _ in row.evidence] == ["likelihood_control"] and row.flagged is False
    assert [v.method for v in row.over_level] == ["tt_alg1_permutation"]
    assert over_level_line(row.over_level[0]).endswith(
        "not driving: false-positive rate 25.0 % (4/16; 95 % CI 7.3–52.4 %) in the validation study (never-seen "
        "partitions, clean default model)")
    # Given rates replace both studies' (the validation study itself decides over the null study's alone).
    (row,) = verdict_module.partition_verdicts([test("tt_alg1_permutation", "instruct", 0.004)], rates={})
    assert row.flagged is True
