"""Tiny GPT-2-style models with a locally trained byte-level BPE tokenizer.

Built in seconds without the Hub, for wiring tests and for contamination tests
that train a model to memorise a partition.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

# A chat template in the ChatML shape SmolLM2 uses, so tiny models exercise the
# same `--apply_chat_template` path as the default model.
TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
TINY_SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>", "<|im_start|>", "<|im_end|>"]


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
