"""Run a batch of prompts through any lm-eval model: the judge, option-generator and checker path.

A model spec is either a local HF folder / Hub id (run with lm-eval's ``hf``
backend) or ``<lm-eval model name>:<model_args>``, e.g.
``vllm:pretrained=Qwen/Qwen2.5-7B-Instruct,tensor_parallel_size=2`` or
``hf:pretrained=/models/judge,dtype=bfloat16``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.lmeval.context_window import LocalTokenizer, ModelWindow, load_local_tokenizer
from lm_eval_contam.lmeval.lm_eval_compat import is_api_model, model_request
from lm_eval_contam.lmeval.request_parts import with_api_stop


def default_device() -> str:
    """cuda when available, else cpu: lm-eval's hf backend otherwise assumes cuda and fails on CPU-only machines."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


# How a local path starts (a Hub id is "org/name", never one of these).
LOCAL_PATH_STARTS = ("/", "./", "../", "~")
# An lm-eval model registry name: hf, vllm, local-chat-completions, openai-completions, hf-auto, ...
BACKEND_NAME = re.compile(r"[A-Za-z][\w.-]*")


@dataclass(frozen=True)
class ModelSpec:
    """Which lm-eval model class to build and its ``model_args`` string: the one form of a model past the CLI.

    Parsed once (:meth:`parse`, or :meth:`of_lm_eval` for what lm-eval's own flags give); its ``arguments`` (lm-eval's
    reading of ``model_args``) and a local model's tokenizer and window (:attr:`local_tokenizer`, loaded on first use)
    are kept on the object, so everything handed the spec shares them.
    """

    backend: str
    model_args: str
    extra: dict[str, Any] = field(default_factory=dict)

    spec: str = field(default="", compare=False)
    # The flag that named the model: every message about it names that flag (``--reference-model`` for a reference).
    flag: str = field(default="model", compare=False)
    # ``model_args`` as lm-eval reads it (``simple_parse_args_string``: typed values); given when lm-eval parsed it.
    arguments: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.arguments and self.model_args:
            from lm_eval.utils import simple_parse_args_string

            object.__setattr__(self, "arguments", simple_parse_args_string(self.model_args))

    @classmethod
    def of_lm_eval(cls, backend: str, model_args: str | Mapping[str, Any] | None) -> "ModelSpec":
        """The spec of a model named by lm-eval's own ``--model`` and ``--model_args`` (a string, or the dict
        lm-eval parsed it into)."""
        if isinstance(model_args, Mapping):
            text = ",".join(f"{key}={value}" for key, value in model_args.items())
            return cls(backend=backend, model_args=text, spec=f"{backend}:{text}", arguments=dict(model_args))
        return cls(backend=backend, model_args=model_args or "", spec=f"{backend}:{model_args or ''}")

    @classmethod
    def parse(cls, spec: str, *, device: str | None = None, batch_size: int | str = 1,
              flag: str = "model") -> "ModelSpec":
        """A spec checked as far as it can be without loading anything (``build`` finds the rest); ``flag``: the
        flag that gave it, named by every message about it."""
        def bad(message: str) -> ContamError:
            return ContamError(f"{message} in model spec {spec!r}; expected an HF folder, a Hub id or "
                               f"<backend>:<key=value,...>", field=flag)

        if not spec or not spec.strip():
            raise ContamError(f"expected an HF folder, a Hub id or <backend>:<model_args>; got {spec!r}",
                              field=flag)
        extra: dict[str, Any] = {"batch_size": batch_size, "device": device or default_device()}
        head, sep, tail = spec.partition(":")
        if sep and "=" in tail and "/" not in head and not Path(spec).exists():
            backend, model_args = head, tail
            if not BACKEND_NAME.fullmatch(backend):
                raise bad(f"backend {backend!r} is not a name")
        else:
            return cls(backend="hf", model_args=f"pretrained={spec}", extra=extra, spec=spec, flag=flag)
        args: dict[str, str] = {}
        for pair in model_args.split(","):
            key, eq, value = pair.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise bad(f"model_args entry {pair!r} is not key=value")
            args[key.strip()] = value.strip()
        dtype = args.get("dtype")
        if dtype and dtype != "auto":
            import torch

            if not isinstance(getattr(torch, dtype, None), torch.dtype):
                raise bad(f"dtype {dtype!r} is not a torch dtype (e.g. float32, bfloat16, auto)")
        return cls(backend=backend, model_args=model_args, extra=extra, spec=spec, flag=flag)

    def model_class(self) -> Any:
        """lm-eval's class for the backend; an unknown name or a missing package is a one-line ContamError."""
        from lm_eval.api.registry import get_model

        try:
            return get_model(self.backend)
        except Exception as error:  # noqa: BLE001 - unknown name, or a backend whose package is not installed
            raise ContamError(f"unknown lm-eval model backend {self.backend!r} (or its package is not installed) in model spec "
                              f"{self.spec or self.model_args!r} ({_one_line(error)})", field=self.flag) from None

    @functools.cached_property
    def local_tokenizer(self) -> LocalTokenizer | None:
        """A local backend's (hf, vllm) tokenizer and the window lm-eval uses, loaded once per spec; None for API
        models. The CLI's model check, the audit's chat-template test, its window before the run and the count of
        cut docs after it share it."""
        return load_local_tokenizer(self.backend, self.arguments)

    @property
    def window(self) -> ModelWindow | None:
        """The model's :class:`ModelWindow` (None for API models: they keep their window to themselves)."""
        found = self.local_tokenizer
        return None if found is None else found.window()

    @property
    def has_chat_template(self) -> bool:
        """Whether the model takes messages: a chat or API backend, or an hf model whose tokenizer has a chat
        template."""
        if self.backend != "hf":
            return True
        found = self.local_tokenizer
        return found is not None and bool(getattr(found.tokenizer, "chat_template", None))

    def check(self) -> None:
        """What can be checked without loading weights: the backend exists and an hf model's tokenizer and config
        load (kept on the spec: :attr:`local_tokenizer`).

        The audit runs this before it writes anything; ``build`` would find the same faults only after.
        """
        self.model_class()
        if self.backend != "hf":
            return
        pretrained = str(self.arguments.get("pretrained") or "")
        folder_fault = local_folder_fault(pretrained, MODEL_CONFIG)
        if folder_fault:
            # A path, not a Hub id: transformers would try the Hub and report a failed connection (or a missing
            # tokenizer package) instead.
            raise ContamError(f"cannot load model spec {self.spec or self.model_args!r}: {folder_fault}; expected an "
                              "HF model folder, a Hub id or <backend>:<key=value,...>", field=self.flag)
        adapter = self.arguments.get("peft")
        if adapter:  # lm-eval loads the adapter after the weights, long after the audit's first files
            adapter_fault = local_folder_fault(str(adapter), ADAPTER_CONFIG) or hub_adapter_fault(str(adapter))
            if adapter_fault:
                raise ContamError(f"cannot load model spec {self.spec or self.model_args!r}: peft={adapter}: "
                                  f"{adapter_fault}; expected a PEFT adapter folder (its {ADAPTER_CONFIG}) or Hub id",
                                  field=self.flag)
        try:
            found = self.local_tokenizer
        except Exception as error:  # noqa: BLE001 - a missing folder, an unknown Hub id, no network, ...
            found, why = None, _one_line(error)
        else:
            why = "its model_args name no pretrained model"
        if found is None:
            raise ContamError(f"cannot load model spec {self.spec or self.model_args!r}: {why}; "
                              f"expected an HF model folder, a Hub id or <backend>:<key=value,...>", field=self.flag)

    def build(self) -> Any:
        """The lm-eval model; any failure to build it is a one-line ContamError naming the spec."""
        model_class = self.model_class()
        try:
            return model_class.create_from_arg_string(self.model_args, self.extra)
        except Exception as error:  # noqa: BLE001 - HF, vLLM, ... raise anything for a bad model
            raise ContamError(f"cannot load model spec {self.spec or self.model_args!r}: {_one_line(error)}",
                              field=self.flag) from None


MODEL_CONFIG = "config.json"  # every HF model folder's
ADAPTER_CONFIG = "adapter_config.json"  # peft's, in every adapter folder


def looks_local(name: str) -> bool:
    """Whether a model name is a local path, not a Hub id: it starts like a path, exists, or its first folder exists
    (``models/nope`` beside ``models/``: a missing folder, not the Hub id of org ``models``)."""
    path = Path(name).expanduser()
    return name.startswith(LOCAL_PATH_STARTS) or path.exists() or (len(path.parts) > 1 and Path(path.parts[0]).is_dir())


def local_folder_fault(name: str, needed: str) -> str | None:
    """What is wrong with a local model folder (none, or no ``needed`` file in it); None for a sound one or a Hub id."""
    if not name or not looks_local(name):
        return None
    folder = Path(name).expanduser()
    if not folder.is_dir():
        return f"no such folder {name!r}"
    if not (folder / needed).is_file():
        present = ADAPTER_CONFIG if needed == MODEL_CONFIG and (folder / ADAPTER_CONFIG).is_file() else None
        return f"{folder} has no {needed}" + (f" (it holds a PEFT adapter's {present}: give it as peft=)" if present
                                              else "")
    return None


def hub_adapter_fault(name: str) -> str | None:
    """Why peft cannot load the adapter config of ``name`` (a Hub id, or a folder checked to hold one), or None."""
    try:
        from peft import PeftConfig

        PeftConfig.from_pretrained(name)
    except Exception as error:  # noqa: BLE001 - no peft, an unknown id, no network, a config of another version
        return _one_line(error)
    return None


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:300]}"


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
    gen_kwargs: dict[str, Any] = {"until": list(until), "max_gen_toks": max_gen_toks}
    if temperature > 0:
        gen_kwargs.update(do_sample=True, temperature=temperature)
    else:
        gen_kwargs.update(do_sample=False)
    if is_api_model(model):  # see request_parts.API_STOP
        gen_kwargs = with_api_stop(gen_kwargs)
    rendered = [_render(model, prompt, apply_chat_template) for prompt in prompts]
    requests = [
        model_request("generate_until", (context, dict(gen_kwargs)), task_name=task_name, doc_id=index)
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
