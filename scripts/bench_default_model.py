"""Measure the embedded default model on this machine: greedy decoding speed and load time.

    python scripts/bench_default_model.py [--new-tokens 64] [--repeats 3]

Prints tokens/s for greedy generation of a chat-templated prompt (batch size 1,
float32, CPU unless CUDA is present) — the number quoted in the README.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lm_eval_contam.models.default_model import default_model_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    path = default_model_path()
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    load_s = time.perf_counter() - started
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Write a short story about a lighthouse keeper."}],
        tokenize=False,
        add_generation_prompt=True,
    )
    inputs = tokenizer(prompt, return_tensors="pt")
    speeds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        with torch.no_grad():
            output = model.generate(
                **inputs, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False
            )
        elapsed = time.perf_counter() - started
        speeds.append((output.shape[1] - inputs["input_ids"].shape[1]) / elapsed)
    print(f"model: {path}")
    print(f"threads: {torch.get_num_threads()}  load: {load_s:.1f} s")
    print(f"greedy tokens/s over {args.repeats} runs of {args.new_tokens} tokens: "
          f"median {statistics.median(speeds):.1f} (min {min(speeds):.1f}, max {max(speeds):.1f})")


if __name__ == "__main__":
    main()
