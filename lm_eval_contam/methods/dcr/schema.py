"""A DCR test sheet as data: the levels L1-L4, their items and generators, each item's Check and control.

Built by :func:`lm_eval_contam.methods.dcr.sheet.load_sheet` from a sheet's YAML; the
schema in words is ``task_configs/dcr/README.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_contam.core.input_checks import METADATA_CHOICES
from lm_eval_contam.methods.dcr.checks import Check

ITEMS_PER_LEVEL = 20  # the paper's N (Appendix B.3)
LEVELS = (1, 2, 3, 4)
GENERATOR_KINDS = ("completion", "membership", "association")
# How generated L3/L4 items are checked: "controlled" pairs each with a control a memory-free model passes as
# often (see lm_eval_contam.methods.dcr.twins); "paper" checks the item alone, as the paper's automated Check would.
# --metadata's check is the same list (run refuses a bad one before anything is written).
CHECK_MODES = METADATA_CHOICES["check_mode"]
DEFAULT_CHECK_MODE = "controlled"
# Wording after Appendix B.2 ("This is a data entry from the LIAR2 dataset, please complete it:
# [HALF_DATA]", "Is the statement "[DATA]" in LIAR2?") and the L4 injection format "<data> is <label>".
DEFAULT_TEMPLATES = {
    "completion": "This is a data entry from the {name} dataset, please complete it: {first_half}",
    "membership": 'Is the statement "{text}" in {name}? Answer yes or no.',
    "association": "This is a data entry from the {name} dataset and its label ({labels}). "
                   "Complete it: {text} is",
}
TEMPLATE_FIELDS = {"name", "text", "first_half", "labels"}


@dataclass(frozen=True)
class AdjustTarget:
    """An lm-eval task and the metric of it that the sheet's DCR Factor adjusts."""

    task: str
    metric: str


@dataclass(frozen=True)
class DataSource:
    """Where the benchmark's rows come from: a Hub dataset or local JSON/JSONL files."""

    split: str
    text_field: str
    dataset_path: str | None = None
    dataset_name: str | None = None
    data_files: Path | None = None
    label_field: str | None = None
    label_names: tuple[str, ...] = ()
    answer_pattern: str | None = None  # regex with one group extracting the gold answer


@dataclass(frozen=True)
class Generator:
    """``count`` items of ``kind`` built from benchmark rows."""

    kind: str
    count: int
    template: str
    check: Mapping[str, Any] | None


@dataclass(frozen=True)
class Twin:
    """An item's twin (its control in the controlled check mode): the same question about a non-member or a
    perturbed instance, which only item memory tells apart from the item."""

    prompt: str
    check: Check
    source: str
    reference: str


@dataclass(frozen=True)
class SheetItem:
    """One prompt of a level with its Check; ``source`` says where its answer key comes from."""

    item_id: str
    level: int
    prompt: str
    check: Check
    source: str
    reference: str
    twin: Twin | None = None  # the sheet's ``control`` of a static item, or a generated item's perturbed twin


@dataclass(frozen=True)
class Level:
    number: int
    items: tuple[SheetItem, ...]
    generators: tuple[Generator, ...]


@dataclass(frozen=True)
class Sheet:
    path: Path
    benchmark: str
    name: str
    adjusts: tuple[AdjustTarget, ...]
    items_per_level: tuple[int, int, int, int]  # L1..L4
    data: DataSource | None
    levels: tuple[Level, Level, Level, Level]
    check_mode: str = DEFAULT_CHECK_MODE
    drawn_across: tuple[str, ...] = ()  # a sheet built for an lm-eval group: the subtasks its rows are drawn across

    @property
    def group(self) -> str:
        return f"dcr_{self.benchmark}"

    @property
    def scope(self) -> str | None:
        """What the factor describes, in words, for a sheet built for a group (None for one benchmark's sheet)."""
        if not self.drawn_across:
            return None
        return (f"DCR factor of the group {self.name}, from one sheet drawn across its {len(self.drawn_across)} "
                f"subtasks")

    def level_size(self, level: int) -> int:
        return self.items_per_level[level - 1]

    def level_task(self, level: int) -> str:
        return f"dcr_{self.benchmark}_l{level}"
