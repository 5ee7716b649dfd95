"""Seeded synthetic datasets of real English words, for partitions a model provably never saw.

Each dataset has its own name, label names, sentence templates and word pools
(its "style"), drawn from a shared vocabulary of common English nouns, adjectives
and past-tense verbs. The nouns and adjectives are words WordNet lists with
synonyms, so the offline quiz-option maker (WordNet synonym swaps) can build quiz
options from every instance. Everything is a pure function of the seed
and the dataset's index (:func:`lm_eval_contam.core.seeding.rng_for`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lm_eval_contam.core.seeding import rng_for

NOUNS = tuple("""
harbor river valley garden market village castle island forest meadow bridge tower road street station
machine engine vehicle wagon boat ship train cart ladder bucket basket blanket candle lamp mirror window
door wall roof floor chair table desk shelf cabinet drawer bottle cup plate bowl kettle oven stove
teacher student doctor farmer sailor soldier painter singer writer driver baker builder merchant worker
captain guard judge pilot nurse child family neighbor friend stranger visitor traveler guest crowd team
letter message story report record journal diary map picture painting photograph poem song music
stone rock sand soil mud water rain storm wind cloud snow river lake ocean shore hill mountain cliff cave
horse dog cat bird fish sheep goat rabbit mouse wolf bear fox deer eagle owl
apple bread cheese soup cake sugar salt pepper honey butter grain rice corn bean
money price cost trade business company office factory shop store bank market
game sport race match contest prize reward gift present box package parcel
morning evening night season summer winter autumn spring holiday journey voyage trip
""".split())
ADJECTIVES = tuple("""
quiet loud small large little big old young new ancient modern bright dark pale deep shallow narrow wide
quick slow heavy light warm cold hot cool wet dry clean dirty calm wild gentle rough smooth soft hard
strong weak rich poor cheap expensive famous strange simple plain busy lazy happy sad angry brave proud
careful honest clever foolish polite rude fresh stale empty full hollow solid sharp dull sweet bitter
""".split())
VERBS = tuple("""
found moved watched carried joined opened followed crossed changed reached covered painted visited entered
cleaned repaired counted ordered tested shared helped pushed pulled lifted dropped kept left sold bought built
""".split())
TEMPLATES = (
    "The {a} {n} {v} the {n} near the {n}.",
    "A {a} {n} {v} every {n} in the {n}.",
    "Every {n} {v} a {a} {n} before the {n}.",
    "Our {n} {v} the {a} {n} with a {n}.",
    "This {a} {n} {v} its {n} beside the {n}.",
    "No {n} {v} the {n} after the {a} {n}.",
    "That {n} {v} a {n} and a {a} {n}.",
    "Some {a} {n} {v} the {n} under the {n}.",
    "The {n} of the {n} {v} a {a} {n}.",
    "Each {a} {n} {v} one {n} from the {n}.",
    "Her {n} {v} the {a} {n} at the {n}.",
    "Their {a} {n} {v} the {n} across the {n}.",
)
SENTENCES_PER_ROW = 3
LABELS_PER_DATASET = 4
# A dataset's style: this many templates and words of each kind from the shared pools.
STYLE_TEMPLATES, STYLE_NOUNS, STYLE_ADJECTIVES, STYLE_VERBS = 3, 40, 16, 8


@dataclass(frozen=True)
class Style:
    templates: tuple[str, ...]
    nouns: tuple[str, ...]
    adjectives: tuple[str, ...]
    verbs: tuple[str, ...]


@dataclass(frozen=True)
class SyntheticDataset:
    """One generated dataset: a name as prompts show it, label names, and its rows per split."""

    key: str
    display_name: str
    label_names: tuple[str, ...]
    style: Style
    splits: dict[str, tuple[dict, ...]]


def vocabulary(has_synonyms: Callable[[str], bool]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The nouns and adjectives ``has_synonyms(word)`` accepts (the perturber needs replaceable words)."""
    return (tuple(word for word in dict.fromkeys(NOUNS) if has_synonyms(word)),
            tuple(word for word in dict.fromkeys(ADJECTIVES) if has_synonyms(word)))


def _pick(rng: np.random.Generator, pool: Sequence[str], size: int) -> tuple[str, ...]:
    return tuple(pool[int(i)] for i in rng.choice(len(pool), size=min(size, len(pool)), replace=False))


def sentence(rng: np.random.Generator, style: Style) -> str:
    template = style.templates[int(rng.integers(len(style.templates)))]
    # Fill slots left to right; str.format cannot draw a fresh word per repeated field.
    pieces = template.split("{")
    out = [pieces[0]]
    for piece in pieces[1:]:
        slot, rest = piece.split("}", 1)
        pool = {"n": style.nouns, "a": style.adjectives, "v": style.verbs}[slot]
        out.append(pool[int(rng.integers(len(pool)))] + rest)
    return "".join(out)


def _style_and_name(rng: np.random.Generator, nouns: Sequence[str], adjectives: Sequence[str], suffix: str
                    ) -> tuple[Style, str]:
    """A dataset's style, then its display name (an adjective and a noun, then ``suffix``), drawn in that order."""
    style = Style(templates=_pick(rng, TEMPLATES, STYLE_TEMPLATES), nouns=_pick(rng, nouns, STYLE_NOUNS),
                  adjectives=_pick(rng, adjectives, STYLE_ADJECTIVES), verbs=_pick(rng, VERBS, STYLE_VERBS))
    adjective, noun = _pick(rng, adjectives, 1) + _pick(rng, nouns, 1)
    return style, f"{adjective.title()} {noun.title()} {suffix}"


def make_dataset(seed: int, index: int, nouns: Sequence[str], adjectives: Sequence[str], *,
                 rows_per_split: int, splits: Sequence[str] = ("train", "test")) -> SyntheticDataset:
    """Dataset ``index`` under ``seed``: its name, labels and style, then ``rows_per_split`` rows per split."""
    rng = rng_for(seed, "nullstudy-dataset", index)
    style, display_name = _style_and_name(rng, nouns, adjectives, f"{index}")
    label_names = tuple(word.title() for word in _pick(rng, nouns, LABELS_PER_DATASET))
    rows = {}
    for split in splits:
        split_rng = rng_for(seed, "nullstudy-rows", index, split)
        rows[split] = tuple(
            {"text": " ".join(sentence(split_rng, style) for _ in range(SENTENCES_PER_ROW)),
             "label": int(split_rng.integers(LABELS_PER_DATASET))}
            for _ in range(rows_per_split))
    key = "nullstudy_" + "_".join(word for word in display_name.lower().split())
    return SyntheticDataset(key, display_name, label_names, style, rows)


# Multiple-choice datasets: a context sentence, then a sentence of the style with one noun blanked; its options are
# that noun and other nouns of the style, in a uniformly random order (so no order is special before training).
MC_OPTIONS = 4
MC_LETTERS = "ABCD"
MC_BLANK = "___"


def _blanked(rng: np.random.Generator, style: Style) -> tuple[str, str]:
    """A sentence of ``style`` with one of its nouns replaced by :data:`MC_BLANK`, and that noun."""
    while True:
        text = sentence(rng, style)
        words = text.rstrip(".").split()
        nouns = [i for i, word in enumerate(words) if word in style.nouns]
        if nouns:
            at = nouns[int(rng.integers(len(nouns)))]
            answer = words[at]
            words[at] = MC_BLANK
            return " ".join(words) + ".", answer


def mc_item(rng: np.random.Generator, style: Style) -> dict:
    """One item: ``question`` (context sentence + blanked sentence), four item-specific ``choices``, ``answer``."""
    context = sentence(rng, style)
    blanked, answer = _blanked(rng, style)
    others = [noun for noun in style.nouns if noun != answer and noun not in context.split()]
    distractors = _pick(rng, others, MC_OPTIONS - 1)
    choices = [answer, *distractors]
    order = rng.permutation(MC_OPTIONS)
    return {"question": f"{context} {blanked}", "choices": [choices[int(i)] for i in order],
            "answer": int(np.argwhere(order == 0)[0, 0])}


def render_mc(row: dict) -> str:
    """An item as MMLU-style lm-eval tasks render it (``doc_to_text``): question, lettered options, ``Answer:``."""
    options = "".join(f"\n{letter}. {choice}" for letter, choice in zip(MC_LETTERS, row["choices"]))
    return f"Which word fills the blank? {row['question']}{options}\nAnswer:"


def _local_task_head(name: str, data_files: dict[str, str]) -> str:
    """A local JSON lm-eval task's name and splits: ``data_files`` split -> JSONL path, ``test`` evaluated and
    ``validation`` (if given) its second split."""
    files = "".join(f"\n    {split}: {path}" for split, path in data_files.items())
    second = "\nvalidation_split: validation" if "validation" in data_files else ""
    return f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:{files}\ntest_split: test{second}\n"


def mc_prompt_task_yaml(name: str, data_files: dict[str, str]) -> str:
    """A local MMLU-style lm-eval task over rows ``{"prompt": render_mc(...), "answer"}``: the prompt as its text, the
    answer letters as its choices (splits as :func:`_local_task_head`)."""
    return (_local_task_head(name, data_files) +
            "output_type: multiple_choice\ndoc_to_text: \"{{prompt}}\"\ndoc_to_target: answer\n"
            f"doc_to_choice: {json.dumps(list(MC_LETTERS))}\nmetric_list:\n  - metric: acc\n    aggregation: mean\n"
            "    higher_is_better: true\nmetadata:\n  version: 1.0\n")


def free_text_task_yaml(name: str, data_files: dict[str, str]) -> str:
    """A local free-text lm-eval task (``generate_until``) over rows ``{"text", "label"}``: the row's text as its
    text, its label's name as the target (a short greedy answer, exact match ignoring case and spaces; splits as
    :func:`_local_task_head`)."""
    return (_local_task_head(name, data_files) +
            "output_type: generate_until\ndoc_to_text: \"{{text}}\"\ndoc_to_target: \"{{label}}\"\n"
            "generation_kwargs:\n  until: [\"\\n\"]\n  max_gen_toks: 8\n  do_sample: false\n"
            "metric_list:\n  - metric: exact_match\n    aggregation: mean\n    higher_is_better: true\n"
            "    ignore_case: true\n    regexes_to_ignore: [\" \"]\nmetadata:\n  version: 1.0\n")


def make_mc_dataset(seed: int, index: int, nouns: Sequence[str], adjectives: Sequence[str], *,
                    rows_per_split: int, splits: Sequence[str] = ("train", "test")) -> SyntheticDataset:
    """Multiple-choice dataset ``index`` under ``seed`` (its own style and name, as :func:`make_dataset`)."""
    rng = rng_for(seed, "nullstudy-mc-dataset", index)
    style, display_name = _style_and_name(rng, nouns, adjectives, f"Quiz {index}")
    rows = {split: tuple(mc_item(split_rng, style) for _ in range(rows_per_split))
            for split in splits for split_rng in [rng_for(seed, "nullstudy-mc-rows", index, split)]}
    key = "nullstudy_mc_" + "_".join(word for word in display_name.lower().split())
    return SyntheticDataset(key, display_name, tuple(MC_LETTERS), style, rows)


def background_texts(seed: int, count: int, nouns: Sequence[str], adjectives: Sequence[str]) -> list[str]:
    """Plain paragraphs over the whole vocabulary and every template: English a model learns before any dataset."""
    style = Style(TEMPLATES, tuple(nouns), tuple(adjectives), VERBS)
    rng = rng_for(seed, "nullstudy-background")
    return [" ".join(sentence(rng, style) for _ in range(SENTENCES_PER_ROW)) for _ in range(count)]
