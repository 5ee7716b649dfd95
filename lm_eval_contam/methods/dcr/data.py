"""The benchmark rows a sheet's generated items are built from."""

from __future__ import annotations

from typing import Any

import datasets

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcr.schema import Sheet


def load_data_rows(sheet: Sheet) -> list[dict[str, Any]]:
    """The benchmark rows generated items are built from (Hub dataset or local files)."""
    data = sheet.data
    if data is None:
        return []
    if data.data_files is not None:
        suffix = data.data_files.suffix.lstrip(".")
        loaded = datasets.load_dataset("json" if suffix in ("json", "jsonl") else suffix,
                                       data_files=str(data.data_files), split="train")
    else:
        loaded = datasets.load_dataset(data.dataset_path, data.dataset_name, split=data.split)
    missing = [f for f in (data.text_field, data.label_field) if f and f not in loaded.column_names]
    if missing:
        raise ContamError(f"column(s) {missing} not in the data (columns: {loaded.column_names})",
                          source=str(sheet.path), field="data")
    return [dict(row) for row in loaded]
