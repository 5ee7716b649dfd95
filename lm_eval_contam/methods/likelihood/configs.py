"""Thin task YAMLs for every registered partition in the three likelihood modes (ours).

``likelihood_<dataset>_<split>`` (partition vs control), ``..._lift`` (Time Travel's
guided-vs-general contrast as log-likelihoods) and ``..._options`` (DCQ's options as
log-likelihoods). A partition's control is its card's ``control`` field
(:class:`~lm_eval_contam.core.partitions.Control`); a registered partition's is its sibling
split (train vs test or validation), stated in the registry. Every YAML names the
control's kind and source (``control_kind``, ``control_source``) for the verdicts.
``scripts/generate_task_configs.py`` writes them under ``task_configs/likelihood/``;
the shipped sample partitions go to ``samples/`` (tag ``likelihood_samples``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import ControlOverlap
from lm_eval_contam.core.partitions import SAMPLES_DIR, Control, Partition, registered_partitions
from lm_eval_contam.kit.quiz_options import sample_options_file
from lm_eval_contam.lmeval.task_yaml import shipped_include, shipped_path, thin_task_yaml

METHOD = "likelihood"
# mode -> task-name variant
VARIANTS = {"control": "", "lift": "lift", "options": "options"}
OUTPUT_TYPES = {"control": "loglikelihood_rolling", "lift": "loglikelihood", "options": "loglikelihood_rolling"}


def task_name(partition: Partition, mode: str) -> str:
    return partition.task_name(METHOD, VARIANTS[mode])


def task_names(partition: Partition) -> list[str]:
    """The likelihood tasks auditing a partition (:func:`controlled_modes`)."""
    return [task_name(partition, mode) for mode in controlled_modes(partition)]


def controlled_modes(partition: Partition) -> list[str]:
    """The modes a partition can run: all three when its card (or the registry) names a control, else the lift mode.

    The lift mode's reference is built from the partition itself (other instances' second pieces); the control and
    options modes compare against a control partition, and without one they are not tested (their verdicts say
    so: :mod:`lm_eval_contam.methods.likelihood.verdicts`).
    """
    return list(VARIANTS) if partition.control.kind != "none" else ["lift"]


# Task metadata naming how many of the control's rows are audited rows (written when some are; the verdicts show it).
CONTROL_SHARED_KEY, CONTROL_ROWS_KEY = "control_shared_rows", "control_rows"
# Task metadata of a control audit --tasks chose itself (Control.assumed) and its lengths' test p (Control.lengths_pvalue).
CONTROL_ASSUMED_KEY, CONTROL_LENGTHS_KEY = "control_assumed", "control_lengths_pvalue"


def control_overlap_of(metadata: Mapping[str, Any]) -> ControlOverlap | None:
    """The control overlap a task YAML records (:func:`render_task_config`), or None."""
    shared = metadata.get(CONTROL_SHARED_KEY)
    return ControlOverlap(int(shared), int(metadata[CONTROL_ROWS_KEY])) if shared else None


def render_task_config(partition: Partition, mode: str, *, control: str | None = None, include: str | None = None,
                       options_path: str | None = None, num_instances: int | None = None,
                       control_overlap: ControlOverlap | None = None) -> str:
    """One task YAML; ``control`` a split of the same dataset or ``<dataset>:<split>`` (default: the partition's
    control, :attr:`~lm_eval_contam.core.partitions.Partition.control`); ``include`` the template's path (default:
    relative, for the shipped task directory); ``control_overlap`` the control's rows shared with the partition."""
    if mode not in VARIANTS:
        raise ContamError(f"{mode!r} is not one of {', '.join(VARIANTS)}", field="mode")
    sample = partition.dataset.hf_path is None
    family = "likelihood_samples" if sample else "likelihood"
    metadata = {"version": 1.0, "method": METHOD, **partition.dataset.task_metadata(), "mode": mode}
    named = Control("split", control, control) if control else partition.control
    if mode != "lift":
        if named.kind == "none":
            raise ContamError(f"{partition.label} has no control (its card's `control` field): mode {mode!r} needs one",
                              field="control")
        metadata["control"] = named.split
        if control_overlap is not None and control_overlap.shared:
            metadata.update({CONTROL_SHARED_KEY: control_overlap.shared, CONTROL_ROWS_KEY: control_overlap.rows})
    metadata["control_kind"] = named.kind  # the verdicts name the control's kind and source
    if named.source is not None:
        metadata["control_source"] = named.source
    if named.assumed:  # the task's own second split: the verdicts check the splits are comparable before using it
        metadata[CONTROL_ASSUMED_KEY] = True
        if named.lengths_pvalue is not None:
            metadata[CONTROL_LENGTHS_KEY] = named.lengths_pvalue
    if num_instances is not None:
        metadata["num_instances"] = num_instances
    metadata["seed"] = 0
    if mode == "options":
        if options_path:
            metadata["options_path"] = options_path
        elif sample and partition.dataset.registered:
            # Relative to the task YAML (task_configs/likelihood/samples/).
            metadata["options_path"] = f"../../{SAMPLES_DIR}/{sample_options_file(partition.dataset.key)}"
    return thin_task_yaml(
        header="# Generated by scripts/generate_task_configs.py; edit lm_eval_contam/methods/likelihood/configs.py instead.",
        include=include or shipped_include(partition), task=task_name(partition, mode),
        tag=[family, f"{family}_{mode}"], partition=partition,
        settings=[f"output_type: {OUTPUT_TYPES[mode]}"] if OUTPUT_TYPES[mode] != "loglikelihood_rolling" else [],
        metadata=metadata)


def shipped_task_configs() -> dict[str, str]:
    """Relative path under ``task_configs/likelihood/`` -> YAML text."""
    return {shipped_path(partition, task_name(partition, mode)): render_task_config(partition, mode)
            for partition in registered_partitions() for mode in VARIANTS}
