"""A detection test that can fail: a tiny model contaminated with one shipped sample partition's quiz.

The model is trained (answer-token loss only) on the train partition's five quizzes
with their correct letters; the test partition stays unseen. Through lm_eval, in
loglikelihood mode, the contaminated partition must get a clearly higher dcq_max and
a significant dcq_pvalue, the unseen one neither. A broken layout, letter mapping,
argmax or estimate breaks this.
"""

from __future__ import annotations

import json

import lm_eval
import pytest

from lm_eval_contam import task_dir
from lm_eval_contam.dcq.instances import QuizPartition
from lm_eval_contam.dcq.options import read_options
from lm_eval_contam.dcq.quiz import build_quizzes, quiz_prompt
from lm_eval_contam.models import build_tiny_model

SAMPLES = task_dir() / "samples"
TOY_NEWS = ("text", "label"), "label", ("World", "Sports", "Business", "Science")


def quiz_examples(split: str) -> list[tuple[str, str]]:
    """(prompt, " <correct letter>") for every quiz of the shipped partition, as the task renders them."""
    cache = read_options(SAMPLES / "toy_news_options.jsonl")
    rows = [json.loads(line) for line in (SAMPLES / f"toy_news_{split}.jsonl").read_text().splitlines()]
    partition = QuizPartition("Toy News", split, *TOY_NEWS)
    return [
        (quiz_prompt(quiz.options, split_name=split, dataset_name="Toy News"), f" {quiz.answer}")
        for instance in partition.sample(rows, 100, seed=0)
        for quiz in build_quizzes(instance.text, cache[instance.key].options)
    ]


def train_answers(model_dir, examples, *, steps: int, learning_rate: float = 3e-3) -> None:
    """Full-batch AdamW on the answer token only (the prompt is shared boilerplate)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    encoded = [tokenizer(prompt)["input_ids"] + tokenizer(prompt + answer)["input_ids"][-1:] for prompt, answer in examples]
    width = max(map(len, encoded))
    ids = torch.full((len(encoded), width), tokenizer.pad_token_id)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, -100)
    for row, tokens in enumerate(encoded):
        ids[row, : len(tokens)] = torch.tensor(tokens)
        mask[row, : len(tokens)] = 1
        labels[row, len(tokens) - 1] = tokens[-1]
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(model_dir)


@pytest.mark.slow
def test_contaminated_partition_is_detected(tmp_path, task_manager_for) -> None:
    seen, unseen = quiz_examples("train"), quiz_examples("test")
    corpus = [prompt + answer for prompt, answer in seen + unseen]
    model_dir = build_tiny_model(tmp_path / "model", corpus, vocab_size=1024, n_layer=2, n_embd=64)
    train_answers(model_dir, seen, steps=25)
    results = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model_dir},dtype=float32",
        tasks=["dcq_toy_news_train_ll", "dcq_toy_news_test_ll"],
        task_manager=task_manager_for(),
        device="cpu",
        batch_size=8,
    )["results"]
    contaminated, clean = results["dcq_toy_news_train_ll"], results["dcq_toy_news_test_ll"]
    assert contaminated["dcq_max,none"] >= 0.75
    assert contaminated["dcq_pvalue,none"] < 0.01
    assert clean["dcq_max,none"] <= contaminated["dcq_max,none"] - 0.3
    assert clean["dcq_pvalue,none"] > 0.01
