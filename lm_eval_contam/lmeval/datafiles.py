"""How a task YAML loads its partition: lm-eval's ``dataset_path`` for Hub data, else this ``custom_dataset`` hook.

Every method's YAML names its partition with the same metadata (see
:mod:`lm_eval_contam.core.partitions`); shipped sample datasets and one's own data
load through here, Hub datasets through lm-eval's own ``dataset_path``.
"""

from __future__ import annotations

from typing import Any

import datasets

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition, dataset_from_task_metadata


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


def data_lines(partition: Partition) -> list[str]:
    """How a task YAML loads the partition: by Hub path, or by the project's local-data hook."""
    spec = partition.dataset
    if spec.hf_path is None:
        return ["custom_dataset: !function lm_eval_contam.lmeval.datafiles.load_partitions"]
    return [f"dataset_path: {spec.hf_path}", *([f"dataset_name: {spec.hf_name}"] if spec.hf_name else []),
            *(["dataset_kwargs:", f"  revision: {spec.hf_revision}"] if spec.hf_revision else [])]
