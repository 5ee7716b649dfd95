"""The record every method hands to the report: one decision on one partition, its test, its numbers.

Below the registry (whose verdict builders return it) and :mod:`lm_eval_contam.verdict` (which combines them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from lm_eval_contam.stats import ConfidenceInterval


class Evidence(Protocol):
    """A method's numbers behind a verdict, in words the report can print in any format."""

    def facts(self) -> list[tuple[str, str]]:
        """(name, value) lines for the verdict's details, unescaped plain text."""

    def summary(self) -> str:
        """The numbers behind the decision, short enough for a summary-table cell."""


@dataclass(frozen=True)
class Verdict:
    """One method's decision on one partition for one model.

    ``flagged`` is None for methods that quantify rather than decide (DCR's factor).
    ``family`` is the task's ``metadata.method`` (which renderer shows the evidence);
    ``method`` names the decision rule within it (e.g. ``tt_alg1``), ``title`` says it in words.
    """

    model: str
    partition: str  # as the prompts name it, e.g. "Toy News train"
    family: str
    method: str
    title: str
    task: str
    flagged: bool | None
    statistic: float | None
    pvalue: float | None
    confidence_interval: ConfidenceInterval | None
    n: int | None
    null: str  # the null hypothesis the test assumes
    rule: str  # when the method flags
    evidence: Any  # an Evidence of the method's own type
    variant: str | None = None  # e.g. the Time Travel prompt style
    caveats: tuple[str, ...] = ()  # why the run cannot fully support this verdict (e.g. lm-eval's --limit)

    @property
    def decision(self) -> str:
        if self.flagged is None:
            return "no decision"
        return "contaminated" if self.flagged else "not flagged"
