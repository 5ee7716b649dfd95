"""lm-eval ``custom_dataset`` hook: a task's partition read from local JSONL files.

Every method's YAML names its partition with the same metadata (see
:mod:`lm_eval_contam.partitions`); shipped sample datasets and one's own data
load through here, Hub datasets through lm-eval's own ``dataset_path``.
"""

from __future__ import annotations

from typing import Any

import datasets

from lm_eval_contam.errors import ContamError
from lm_eval_contam.partitions import dataset_from_task_metadata


def load_partitions(**metadata: Any) -> datasets.DatasetDict:
    """Every split of the dataset the task's ``metadata`` names, as lm-eval expects from ``custom_dataset``."""
    spec = dataset_from_task_metadata(metadata)
    splits = {}
    for split in spec.splits:
        partition = spec.partition(split)
        rows = partition.rows()
        if not rows:
            raise ContamError("no rows: the partition is empty", source=str(partition.data_file))
        splits[split] = datasets.Dataset.from_list(rows)
    return datasets.DatasetDict(splits)
