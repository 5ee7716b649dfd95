"""Task YAMLs for generated partitions: every shipped family's sample task, retargeted.

The families come from the registry, not from a list here: every task YAML a
registered method ships (``MethodSpec.shipped_task_configs``) for the sample dataset
:data:`PATTERN_DATASET` and the same split (each family ships one per variant, e.g.
Time Travel's two prompt styles, DCQ's two answering modes, the likelihood modes) is
copied with its dataset swapped for a generated one, its ``include`` made absolute,
its options file pointed at the generated options and its sample size left to the
family's default for a user's dataset. Settings that name another split of the same
dataset (a likelihood control) carry over, since the generated datasets have the
sample's splits. A registered method that ships task YAMLs joins the study without an
edit here; it leaves a variant out through its ``MethodSpec.null_study_exclusion``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lm_eval_contam.core.install import task_dir
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import method_of, shipped_task_configs

# The shipped sample dataset whose task YAMLs serve as each family's pattern (its splits: train, test).
PATTERN_DATASET = "toy_news"
# Metadata that sizes or points at the pattern's own shipped sample; a generated partition uses the family's
# defaults for a user's dataset (Time Travel: the paper's 10 instances; DCQ: 100, all rows when fewer).
PATTERN_ONLY_METADATA = ("dataset", "num_instances", "options_path")


class _Function(str):
    """A ``!function`` reference, kept verbatim through load and dump."""


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_Loader.add_constructor("!function", lambda loader, node: _Function(loader.construct_scalar(node)))
_Dumper.add_representer(_Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


@dataclass(frozen=True)
class Pattern:
    """One shipped task YAML of the pattern partition: its family, variant and parsed config."""

    family: str
    variant: str  # the task-name suffix after the partition, e.g. "completion", "ll", ""
    path: Path
    config: dict[str, Any]

    @property
    def name(self) -> str:
        return f"{self.family}_{self.variant}" if self.variant else self.family


def exclusion(pattern: Pattern) -> str | None:
    """Why the study leaves a pattern out (its method's ``null_study_exclusion``), or None when it runs."""
    spec = method_of(pattern.family)
    return spec.null_study_exclusion(pattern.config) if spec.null_study_exclusion else None


def left_out(split: str = "train", directory: Path | None = None) -> dict[str, str]:
    """The task variants the study leaves out (pattern name -> why), as its design records them."""
    return {pattern.name: why for pattern in _all_patterns(split, directory) if (why := exclusion(pattern))}


def patterns(split: str, directory: Path | None = None) -> list[Pattern]:
    """Every shipped task YAML of :data:`PATTERN_DATASET`'s ``split`` that the study runs, sorted by task name;
    ``directory`` the task directory their relative ``include`` is read from (default: the installed one)."""
    return [pattern for pattern in _all_patterns(split, directory) if exclusion(pattern) is None]


def _all_patterns(split: str, directory: Path | None) -> list[Pattern]:
    pattern = Partition.parse(f"{PATTERN_DATASET}:{split}")
    stem = f"{pattern.dataset.key}_{pattern.split}"
    found = []
    for path, text in shipped_task_configs(directory or task_dir()).items():
        config = load(text)
        if not isinstance(config, dict):
            continue
        metadata = config.get("metadata") or {}
        if metadata.get("dataset") != pattern.dataset.key or config.get("test_split") != pattern.split:
            continue
        family = str(metadata.get("method", ""))
        task = str(config.get("task", ""))
        if not family or f"_{stem}" not in task:
            continue
        variant = task.split(f"_{stem}", 1)[1].lstrip("_")
        found.append(Pattern(family, variant, path, config))
    return sorted(found, key=lambda p: str(p.config["task"]))


def retarget(pattern: Pattern, partition: Partition, *, options_path: Path | None = None) -> dict[str, Any]:
    """The pattern's config auditing ``partition`` (of the pattern's split) instead: own-data metadata, absolute
    include, ``options_path`` (where the pattern has one) set to ``options_path``."""
    config = dict(pattern.config)
    config.pop("tag", None)
    if "include" in config:
        config["include"] = str((pattern.path.parent / str(config["include"])).resolve())
    config["task"] = partition.task_name(pattern.family, pattern.variant)
    config["test_split"] = partition.split
    original = config.get("metadata") or {}
    metadata = {key: value for key, value in original.items() if key not in PATTERN_ONLY_METADATA}
    metadata.update(partition.dataset.task_metadata())
    if "options_path" in original and options_path is not None:
        metadata["options_path"] = str(options_path)
    config["metadata"] = metadata
    return config


def load(text: str) -> dict[str, Any]:
    """A task YAML's config, ``!function`` references kept verbatim (as :func:`dump` writes them back)."""
    return yaml.load(text, Loader=_Loader)


def dump(config: Mapping[str, Any]) -> str:
    return "# Written by the null study (lm_eval_contam.nullstudy); regenerated on every run.\n" + yaml.dump(
        dict(config), Dumper=_Dumper, sort_keys=False, allow_unicode=True)
