"""Shared fixtures: offline models and the project's task manager."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

import pytest

from lm_eval_contam import task_dir
from lm_eval_contam.models.tiny_model import build_tiny_model

# English-ish text for the tiny tokenizer; the model itself stays untrained.
TINY_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "What is the capital of France? Answer with one word.",
    "INSTRUCTION: You are provided with the FIRST PIECE of an instance from the train split of the dataset.",
    "SECOND PIECE: ANSWER: None of the provided options. A) B) C) D) E)",
    "Label: 0 (negative) 1 (positive) 2 (Business) 3 (Sci/Tech) entailment not_entailment",
    "Numbers 0 1 2 3 4 5 6 7 8 9 10 100 1000 and words like question summary sentence.",
] * 4


@pytest.fixture(autouse=True)
def library_logs_to_this_tests_stderr() -> None:
    """lm-eval's ``setup_logging`` (``run`` calls it, as lm-eval's CLI does) and transformers (on its first import)
    bind a handler to ``sys.stderr`` once per process: under pytest that can be one test's capture, closed after it,
    and a later test's log line would print a logging error with a traceback into that test's output (a test that
    asserts one clean error line then fails by the order tests run in). Each test points them at its own stderr."""
    for name in ("lm_eval", "transformers"):
        for handler in logging.getLogger(name).handlers:
            if type(handler) is logging.StreamHandler:
                handler.stream = sys.stderr  # not setStream: it flushes the old stream, which may be closed
                vars(handler).pop("flush", None)  # transformers binds the handler's flush to that stream's too


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained tiny GPT-2 with a byte-level BPE tokenizer and chat template (built in ~1 s)."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny_model"), TINY_CORPUS)


@pytest.fixture
def tiny_model_copy(tiny_model_dir: Path, tmp_path: Path) -> Path:
    """The tiny model's weights under another identity (a card added), one bias nudged by 1e-6: a reference that scores
    every text as the model does to about 1e-6, which an audit takes (the model itself, or its exact weights under
    another name, is refused as its own reference: u would be 0 for every text)."""
    from safetensors.torch import load_file, save_file

    copy = Path(shutil.copytree(tiny_model_dir, tmp_path / "tiny_model_copy"))
    (copy / "README.md").write_text("The tiny model's weights, copied.\n")
    weights = load_file(copy / "model.safetensors")
    weights["transformer.ln_f.bias"][0] += 1e-6
    save_file(weights, copy / "model.safetensors", metadata={"format": "pt"})
    return copy


@pytest.fixture(scope="session")
def default_model_dir() -> Path:
    """The embedded default model (SmolLM2-135M-Instruct), converted once into the cache."""
    from lm_eval_contam.models.default_model import default_model_path

    return default_model_path()


@pytest.fixture(scope="session")
def project_task_dir() -> Path:
    return task_dir()


@pytest.fixture
def task_manager_for():
    """Factory: a TaskManager over the project's tasks (plus extra dirs) without lm-eval's built-ins."""
    from lm_eval.tasks import TaskManager

    def make(*extra_dirs: str | Path, metadata: dict | None = None) -> TaskManager:
        paths = [str(p) for p in extra_dirs] + [str(task_dir())]
        return TaskManager(include_path=paths, include_defaults=False, metadata=metadata)

    return make


@pytest.fixture
def counted_hf_model(tiny_model_dir: Path):
    """The tiny model as lm-eval's HF backend at batch size 1, and the list each forward pass appends its rows to:
    the tests of what a request costs count passes on it."""
    from lm_eval.models.huggingface import HFLM

    model = HFLM(pretrained=str(tiny_model_dir), dtype="float32", device="cpu", batch_size=1)
    calls: list[int] = []
    original = model._model_call

    def counting_call(inps, *args, **kwargs):
        calls.append(inps.shape[0])
        return original(inps, *args, **kwargs)

    model._model_call = counting_call
    return model, calls
