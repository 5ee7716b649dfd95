"""The embedded default model (SmolLM2-135M-Instruct from PyPI) answers through lm_eval."""

from __future__ import annotations

import json
import subprocess
import sys

import lm_eval
import pytest

from lm_eval_contam.models.default_model import cache_home, default_model_path


@pytest.mark.model
def test_default_model_is_a_cached_plain_hf_folder(default_model_dir) -> None:
    assert default_model_dir.is_relative_to(cache_home())
    assert (default_model_dir / "model.safetensors").is_file()
    manifest = json.loads((default_model_dir / "lm_eval_contam.json").read_text())
    assert manifest["source_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert default_model_path() == default_model_dir  # second call reuses the cache
    # Loads with the gguf module blocked: a plain HF folder.
    script = (
        "import sys; sys.modules['gguf'] = None\n"
        "from transformers import AutoModelForCausalLM\n"
        f"print(AutoModelForCausalLM.from_pretrained({str(default_model_dir)!r}).config.model_type)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "llama"


@pytest.mark.model
def test_default_model_answers_capital_of_france(default_model_dir, task_manager_for) -> None:
    results = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={default_model_dir},dtype=float32",
        tasks=["contam_probe"],
        task_manager=task_manager_for(),
        device="cpu",
        batch_size=1,
        apply_chat_template=True,
        log_samples=True,
        limit=1,
    )
    (sample,) = results["samples"]["contam_probe"]
    assert sample["doc"]["id"] == "capital-france"
    assert "Paris" in sample["filtered_resps"][0]
    assert sample["contains_answer"] == 1.0
