"""The likelihood modes through lm_eval on tiny models: exact scores, one request per score, verdicts, detection."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lm_eval
import pytest
from lm_eval.loggers import EvaluationTracker

from lm_eval_contam import harness
from lm_eval_contam.contaminate import contaminant_texts
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.rundir import load_run
from lm_eval_contam.kit.scoring import per_byte, zlib_ratio
from lm_eval_contam.methods.likelihood.configs import task_names
from lm_eval_contam.models.tiny_model import build_tiny_model
from lm_eval_contam.models.training import train_on_texts
from lm_eval_contam.verdicts.verdict import collect

TRAIN, TEST = Partition.parse("toy_news:train"), Partition.parse("toy_news:test")
TASKS = task_names(TRAIN)  # control, lift, options
EPOCHS = 20


def _web_texts(partition: Partition) -> list[str]:
    return contaminant_texts(partition, partition.rows(), "timetravel")


@pytest.fixture(scope="module")
def base_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained tiny model whose tokenizer saw both Toy News splits alike (and Toy Reviews)."""
    corpus = [*_web_texts(TRAIN), *_web_texts(TEST), *_web_texts(Partition.parse("toy_reviews:train"))]
    return build_tiny_model(tmp_path_factory.mktemp("ll_base"), corpus * 2, vocab_size=500)


@contextmanager
def _one_thread() -> Iterator[None]:
    """Tiny models gain nothing from threads; on a shared CPU, threads multiply the wall time (5 s vs 50 s measured)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _trained(base: Path, texts: list[str], out: Path) -> Path:
    with _one_thread():
        train_on_texts(base, texts, out_dir=out, epochs=EPOCHS, learning_rate=3e-3, batch_size=4, max_length=128)
    return out


@pytest.fixture(scope="module")
def memoriser(base_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Trained on Toy News train in Time Travel's web format; Toy News test stays unseen."""
    return _trained(base_model, _web_texts(TRAIN), tmp_path_factory.mktemp("ll_memoriser"))


@pytest.fixture(scope="module")
def clean(base_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Trained the same way on other text (Toy Reviews, both splits): has seen neither Toy News split."""
    reviews = [*_web_texts(Partition.parse("toy_reviews:train")), *_web_texts(Partition.parse("toy_reviews:test"))]
    return _trained(base_model, reviews, tmp_path_factory.mktemp("ll_clean"))


def _evaluate(model: Path, out: Path) -> dict:
    tracker = EvaluationTracker(output_path=str(out))
    with _one_thread():
        results = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={model}", tasks=TASKS, device="cpu",
                                          batch_size=8, task_manager=harness.task_manager(), log_samples=True,
                                          evaluation_tracker=tracker)
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    return {**results, "samples": samples}


def _rolling_loglikelihood(model_dir: Path, text: str) -> float:
    """The text's log-likelihood after the BOS token, as lm-eval's HF loglikelihood_rolling scores it."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids = torch.tensor([[tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(ids).logits[0, :-1].double(), dim=-1)
    return float(logprobs.gather(1, ids[0, 1:, None]).sum())


@pytest.fixture(scope="module")
def memoriser_run(memoriser: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("ll_run")
    return out, _evaluate(memoriser, out)


def test_scores_are_the_models_own_log_likelihoods(memoriser: Path, memoriser_run) -> None:
    _, results = memoriser_run
    samples = results["samples"]["likelihood_toy_news_train"]
    assert len(samples) == 24  # 12 partition + 12 control texts, one rolling request each
    assert all(len(sample["arguments"]) == 1 for sample in samples)
    for sample in samples[:3] + samples[-2:]:
        text = sample["doc"]["text"]
        expected = _rolling_loglikelihood(memoriser, text)
        record = sample["per_byte_pvalue"]
        assert record["loglikelihood"] == pytest.approx(expected, rel=1e-4)
        assert record["per_byte"] == pytest.approx(per_byte(expected, text), rel=1e-4)
        assert record["zlib"] == pytest.approx(zlib_ratio(expected, text), rel=1e-4)
    assert len(results["samples"]["likelihood_toy_news_train_lift"][0]["arguments"]) == 4
    assert len(results["samples"]["likelihood_toy_news_train_options"][0]["arguments"]) == 5


def test_memoriser_is_flagged_against_its_control(memoriser_run) -> None:
    out, results = memoriser_run
    found = {verdict.test: verdict for verdict in collect(load_run(out))}
    print({method: (round(v.statistic, 3), round(v.pvalue, 4)) for method, v in found.items()})
    # A heavy memoriser (20 epochs at lr 3e-3, nothing else in training): every mode fires.
    assert all(verdict.flagged for verdict in found.values()), found
    assert set(found) == {"likelihood_control", "likelihood_control_zlib", "likelihood_lift", "likelihood_options"}
    row = results["results"]["likelihood_toy_news_train"]
    assert row["per_byte_partition,none"] > row["per_byte_control,none"]
    assert found["likelihood_control"].partition == "Toy News train"
    assert "Toy News test" in found["likelihood_control"].null
    for verdict in found.values():
        assert not math.isnan(verdict.pvalue)
    from lm_eval_contam.report import write_report

    write_report(out)
    report = (out / "report.md").read_text()
    assert "Likelihood vs control (ours)" in report and "Time Travel, likelihood (ours)" in report
    assert "DCQ options, likelihood (ours)" in report


def test_clean_model_is_not_flagged(clean: Path, tmp_path: Path) -> None:
    _evaluate(clean, tmp_path)
    found = {verdict.test: verdict for verdict in collect(load_run(tmp_path))}
    print({method: (round(v.statistic, 3), round(v.pvalue, 4)) for method, v in found.items()})
    assert not any(verdict.flagged for verdict in found.values())


def _audit(model: Path, base: Path, out: Path, *, report: bool = False) -> dict:
    """``audit --reference-model``: the likelihood modes of Toy News train, ``base`` as the reference; the model's
    verdicts by test."""
    from lm_eval_contam.cli import main as cli_main

    with _one_thread():
        assert cli_main(["audit", "--model", str(model), "--label", "tuned", "--reference-model", str(base),
                         "--partitions", "toy_news:train", "--methods", "likelihood", "--batch_size", "8",
                         "--device", "cpu", *([] if report else ["--no-report"]), "--output_path", str(out)]) == 0
    return {verdict.test: verdict for verdict in collect(load_run(out)) if verdict.family == "likelihood"}


def test_audit_with_a_reference_scores_only_the_control_mode_and_tests_it_on_u(
        base_model: Path, memoriser: Path, clean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference (the checkpoint both fine-tunes start from) scores the control mode's task, not the lift's or
    the options'; on u the memoriser is flagged, the fine-tune on other text is not."""
    import json

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    found = _audit(memoriser, base_model, tmp_path / "memoriser", report=True)
    reference = json.loads((tmp_path / "memoriser" / "audit.json").read_text())["models"][0]["reference"]
    assert reference["tasks"] == ["likelihood_toy_news_train"]
    on_u = found["likelihood_control_reference"]
    assert on_u.flagged and on_u.pvalue < 0.01 and on_u.statistic > 0
    assert on_u.title == "Likelihood vs control on u, against the reference model (ours)"
    assert on_u.evidence.reference_model == f"hf pretrained={base_model}"
    assert "Toy News test" in on_u.null and "exchangeable" in on_u.null
    report = (tmp_path / "memoriser" / "report.md").read_text()
    assert "Likelihood vs control on u, against the reference model (ours)" in report
    assert f"hf pretrained={base_model}" in report
    assert not _audit(clean, base_model, tmp_path / "clean")["likelihood_control_reference"].flagged


def test_run_with_a_reference_writes_the_test_on_u_into_the_control_tasks_row(
        base_model: Path, memoriser: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run --reference-model``: the reference scores the control mode's task only (not the lift's), and the control
    task's row in lm-eval's results gets the test on u's p-value and standardised difference."""
    import json

    from lm_eval_contam.audit.job import check_reference
    from lm_eval_contam.cli import main as cli_main

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    assert check_reference("hf", TASKS, harness.task_manager()) == [TASKS[0]]
    out = tmp_path / "run"
    with _one_thread():
        assert cli_main(["run", "--model", "hf", "--model_args", f"pretrained={memoriser}", "--reference-model",
                         str(base_model), "--tasks", ",".join(TASKS[:2]), "--batch_size", "8", "--device", "cpu",
                         "--output_path", str(out)]) == 0
    (path,) = out.rglob("results_*.json")
    results = json.loads(path.read_text())
    control, lift = (results["results"][task] for task in TASKS[:2])
    assert control["likelihood_control_reference_pvalue,none"] < 0.01
    assert control["likelihood_control_reference_z,none"] > 2
    assert not any(key.startswith("likelihood_control_reference") for key in lift)
    assert results["higher_is_better"][TASKS[0]]["likelihood_control_reference_pvalue"] is False
