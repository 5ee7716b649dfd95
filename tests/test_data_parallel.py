"""Data-parallel runs agree exactly with one process: every random choice is seeded per doc, not per rank.

Runs one Time Travel task and one DCQ loglikelihood task through ``lm-eval-contam run`` (lm-eval's own CLI and
``simple_evaluate``) once in one process and once under ``accelerate launch --cpu --num_processes 2``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TASKS = ("timetravel_toy_news_train", "dcq_toy_news_train_ll")


def _run(prefix: list[str], model: Path, out: Path) -> None:
    command = [*prefix, "-m", "lm_eval_contam", "run", "--model", "hf",
               "--model_args", f"pretrained={model},dtype=float32", "--tasks", ",".join(TASKS), "--device", "cpu",
               # Batch size 1: no padding, so both layouts compute every request identically.
               "--batch_size", "1", "--gen_kwargs", "max_gen_toks=8", "--apply_chat_template",
               "--log_samples", "--output_path", str(out)]
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def _outputs(out: Path) -> tuple[dict, dict]:
    (results_file,) = out.rglob("results_*.json")
    metrics = json.loads(results_file.read_text())["results"]
    samples = {}
    for task in TASKS:
        (path,) = out.rglob(f"samples_{task}_*.jsonl")
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        samples[task] = sorted(({key: row[key] for key in row if key not in ("doc_hash", "prompt_hash", "target_hash")}
                                for row in rows), key=lambda row: row["doc_id"])
    return metrics, samples


@pytest.mark.slow
def test_two_processes_give_the_single_process_results(tiny_model_dir: Path, tmp_path: Path) -> None:
    _run([sys.executable], tiny_model_dir, tmp_path / "one")
    _run([sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2", "--num_machines", "1",
          "--mixed_precision", "no", "--dynamo_backend", "no"], tiny_model_dir, tmp_path / "two")
    one_metrics, one_samples = _outputs(tmp_path / "one")
    two_metrics, two_samples = _outputs(tmp_path / "two")
    for task in TASKS:
        assert two_metrics[task] == one_metrics[task], task
        assert len(one_samples[task]) == 12
        assert two_samples[task] == one_samples[task], task
