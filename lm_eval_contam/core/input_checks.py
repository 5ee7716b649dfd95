"""Checks of command-line input that need nothing loaded or written: each bad value is one :class:`ContamError`.

The audit (and ``run``) call these before the first file is written, so a typo never leaves a half-made audit
directory behind. Each message names the flag (the field), the value and what is expected.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.overlap import CONTROL_OVERLAP_LIMIT, ControlOverlap, control_overlap
from lm_eval_contam.core.partitions import Partition


class BlankValue(Exception):
    """A flag given an empty (or blank) value, raised while argparse reads it (:func:`refuse_blank_values`).

    Not a ValueError: argparse turns one into its usage text; the CLI turns this into one line (:meth:`error`).
    """

    def __init__(self, flag: str, value: str) -> None:
        super().__init__(flag)
        self.flag, self.value = flag, value

    def error(self) -> ContamError:
        return ContamError(f"got {self.value!r}; expected a value (an unset shell variable gives an empty one): give "
                           "one, or leave the flag out", field=self.flag)


def refuse_blank_values(parser: argparse.ArgumentParser) -> None:
    """Make every flag of ``parser`` that takes a value refuse an empty or blank one (:class:`BlankValue`).

    ``--reference-model ""`` audited with no reference and ``--model ""`` audited the default model: an empty value
    is never a choice, and one check over every flag catches it before any type (``Path("")`` is ``.``) hides it.
    """
    for action in parser._actions:
        if action.option_strings and action.nargs != 0:
            action.type = _not_blank(action.type, max(action.option_strings, key=len))


def _not_blank(convert: Any, flag: str) -> Any:
    def checked(value: str) -> Any:
        if not value.strip():
            raise BlankValue(flag, value)
        return value if convert is None else convert(value)

    checked.__name__ = getattr(convert, "__name__", "str")  # argparse names the type in its own messages
    return checked


def name_list(text: str | None, flag: str) -> tuple[str, ...] | None:
    """The comma-separated names of ``flag``; None when the flag was not given.

    An empty value is refused: ``--tasks ""`` would otherwise fall back to the defaults (the shipped toy partitions)
    and audit something the user never asked for.
    """
    if text is None:
        return None
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not names:
        raise ContamError(f"got {text!r}; expected one or more comma-separated names", field=flag)
    return names


def check_label(label: str) -> None:
    """A model's label names its folder under ``runs/``: one plain folder name."""
    if not label or "/" in label or label.startswith("."):
        raise ContamError(f"got {label!r}; expected a plain folder name", field="--label")


def check_limit(limit: int | None) -> None:
    """lm-eval's ``--limit`` takes the first N docs of each task; 0 or less would audit nothing."""
    if limit is not None and limit < 1:
        raise ContamError(f"got {limit}; expected a whole number of docs per task >= 1 (or leave it out)",
                          field="--limit")


def check_output_dir(path: Path) -> None:
    """The audit directory is a folder (new or existing), never an existing file."""
    if path.exists() and not path.is_dir():
        raise ContamError("exists and is not a directory; expected an audit directory (new or existing)",
                          source=str(path), field="--output_path")


def check_include_paths(paths: Sequence[str]) -> None:
    """Every ``--include_path`` is an existing directory (lm-eval would skip a missing one without a word)."""
    for path in paths:
        if not Path(path).is_dir():
            raise ContamError("no such directory; expected a folder of lm-eval task YAMLs", source=str(path),
                              field="--include_path")


def check_control_flags(*, control_split: str | None, control_data: str | None, tasks: bool, data: bool,
                        no_split_control: bool = False) -> None:
    """A control belongs to ``--tasks`` or ``--data``; a registered partition's control is its own sibling split;
    ``--no-split-control`` turns off ``--tasks``' default control only."""
    given = "--control-split" if control_split is not None else "--control-data" if control_data is not None else None
    if given and not (tasks or data):
        raise ContamError("a control goes with --tasks or --data; a --partitions partition's control is its "
                          "registered sibling split, so this flag would be ignored", field=given)
    if no_split_control and not tasks:
        raise ContamError("goes with --tasks (it turns off the task's own second split as the control); without "
                          "--tasks no control is chosen by default, so this flag would be ignored",
                          field="--no-split-control")


# Run-metadata keys the project's tasks read, with the type each must have (lm-eval merges --metadata into every
# task's metadata; a wrong type would fail deep inside a task, or, for a bool, silently count as true).
METADATA_TYPES: dict[str, tuple[type, str]] = {
    "seed": (int, "a whole number"),
    "num_instances": (int, "a whole number >= 1"),
    "dcr_adjust": (bool, "true or false (JSON booleans, not strings)"),
    "dcr_per_subtask": (bool, "true or false (JSON booleans, not strings)"),
    # The methods' own settings, with the bounds their tasks check when lm-eval builds them (partitions.metadata_number):
    # checked here too, or a bad value is refused only after the DCR sheets were written under the cache home.
    "orders": (int, "a whole number from 2 to 24"),
    "context_instances": (int, "a whole number from 1 to 16"),
    "n_resamples": (int, "a whole number >= 1"),
    "reorderings": (int, "a whole number from 0 (off) to 23"),
}
METADATA_BOUNDS: dict[str, tuple[int, int | None]] = {
    "num_instances": (1, None), "orders": (2, 24), "context_instances": (1, 16), "n_resamples": (1, None),
    "reorderings": (0, 23)}
# Settings that are one of a few names. DCR's check mode (lm_eval_contam.methods.dcr.schema.CHECK_MODES): "controlled"
# pairs each generated L3/L4 item with a control, "paper" checks the item alone.
METADATA_CHOICES: dict[str, tuple[str, ...]] = {"check_mode": ("controlled", "paper")}


def check_run_metadata(metadata: Mapping[str, Any] | None) -> None:
    """The keys of ``--metadata`` the project reads have the type (and range, or one of the names) each needs."""
    for key, (kind, expected) in METADATA_TYPES.items():
        if not metadata or key not in metadata:
            continue
        value = metadata[key]
        wrong_kind = not isinstance(value, kind) or (kind is int and isinstance(value, bool))
        low, high = METADATA_BOUNDS.get(key, (None, None))
        if wrong_kind or (low is not None and value < low) or (high is not None and value > high):
            raise ContamError(f"{key!r} is {value!r}; expected {expected}", field="--metadata")
    for key, choices in METADATA_CHOICES.items():
        if metadata and key in metadata and metadata[key] not in choices:
            raise ContamError(f"{key!r} is {metadata[key]!r}; expected one of {list(choices)}", field="--metadata")


def check_tasks_named_once(loaded: Mapping[str, Mapping[str, Any]]) -> None:
    """No task is reached by two ``--tasks`` names, whatever their order and however deep: a task that a listed group
    also holds (directly or through a group nested in it), a group nested in another listed group (at any depth), or
    two groups sharing a subtask. lm-eval refuses a task twice in one run ("Duplicate task"), and only after the
    audit has written its files; this refuses it first, in one line naming both."""
    names = list(loaded)
    for name in names:  # a plain task (its own one subtask) that a listed group reaches
        for group in names:
            if group != name and list(loaded[name]) == [name] and name in loaded[group]:
                raise ContamError(f"is already a subtask of group {group!r}; give the group or the task, not both",
                                  source=name, field="--tasks")
    for name in names:  # a group nested in another listed group: the inner one is named, in either order
        for group in names:
            if group != name and name in _groups_within(loaded[group]):
                raise ContamError(f"its subtasks ({', '.join(loaded[name])}) are already subtasks of group {group!r} "
                                  "(a group within it); give one of the two groups, not both", source=name,
                                  field="--tasks")
    for index, name in enumerate(names):  # two groups that share a task (or whose nesting lm-eval does not show)
        for group in names[:index]:
            shared = [task for task in loaded[name] if task in loaded[group]]
            if shared:
                raise ContamError(f"shares subtask(s) {', '.join(shared)} with group {group!r}, and lm-eval runs a task "
                                  "once per run; give groups that share no task", source=name, field="--tasks")


def _groups_within(benchmark: Mapping[str, Any]) -> set[str]:
    """The names of the groups nested in a loaded ``--tasks`` group at any depth (its lm-eval ``Group`` tree, in
    ``evaluated``); empty for a plain task, or where the lm-eval version builds no such tree."""
    found: set[str] = set()
    stack = [child for top in getattr(benchmark, "evaluated", ()) if hasattr(top, "get_all_tasks") for child in top]
    while stack:
        node = stack.pop()
        if hasattr(node, "get_all_tasks"):  # an lm-eval Group: its children follow
            found.add(str(getattr(node, "name", "")))
            stack.extend(node)
    return found


class _TolerantLoader(yaml.SafeLoader):
    """lm-eval task YAMLs use ``!function`` tags; their values do not matter for a syntax check."""


_TolerantLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


def broken_task_yaml(name: str, include_path: Sequence[str]) -> str | None:
    """Why a YAML under ``include_path`` that defines task/group ``name`` cannot be read, or None.

    lm-eval's task index skips a YAML it cannot parse, so the task then looks unknown; this finds the YAML's own error.
    """
    needles = (f"task: {name}", f"group: {name}")
    for folder in include_path:
        for path in sorted(Path(folder).rglob("*.yaml")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.stem != name and not any(line.strip() in needles for line in text.splitlines()):
                continue
            try:
                yaml.load(text, Loader=_TolerantLoader)
            except yaml.YAMLError as error:
                return f"{path}: not valid YAML ({' '.join(str(error).split())})"
    return None


# The fewest rows a side of a two-sample test holds: the likelihood modes' permutation tests (scipy's) compare samples
# of two or more observations, so a one-row sample, or a one-row control, can never be tested.
COMPARED_ROWS_MINIMUM = 2


def too_few_rows(rows: int, what: str) -> str | None:
    """Why ``rows`` rows of ``what`` cannot be a side of the two-sample tests, or None when they can."""
    if rows >= COMPARED_ROWS_MINIMUM:
        return None
    return (f"{what} has {rows} row{'' if rows == 1 else 's'}; the tests compare samples of "
            f"{COMPARED_ROWS_MINIMUM} or more")


def check_control_overlap(audited: Sequence[str], control: Sequence[str], *, source: str,
                          field: str) -> ControlOverlap:
    """The control's texts that are also audited texts; refused at or above the limit (below it, the likelihood
    verdicts show it in their evidence)."""
    overlap = control_overlap(audited, control)
    if overlap.share >= CONTROL_OVERLAP_LIMIT:
        raise ContamError(f"{overlap.shared} of the control's {overlap.rows} rows ({overlap.share:.0%}) are audited "
                          f"rows; expected a control the model cannot have seen, sharing under "
                          f"{CONTROL_OVERLAP_LIMIT:.0%} of its rows with the audited data (the same data can never "
                          f"differ from itself)", source=source, field=field)
    return overlap


def with_control_overlap(partition: Partition) -> Partition:
    """A card partition with its control's overlap measured (:func:`check_control_overlap`), when its card does not
    already carry it (a card the audit wrote measured it when it chose the control; a card written by hand is measured
    here, once per audit). A registered partition's control is its dataset's own sibling split (the registry's): not
    read."""
    control = partition.control
    if control.kind == "none" or control.overlap is not None or partition.dataset.registered:
        return partition
    field = partition.dataset.text_field
    texts = {split: [str(row.get(field)) for row in partition.dataset.partition(split).rows()]
             for split in (partition.split, str(control.split))}
    overlap = check_control_overlap(texts[partition.split], texts[str(control.split)], source=control.source or "",
                                    field="control")
    return partition.with_control(replace(control, overlap=overlap))


def check_control_source(partition: Partition) -> None:
    """A card's file control names the file its split reads: a JSONL ``control.source`` that is another file than the
    split's ``data_files`` entry would be named in the verdicts while the scores come from the split's file. (A CSV
    source is read through its converted JSONL, so only a JSONL source is compared; an ``audit --tasks`` card's split
    reads the source's docs as the task renders them, by construction another file.)"""
    control = partition.control
    rendered = partition.dataset.benchmark_output_type is not None
    if control.kind != "file" or partition.dataset.registered or rendered or not control.source:
        return
    given = Path(control.source).expanduser()
    read = partition.dataset.partition(str(control.split)).data_file
    if given.suffix != ".jsonl" or not given.is_file() or read is None or not read.is_file():
        return
    if not given.samefile(read):
        raise ContamError(f"names {control.source} but its split {control.split!r} reads {read}: the verdicts would "
                          f"name one file and score the other; give the same file in both", source=control.source,
                          field="control.source")
