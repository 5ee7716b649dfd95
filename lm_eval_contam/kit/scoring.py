"""Per-instance likelihood scores (ours, not a seed paper's): what lm-eval's log-likelihood requests give.

lm-eval returns one summed log-likelihood per request (and whether the
continuation is the greedy one), never per-token log-probabilities nor the
vocabulary distribution, and the task never sees the model's tokenizer. So:

* the mean log-likelihood is taken per UTF-8 byte (lm-eval's own perplexity tasks
  normalise by bytes, ``bits_per_byte``), not per token; within one model the
  two differ only by the tokenizer's bytes-per-token on the text;
* the reference-normalised score is the zlib ratio of Carlini et al. (2021):
  log-likelihood per byte of the zlib-compressed text, which discounts text that
  is likely only because it is repetitive;
* Min-K% and Min-K%++ (Shi et al. 2024; Zhang et al. 2024) need each token's
  log-probability, and Min-K%++ also the mean and variance of the log-probability
  over the vocabulary at every position: neither is available from one lm-eval
  request, and per-token requests would cost one forward pass per token.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from lm_eval_contam.core.errors import ContamError


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def zlib_bytes(text: str) -> int:
    """The length of the zlib-compressed text (level 9): the reference model's code length in bytes."""
    return len(zlib.compress(text.encode("utf-8"), 9))


def _checked(text: str) -> str:
    if not text:
        raise ContamError("cannot score an empty text", field="text")
    return text


def per_byte(loglikelihood: float, text: str) -> float:
    """Mean log-likelihood per UTF-8 byte of ``text`` (nats per byte)."""
    return loglikelihood / utf8_bytes(_checked(text))


def zlib_ratio(loglikelihood: float, text: str) -> float:
    """Log-likelihood per zlib-compressed byte (Carlini et al. 2021's zlib reference, in nats per byte)."""
    return loglikelihood / zlib_bytes(_checked(text))


def option_gap(original: float, perturbed: Sequence[float]) -> float:
    """How far the original's per-byte log-likelihood stands above the mean of its perturbations'."""
    if not perturbed:
        raise ContamError("no perturbed options to compare the original with", field="options")
    return float(original - np.mean(perturbed))
