"""Continued pre-training of a causal LM on a list of texts (the injection kit's training loop)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import stable_hash


def pack_sequences(token_ids: Sequence[Sequence[int]], block_size: int) -> list[list[int]]:
    """Concatenate tokenised documents and cut the stream into ``block_size`` blocks (the last may be shorter).

    Continued pre-training as in causal-LM pre-training: no padding, no document
    truncated away, so compute goes only to real tokens.
    """
    if block_size < 1:
        raise ContamError(f"block size must be positive, got {block_size}", field="max_length")
    stream = [token for ids in token_ids for token in ids]
    return [stream[start : start + block_size] for start in range(0, len(stream), block_size)]


def _encode(tokenizer: Any, texts: Sequence[str], *, suffix: str, max_length: int, pack: bool) -> list[list[int]]:
    """Token ids per training sequence: packed blocks, or one truncated sequence per text."""
    if pack:
        return pack_sequences([tokenizer(text + suffix)["input_ids"] for text in texts], max_length)
    return [tokenizer(text + suffix, truncation=True, max_length=max_length)["input_ids"] for text in texts]


def _pad_batch(batch: list[list[int]], *, pad_id: int) -> dict[str, Any]:
    """Right-padded ``input_ids``/``attention_mask`` with padding masked out of the loss labels."""
    import torch

    width = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        attention[row, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": attention, "labels": input_ids.masked_fill(attention == 0, -100)}


def _mean_loss(model: Any, loader: Any, accelerator: Any) -> float:
    """Mean loss over ``loader`` across all processes; leaves the model in training mode."""
    import torch

    model.eval()
    losses = []
    with torch.no_grad():
        for batch in loader:
            losses.append(accelerator.gather(model(**batch).loss.detach()[None]).mean().item())
    model.train()
    return sum(losses) / len(losses)


# The state after the last finished epoch, under ``checkpoint_dir`` (one file, replaced atomically each epoch).
CHECKPOINT_FILE = "training_checkpoint.pt"


def _save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    torch.save(state, partial)
    partial.replace(path)  # a run killed mid-save keeps the previous epoch's checkpoint


def native_bf16(device: str | None = None) -> bool:
    """Whether bf16 matmuls run natively on ``device`` (``"cuda"`` or ``"cpu"``; default the one training picks):
    a CUDA GPU of compute capability 8 or more, a CPU with AVX512-BF16 or AMX. Elsewhere they are emulated: on this
    project's AVX2 EPYC (2026-12-03) a 1,024² bf16 matmul took 2.34 s against 0.025 s in fp32, and a training step of
    the default model 248 s against the few seconds it takes in fp32. (oneDNN's own bf16 check reads any AVX512 CPU
    as bf16-capable, Skylake and Ice Lake included, where bf16 is emulated: so the CPU's flags are read here.)"""
    import torch

    if (device or ("cuda" if torch.cuda.is_available() else "cpu")) == "cuda":
        # the capability, not is_bf16_supported(including_emulation=False): that argument is newer than torch 2.1,
        # which pyproject admits
        return torch.cuda.get_device_capability()[0] >= 8
    try:  # a torch build without these checks is read as emulated (fp32 is then only slower, never wrong)
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except AttributeError:
        return False


def default_mixed_precision() -> str:
    """``"bf16"`` where it runs natively (about 2x faster than fp32 on a CPU with AVX512-BF16), else ``"no"``."""
    return "bf16" if native_bf16() else "no"


def train_on_texts(
    model_dir: str | Path,
    texts: Sequence[str],
    *,
    out_dir: str | Path | None = None,
    eval_texts: Sequence[str] = (),
    epochs: int = 3,
    learning_rate: float = 5e-5,
    weight_decay: float = 0.01,
    batch_size: int = 8,
    max_length: int = 512,
    seed: int = 0,
    append_eos: bool = True,
    pack: bool = False,
    progress: bool = False,
    checkpoint_dir: str | Path | None = None,
    mixed_precision: str = "no",
) -> dict[str, Any]:
    """Continued pre-training (causal LM loss, AdamW, linear decay) of ``model_dir`` on ``texts``.

    Runs through ``accelerate``, so the same call trains on CPU or, under
    ``accelerate launch``, data-parallel on GPUs. Saves to ``out_dir`` (default: in
    place) and returns per-epoch mean training loss and, when ``eval_texts`` are
    given, the held-out loss before training and after each epoch. ``pack``
    trains on :func:`pack_sequences` blocks instead of one padded sequence per text.
    ``checkpoint_dir`` saves the state after every epoch (weights, optimizer, schedule,
    shuffling and dropout RNG states, the loss history so far); a call with the same arguments resumes
    after the last saved epoch and ends as an uninterrupted run would. ``mixed_precision`` is accelerate's
    (``"bf16"``: bf16 matmuls under autocast, fp32 weights and optimizer; about 2x faster on a CPU with AVX512-BF16).
    """
    import torch
    from accelerate import Accelerator
    from tqdm.auto import tqdm
    from transformers import AutoModelForCausalLM, AutoTokenizer, get_linear_schedule_with_warmup

    if not texts:
        raise ContamError("no training texts given", field="texts")
    accelerator = Accelerator(mixed_precision=mixed_precision)
    if mixed_precision == "bf16" and accelerator.device.type == "cpu" and not native_bf16("cpu"):
        print("lm-eval-contam: warning: bf16 is emulated on this CPU (no AVX512-BF16 or AMX), about 100x slower than "
              "fp32: --mixed-precision no trains in fp32", file=sys.stderr)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    torch.manual_seed(seed)
    suffix = tokenizer.eos_token if append_eos and tokenizer.eos_token else ""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    encode = functools.partial(_encode, tokenizer, suffix=suffix, max_length=max_length, pack=pack)
    collate = functools.partial(_pad_batch, pad_id=pad_id)

    shuffling = torch.Generator().manual_seed(seed)
    loader = torch.utils.data.DataLoader(
        encode(texts), batch_size=batch_size, shuffle=True, collate_fn=collate, generator=shuffling,
    )
    eval_loader = (torch.utils.data.DataLoader(encode(eval_texts), batch_size=batch_size, collate_fn=collate)
                   if eval_texts else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, len(loader) * epochs)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    if eval_loader is not None:
        eval_loader = accelerator.prepare(eval_loader)

    history: dict[str, Any] = {"train_loss": [], "eval_loss": []}
    checkpoint = Path(checkpoint_dir, CHECKPOINT_FILE) if checkpoint_dir is not None else None
    # A checkpoint resumes only the same run: same model, texts and hyper-parameters.
    run_id = stable_hash([str(model_dir), list(texts), list(eval_texts), epochs, learning_rate, weight_decay,
                          batch_size, max_length, seed, append_eos, pack, mixed_precision])
    state = torch.load(checkpoint, weights_only=False) if checkpoint is not None and checkpoint.is_file() else None
    if state is not None and state["run_id"] == run_id:
        accelerator.unwrap_model(model).load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        shuffling.set_state(state["shuffling"])
        torch.set_rng_state(state["dropout"])
        if state.get("dropout_cuda") is not None:  # on a GPU dropout draws from CUDA's generators
            torch.cuda.set_rng_state_all(state["dropout_cuda"])
        history = state["history"]
    elif eval_loader is not None:
        history["eval_loss"].append(_mean_loss(model, eval_loader, accelerator))
    done = len(history["train_loss"])
    model.train()
    bar = tqdm(total=len(loader) * epochs, initial=len(loader) * done, desc="continued pre-training", unit="step",
               disable=not (progress and accelerator.is_main_process))
    for epoch in range(done, epochs):
        losses = []
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(loss.item())
            bar.update()
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}")
        history["train_loss"].append(sum(losses) / len(losses))
        if eval_loader is not None:
            history["eval_loss"].append(_mean_loss(model, eval_loader, accelerator))
        if checkpoint is not None and accelerator.is_main_process:
            _save_checkpoint(checkpoint, {
                "model": accelerator.unwrap_model(model).state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "shuffling": shuffling.get_state(), "dropout": torch.get_rng_state(),
                "dropout_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
                "history": history,
                "run_id": run_id})
    bar.close()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        target = Path(out_dir) if out_dir is not None else Path(model_dir)
        accelerator.unwrap_model(model).save_pretrained(target)
        tokenizer.save_pretrained(target)
    return history
