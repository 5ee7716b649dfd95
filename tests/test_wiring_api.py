"""The probe task through lm-eval's Python API on the tiny offline model."""

from __future__ import annotations

import lm_eval

from lm_eval_contam.lmeval.probe import contains_answer


def test_contains_answer_whole_word_case_insensitive() -> None:
    assert contains_answer("The capital is paris.", "Paris")
    assert not contains_answer("Parisian food", "Paris")
    assert contains_answer("7", "7")
    assert not contains_answer("17 days", "7")


def test_probe_runs_through_simple_evaluate(tiny_model_dir, task_manager_for) -> None:
    results = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={tiny_model_dir},dtype=float32",
        tasks=["contam_probe"],
        task_manager=task_manager_for(),
        device="cpu",
        batch_size=2,
        log_samples=True,
    )
    metrics = results["results"]["contam_probe"]
    assert "contains_answer,none" in metrics
    assert 0.0 <= metrics["contains_answer,none"] <= 1.0
    assert len(results["samples"]["contam_probe"]) == 6
    assert results["configs"]["contam_probe"]["num_fewshot"] == 0
