"""lm-eval glue for DCR: one generate_until task per sheet level, scored by the item's Check.

Each level task ``dcr_<bench>_l<k>`` reports ``contaminated`` (S_k: the share of
checked items judged contaminated; lm-eval's ``nanmean`` skips undetermined items)
and ``unchecked`` (the share left for a person). The group ``dcr_<bench>`` lists
the four levels. lm-eval can only average subtasks into a group, and the DCR
Factor is not an average, so :mod:`lm_eval_contam.dcr.hook` computes the factor from
the four level scores after the run and writes it, with ``acc_adj``, into the
results (see ``task_configs/dcr/README.md``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import datasets

from lm_eval_contam import task_dir
from lm_eval_contam.dcr.checks import parse_check
from lm_eval_contam.dcr.data import load_data_rows
from lm_eval_contam.dcr.docs import item_to_doc
from lm_eval_contam.dcr.items import level_items
from lm_eval_contam.dcr.sheet import load_sheet


def load_level_dataset(dcr_sheet: str, dcr_level: int, seed: int = 0, judge_model: str | None = None,
                       **_metadata: Any) -> datasets.DatasetDict:
    """lm-eval ``custom_dataset``: the level's items as a one-split DatasetDict.

    ``seed`` and ``judge_model`` come from task metadata (``--metadata '{"judge_model": ...}'``).
    """
    sheet = load_sheet(dcr_sheet, judge_model=judge_model)
    level = int(dcr_level)
    rows = load_data_rows(sheet) if sheet.levels[level - 1].generators else []
    docs = [item_to_doc(sheet, item) for item in level_items(sheet, level, rows, seed=int(seed))]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Per item: ``contaminated`` 1/0 (NaN when undetermined) and ``unchecked`` 1/0."""
    check = parse_check(json.loads(doc["check"]), field=f"{doc['item_id']}.check")
    verdict = check.evaluate(doc["prompt"], results[0])
    return {
        "contaminated": math.nan if verdict is None else float(verdict),
        "unchecked": float(verdict is None),
    }


def load_toy_sentiment(**_metadata: Any) -> datasets.DatasetDict:
    """The shipped offline toy benchmark (task ``contam_toy_sentiment``)."""
    path = task_dir() / "dcr" / "toy" / "toy_sentiment.jsonl"
    return datasets.DatasetDict({"test": datasets.Dataset.from_json(str(path))})
