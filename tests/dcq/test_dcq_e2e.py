"""The dcq tasks end to end through lm_eval on an offline tiny model, both modes; configs; CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import lm_eval
import pytest

from lm_eval_contam import task_dir
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcq.estimate import top_letter_share
from lm_eval_contam.methods.dcq.task import ANSWER_METRICS, ESTIMATE_METRICS, MEAN_METRICS, partition_answers

REPO = Path(__file__).resolve().parents[2]
SAMPLES = task_dir() / "samples"
LOCAL_FLAGS = ["--dataset-name", "Toy News", "--columns", "text,label", "--label-field", "label",
               "--label-names", "World,Sports,Business,Science"]


@pytest.fixture(scope="module")
def both_modes(tiny_model_dir):
    from lm_eval.tasks import TaskManager

    return lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={tiny_model_dir},dtype=float32",
        tasks=["dcq_toy_news_train", "dcq_toy_news_train_ll"],
        task_manager=TaskManager(include_path=[str(task_dir())], include_defaults=False),
        device="cpu",
        batch_size=4,
        limit=4,
        log_samples=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("task", ["dcq_toy_news_train", "dcq_toy_news_train_ll"])
def test_task_reports_every_metric(both_modes, task) -> None:
    metrics = both_modes["results"][task]
    for name in (*ESTIMATE_METRICS, *ANSWER_METRICS, *MEAN_METRICS):
        if name != "dcq_kappa":
            assert 0.0 <= metrics[f"{name},none"] <= 1.0, name
    # kappa = (c - b) / (n - b) lies in [-1, max]: negative when BDQ picks p* more often than BCQ-p* hits it.
    assert -1.0 <= metrics["dcq_kappa,none"] <= metrics["dcq_max,none"]
    if task.endswith("_ll"):  # an argmax always names a letter
        assert metrics["dcq_unparseable,none"] == 0.0
        assert sum(metrics[f"dcq_bdq_{letter},none"] for letter in "ABCDE") == pytest.approx(1.0)
    assert metrics["dcq_max_ci_low,none"] <= metrics["dcq_max,none"] <= metrics["dcq_max_ci_high,none"]
    assert metrics["dcq_min,none"] <= metrics["dcq_max,none"]
    samples = both_modes["samples"][task]
    assert len(samples) == 4
    for sample in samples:
        assert sample["target"] == "E A B C D"
        record = sample["dcq_max"]  # the five parsed answers: BDQ, then BCQ-A..D by slot
        assert set(record) == {"bdq", "bcq"} and list(record["bcq"]) == list("ABCD")
        assert {record["bdq"], *record["bcq"].values()} <= set("ABCDE") | {None}
    logged = partition_answers([sample["dcq_top_letter_share"] for sample in samples])
    assert metrics["dcq_top_letter_share,none"] == top_letter_share(logged)


@pytest.mark.slow
def test_generate_mode_requests(both_modes) -> None:
    sample = both_modes["samples"]["dcq_toy_news_train"][0]
    assert len(sample["arguments"]) == 5  # BDQ + four BCQs, one greedy request each
    contexts = [arguments[0] for arguments in sample["arguments"]]
    assert all(c.startswith("You are provided with a five-choice quiz.") and c.endswith("ANSWER:\n") for c in contexts)
    assert "from the train split of the Toy News dataset" in contexts[0]
    assert sample["arguments"][0][1]["max_gen_toks"] == 1 and sample["arguments"][0][1]["do_sample"] is False
    instance = sample["doc"]["instance"]
    assert instance not in contexts[0]  # BDQ: the original is absent
    assert f"B)\n{instance}\n\nC)" in contexts[2]  # BCQ-B: the original in slot B


@pytest.mark.slow
def test_loglikelihood_mode_requests(both_modes) -> None:
    sample = both_modes["samples"]["dcq_toy_news_train_ll"][0]
    assert len(sample["arguments"]) == 25
    assert [arguments[1] for arguments in sample["arguments"][:5]] == [" A", " B", " C", " D", " E"]
    lls = [resp[0] for resp in sample["filtered_resps"]]
    letters = ["ABCDE"[max(range(5), key=lambda i: lls[5 * q + i])] for q in range(5)]
    assert sample["dcq_max"] == {"bdq": letters[0], "bcq": dict(zip("ABCD", letters[1:]))}


@pytest.mark.slow
def test_loglikelihood_mode_costs_one_forward_pass_per_quiz(counted_hf_model, task_manager_for) -> None:
    model, calls = counted_hf_model
    results = lm_eval.simple_evaluate(model=model, tasks=["dcq_toy_news_test_ll"], task_manager=task_manager_for(),
                                      limit=3, log_samples=True)
    assert sum(len(s["arguments"]) for s in results["samples"]["dcq_toy_news_test_ll"]) == 3 * 25
    assert calls == [1] * (3 * 5)  # 3 docs x 5 quizzes, one row each: the 5 letters share it


def test_missing_options_name_the_command(tmp_path, task_manager_for) -> None:
    with pytest.raises(ContamError, match=r"generate them with `lm-eval-contam dcq-options --task dcq_toy_news_test "
                                          r"--generator <instruct model, or offline>`"):
        task_manager_for(metadata={"options_path": str(tmp_path / "none.jsonl")}).load(["dcq_toy_news_test"])


def test_generated_task_configs_name_the_partition_only() -> None:
    from lm_eval_contam.methods.dcq.configs import shipped_task_configs

    configs = shipped_task_configs()
    assert len(configs) == 2 * 2 * (8 + 4)  # (8 Hub + 4 sample datasets) x 2 splits x 2 modes
    assert configs["dcq_rte_validation_ll.yaml"] == (
        "# Generated by scripts/generate_task_configs.py from lm_eval_contam.core.partitions; do not edit.\n"
        "include: _template_yaml\n"
        "task: dcq_rte_validation_ll\n"
        "tag: [dcq, dcq_ll]\n"
        "dataset_path: nyu-mll/glue\n"
        "dataset_name: rte\n"
        "test_split: validation\n"
        "output_type: loglikelihood\n"
        "generation_kwargs: null\n"
        "metadata:\n"
        "  version: 1.0\n"
        "  method: dcq\n"
        "  dataset: rte\n"
    )


def test_registry_tasks_are_indexed(task_manager_for) -> None:
    manager = task_manager_for()
    assert {"dcq_ag_news_train", "dcq_gsm8k_test_ll", "dcq_toy_news_train", "dcq_toy_news_test_ll"} <= set(
        manager.all_tasks)


def test_cli_dcq_options_offline(tmp_path) -> None:
    out = tmp_path / "options.jsonl"
    command = [sys.executable, "-m", "lm_eval_contam", "dcq-options", "--dataset", str(SAMPLES / "toy_news_test.jsonl"),
               "--split", "test", *LOCAL_FLAGS, "--generator", "offline", "--out", str(out), "--no-progress"]
    first = subprocess.run(command, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "wrote 12 option sets" in first.stdout
    shipped = {json.loads(line)["key"]: json.loads(line)["options"] for line in (SAMPLES / "toy_news_options.jsonl")
               .read_text().splitlines()}
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(shipped[record["key"]] == record["options"] for record in written)  # deterministic: same as shipped
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0 and "12 already in" in again.stdout


def test_cli_dcq_options_bad_dataset() -> None:
    result = subprocess.run([sys.executable, "-m", "lm_eval_contam", "dcq-options", "--dataset", "nope", "--split",
                             "train", "--generator", "offline"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "neither a registry key" in result.stderr
