"""lm-eval glue for DCR: one generate_until task per sheet level, scored by the item's Check.

Each level task ``dcr_<bench>_l<k>`` reports ``contaminated`` (S_k) and
``unchecked`` (the share of items left for a person). The check mode (task
metadata ``check_mode``, else the sheet's ``check_mode``, else ``controlled``) is
written back into the task's metadata, so the run's config records it.

- paper mode: one request per item; S_k is the share of checked items judged
  contaminated (lm-eval's ``nanmean`` skips undetermined items), as the paper's
  automated Check computes it.
- controlled mode, a level none of whose items has a twin: every item adds no
  evidence, so S_k = 0 (``contaminated`` 0 per decided item) beside ``original``, the
  items' own pass rate (the paper's S_k).
- controlled mode, every other level: each item with a twin (a generated item's perturbed one,
  :mod:`lm_eval_contam.methods.dcr.twins`, or the ``control`` a sheet gives a static item)
  also asks it as a second request; per item one record ``{"original", "control"}``
  goes under every metric, and S_k is
  :func:`lm_eval_contam.methods.dcr.level_score.twin_score`: the pass rate on the
  originals minus on the twins, floored at 0 (an item without a twin adds no
  evidence), beside the two rates, the discordant shares and the sign test's p-value.

The group ``dcr_<bench>`` lists the four levels. lm-eval can only average
subtasks into a group, and the DCR Factor is not an average, so
:mod:`lm_eval_contam.methods.dcr.hook` computes the factor from the four level scores
after the run and writes it, with ``acc_adj``, into the results (see
``task_configs/dcr/README.md``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from typing import Any

import datasets
from lm_eval.api.metrics import mean, nanmean
from lm_eval.api.task import ConfigurableTask

from lm_eval_contam.core.install import task_dir
from lm_eval_contam.lmeval.lm_eval_compat import aggregate_without_bootstrapping_task_statistics, task_request
from lm_eval_contam.lmeval.request_parts import general_context
from lm_eval_contam.methods.dcr.data import load_data_rows
from lm_eval_contam.methods.dcr.docs import item_record, item_to_doc
from lm_eval_contam.methods.dcr.items import level_items
from lm_eval_contam.methods.dcr.level_score import TwinScore, twin_score
from lm_eval_contam.methods.dcr.results import (
    ORIGINAL_ONLY_METRIC,
    PVALUE_METRIC,
    SCORE_METRIC,
    TWIN_ONLY_METRIC,
    UNCHECKED_METRIC,
)
from lm_eval_contam.methods.dcr.sheet import load_sheet, valid_check_mode

# Metrics of a controlled level, each read from the level's TwinScore.
ORIGINAL_METRIC = "original"  # the pass rate on the items themselves (the paper's S_i)
TWIN_METRIC = "control"  # the pass rate on their twins (the results' metric keeps its name)
TWIN_SCORE_READERS: dict[str, Callable[[TwinScore], float]] = {
    SCORE_METRIC: lambda score: score.statistic,
    ORIGINAL_METRIC: lambda score: score.original_rate,
    TWIN_METRIC: lambda score: score.twin_rate,
    ORIGINAL_ONLY_METRIC: lambda score: score.original_only,
    TWIN_ONLY_METRIC: lambda score: score.twin_only,
    PVALUE_METRIC: lambda score: score.pvalue,
}


def load_level_dataset(dcr_sheet: str, dcr_level: int, seed: int = 0, judge_model: str | None = None,
                       check_mode: str | None = None, **_metadata: Any) -> datasets.DatasetDict:
    """lm-eval ``custom_dataset``: the level's items as a one-split DatasetDict.

    ``seed``, ``judge_model`` and ``check_mode`` come from task metadata (``--metadata '{"check_mode": "paper"}'``).
    """
    sheet = load_sheet(dcr_sheet, judge_model=judge_model)
    level = int(dcr_level)
    rows = load_data_rows(sheet) if sheet.levels[level - 1].generators else []
    items = level_items(sheet, level, rows, seed=int(seed), check_mode=check_mode)
    return datasets.DatasetDict({"test": datasets.Dataset.from_list([item_to_doc(sheet, item) for item in items])})


@functools.lru_cache(maxsize=64)
def _twin_score(records: tuple[tuple[tuple[str, float | None], ...], ...]) -> TwinScore:
    return twin_score([dict(record) for record in records])


def level_twin_score(records: Sequence[Mapping[str, Any]]) -> TwinScore:
    """The level's TwinScore, computed once for all its metrics."""
    return _twin_score(tuple(tuple(sorted(record.items())) for record in records))


class DCRLevelTask(ConfigurableTask):
    """One level of a DCR sheet; its YAML's metadata names the sheet and level (see the README)."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        metadata = dict(config.get("metadata") or {})
        sheet = load_sheet(metadata["dcr_sheet"])
        mode = valid_check_mode(metadata.get("check_mode") or sheet.check_mode, source="task metadata")
        config["metadata"] = {**metadata, "check_mode": mode}
        level = sheet.levels[int(metadata["dcr_level"]) - 1]
        has_twins = bool(level.generators) or any(item.twin is not None for item in level.items)
        self.twin_checked = mode == "controlled" and has_twins
        # Controlled mode on a level no item of which has a twin: every item is a tie, S = 0 (no evidence).
        self.no_evidence = mode == "controlled" and not has_twins
        super().__init__(config=config, **kwargs)

    def construct_requests(self, doc: dict, ctx: Any, **kwargs: Any) -> Any:
        contexts = [ctx]
        if doc["twin_prompt"]:
            contexts.append(general_context(ctx, doc["prompt"], doc["twin_prompt"]))
        return [task_request(self, doc, (context, deepcopy(self.config.generation_kwargs)), idx, **kwargs)
                for idx, context in enumerate(contexts)]

    def process_results(self, doc: dict, results: list[str]) -> dict[str, Any]:
        record = item_record(doc, results)
        undetermined = record["original"] is None or record.get("control", 0.0) is None
        if not self.twin_checked:
            original = math.nan if record["original"] is None else record["original"]
            if self.no_evidence:  # a decided item is a tie (0), an undetermined one stays out (NaN)
                no_evidence = math.nan if record["original"] is None else 0.0
                return {SCORE_METRIC: no_evidence, ORIGINAL_METRIC: original, UNCHECKED_METRIC: float(undetermined)}
            return {SCORE_METRIC: original, UNCHECKED_METRIC: float(undetermined)}
        return {**{metric: record for metric in TWIN_SCORE_READERS}, UNCHECKED_METRIC: float(undetermined)}

    def aggregation(self) -> dict[str, Callable[..., float]]:
        if not self.twin_checked:
            return {SCORE_METRIC: nanmean, **({ORIGINAL_METRIC: nanmean} if self.no_evidence else {}),
                    UNCHECKED_METRIC: mean}

        def reader(metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
            return lambda records: TWIN_SCORE_READERS[metric](level_twin_score(records))

        return {**{metric: reader(metric) for metric in TWIN_SCORE_READERS}, UNCHECKED_METRIC: mean}

    def aggregate(self, bootstrap_iters: int | None = 100_000) -> tuple[dict[str, Any], int]:
        """lm-eval 0.5's aggregation entry point: no bootstrap of the level statistics (see lm_eval_compat)."""
        return aggregate_without_bootstrapping_task_statistics(self, bootstrap_iters)

    def higher_is_better(self) -> dict[str, bool]:
        # "Higher" means more evidence of contamination, except for the p-value.
        metrics = (TWIN_SCORE_READERS if self.twin_checked
                   else (SCORE_METRIC, ORIGINAL_METRIC) if self.no_evidence else (SCORE_METRIC,))
        return {**{metric: not metric.endswith("_pvalue") for metric in metrics}, UNCHECKED_METRIC: False}


def load_toy_sentiment(**_metadata: Any) -> datasets.DatasetDict:
    """The shipped offline toy benchmark (task ``contam_toy_sentiment``)."""
    path = task_dir() / "dcr" / "toy" / "toy_sentiment.jsonl"
    return datasets.DatasetDict({"test": datasets.Dataset.from_json(str(path))})
