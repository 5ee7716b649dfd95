"""The record every method hands to the report: one decision on one partition, its test, its numbers.

Below the registry (whose verdict builders return it) and :mod:`lm_eval_contam.verdicts.verdict` (which combines them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from lm_eval_contam.core.stats import ConfidenceInterval


class Evidence(Protocol):
    """A method's numbers behind a verdict, in words the report can print in any format."""

    def facts(self) -> list[tuple[str, str]]:
        """(name, value) lines for the verdict's details, unescaped plain text."""

    def summary(self) -> str:
        """The numbers behind the decision, short enough for a summary-table cell."""


@dataclass(frozen=True)
class Verdict:
    """One test's decision on one partition for one model.

    ``flagged`` is None for tests that quantify rather than decide (DCR's factor).
    ``family`` is the registered method: the task's ``metadata.method`` (which renderer shows the evidence);
    ``test`` names the test (the decision rule) within it (e.g. ``tt_alg1``), ``title`` says it in words.
    """

    model: str
    partition: str  # as the prompts name it, e.g. "Toy News train"
    family: str
    test: str
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
    # The shape of its partition's items as the studies file rates ("multiple choice" or "free text"; None: not
    # known), so a test measured over its level on one shape drives no verdict on that shape.
    shape: str | None = None

    @property
    def decision(self) -> str:
        if self.flagged is None:
            return "no decision"
        return "contaminated" if self.flagged else "not flagged"


@dataclass(frozen=True)
class NotRun:
    """A task the audit plan left out because its method cannot run on the partition, and why.

    Written to the run's results (``registry.NOT_RUN_KEY``) so the verdicts say "not tested: <why>".
    """

    task: str
    family: str
    test: str  # the decision rule the task would have given (Verdict.test)
    title: str
    partition: str  # as the prompts name it (Partition.label)
    reason: str
    variant: str | None = None  # Verdict.variant (e.g. the likelihood mode)

    def record(self) -> dict[str, Any]:
        """As the results JSON keeps it (its test under the key ``method``, as earlier runs wrote it)."""
        return {"task": self.task, "family": self.family, "method": self.test, "title": self.title,
                "partition": self.partition, "reason": self.reason, "variant": self.variant}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "NotRun":
        named = {name: str(record[name]) for name in ("task", "family", "title", "partition", "reason")}
        return cls(**named, test=str(record["method"]), variant=record.get("variant"))


@dataclass(frozen=True)
class NotRunEvidence:
    """Why a method gave no verdict on a partition: it could not run there."""

    reason: str

    def facts(self) -> list[tuple[str, str]]:
        return [("result", self.summary())]

    def summary(self) -> str:
        return f"not tested: {self.reason}"


def not_run_verdict(model: str, not_run: NotRun) -> Verdict:
    """The verdict of a task the audit left out: no decision, no p-value, the reason as its evidence."""
    return Verdict(model=model, partition=not_run.partition, family=not_run.family, test=not_run.test,
                   title=not_run.title, task=not_run.task, flagged=None, statistic=None, pvalue=None,
                   confidence_interval=None, n=None, null="none: the method could not run on this partition",
                   rule="never flags when it cannot run", evidence=NotRunEvidence(not_run.reason),
                   variant=not_run.variant)


def single_instance_caveats(n: int | None) -> tuple[str, ...]:
    """One instance leaves nothing to compare: say so on the verdict rather than a confident "not flagged"."""
    return ("no test can flag at n = 1",) if n == 1 else ()


def sample_size_caveats(asked: int, got: int | None) -> tuple[str, ...]:
    """A sample smaller than asked for (the partition is smaller): said on the verdict, never used silently."""
    if got is None or got >= asked:
        return ()
    return (f"asked for {asked} instances, the partition has {got}",)
