"""Local data for lm-eval tasks: JSONL partitions named in a task's metadata.

Relative paths resolve against the task YAML (lm-eval records it as
``metadata['config_source']``), never the working directory, so shipped data
is found from the installed package.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets

from lm_eval_contam.errors import ContamError


def resolve_path(path: str | Path, metadata: Mapping[str, Any]) -> Path:
    """``path`` as given if absolute (or with no YAML to anchor it), else relative to the task YAML."""
    candidate = Path(path).expanduser()
    source = metadata.get("config_source")
    if candidate.is_absolute() or not source or source == "inline":
        return candidate
    return Path(source).parent / candidate


def data_file(metadata: Mapping[str, Any], split: str) -> Path:
    files = metadata.get("data_files") or {}
    if split not in files:
        raise ContamError(f"no data file for split {split!r}; data_files has {sorted(files)}",
                          source=metadata.get("config_source"), field="data_files")
    return resolve_path(files[split], metadata)


def load_jsonl_partitions(**metadata: Any) -> datasets.DatasetDict:
    """lm-eval ``custom_dataset`` hook: ``metadata['data_files']`` (split -> JSONL path) as a DatasetDict."""
    files = metadata.get("data_files")
    if not isinstance(files, Mapping) or not files:
        raise ContamError("expected a mapping split -> JSONL path", source=metadata.get("config_source"),
                          field="data_files")
    splits = {}
    for split in files:
        path = data_file(metadata, split)
        if not path.is_file():
            raise ContamError("data file not found", source=str(path), field="data_files")
        splits[split] = datasets.Dataset.from_json(str(path))
    return datasets.DatasetDict(splits)
