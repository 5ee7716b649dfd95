"""A DCR test sheet built from an lm-eval task itself: the sheet behind ``<metric>_adj`` for any benchmark.

Input: the task's name, its rendered evaluation docs (``{"text", "target", "choices"}``, as
:mod:`lm_eval_contam.lmeval.benchmark_docs` renders them), the split they come from, the metrics to adjust and
the task's description. Output: an ordinary sheet (the YAML mapping :func:`lm_eval_contam.methods.dcr.sheet.parse_sheet`
reads) and the rows its generated items are drawn from, so the sheet is written, read and checked like a
shipped one, and ``adjust`` / ``dcr-export`` find it again after the run.

- L3: completion and membership items drawn from the task's own docs (each rendered doc without the template all
  docs share, :func:`instance_texts`), each with its perturbed twin;
- L4: association items (doc text → gold answer) with twins that keep the answer: the answer is a label
  when every doc offers the same choices (a :class:`~lm_eval_contam.methods.dcr.checks.LabelCheck`), else the gold
  answer's text (a number when it holds one, else ROUGE-L overlap); a target written ``... #### 72``
  (lm-eval's GSM8K) answers with what follows ``####``;
- L1/L2: questions about the benchmark, filled with its name (below), each controlled by the same question
  about a made-up benchmark name of the same shape. A model that never saw the benchmark answers both
  alike; only what it knows about *this* name moves the original above the control. The questions'
  answer keys are facts the name does not give away: the split's size and the number of answer options
  (L2), and whether the model says it knows the benchmark, plus, when the task's description names them,
  what the benchmark is about in words that are not in its name (L1).

Sizes: L3 and L4 have ``items_per_level`` items (the paper's 20) or as many as the docs allow, L1/L2 one
item per question that applies: 1-2 per level, fewer than the
:data:`~lm_eval_contam.methods.dcr.level_score.MIN_LEVEL_ITEMS` a controlled level needs, so the hook reports them as
too few items and they never move the factor (their answers stay in the level tasks' rows), as any level of
fewer docs would. Every choice is seeded by ``seed`` and the task's name.

A group (``mmlu``: 57 subtasks) gets one sheet (:func:`group_sheet`): its rows are as many docs as one task's sheet
holds, drawn across the subtasks in proportion to their sizes (:func:`group_draw`), its L1/L2 questions are about the
group, and its one factor adjusts every subtask's metrics and the group rows'. The sheet lists the subtasks under
``drawn_across``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import proportional_shares, rng_for, seeded_order
from lm_eval_contam.methods.dcr.items import asks_another_question
from lm_eval_contam.methods.dcr.schema import ITEMS_PER_LEVEL
from lm_eval_contam.methods.dcr.twins import perturbed_twin

TEXT_FIELD, ANSWER_FIELD = "text", "answer"
BENCHMARK_PREFIX = "task_"  # derived sheets' benchmark: task_<name>, so dcr_task_<name>_l1 never meets a shipped sheet
MIN_COMPLETION_WORDS = 4  # items.level_items' completion rows need 4 words
# The L4 prompt when each doc has its own answer; with one label set L4 keeps the paper's "<data> is <label>" wording.
ANSWER_TEMPLATE = "This is a data entry from the {name} dataset with its answer. Complete it: {text}\nAnswer:"
GSM8K_ANSWER = r"(?s)(?:.*####\s*)?(.+)"  # the text after '####' when there is one, else the whole answer
# Words of a task description that say nothing about what the benchmark is about.
GENERIC_WORDS = frozenset("""following question questions answer answers answering choice choices multiple select
    correct option options given each with from that this about which their there these those into your test tests
    benchmark dataset task tasks example examples""".split())
MAX_TOPIC_WORDS = 6


def benchmark_slug(task: str) -> str:
    """The sheet's ``benchmark`` for a task name: lower case, every other character '_'."""
    return BENCHMARK_PREFIX + re.sub(r"[^a-z0-9_]", "_", task.lower())


def made_up_name(name: str, seed: int) -> str:
    """A benchmark name of the same shape that names nothing: every letter replaced by a seeded letter, in case."""
    rng = rng_for(seed, "dcr-made-up-name", name)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for char in name:
        if char.isalpha():
            new = letters[int(rng.integers(0, 26))]
            out.append(new.upper() if char.isupper() else new)
        else:
            out.append(char)
    made_up = "".join(out)
    return made_up if made_up.lower() != name.lower() else made_up_name(name, seed + 1)


def topic_words(description: str, name: str) -> list[str]:
    """Content words of the description that the name does not spell (the L1 topic item's answer key)."""
    in_name = set(re.findall(r"[a-z]+", name.lower()))
    words = []
    for word in re.findall(r"[A-Za-z]{4,}", description):
        lower = word.lower()
        if lower not in in_name and lower not in GENERIC_WORDS and lower not in words:
            words.append(lower)
    return words[:MAX_TOPIC_WORDS]


def instance_texts(texts: Sequence[str]) -> list[str]:
    """Each rendered doc without the template every doc shares: the longest common prefix and suffix, cut at
    whitespace ("...\nQuestion: Is this sentence positive or negative?\nAnswer:" goes). A model that saw the
    benchmark saw its instances, not lm-eval's prompt around them. Kept whole when fewer than two docs differ or
    cutting would leave a doc empty."""
    if len(set(texts)) < 2:
        return list(texts)
    prefix = os.path.commonprefix(list(texts))
    prefix = prefix[: max(prefix.rfind(" "), prefix.rfind("\n")) + 1]
    suffix = os.path.commonprefix([text[::-1] for text in texts])[::-1]
    suffix = suffix[min((i for i in (suffix.find(" "), suffix.find("\n")) if i >= 0), default=len(suffix)):]
    cut = [text[len(prefix): len(text) - len(suffix)].strip() for text in texts]
    return cut if all(cut) else list(texts)


def _static(item_id: str, prompt: str, check: Mapping[str, Any], source: str, name: str, fake: str) -> dict[str, Any]:
    return {"id": item_id, "prompt": prompt.format(name=name), "check": dict(check), "source": source,
            "control": {"prompt": prompt.format(name=fake),
                        "source": f"control: the same question about {fake!r}, a made-up benchmark name"}}


def benchmark_questions(name: str, *, split: str, n_docs: int, n_choices: int | None, description: str,
                        seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The L1 and L2 items about the benchmark, each with its made-up-name control."""
    fake = made_up_name(name, seed)
    l1 = [_static("l1-known", "Do you know the {name} benchmark? Answer yes or no.",
                  {"kind": "regex", "pattern": r"^\W*yes\b"}, "the model says it knows the benchmark", name, fake)]
    words = topic_words(description, name)
    if words:
        l1.append(_static("l1-topic", "What is the {name} benchmark about? Answer in one sentence.",
                          {"kind": "keywords", "any": words}, f"the task's description names {words}", name, fake))
    l2 = [_static("l2-size", f"How many examples are in the {split} split of the {{name}} benchmark? "
                  "Answer with a number.", {"kind": "number", "value": n_docs, "tolerance": 0.1, "relative": True},
                  f"lm-eval renders {n_docs} {split} docs (within 10 %)", name, fake)]
    if n_choices:
        l2.append(_static("l2-options", "How many answer options does each question of the {name} benchmark "
                          "have? Answer with a number.", {"kind": "number", "value": n_choices},
                          f"every doc offers {n_choices} choices", name, fake))
    return l1, l2


def _usable(rows: Sequence[Mapping[str, Any]], wanted: int, seed: int,
            keep: Callable[[str], bool], kind: str) -> int:
    """How many rows (up to ``wanted``) can make a controlled item of ``kind``: kept, and with a twin."""
    found = 0
    for row in rows:
        text = str(row[TEXT_FIELD])
        if keep(text) and perturbed_twin(text, seed=seed, usable=asks_another_question(kind, text)) is not None:
            found += 1
            if found == wanted:
                break
    return found


def task_sheet(task: str, docs: Sequence[Mapping[str, Any]], *, split: str, metrics: Sequence[str],
               description: str = "", items_per_level: int = ITEMS_PER_LEVEL, seed: int = 0,
               data_file: str = "rows.jsonl") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The sheet mapping for ``task`` and the rows (``data_file``, beside the sheet) its items are drawn from."""
    if not metrics:
        raise ContamError("the task reports no metric where higher is better: nothing to adjust", source=task,
                          field="metric_list")
    if not docs:
        raise ContamError("the task has no evaluation docs", source=task, field="--tasks")
    # Docs without a gold answer (a loglikelihood_rolling task's) cannot make an L4 item; the rows leave them out.
    texts = instance_texts([str(doc["text"]) for doc in docs])
    rows = [{TEXT_FIELD: text, ANSWER_FIELD: str(doc["target"])} for text, doc in zip(texts, docs)
            if str(doc["target"]).strip()]
    return _sheet(task, rows, docs, adjusts=[(task, metric) for metric in metrics], split=split,
                  description=description, items_per_level=items_per_level, seed=seed, data_file=data_file,
                  built_from=f"the lm-eval task {task!r} ({len(docs)} {split} docs)")


def group_draw(subtask_docs: Mapping[str, Sequence[Mapping[str, Any]]], size: int, *, seed: int,
               group: str) -> dict[str, list[int]]:
    """Which docs of each subtask (``{"text", "target"}``, the text without the subtask's template) a group's sheet
    holds, as positions in its docs: ``size`` in all, shared out in
    proportion to the subtasks' sizes (largest remainder; a tie goes to the subtask listed first), each subtask's
    taken in an order seeded by ``seed`` and each doc's identity (group, subtask, position), passing over docs that
    cannot make a controlled item (no gold answer, no word WordNet can replace). A subtask with fewer such docs than
    its share gives what it has."""
    wanted = min(size, sum(len(docs) for docs in subtask_docs.values()))
    shares = proportional_shares({name: len(docs) for name, docs in subtask_docs.items()}, wanted, list(subtask_docs))
    drawn: dict[str, list[int]] = {}
    for name, docs in subtask_docs.items():
        order = seeded_order(len(docs), seed, "dcr-group-sheet", group, name)
        chosen = []
        for position in order:
            if len(chosen) == shares[name]:
                break
            doc = docs[position]
            if str(doc["target"]).strip() and perturbed_twin(str(doc["text"]), seed=seed) is not None:
                chosen.append(position)
        drawn[name] = sorted(chosen)
    return drawn


def group_sheet(group: str, subtask_docs: Mapping[str, Sequence[Mapping[str, Any]]], *, split: str,
                adjusts: Sequence[tuple[str, str]], items_per_level: int = ITEMS_PER_LEVEL, seed: int = 0,
                data_file: str = "rows.jsonl") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One sheet for an lm-eval group: its rows drawn across the subtasks (:func:`group_draw`, as many as one task's
    sheet holds), its L1/L2 questions about the group, and ``adjusts`` ((task or group, metric): every subtask's and
    the group rows') adjusted by its one factor. Each row keeps its subtask and doc position."""
    if not adjusts:
        raise ContamError("no subtask reports a metric where higher is better: nothing to adjust", source=group,
                          field="metric_list")
    instances = {name: [{"text": text, "target": doc["target"]}  # each subtask's own template comes off
                        for text, doc in zip(instance_texts([str(doc["text"]) for doc in docs]), docs)]
                 for name, docs in subtask_docs.items()}
    if not any(instances.values()):
        raise ContamError("the group's subtasks have no evaluation docs", source=group, field="--tasks")
    drawn = group_draw(instances, items_per_level, seed=seed, group=group)
    rows = [{TEXT_FIELD: instances[name][position]["text"], ANSWER_FIELD: str(instances[name][position]["target"]),
             "subtask": name, "doc_index": position} for name, positions in drawn.items() for position in positions]
    every_doc = [doc for docs in subtask_docs.values() for doc in docs]
    return _sheet(group, rows, every_doc, adjusts=adjusts, split=split, description="",
                  items_per_level=items_per_level, seed=seed, data_file=data_file,
                  built_from=f"the lm-eval group {group!r}: one sheet drawn across its {len(subtask_docs)} subtasks "
                             f"({len(every_doc)} {split} docs)", drawn_across=list(subtask_docs))


def _sheet(name: str, rows: list[dict[str, Any]], docs: Sequence[Mapping[str, Any]], *,
           adjusts: Sequence[tuple[str, str]], split: str, description: str, items_per_level: int, seed: int,
           data_file: str, built_from: str,
           drawn_across: Sequence[str] = ()) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The sheet mapping over ``rows`` (instance texts and gold answers); ``docs``: every doc of the benchmark,
    rendered (its size and answer options, for L2 and the label set)."""
    choice_sets = {tuple(doc.get("choices") or ()) for doc in docs}
    label_names = list(next(iter(choice_sets))) if len(choice_sets) == 1 else []
    if label_names and not all(row[ANSWER_FIELD] in label_names for row in rows):
        label_names = []
    choice_counts = {len(doc.get("choices") or ()) for doc in docs}
    n_choices = choice_counts.pop() if len(choice_counts) == 1 else None

    half = math.ceil(items_per_level / 2)
    completion = _usable(rows, half, seed, lambda text: len(text.split()) >= MIN_COMPLETION_WORDS, "completion")
    membership = _usable(rows, items_per_level - completion, seed, lambda text: True, "membership")
    association = _usable(rows, items_per_level, seed, lambda text: True, "association")
    if not rows or not association:
        raise ContamError("no doc has a gold answer and a word WordNet can replace: no controlled L4 item can be "
                          "built", source=name, field="doc_to_target")
    if not completion + membership:
        raise ContamError("no doc text has a word WordNet can replace: no controlled L3 item can be built",
                          source=name, field="doc_to_text")

    l1, l2 = benchmark_questions(name, split=split, n_docs=len(docs), n_choices=n_choices or None,
                                 description=description, seed=seed)
    l3 = [generator for generator in ({"kind": "completion", "count": completion,
                                       "check": {"kind": "overlap", "threshold": 0.5}},
                                      {"kind": "membership", "count": membership}) if generator["count"]]
    l4: dict[str, Any] = {"kind": "association", "count": association}
    data: dict[str, Any] = {"data_files": data_file, "split": split, "text_field": TEXT_FIELD,
                            "label_field": ANSWER_FIELD}
    if label_names:
        data["label_names"] = label_names
    else:
        data["answer_pattern"] = GSM8K_ANSWER
        l4["template"] = ANSWER_TEMPLATE
    sheet = {
        "benchmark": benchmark_slug(name),
        "name": name,
        "description": f"Built by lm-eval-contam from {built_from}.",
        "adjusts": [{"task": task, "metric": metric} for task, metric in adjusts],
        **({"drawn_across": list(drawn_across)} if drawn_across else {}),
        "items_per_level": {"l1": len(l1), "l2": len(l2), "l3": completion + membership, "l4": association},
        "check_mode": "controlled",
        "data": data,
        "levels": {"l1": {"items": l1}, "l2": {"items": l2}, "l3": {"generate": l3}, "l4": {"generate": [l4]}},
    }
    return sheet, rows
