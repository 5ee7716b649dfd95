"""Model specs (HF folder / Hub id or ``<backend>:<model_args>``) and the batch generation path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.lmeval.generation import ModelSpec, generate


@pytest.fixture
def cpu_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.mark.parametrize(
    ("spec", "backend", "model_args"),
    [
        ("/models/judge", "hf", "pretrained=/models/judge"),
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "hf", "pretrained=HuggingFaceTB/SmolLM2-135M-Instruct"),
        ("vllm:pretrained=Qwen/Qwen2.5-7B-Instruct,tensor_parallel_size=2", "vllm",
         "pretrained=Qwen/Qwen2.5-7B-Instruct,tensor_parallel_size=2"),
        ("hf:pretrained=/models/judge,dtype=bfloat16", "hf", "pretrained=/models/judge,dtype=bfloat16"),
        # No `key=value` after the colon, or a slash before it: a path or Hub id, not a backend.
        ("hf:judge", "hf", "pretrained=hf:judge"),
        ("org/model:rev=1", "hf", "pretrained=org/model:rev=1"),
    ],
)
def test_parse_tells_paths_from_backend_specs(spec: str, backend: str, model_args: str, cpu_only: None) -> None:
    parsed = ModelSpec.parse(spec)
    assert (parsed.backend, parsed.model_args) == (backend, model_args)
    assert parsed.extra == {"batch_size": 1, "device": "cpu"}


def test_parse_keeps_an_existing_folder_whose_name_looks_like_a_backend_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu_only: None
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("vllm:run=1").mkdir()
    assert ModelSpec.parse("vllm:run=1") == ModelSpec("hf", "pretrained=vllm:run=1", {"batch_size": 1, "device": "cpu"})


def test_parse_passes_device_and_batch_size_through() -> None:
    assert ModelSpec.parse("/m", device="cuda:1", batch_size=4).extra == {"batch_size": 4, "device": "cuda:1"}
    assert ModelSpec.parse("/m", device="cpu", batch_size="auto").extra == {"batch_size": "auto", "device": "cpu"}


def test_default_device_follows_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert ModelSpec.parse("/m").extra["device"] == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert ModelSpec.parse("/m").extra["device"] == "cpu"


@pytest.mark.parametrize("spec", ["", "   "])
def test_parse_rejects_an_empty_spec_naming_it(spec: str) -> None:
    with pytest.raises(ContamError) as error:
        ModelSpec.parse(spec, device="cpu")
    assert str(error.value) == f"field 'model': expected an HF folder, a Hub id or <backend>:<model_args>; got {spec!r}"


def test_build_rejects_an_unknown_backend_naming_it() -> None:
    spec = ModelSpec.parse("nosuch:pretrained=x", device="cpu")
    assert spec.backend == "nosuch"
    with pytest.raises(ContamError, match="unknown lm-eval model backend 'nosuch'"):
        spec.build()


class FakeModel:
    """Records the requests it gets; renders chat as ``<user>prompt</user>``."""

    def __init__(self, chat_template: str | None = "tmpl", chat_implemented: bool = True) -> None:
        self.tokenizer = type("Tok", (), {"chat_template": chat_template})()
        self.chat_implemented = chat_implemented
        self.requests: list[Any] = []

    def apply_chat_template(self, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
        if not self.chat_implemented:
            raise NotImplementedError
        assert add_generation_prompt
        (message,) = messages
        return f"<{message['role']}>{message['content']}</{message['role']}>"

    def generate_until(self, requests: list[Any]) -> list[str]:
        self.requests = requests
        return [f"reply {index}" for index, _ in enumerate(requests)]


def test_generate_is_greedy_by_default_and_renders_one_user_turn() -> None:
    model = FakeModel()
    assert generate(model, ["a", "b"], max_gen_toks=7, until=["\n"]) == ["reply 0", "reply 1"]
    assert [request.arguments for request in model.requests] == [
        ("<user>a</user>", {"until": ["\n"], "max_gen_toks": 7, "do_sample": False}),
        ("<user>b</user>", {"until": ["\n"], "max_gen_toks": 7, "do_sample": False}),
    ]
    assert [request.metadata for request in model.requests] == [("lm_eval_contam", 0, 1), ("lm_eval_contam", 1, 1)]


def test_generate_samples_with_a_temperature() -> None:
    model = FakeModel()
    generate(model, ["a"], temperature=0.7, task_name="judge")
    (request,) = model.requests
    assert request.arguments[1] == {"until": [], "max_gen_toks": 256, "do_sample": True, "temperature": 0.7}
    assert request.metadata == ("judge", 0, 1)


@pytest.mark.parametrize(
    ("model", "apply_chat_template"),
    [(FakeModel(), False), (FakeModel(chat_template=None), True), (FakeModel(chat_implemented=False), True)],
)
def test_generate_sends_the_bare_prompt_without_a_chat_template(model: FakeModel, apply_chat_template: bool) -> None:
    generate(model, ["plain"], apply_chat_template=apply_chat_template)
    assert model.requests[0].arguments[0] == "plain"
