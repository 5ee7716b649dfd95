"""Which rows of a partition are injected: by default exactly the rows an audit examines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.contaminate.formats import contaminant_texts
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.kit import instances as dcq
from lm_eval_contam.methods.timetravel import instances as timetravel


def audited_rows(partition: Partition, rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Row indices the partition's tasks examine with their default settings: Time Travel's sample plus DCQ's.

    Each method says which rows it samples, so the injection follows the tasks by
    construction. Injecting exactly these makes "was the injected text detected?"
    a fair question on partitions far larger than the audit's samples.
    """
    return sorted({*timetravel.audited_rows(partition, rows), *dcq.audited_rows(partition, rows)})


def partition_contaminant(
    partitions: Sequence[Partition], fmt: str, *, all_rows: bool = False
) -> tuple[list[str], list[dict[str, Any]]]:
    """The contaminant texts of ``partitions`` in ``fmt``, and one manifest record per partition.

    Only the rows an audit examines (:func:`audited_rows`) unless ``all_rows``.
    """
    texts: list[str] = []
    sources: list[dict[str, Any]] = []
    for partition in partitions:
        rows = partition.rows()
        indices = list(range(len(rows))) if all_rows else audited_rows(partition, rows)
        texts += contaminant_texts(partition, [rows[i] for i in indices], fmt)
        sources.append({"partition": partition.name, "format": fmt, "rows": indices})
    return texts, sources
