"""A detection test that can fail: a tiny model that saw one local partition only as raw text.

Three disjoint partitions of a made-up dataset (tests/data/dcq_recall_*.jsonl):

* skill S: its raw instance strings and its quizzes with the correct letter, so the
  model learns the quiz skill "pick the option whose exact wording I was trained on";
* memorised M: its raw instance strings only (exactly as the quiz options show them),
  never a quiz;
* unseen U: nothing.

Through lm_eval (loglikelihood mode, options from the offline WordNet perturber) M must
get a clearly higher dcq_max and a significant dcq_pvalue, U neither: the model
transfers the skill to wording it only memorised. What it shows: the quiz layout, the
letter mapping, the argmax and the estimate turn memorisation alone into a detection,
and no layout artefact (position bias, option wording) fakes one on unseen data.

What it does not show: recognition of whole instances, or a robust skill. A one-layer
model learns the skill for slot A only (right after the fixed instructions, so at fixed
positions; the estimate reads the BCQ of its best non-preferred slot, so one slot is
enough) and recognises wording word by word: the perturbations' synonyms were never
training targets, the originals' words were. Whether 400 steps find the skill depends
on the seed: of seeds 0-4, 0 and 4 detect M, 1 and 2 learn no skill, 3 learns it on S
but its BDQ picks A on M too often (A becomes preferred); U was never significant. The
seed is pinned, so a failure after a torch/transformers upgrade may be the seed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import lm_eval
import pytest

from lm_eval_contam import task_dir
from lm_eval_contam.core.partitions import dataset_from_task_metadata
from lm_eval_contam.kit.instances import sample_instances
from lm_eval_contam.kit.perturb import offline_proposer
from lm_eval_contam.kit.quiz_options import OptionsEntry, append_options, collect_options
from lm_eval_contam.methods.dcq.quiz import LETTERS, build_quizzes, quiz_prompt
from lm_eval_contam.models.tiny_model import build_tiny_model

DATA = Path(__file__).resolve().parents[1] / "data"
PARTITIONS = ("skill", "memorised", "unseen")
DATASET_NAME = "Toy Almanac"
SPLIT = "train"  # every partition is quizzed as the same split: the prompt cannot tell them apart
PARTITION = dataset_from_task_metadata({"dataset_name": DATASET_NAME, "columns": ["text"],
                                        "data_files": {SPLIT: "unused.jsonl"}}).partition(SPLIT)
SKILL_OPTION_SEEDS = (0, 1, 2)  # three perturbation sets per skill instance: the skill, not one layout
TRAIN_STEPS = 400
TASK_YAML = """include: {template}
task: dcq_recall_{name}_ll
custom_dataset: !function lm_eval_contam.lmeval.datafiles.load_partitions
test_split: {split}
output_type: loglikelihood
generation_kwargs: null
metadata:
  version: 1.0
  dataset_name: {dataset_name}
  columns: [text]
  data_files: {{{split}: {data}}}
  options_path: {options}
"""


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Run torch on one thread: this model's matrices are tiny, and two threads on a shared
    two-core machine spin-wait on each other (20 training steps: 1.4 s on one thread, 78 s on two)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def instance_options(name: str, seed: int) -> list[OptionsEntry]:
    rows = [json.loads(line) for line in (DATA / f"dcq_recall_{name}.jsonl").read_text().splitlines()]
    instances = sample_instances(PARTITION, rows, len(rows), seed=0)  # every row, in the order the task quizzes them
    run = collect_options(instances, offline_proposer(seed), generator="offline", progress=False)
    assert not run.failures, run.failures
    return list(run.entries)


def answered_quizzes(entries) -> list[tuple[str, str]]:
    """(prompt, correct letter) of every quiz of ``entries``, as the task renders them."""
    return [
        # The loglikelihood mode's context ends at "ANSWER:" (the paper's final newline dropped; see DCQTask).
        (quiz_prompt(quiz.options, split_name=SPLIT, dataset_name=DATASET_NAME).removesuffix("\n"), quiz.answer)
        for entry in entries
        for quiz in build_quizzes(entry.instance, entry.options)
    ]


def train(model_dir: Path, raw_texts: list[str], quizzes: list[tuple[str, str]], *, steps: int,
          learning_rate: float = 1e-2, batch_size: int = 8, seed: int = 0) -> None:
    """AdamW on LM loss over ``raw_texts`` plus the five-letter choice of a batch of ``quizzes`` per step.

    Every quiz starts with the same instructions up to the first option, so they are
    encoded once per step and shared through the KV cache (about 60% of each quiz).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    letter_ids = torch.tensor([tokenizer(f" {letter}")["input_ids"][-1] for letter in LETTERS])
    first_prompt = quizzes[0][0]
    shared = tokenizer(first_prompt[: first_prompt.index("---\nA)\n") + len("---\nA)\n")])["input_ids"]
    encoded = [tokenizer(prompt)["input_ids"] for prompt, _ in quizzes]
    assert all(ids[: len(shared)] == shared for ids in encoded)
    suffixes = [ids[len(shared):] for ids in encoded]
    targets = torch.tensor([LETTERS.index(answer) for _, answer in quizzes])

    def padded(sequences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        ids = torch.full((len(sequences), max(map(len, sequences))), tokenizer.pad_token_id)
        mask = torch.zeros_like(ids)
        for row, tokens in enumerate(sequences):
            ids[row, : len(tokens)], mask[row, : len(tokens)] = torch.tensor(tokens), 1
        return ids, mask

    raw_ids, raw_mask = padded([tokenizer(text + tokenizer.eos_token)["input_ids"] for text in raw_texts])
    raw_labels = raw_ids.masked_fill(raw_mask == 0, -100)
    prefix = torch.tensor([shared])
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 20) * (1 - step / steps))
    order = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        batch = torch.randperm(len(quizzes), generator=order)[:batch_size]
        ids, mask = padded([suffixes[i] for i in batch])
        cache = model.transformer(input_ids=prefix, use_cache=True).past_key_values
        cache.batch_repeat_interleave(len(batch))
        hidden = model.transformer(
            input_ids=ids,
            attention_mask=torch.cat([torch.ones(len(batch), len(shared), dtype=torch.long), mask], dim=1),
            position_ids=torch.arange(len(shared), len(shared) + ids.shape[1]).expand_as(ids),
            past_key_values=cache,
        ).last_hidden_state
        last = hidden[torch.arange(len(batch)), mask.sum(dim=1) - 1]
        quiz_loss = torch.nn.functional.cross_entropy(model.lm_head(last)[:, letter_ids], targets[batch])
        raw_loss = model(input_ids=raw_ids, attention_mask=raw_mask, labels=raw_labels).loss
        (quiz_loss + raw_loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
    model.save_pretrained(model_dir)


@pytest.mark.slow
def test_memorised_partition_is_detected(tmp_path, task_manager_for, one_thread) -> None:
    options = {name: instance_options(name, seed=0) for name in PARTITIONS}
    skill_sets = [entry for seed in SKILL_OPTION_SEEDS for entry in instance_options("skill", seed)]
    options_path = tmp_path / "options.jsonl"
    append_options(options_path, options["memorised"] + options["unseen"])
    for name in ("memorised", "unseen"):
        (tmp_path / f"dcq_recall_{name}_ll.yaml").write_text(TASK_YAML.format(
            template=task_dir() / "dcq" / "_template_yaml", name=name, split=SPLIT, dataset_name=DATASET_NAME,
            data=DATA / f"dcq_recall_{name}.jsonl", options=options_path))

    skill_quizzes = answered_quizzes(skill_sets)
    # The tokenizer sees every partition and option, so its vocabulary does not leak which partition was trained.
    quizzed = skill_sets + options["memorised"] + options["unseen"]
    corpus = [entry.instance for entries in options.values() for entry in entries]
    corpus += [option for entry in quizzed for option in entry.options] + [f"{skill_quizzes[0][0]} A B C D E"] * 3
    model_dir = build_tiny_model(tmp_path / "model", corpus, vocab_size=2048, n_layer=1, n_embd=64, n_head=4)
    raw_texts = [entry.instance for entry in options["skill"] + options["memorised"]]
    train(model_dir, raw_texts, skill_quizzes, steps=TRAIN_STEPS)

    results = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model_dir},dtype=float32",
        tasks=["dcq_recall_memorised_ll", "dcq_recall_unseen_ll"],
        task_manager=task_manager_for(tmp_path),
        device="cpu",
        batch_size=16,
    )["results"]
    memorised, unseen = results["dcq_recall_memorised_ll"], results["dcq_recall_unseen_ll"]
    assert memorised["dcq_max,none"] >= 0.5
    assert memorised["dcq_pvalue,none"] < 0.05
    assert unseen["dcq_max,none"] <= memorised["dcq_max,none"] - 0.4
    assert unseen["dcq_pvalue,none"] > 0.05
