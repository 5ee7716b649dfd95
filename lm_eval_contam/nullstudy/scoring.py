"""The studies' own scoring of texts by a local model, outside lm-eval: each text's log-likelihood as lm-eval's
``loglikelihood_rolling`` scores a text within one window (every token after the model's prefix token: its BOS, else
EOS). The studies score tens of thousands of texts on a CPU; these are the loops they share."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def load_scorer(model_dir: str) -> tuple[Any, Any, int]:
    """The model (float32, eval mode), its tokenizer and its prefix token."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    return model, tokenizer, prefix


def prefixed_batch(tokenizer: Any, prefix: int, texts: Sequence[str]) -> tuple[list[list[int]], Any]:
    """Each text's tokens after the prefix token, and them as one tensor right-padded with it (a causal model's
    scores of a row's own tokens do not see the padding after them)."""
    import torch

    batch = [[prefix, *tokenizer(text, add_special_tokens=False)["input_ids"]] for text in texts]
    width = max(len(ids) for ids in batch)
    return batch, torch.tensor([row + [prefix] * (width - len(row)) for row in batch])


def rolling_loglikelihoods(model_dir: str, texts: list[str], batch_size: int = 16) -> list[float]:
    """Each text's rolling log-likelihood, texts batched as they come."""
    import torch
    from tqdm.auto import tqdm

    model, tokenizer, prefix = load_scorer(model_dir)
    found = []
    with torch.no_grad():
        for start in tqdm(range(0, len(texts), batch_size), desc=f"scoring {Path(model_dir).name}", unit="batch"):
            batch, ids = prefixed_batch(tokenizer, prefix, texts[start:start + batch_size])
            logprobs = torch.log_softmax(model(input_ids=ids).logits[:, :-1].float(), dim=-1)
            picked = logprobs.gather(2, ids[:, 1:, None])[..., 0]
            found += [float(picked[row, : len(tokens) - 1].sum()) for row, tokens in enumerate(batch)]
    return found


def shared_prefix(texts: Sequence[str]) -> str:
    """The texts' longest common prefix cut after its last newline ('' when they share no whole line)."""
    first, last = min(texts), max(texts)
    common = next((i for i, (a, b) in enumerate(zip(first, last)) if a != b), min(len(first), len(last)))
    return first[: first.rfind("\n", 0, common) + 1]


def grouped_rolling_loglikelihoods(model, tokenizer, prefix_token: int, texts: Sequence[str]) -> list[float]:
    """The rolling log-likelihoods of texts that share their first lines (one item in many option orders), the shared
    lines run once and their cache reused: the same numbers as scoring each text whole, at a fraction of the passes.
    Where the shared lines do not tokenize on their own as inside a text, the texts are scored whole."""
    import torch

    head = shared_prefix(texts)
    whole = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    head_ids = tokenizer(head, add_special_tokens=False)["input_ids"] if head else []
    tails = [ids[len(head_ids):] for ids in whole]
    if not head_ids or any(ids[: len(head_ids)] != head_ids or not tail for ids, tail in zip(whole, tails)):
        head_ids, tails = [], whole
    with torch.no_grad():
        start = torch.tensor([[prefix_token, *head_ids]])
        out = model(input_ids=start, use_cache=True)
        logprobs = torch.log_softmax(out.logits[0].float(), dim=-1)
        head_score = float(logprobs[:-1].gather(1, start[0, 1:, None]).sum()) if head_ids else 0.0
        first_step = logprobs[-1]  # predicts each tail's first token
        width = max(len(tail) for tail in tails)
        ids = torch.tensor([tail + [prefix_token] * (width - len(tail)) for tail in tails])
        cache = out.cache
        cache.batch_repeat_interleave(len(tails))
        mask = torch.ones(len(tails), start.shape[1] + width, dtype=torch.long)
        for row, tail in enumerate(tails):
            mask[row, start.shape[1] + len(tail):] = 0
        rest = torch.log_softmax(model(input_ids=ids, attention_mask=mask, cache=cache).logits.float(),
                                 dim=-1)
        picked = rest[:, :-1].gather(2, ids[:, 1:, None])[..., 0]
        return [head_score + float(first_step[tail[0]]) + float(picked[row, : len(tail) - 1].sum())
                for row, tail in enumerate(tails)]


def letter_loglikelihoods(model_dir: str, prompts: Sequence[str], letters: Sequence[str],
                          batch_size: int = 16) -> list[list[float]]:
    """Each prompt's log-likelihood of each letter as its continuation (``" A"`` after ``"Answer:"``, lm-eval's
    target delimiter and choice), as lm-eval's ``loglikelihood`` scores a one-token continuation: one pass per prompt,
    every letter read off its last position — what a multiple-choice benchmark's own requests compute."""
    import torch
    from tqdm.auto import tqdm

    model, tokenizer, prefix = load_scorer(model_dir)
    letter_ids = [tokenizer(f" {letter}", add_special_tokens=False)["input_ids"] for letter in letters]
    if any(len(ids) != 1 for ids in letter_ids):
        raise ValueError(f"each letter must be one token after a space: {dict(zip(letters, letter_ids))}")
    columns = torch.tensor([ids[0] for ids in letter_ids])
    found: list[list[float]] = []
    with torch.no_grad():
        for start in tqdm(range(0, len(prompts), batch_size), desc=f"letters {Path(model_dir).name}", unit="batch"):
            batch, ids = prefixed_batch(tokenizer, prefix, prompts[start:start + batch_size])
            last = torch.tensor([len(row) - 1 for row in batch])
            logits = model(input_ids=ids).logits[torch.arange(len(batch)), last].float()
            found += torch.log_softmax(logits, dim=-1)[:, columns].tolist()
    return found
