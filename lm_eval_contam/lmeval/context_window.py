"""Requests longer than the model's context window, counted per task so verdicts on cut instances say so.

lm-eval's local backends cut an over-long request from the left without a word: a quiz
or a prompt cut that way is scored as if whole. After a run on a local model (hf,
vllm), every contamination task's logged requests are tokenized with the model's own
tokenizer and the docs with a request over the window are counted into the task's
results as ``truncated_docs``; verdicts on such tasks carry a caveat. API models keep
their window to themselves: nothing is counted for them.

A cut context is a caveat; a cut *continuation* cannot be scored at all (lm-eval's local backends stop on a
continuation longer than the window). Before the run the audit hands each method's ``MethodSpec.cannot_run`` the
audited model's :class:`ModelWindow` (the task config's ``MODEL_WINDOW_KEY``), so a method scoring whole instances as
continuations says "not tested: row N has T tokens, over the model's window of W" on that partition instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
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


def is_rolling(arguments: Mapping[str, Any] | Sequence[Any]) -> bool:
    """A logged ``loglikelihood_rolling`` request (``(text,)`` in lm-eval 0.4, ``("", text)`` in 0.5)."""
    values = list(arguments.values()) if isinstance(arguments, Mapping) else list(arguments)
    return len(values) == 1 or (len(values) == 2 and values[0] == "" and isinstance(values[1], str))


def truncated_docs(samples: Sequence[Mapping[str, Any]], count_tokens: Callable[[str], int], window: int) -> int:
    """Docs with at least one request longer than ``window`` tokens; a rolling request never counts: lm-eval scores
    its text window by window, every token of it."""
    def requests(sample: Mapping[str, Any]) -> list[Any]:
        logged = sample.get("arguments") or []
        return list(logged.values()) if isinstance(logged, Mapping) else list(logged)

    return sum(any(not is_rolling(arguments) and request_length(arguments, count_tokens) > window
                   for arguments in requests(sample))
               for sample in samples)


MODEL_WINDOW_KEY = "model_window"  # in the task config the audit hands MethodSpec.cannot_run: a ModelWindow


@dataclass(frozen=True)
class ModelWindow:
    """A local model's context window and its tokenizer, for methods whose scored texts must fit the window."""

    tokens: int
    encode: Callable[[str], Sequence[int]]  # the tokenizer, without special tokens

    def continuation_tokens(self, context: str, continuation: str) -> int:
        """Tokens ``continuation`` takes after ``context``, counted as lm-eval's local backends count them
        (``_encode_pair``: the context's trailing spaces move to the continuation; the pair is encoded whole)."""
        stripped = context.rstrip()
        continuation = context[len(stripped):] + continuation
        return len(self.encode(stripped + continuation)) - len(self.encode(stripped))

    def over(self, scored: Iterable[tuple[int, str, str]], what: str = "") -> str | None:
        """Why some (row index, context, continuation) cannot be scored: its continuation is over the window (the
        longest such row named, with how many there are); None when every one fits."""
        over: dict[int, int] = {}
        for row, context, continuation in scored:
            tokens = self.continuation_tokens(context, continuation)
            if tokens > max(self.tokens, over.get(row, 0)):
                over[row] = tokens
        if not over:
            return None
        row = max(over, key=lambda found: over[found])
        more = f" ({len(over)} rows are)" if len(over) > 1 else ""
        return f"row {row}{what} has {over[row]} tokens, over the model's window of {self.tokens}{more}"


@dataclass(frozen=True)
class LocalTokenizer:
    """A local model's tokenizer and the context window lm-eval uses for it."""

    tokenizer: Any
    tokens: int

    def window(self) -> ModelWindow:
        return ModelWindow(self.tokens, lambda text: self.tokenizer(text, add_special_tokens=False)["input_ids"])


def load_local_tokenizer(backend: str | None, arguments: Mapping[str, Any]) -> LocalTokenizer | None:
    """A local backend's (hf, vllm) tokenizer and window, loaded from its parsed ``model_args``; None for API models
    and for arguments naming no pretrained model. Loaded once per model: ``generation.ModelSpec.local_tokenizer``
    keeps it."""
    if backend not in LOCAL_BACKENDS:
        return None
    pretrained = arguments.get("pretrained") or arguments.get("model")
    if not pretrained:
        return None
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(arguments.get("tokenizer") or pretrained))
    return LocalTokenizer(tokenizer, model_window(AutoConfig.from_pretrained(str(pretrained)), tokenizer,
                                                  arguments.get("max_length") or arguments.get("max_model_len")))


def counted_tasks(results: Mapping[str, Any]) -> list[str]:
    """The contamination tasks of a run whose cut docs are counted: those whose metadata names a method, with
    samples and results."""
    samples = results.get("samples") or {}
    return [task for task, config in (results.get("configs") or {}).items()
            if (config.get("metadata") or {}).get("method") and task in samples and task in results.get("results", {})]


def count_truncation(results: dict[str, Any], window: ModelWindow | None) -> dict[str, Any]:
    """Add ``truncated_docs`` to every contamination task's results (:func:`counted_tasks`), counted against the run's
    model's ``window`` (None, an API model's: nothing is counted)."""
    tasks = counted_tasks(results)
    if not tasks or window is None:
        return results
    samples = results["samples"]

    def count_tokens(text: str) -> int:
        return len(window.encode(text))

    for task in tasks:
        cut = truncated_docs(samples[task], count_tokens, window.tokens)
        results["results"][task][f"{TRUNCATED_METRIC},none"] = cut
        if cut:
            log.warning("%s: %d of %d docs have a request longer than the model's %d-token window; lm-eval cut them "
                        "from the left, so they were scored on part of their text", task, cut, len(samples[task]),
                        window.tokens)
    return results


def truncation_caveat(cut: float | None, n: int | None) -> tuple[str, ...]:
    """The caveat a verdict carries when some of its docs were cut to the context window."""
    if not cut:
        return ()
    return (f"{int(cut)} of {n if n is not None else '?'} docs exceed the model's context window and were cut from "
            "the left by lm-eval: those instances were scored on part of their text",)
