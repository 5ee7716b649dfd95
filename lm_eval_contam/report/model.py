"""The report object: everything the renderers show, read from one run directory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.verdicts.verdict import PartitionVerdict, partition_verdicts


@dataclass(frozen=True)
class Report:
    source: Path
    models: tuple[ModelResults, ...]
    verdicts: tuple[Verdict, ...]
    audit: Mapping[str, Any] | None = None

    @property
    def partitions(self) -> list[PartitionVerdict]:
        """One verdict per model × partition, from its calibrated tests (``verdict.partition_verdicts``)."""
        return partition_verdicts(self.verdicts)
