"""From a partition (and its control) to likelihood docs: which rows, which texts, which prompts.

Every mode scores the rows DCQ quizzes (:func:`lm_eval_contam.kit.instances.sample_indices`
with the task's ``num_instances`` and ``seed``): the injection kit injects those rows,
and the option-likelihood mode needs their cached DCQ options. Each doc carries
``group``: ``partition`` or ``control``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.split_tests import shared_context_clusters
from lm_eval_contam.kit.instances import instance_text, quiz_instance, sample_indices, text_columns
from lm_eval_contam.kit.pieces import build_doc
from lm_eval_contam.kit.quiz_options import OptionsEntry

PARTITION, CONTROL = "partition", "control"


def option_text(instance: str, partition: Partition) -> str:
    """An instance string (``<column>: <value>`` lines, as DCQ options are written) as :func:`~lm_eval_contam.kit.instances.instance_text` has
    it."""
    columns = text_columns(partition)
    label = partition.dataset.label_field
    values: dict[str, list[str]] = {}
    current: str | None = None
    for line in instance.split("\n"):
        header = next((column for column in (*columns, label) if column and line.startswith(f"{column}: ")), None)
        if header is not None:
            current = header
            values[header] = [line[len(header) + 2:]]
        elif current is not None:
            values[current].append(line)  # a value that itself holds a line break
    missing = [column for column in columns if column not in values]
    if missing:
        raise ContamError(f"option has no {missing[0]!r} line: {instance[:80]!r}", field="options")
    return "\n".join("\n".join(values[column]) for column in columns)


def control_partition(partition: Partition) -> Partition:
    """The split of the partition's dataset its control's rows are read from (its task metadata's ``control``)."""
    if partition.control.split is None:
        raise ContamError(f"name {partition.label}'s control: {{kind: split, source: <split>}} or {{kind: file, "
                          "source: <file>, split: <split>}}", field="control")
    return partition.dataset.partition(partition.control.split)


def sampled_rows(partition: Partition, rows: Sequence[Mapping[str, Any]], num_instances: int,
                 seed: int, *, capped: bool = True) -> list[int]:
    """The row indices scored: DCQ's sample of the partition (not ``capped``: not held to its ``sample``)."""
    return sample_indices(partition, rows, num_instances, seed, capped=capped)


def text_docs(partition: Partition, rows: Sequence[Mapping[str, Any]], group: str, *, num_instances: int,
              seed: int, capped: bool = True) -> list[dict[str, Any]]:
    """Partition-vs-control docs: one text per sampled row, with the row's option texts (``choices``, a benchmark's),
    which :func:`with_clusters` reads."""
    return [{"group": group, "row_index": index,
             "text": instance_text(partition, rows[index], source=f"{partition.label} row {index}"),
             "choices": [str(choice) for choice in rows[index].get("choices") or ()]}
            for index in sampled_rows(partition, rows, num_instances, seed, capped=capped)]


def with_clusters(docs: Sequence[dict[str, Any]], text: str = "text") -> list[dict[str, Any]]:
    """The docs of both sides, each with ``cluster``: the unit the split-label test relabels (items sharing a passage
    or option texts are one, :func:`~lm_eval_contam.core.split_tests.shared_context_clusters`, read on their
    ``text`` field)."""
    clusters = shared_context_clusters([doc[text] for doc in docs], [doc["choices"] for doc in docs])
    return [{**doc, "cluster": cluster} for doc, cluster in zip(docs, clusters)]


def option_docs(partition: Partition, rows: Sequence[Mapping[str, Any]], group: str,
                options: Mapping[str, OptionsEntry], *, num_instances: int, seed: int) -> list[dict[str, Any]]:
    """Option-likelihood docs: the original text and its four cached word-level perturbations, with the row's option
    texts (``choices``, a benchmark's), which :func:`with_clusters` reads.

    Rows without cached options (DCQ's generator could not vary them) are left out;
    the caller names the command that makes the missing ones.
    """
    docs = []
    for index in sampled_rows(partition, rows, num_instances, seed):
        entry = options.get(quiz_instance(partition, rows[index], source=f"{partition.label} row {index}").key)
        if entry is None:
            continue
        docs.append({"group": group, "row_index": index, "original": option_text(entry.instance, partition),
                     "perturbed": [option_text(option, partition) for option in entry.options],
                     "choices": [str(choice) for choice in rows[index].get("choices") or ()]})
    return docs


LIFT_MIN_DOCS = 2  # the lift's reference is another sampled instance's second piece


def cut_sample(partition: Partition, rows: Sequence[Mapping[str, Any]], *, num_instances: int,
               seed: int) -> list[dict[str, Any]]:
    """The sampled rows cut into two pieces (completion-style prompts); rows too short to cut are left out."""
    built = [build_doc(rows[index], index, partition, seed=seed, style="completion")
             for index in sampled_rows(partition, rows, num_instances, seed)]
    return [doc for doc in built if doc is not None]


def lift_docs(partition: Partition, rows: Sequence[Mapping[str, Any]], *, num_instances: int,
              seed: int) -> list[dict[str, Any]]:
    """Time Travel likelihood docs: completion-style guided and general prompts, the instance's own second piece,
    and another sampled instance's second piece (a seeded cyclic shift of the sample) as the control.
    """
    docs = cut_sample(partition, rows, num_instances=num_instances, seed=seed)
    if len(docs) < LIFT_MIN_DOCS:
        raise ContamError(f"{len(docs)} row(s) long enough to cut; the control needs at least {LIFT_MIN_DOCS}",
                          source=partition.label, field=partition.dataset.text_field)
    shift = int(rng_for(seed, "likelihood-lift-other", partition.dataset.display_name, partition.split)
                .integers(1, len(docs)))
    return [{"group": PARTITION, "row_index": doc["row_index"], "guided_prompt": doc["guided_prompt"],
             "general_prompt": doc["general_prompt"], "reference": doc["reference"],
             "other_reference": docs[(number + shift) % len(docs)]["reference"]}
            for number, doc in enumerate(docs)]
