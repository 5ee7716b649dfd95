"""Run a batch of prompts through any lm-eval model: the judge, option-generator and checker path.

A model spec is either a local HF folder / Hub id (run with lm-eval's ``hf``
backend) or ``<lm-eval model name>:<model_args>``, e.g.
``vllm:pretrained=Qwen/Qwen2.5-7B-Instruct,tensor_parallel_size=2`` or
``hf:pretrained=/models/judge,dtype=bfloat16``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_contam.errors import ContamError


def default_device() -> str:
    """cuda when available, else cpu: lm-eval's hf backend otherwise assumes cuda and fails on CPU-only machines."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class ModelSpec:
    """Which lm-eval model class to build and its ``model_args`` string."""

    backend: str
    model_args: str
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str, *, device: str | None = None, batch_size: int | str = 1) -> "ModelSpec":
        if not spec or not spec.strip():
            raise ContamError(f"expected an HF folder, a Hub id or <backend>:<model_args>; got {spec!r}",
                              field="model")
        head, sep, tail = spec.partition(":")
        if sep and "=" in tail and "/" not in head and not Path(spec).exists():
            backend, model_args = head, tail
        else:
            backend, model_args = "hf", f"pretrained={spec}"
        extra: dict[str, Any] = {"batch_size": batch_size, "device": device or default_device()}
        return cls(backend=backend, model_args=model_args, extra=extra)

    def build(self) -> Any:
        from lm_eval.api.registry import get_model

        try:
            model_class = get_model(self.backend)
        except (KeyError, ValueError) as error:
            raise ContamError(f"unknown lm-eval model backend {self.backend!r}", field="model") from error
        return model_class.create_from_arg_string(self.model_args, self.extra)


def generate(
    model: Any,
    prompts: Sequence[str],
    *,
    max_gen_toks: int = 256,
    until: Sequence[str] = (),
    temperature: float = 0.0,
    apply_chat_template: bool = True,
    task_name: str = "lm_eval_contam",
) -> list[str]:
    """Completions of ``prompts`` (each a single user turn) from a built lm-eval model.

    ``temperature`` 0 is greedy. With ``apply_chat_template`` and a model that has
    a chat template, each prompt is rendered as one user message with the
    generation prompt appended, exactly as ``lm_eval --apply_chat_template`` does.
    """
    from lm_eval.api.instance import Instance

    gen_kwargs: dict[str, Any] = {"until": list(until), "max_gen_toks": max_gen_toks}
    if temperature > 0:
        gen_kwargs.update(do_sample=True, temperature=temperature)
    else:
        gen_kwargs.update(do_sample=False)
    rendered = [_render(model, prompt, apply_chat_template) for prompt in prompts]
    requests = [
        Instance(
            request_type="generate_until",
            doc={},
            arguments=(context, dict(gen_kwargs)),
            idx=0,
            metadata=(task_name, index, 1),
        )
        for index, context in enumerate(rendered)
    ]
    return list(model.generate_until(requests))


def _render(model: Any, prompt: str, apply_chat_template: bool) -> str:
    if not apply_chat_template:
        return prompt
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is not None and not getattr(tokenizer, "chat_template", None):
        return prompt
    try:
        return model.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True)
    except NotImplementedError:
        return prompt
