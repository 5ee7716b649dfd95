"""The whole audit at 96 items on the split study's datasets (issue 49 item 3), and its rates.

The split study (:mod:`~lm_eval_contam.nullstudy.split_control`) scored every item with two models; here the audit
itself runs, as a user runs it: each of the study's 4 multiple-choice datasets becomes two local MMLU-style lm-eval
tasks (the item rendered as the fine-tune saw it, the answer letters as choices), and each of its 4 free-text datasets
two ``generate_until`` tasks (the row's text, its label's name as the answer), each with a ``validation`` split, and
``audit --tasks <the 8 tasks of a shape>`` with no control flag computes every verdict (the split control on every
item, the other tests on their default sample) and the per-partition verdict:

* ``detection``: the injected ``train`` split evaluated, its never-injected sibling ``test`` as the control;
* ``sibling``: the never-injected ``test`` split evaluated, ``extra`` (96 more, never injected) as the control.

Every verdict's p-value, decision and Holm-adjusted p are kept per partition in a small data file
(``scored/split_audit_<model>.jsonl``; free text ``split_audit_free_text_<model>.jsonl``), so the rates (:func:`audit_rates`) and any other rule for combining the
tests can be recomputed without the models.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.core.jsonl import read_jsonl_objects, write_jsonl
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.catalogue import load_methods
from lm_eval_contam.nullstudy.corpus import (
    free_text_task_yaml,
    make_dataset,
    make_mc_dataset,
    mc_prompt_task_yaml,
    render_mc,
)
from lm_eval_contam.nullstudy.order_pool import flag_count
from lm_eval_contam.verdicts.verdict import collect, no_call_reason, partition_verdicts

SCORED_DIR = Path(__file__).with_name("scored")
# (role, evaluated split, control split) of each dataset's two tasks
PAIRS = (("detection", "train", "test"), ("sibling", "test", "extra"))
MULTIPLE_CHOICE, FREE_TEXT = "multiple choice", "free text"
TASK_PREFIXES = {MULTIPLE_CHOICE: "split_study_mc", FREE_TEXT: "split_study_free"}


def task_name(index: int, role: str, shape: str = MULTIPLE_CHOICE) -> str:
    return f"{TASK_PREFIXES[shape]}_{index}_{role}"


def _rows(study_seed: int, index: int, split: str, rows: int, shape: str) -> tuple[str, list[dict]]:
    """(the dataset's name, one split's rows as its task's docs): a multiple-choice item as ``{"prompt", "answer"}``
    (the prompt rendered as the fine-tune saw it, :func:`render_mc`); a free-text row as ``{"text", "label"}`` (the
    text the fine-tune saw, the label's name)."""
    from lm_eval_contam.nullstudy.study import _vocabulary

    nouns, adjectives = _vocabulary()
    if shape == MULTIPLE_CHOICE:
        dataset = make_mc_dataset(study_seed, index, nouns, adjectives, rows_per_split=rows, splits=(split,))
        return dataset.display_name, [{"prompt": render_mc(row), "answer": int(row["answer"])}
                                      for row in dataset.splits[split]]
    dataset = make_dataset(study_seed, index, nouns, adjectives, rows_per_split=rows, splits=(split,))
    return dataset.display_name, [{"text": str(row["text"]), "label": dataset.label_names[int(row["label"])]}
                                  for row in dataset.splits[split]]


def study_tasks(study_seed: int, datasets: int, rows: int, shape: str = MULTIPLE_CHOICE
                ) -> Iterator[tuple[str, str, str, list[dict], list[dict]]]:
    """(task, role, dataset, evaluated rows, control rows) of each task of one shape (:func:`_rows`)."""
    for index in range(datasets):
        splits = {}
        for split in {split for _, *pair in PAIRS for split in pair}:
            name, splits[split] = _rows(study_seed, index, split, rows, shape)
        for role, evaluated, control in PAIRS:
            yield task_name(index, role, shape), role, name, splits[evaluated], splits[control]


def write_tasks(folder: Path, study_seed: int, *, datasets: int, rows: int,
                shape: str = MULTIPLE_CHOICE) -> dict[str, tuple[str, str]]:
    """Every task's data and YAML under ``folder`` (multiple choice: MMLU-style tasks, the letters as choices; free
    text: ``generate_until`` tasks answering the label); task -> (role, dataset)."""
    folder.mkdir(parents=True, exist_ok=True)
    task_yaml = mc_prompt_task_yaml if shape == MULTIPLE_CHOICE else free_text_task_yaml
    found = {}
    for name, role, dataset, evaluated, control in study_tasks(study_seed, datasets, rows, shape):
        paths = {split: write_jsonl(folder / f"{name}_{split}.jsonl", docs)
                 for split, docs in (("test", evaluated), ("validation", control))}
        (folder / f"{name}.yaml").write_text(task_yaml(name, {split: str(path) for split, path in paths.items()}),
                                             encoding="utf-8")
        found[name] = (role, dataset)
    return found


def verdict_rows(run: Any, roles: Mapping[str, tuple[str, str]], model: str) -> list[dict[str, Any]]:
    """One row per verdict of each study task's partition (its p, decision as the report states it, and its Holm p
    where it drives), then the partition's own verdict (``test``: the combined verdict's name)."""
    load_methods()  # the registry the verdicts are read through
    verdicts = collect(run)
    rows = []
    for combined in partition_verdicts(verdicts):
        task = combined.partition.rsplit(" ", 1)[0]
        if task not in roles:
            continue
        role, dataset = roles[task]
        adjusted = {id(verdict): holm for verdict, holm in combined.evidence}
        mine = [v for v in verdicts if v.partition == combined.partition and v.model == combined.model]
        for verdict in (*mine, combined.as_verdict()):
            rows.append({"model": model, "task": task, "role": role, "dataset": dataset, "test": verdict.test,
                         "variant": verdict.variant, "n": verdict.n, "pvalue": verdict.pvalue,
                         "flagged": verdict.flagged, "no_call": no_call_reason(verdict) if verdict.family != "combined"
                         else None, "holm": adjusted.get(id(verdict))})
    return rows


def shipped_name(label: str, shape: str = MULTIPLE_CHOICE) -> str:
    """The shipped verdict rows' file of one audit: ``split_audit_<label>.jsonl`` (multiple choice, as first
    shipped), ``split_audit_free_text_<label>.jsonl``."""
    return f"split_audit_{label}.jsonl" if shape == MULTIPLE_CHOICE else f"split_audit_free_text_{label}.jsonl"


def scored_rows(model: str, directory: Path = SCORED_DIR, shape: str = MULTIPLE_CHOICE) -> list[dict[str, Any]]:
    return read_jsonl_objects(directory / shipped_name(model, shape))


def rate_key(row: Mapping[str, Any]) -> str:
    """A row's test as the rates files key it: ``name:variant`` where it has a variant."""
    return f"{row['test']}:{row['variant']}" if row["variant"] else str(row["test"])


def audit_rates(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """test (``name:variant`` where it has one) -> role -> the partitions it flagged at ALPHA (``p``, its own p) and
    the partitions it made a call on (``called``: p <= ALPHA and no reason against the call; the combined verdict:
    flagged)."""
    found: dict[str, dict[str, dict[str, list[bool]]]] = {}
    for row in rows:
        if row["pvalue"] is None:
            continue
        key = rate_key(row)
        p_flag = float(row["pvalue"]) <= ALPHA
        entry = found.setdefault(key, {}).setdefault(str(row["role"]), {"p": [], "called": []})
        entry["p"].append(p_flag)
        entry["called"].append(bool(row["flagged"]) and p_flag and not row["no_call"])
    return {key: {role: {column: flag_count(flags) for column, flags in columns.items()}
                  for role, columns in roles.items()} for key, roles in found.items()}


def holm_sets(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each combined verdict's Holm set in these rows: the tests (``name:variant``) that held a Holm p beside it, over
    every partition audited (what the whole audits' rates were measured with)."""
    members: dict[str, set[str]] = {}
    combined = {(row["model"], row["task"]): str(row["test"]) for row in rows
                if str(row["test"]).startswith("partition_combined")}
    for row in rows:
        if row["holm"] is not None and (row["model"], row["task"]) in combined:
            members.setdefault(combined[row["model"], row["task"]], set()).add(rate_key(row))
    return {test: sorted(keys) for test, keys in sorted(members.items())}


def rates_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rates as the docs print them (markdown): per test, the partitions flagged at ALPHA and called per role,
    and each partition's p (datasets in order; "—" where not tested)."""
    rates = audit_rates(rows)
    by_key: dict[str, dict[str, dict[str, float | None]]] = {}
    for row in rows:
        key = rate_key(row)
        by_key.setdefault(key, {}).setdefault(str(row["role"]), {})[str(row["dataset"])] = row["pvalue"]
    lines = ["| test | detection: p ≤ 0.05 (called) | p, injected (datasets 0–3) | siblings: p ≤ 0.05 (called) | "
             "p, siblings |", "|---|---|---|---|---|"]
    for key, roles in by_key.items():
        cells = []
        for role in ("detection", "sibling"):
            counted = (rates.get(key) or {}).get(role)
            cells.append(f"{counted['p']['flagged']}/{counted['p']['k']} ({counted['called']['flagged']})"
                         if counted else "—")
            values = roles.get(role) or {}
            cells.append(", ".join("—" if p is None else f"{p:.4f}" for _, p in sorted(values.items(),
                                                                                       key=lambda item: item[0][-1])))
        lines.append(f"| `{key}` | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
    return "\n".join(lines)
