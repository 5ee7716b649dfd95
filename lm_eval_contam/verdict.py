"""The verdict every method hands to the report: one decision, its test, its numbers.

Each method package decides its own verdicts (``<method>/verdicts.py``) from an
lm-eval run directory; the report only renders them. The common fields say what
was tested and how; ``evidence`` holds the method's own numbers, which the
method's renderer (``lm_eval_contam.report.methods.<family>``) shows.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    @property
    def decision(self) -> str:
        if self.flagged is None:
            return "no decision"
        return "contaminated" if self.flagged else "not flagged"


def method_order(verdicts: Sequence[Verdict]) -> list[str]:
    """Methods in order of first appearance (each family emits its rules in its own order)."""
    return list(dict.fromkeys(verdict.method for verdict in verdicts))
