"""lm-eval glue for the likelihood modes (ours): one task per partition and mode, no generation.

Task ``metadata`` (YAML, overridable with ``--metadata``): the partition in the
schema every method shares (``lm_eval_contam.core.partitions``), ``mode``
(``control``, ``lift`` or ``options``), ``control`` (the partition card's mapping,
:class:`~lm_eval_contam.core.partitions.Control`; modes ``control`` and ``options``), ``num_instances``
(100 per side), ``seed`` (0), and for ``options`` the DCQ ``options_path``.

Requests per doc, each one forward pass for texts within the model's context:

* ``control``: one ``loglikelihood_rolling`` of the instance text;
* ``options``: five ``loglikelihood_rolling``, the original and its four perturbations;
* ``lift``: four ``loglikelihood`` requests, the own and another instance's second
  piece after the completion-style guided and general prompts (plain text, never
  chat-templated: the style continues a document).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval.api.instance import Instance

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition, metadata_number, resolve_path
from lm_eval_contam.kit.instances import default_instances
from lm_eval_contam.kit.quiz_options import default_options_path, options_command, read_options
from lm_eval_contam.kit.scoring import option_gap, per_byte, utf8_bytes, zlib_ratio
from lm_eval_contam.lmeval.lm_eval_compat import (
    rolling_arguments,
    rolling_loglikelihood,
    task_request,
)
from lm_eval_contam.lmeval.partition_task import PartitionSteps, PartitionTestTask
from lm_eval_contam.methods.likelihood.docs import (
    CONTROL,
    PARTITION,
    control_partition,
    lift_docs,
    option_docs,
    text_docs,
    with_clusters,
)
from lm_eval_contam.methods.likelihood.stats import control_tests, lift_from_records, lift_test, option_test

MODES = ("control", "lift", "options")
RECORD_METRIC = "per_byte_pvalue"  # a control-mode metric each doc's record is logged under (every metric logs it)
# mode -> partition-level metric -> reader of the mode's statistics
METRICS: dict[str, dict[str, Callable[[Any], float]]] = {
    "control": {
        "per_byte_partition": lambda s: s["per_byte"].partition_mean,
        "per_byte_control": lambda s: s["per_byte"].control_mean,
        "per_byte_pvalue": lambda s: s["per_byte"].pvalue,
        "zlib_partition": lambda s: s["zlib"].partition_mean,
        "zlib_control": lambda s: s["zlib"].control_mean,
        "zlib_pvalue": lambda s: s["zlib"].pvalue,
        # The comparability check on the items compared (model-free): the verdicts of a control the audit chose
        # itself read it.
        "texts_pvalue": lambda s: s["texts"].pvalue,
    },
    "options": {
        "gap_partition": lambda s: s.partition_mean,
        "gap_control": lambda s: s.control_mean,
        "gap_pvalue": lambda s: s.pvalue,
    },
    "lift": {
        "lift_own": lambda s: s["own_mean"],
        "lift_other": lambda s: s["other_mean"],
        "lift_pvalue": lambda s: s["controlled"].pvalue,
        "lift_own_pvalue": lambda s: s["uncontrolled"].pvalue,
    },
}


@dataclass(frozen=True)
class LikelihoodSettings:
    partition: Partition
    mode: str
    control: Partition | None
    num_instances: int
    seed: int
    options_path: Path

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None, split: str) -> LikelihoodSettings:
        metadata = dict(metadata or {})
        mode = str(metadata.get("mode", "control"))
        if mode not in MODES:
            raise ContamError(f"{mode!r} is not one of {', '.join(MODES)}", source=metadata.get("config_source"),
                              field="mode")
        partition = Partition.from_task_metadata(metadata, split)
        options = metadata.get("options_path")
        every_item = mode == "control" and partition.dataset.control_items is not None and "num_instances" not in metadata
        return cls(
            partition=partition, mode=mode,
            control=control_partition(partition) if mode != "lift" else None,
            num_instances=partition.dataset.control_items if every_item else default_instances(partition, metadata),
            seed=metadata_number(metadata, "seed", 0),
            options_path=resolve_path(options, metadata) if options else default_options_path(),
        )


def interleave(groups: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The partition's and the control's docs alternately (each group keeps its order), so lm-eval's ``--limit``,
    which takes the first docs, keeps both sides of a two-sample test."""
    docs: list[dict[str, Any]] = []
    for index in range(max((len(group) for group in groups), default=0)):
        docs += [group[index] for group in groups if index < len(group)]
    return docs


def partition_statistics(settings: LikelihoodSettings, records: Sequence[Mapping[str, Any]]) -> Any:
    """The mode's tests over one task's per-doc records."""
    mode, seed = settings.mode, settings.seed
    if mode == "control":
        return control_tests(records, seed)
    if mode == "options":
        return option_test(records, seed)
    own, other = ([float(record[key]) for record in records] for key in ("own_lift", "other_lift"))
    return {"controlled": lift_from_records(records, seed), "uncontrolled": lift_test(own, [0.0] * len(own), seed=seed),
            "own_mean": sum(own) / len(own), "other_mean": sum(other) / len(other)}


def doc_record(settings: LikelihoodSettings, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One doc's scores from its requests' log-likelihoods (rolling ones read by rolling_loglikelihood). A control-mode
    record carries its text's ``identity`` (its side and row), by which a reference model's run of the same task pairs
    with it (``likelihood_control_reference``)."""
    mode = settings.mode
    if mode == "control":
        (loglikelihood,) = results
        loglikelihood = rolling_loglikelihood(loglikelihood)
        return {"identity": f"{doc['group']}:{doc['row_index']}", "group": doc["group"], "cluster": doc["cluster"],
                "text": doc["text"], "loglikelihood": loglikelihood, "bytes": utf8_bytes(doc["text"]),
                "per_byte": per_byte(loglikelihood, doc["text"]), "zlib": zlib_ratio(loglikelihood, doc["text"])}
    if mode == "options":
        texts = [doc["original"], *doc["perturbed"]]
        scores = [per_byte(rolling_loglikelihood(ll), text) for ll, text in zip(results, texts)]
        return {"group": doc["group"], "cluster": doc["cluster"], "original": scores[0], "perturbed": scores[1:],
                "gap": option_gap(scores[0], scores[1:])}
    own_guided, own_general, other_guided, other_general = (float(ll) for ll, _greedy in results)
    return {"own_lift": per_byte(own_guided - own_general, doc["reference"]),
            "other_lift": per_byte(other_guided - other_general, doc["other_reference"])}


class LikelihoodTask(PartitionTestTask):
    """One partition in one likelihood mode; its YAML's ``metadata`` names the partition, mode and control."""

    steps = PartitionSteps(LikelihoodSettings, record=doc_record, statistics=partition_statistics)
    lower_is_better = ("_pvalue", "_control")

    @property
    def metrics(self) -> Mapping[str, Callable[[Any], float]]:  # type: ignore[override]
        return METRICS[self.settings.mode]

    def build_docs(self, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The partition's docs and, in the control and options modes, its control's (rows from ``partition_rows``)."""
        settings = self.settings
        sample = {"num_instances": settings.num_instances, "seed": settings.seed}
        if settings.mode == "lift":
            return lift_docs(settings.partition, rows, **sample)
        sides = [(PARTITION, settings.partition, rows)]
        if settings.control:
            sides.append((CONTROL, settings.control, self.partition_rows(settings.control)))
        if settings.mode == "control":  # every item up to the card's control_items, not the shared sample
            capped = settings.partition.dataset.control_items is None
            return with_clusters(interleave([text_docs(partition, side_rows, group, **sample, capped=capped)
                                             for group, partition, side_rows in sides]))
        options = read_options(settings.options_path)
        groups = []
        for group, partition, side_rows in sides:
            found = option_docs(partition, side_rows, group, options, **sample)
            if not found:
                raise ContamError(f"no DCQ options cached for {partition.label}; make them with "
                                  f"`{options_command(partition.task_name('dcq'))}`", source=str(settings.options_path))
            groups.append(found)
        return with_clusters(interleave(groups), text="original")

    def doc_to_text(self, doc: dict, doc_to_text: Any = None) -> str:
        return doc.get("guided_prompt") or doc.get("text") or doc["original"]

    def doc_to_target(self, doc: dict, doc_to_target: Any = None) -> str:
        return doc.get("reference") or doc.get("text") or doc["original"]

    def construct_requests(self, doc: dict, ctx: Any, **kwargs: Any) -> list[Instance]:
        mode = self.settings.mode
        if mode == "lift":
            arguments = [(prompt, " " + doc[piece]) for piece in ("reference", "other_reference")
                         for prompt in (doc["guided_prompt"], doc["general_prompt"])]
            request_type = "loglikelihood"
        else:
            texts = [doc["text"]] if mode == "control" else [doc["original"], *doc["perturbed"]]
            arguments = [rolling_arguments(text) for text in texts]
            request_type = "loglikelihood_rolling"
        return [task_request(self, doc, argument, number, request_type=request_type, **kwargs)
                for number, argument in enumerate(arguments)]
