"""Requests longer than the model's context window, counted per task so verdicts on cut instances say so.

lm-eval's local backends cut an over-long request from the left without a word: a quiz
or a prompt cut that way is scored as if whole. After a run on a local model (hf,
vllm), every contamination task's logged requests are tokenized with the model's own
tokenizer and the docs with a request over the window are counted into the task's
results as ``truncated_docs``; verdicts on such tasks carry a caveat. API models keep
their window to themselves: nothing is counted for them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

log = logging.getLogger("lm_eval_contam")

TRUNCATED_METRIC = "truncated_docs"
LOCAL_BACKENDS = ("hf", "vllm")
DEFAULT_MAX_LENGTH = 2048  # lm-eval's HFLM default when neither config nor tokenizer names a window
# Config fields naming the window, in the order lm-eval's HFLM consults them.
WINDOW_FIELDS = ("n_positions", "max_position_embeddings", "n_ctx")
UNSET_TOKENIZER_LENGTH = 10**29  # transformers' "no limit" model_max_length is about 1e30


def model_window(config: Any, tokenizer: Any, max_length: int | None = None) -> int:
    """The context window lm-eval uses: ``max_length`` if given, else the config's, else the tokenizer's, else 2048."""
    if max_length:
        return int(max_length)
    text_config = getattr(config, "text_config", None)
    for source in (text_config, config):
        for name in WINDOW_FIELDS:
            value = getattr(source, name, None) if source is not None else None
            if isinstance(value, int) and value > 0:
                return value
    length = getattr(tokenizer, "model_max_length", None)
    if isinstance(length, int) and 0 < length < UNSET_TOKENIZER_LENGTH:
        return length
    return DEFAULT_MAX_LENGTH


def request_length(arguments: Mapping[str, Any] | Sequence[Any], count_tokens: Callable[[str], int]) -> int:
    """Tokens a logged request needs: context plus continuation (loglikelihood) or plus the generation budget.

    lm-eval logs a request's arguments as ``{"arg_0": ..., "arg_1": ...}`` or as a plain list.
    """
    values = list(arguments.values()) if isinstance(arguments, Mapping) else list(arguments)
    context = str(values[0]) if values else ""
    second = values[1] if len(values) > 1 else None
    if isinstance(second, Mapping):  # generate_until: the generation kwargs
        return count_tokens(context) + int(second.get("max_gen_toks") or 256)
    return count_tokens(context) + (count_tokens(str(second)) if second else 0)


def truncated_docs(samples: Sequence[Mapping[str, Any]], count_tokens: Callable[[str], int], window: int) -> int:
    """Docs with at least one request longer than ``window`` tokens."""
    def requests(sample: Mapping[str, Any]) -> list[Any]:
        logged = sample.get("arguments") or []
        return list(logged.values()) if isinstance(logged, Mapping) else list(logged)

    return sum(any(request_length(arguments, count_tokens) > window for arguments in requests(sample))
               for sample in samples)


def _tokenizer_and_window(results: Mapping[str, Any]) -> tuple[Any, int] | None:
    config = results.get("config") or {}
    if config.get("model") not in LOCAL_BACKENDS:
        return None
    model_args = config.get("model_args") or {}
    if isinstance(model_args, str):
        from lm_eval.utils import simple_parse_args_string

        model_args = simple_parse_args_string(model_args)
    pretrained = model_args.get("pretrained") or model_args.get("model")
    if not pretrained:
        return None
    from transformers import AutoConfig, AutoTokenizer

    source = str(model_args.get("tokenizer") or pretrained)
    tokenizer = AutoTokenizer.from_pretrained(source)
    return tokenizer, model_window(AutoConfig.from_pretrained(str(pretrained)), tokenizer,
                                   model_args.get("max_length") or model_args.get("max_model_len"))


def count_truncation(results: dict[str, Any]) -> dict[str, Any]:
    """Add ``truncated_docs`` to every contamination task's results (those whose metadata names a method)."""
    samples = results.get("samples") or {}
    tasks = [task for task, config in (results.get("configs") or {}).items()
             if (config.get("metadata") or {}).get("method") and task in samples and task in results.get("results", {})]
    if not tasks:
        return results
    found = _tokenizer_and_window(results)
    if found is None:
        return results
    tokenizer, window = found

    def count_tokens(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    for task in tasks:
        cut = truncated_docs(samples[task], count_tokens, window)
        results["results"][task][f"{TRUNCATED_METRIC},none"] = cut
        if cut:
            log.warning("%s: %d of %d docs have a request longer than the model's %d-token window; lm-eval cut them "
                        "from the left, so they were scored on part of their text", task, cut, len(samples[task]),
                        window)
    return results


def truncation_caveat(cut: float | None, n: int | None) -> tuple[str, ...]:
    """The caveat a verdict carries when some of its docs were cut to the context window."""
    if not cut:
        return ()
    return (f"{int(cut)} of {n if n is not None else '?'} docs exceed the model's context window and were cut from "
            "the left by lm-eval: those instances were scored on part of their text",)
