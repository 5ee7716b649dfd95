"""From a partition's rows to Time Travel docs: seeded sampling, pieces and prompts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

from tqdm import tqdm

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.kit.guided_prompts import PromptStyle
from lm_eval_contam.kit.pieces import build_doc

DEFAULT_NUM_INSTANCES = 10  # the paper's sample per partition


def sample_docs(
    rows: Sequence[Mapping[str, Any]],
    partition: Partition,
    *,
    num_instances: int = DEFAULT_NUM_INSTANCES,
    seed: int = 0,
    style: str = "instruct",
) -> list[dict[str, Any]]:
    """``num_instances`` docs in a seeded shuffle order, skipping rows too short to cut and rows whose text an earlier
    doc has (without duplicates the sample is the one it always was).

    The draw depends only on the seed, the partition's names and the row count,
    so every rerun and every data-parallel rank picks the same instances.
    """
    if style not in get_args(PromptStyle):
        raise ContamError(f"{style!r} is not one of {', '.join(get_args(PromptStyle))}", field="prompt_style")
    if num_instances < 1:
        raise ContamError(f"must be >= 1, got {num_instances!r}", field="num_instances")
    order = rng_for(seed, "timetravel-sample", partition.dataset.display_name, partition.split).permutation(len(rows))
    docs: list[dict[str, Any]] = []
    seen: set[tuple[str, ...]] = set()  # identical rows are one instance, never counted as several (as DCQ samples)
    fields = (partition.dataset.text_field, partition.dataset.second_field)
    with tqdm(total=min(num_instances, len(rows)), desc=f"timetravel {partition.label}") as bar:
        for row_index in order:
            row = rows[int(row_index)]
            doc = build_doc(row, int(row_index), partition, seed=seed, style=style)
            text = tuple(str(row[field]) if field else "" for field in fields)
            if doc is not None and text not in seen:
                seen.add(text)
                docs.append(doc)
                bar.update()
            if len(docs) == num_instances:
                break
    if not docs:
        raise ContamError("no row has text long enough to cut into two pieces", source=partition.label,
                          field=partition.dataset.text_field)
    return docs


def has_cuttable_row(rows: Sequence[Mapping[str, Any]], partition: Partition, *, seed: int = 0) -> bool:
    """Whether any row's text can be cut into two pieces (stops at the first that can)."""
    return any(build_doc(row, index, partition, seed=seed, style="instruct") is not None
               for index, row in enumerate(rows))


def default_num_instances(partition: Partition) -> int:
    """The task's sample size: a shipped sample partition is small enough to use whole, else the paper's 10."""
    shipped_sample = partition.dataset.registered and partition.dataset.hf_path is None
    return len(partition.rows()) if shipped_sample else DEFAULT_NUM_INSTANCES


def audited_rows(partition: Partition, rows: Sequence[Mapping[str, Any]], *, num_instances: int | None = None,
                 seed: int = 0) -> list[int]:
    """The row indices the partition's Time Travel task samples (its default ``num_instances`` and seed)."""
    count = num_instances if num_instances is not None else default_num_instances(partition)
    return sorted(doc["row_index"] for doc in sample_docs(rows, partition, num_instances=count, seed=seed))
