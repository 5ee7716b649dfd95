"""The verdict every method hands to the report: one decision, its test, its numbers.

Each method package decides its own verdicts (``<method>/verdicts.py``) from an
lm-eval run directory; the report only renders them. The common fields say what
was tested and how; ``evidence`` holds the method's own numbers, which the
method's renderer (``lm_eval_contam.report.methods.<family>``) shows.
:func:`collect` dispatches on each task's ``metadata.method`` to the package of
that name, so a new method adds ``<family>/verdicts.py`` and nothing here.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from lm_eval_contam.errors import ContamError
from lm_eval_contam.rundir import ModelRun, Run
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


def method_order(verdicts: Sequence[Verdict]) -> list[str]:
    """Methods in order of first appearance (each family emits its rules in its own order)."""
    return list(dict.fromkeys(verdict.method for verdict in verdicts))


# Families listed first in reports, in this order; any other family follows by name.
LEADING_FAMILIES = ("timetravel", "dcq", "dcr")


def _family_rank(family: str) -> tuple[int, str]:
    return (LEADING_FAMILIES.index(family), "") if family in LEADING_FAMILIES else (len(LEADING_FAMILIES), family)


def run_caveats(model: ModelRun) -> tuple[str, ...]:
    """What about the run itself weakens every verdict it gives."""
    if model.limit is None:
        return ()
    return (f"run with --limit {model.limit:g}: lm-eval took the first instances, not the method's sample; "
            "a smoke run, not a verdict to report",)


def model_verdicts(model: ModelRun) -> list[Verdict]:
    """Every verdict of one model: each task's ``metadata.method`` names the package that decides it."""
    families = sorted({str(model.metadata(task)["method"]) for task in (model.results.get("results") or {})
                       if model.metadata(task).get("method")}, key=_family_rank)
    found: list[Verdict] = []
    for family in families:
        try:
            module = importlib.import_module(f"lm_eval_contam.{family}.verdicts")
        except ModuleNotFoundError:
            raise ContamError(f"no verdicts for method {family!r} (lm_eval_contam/{family}/verdicts.py)",
                              field="metadata.method") from None
        found.extend(module.verdicts(model))
    caveats = run_caveats(model)
    return [replace(verdict, caveats=verdict.caveats + caveats) for verdict in found] if caveats else found


def collect(run: Run) -> list[Verdict]:
    """Every verdict of every model: by model (run order), then partition, then family and method order."""
    # sorted() is stable: within a partition the families' own order stays.
    return [verdict for model in run.models for verdict in sorted(model_verdicts(model), key=lambda v: v.partition)]
