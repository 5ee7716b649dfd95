"""The records every method hands to the report: a test as the method declares it (:class:`Test`), and what it
gives on one partition (:class:`Verdict`, or :class:`NotRun` where it could not run).

Below the registry (whose ``MethodSpec.tests`` hold the tests) and :mod:`lm_eval_contam.verdicts.verdict` (which
combines the verdicts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from lm_eval_contam.core.stats import ConfidenceInterval, sign_flip_caveats


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
    # A test against a control: the items it compared (audited, control); None: not such a test, or not counted.
    sides: tuple[int, int] | None = None

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


# Whether a test may drive a partition's verdict: only a test that "drives when calibrated" does, and only where a
# study measured its false-positive rate within its level; a paper's own decision rule is shown beside it as
# published; an exploratory test's p is shown beside it and never drives.
TestRole = Literal["drives when calibrated", "the paper's own", "exploratory"]
DRIVES, PAPERS_OWN, EXPLORATORY = get_args(TestRole)
# What a test compares the partition with: a control partition (without one it is not tested), or the reference
# model, its scores u = log p(model) - log p(reference) (run only with --reference-model).
Compared = Literal["control", "reference"]


@dataclass(frozen=True, kw_only=True)
class Test:
    """One test a method runs, declared once beside the method (``MethodSpec.tests``): its verdicts are built from
    it (:meth:`verdict`, :meth:`not_run`), and the partition verdict, the report and the studies read it.

    ``null`` and ``rule`` may name ``{partition}`` and what :meth:`verdict` is given besides (e.g. ``{control}``),
    filled per verdict. ``rate_keys``: its keys in the rates files when they are not its name alone (a variant's key is
    ``<name>:<variant>``); ``rated=False`` for a test the studies do not rate.
    """

    __test__ = False  # a record, not a pytest class, where tests import it

    family: str  # the registered method it belongs to (Verdict.family)
    name: str  # Verdict.test
    title: str
    null: str  # the null hypothesis it assumes
    rule: str  # when it flags
    compares: tuple[Compared, ...]
    role: TestRole
    why: str = ""  # why a test that is not DRIVES never drives
    # Its p is an exact sign-flip test's, whose smallest value is 2**-n: too few instances to reach ALPHA is said.
    sign_flip: bool = False
    rate_keys: tuple[str, ...] = ()
    rated: bool = True

    def __post_init__(self) -> None:
        if self.role not in get_args(TestRole):
            raise ValueError(f"test {self.name!r}: role {self.role!r} is not one of {get_args(TestRole)}")
        if not set(self.compares) <= set(get_args(Compared)):
            raise ValueError(f"test {self.name!r}: compares {self.compares!r}, not among {get_args(Compared)}")

    @property
    def keys(self) -> tuple[str, ...]:
        """Its keys in the rates files."""
        return (self.rate_keys or (self.name,)) if self.rated else ()

    def verdict(self, *, model: str, partition: str, task: str, flagged: bool | None, statistic: float | None,
                pvalue: float | None, n: int | None, evidence: Any, confidence_interval: ConfidenceInterval | None = None,
                variant: str | None = None, caveats: tuple[str, ...] = (), sides: tuple[int, int] | None = None,
                **named: str) -> Verdict:
        """Its verdict on one partition, with the caveats its design gives at ``n`` (one instance; a sign-flip test
        that cannot reach ALPHA). ``named``: what else its null and rule name, as this run has it (``{control}``,
        DCR's ``{check_mode}``)."""
        designed = (sign_flip_caveats(n) if self.sign_flip else ()) + single_instance_caveats(n)
        return Verdict(model=model, partition=partition, family=self.family, test=self.name, title=self.title,
                       task=task, flagged=flagged, statistic=statistic, pvalue=pvalue,
                       confidence_interval=confidence_interval, n=n, null=self.null.format(partition=partition, **named),
                       rule=self.rule.format(partition=partition, **named), evidence=evidence, variant=variant,
                       caveats=caveats + designed, sides=sides)

    def untested(self, *, model: str, partition: str, task: str, null: str, rule: str, evidence: Any,
                 variant: str | None = None) -> Verdict:
        """Its verdict where the run gave it nothing it can test (no decision, no p): ``null`` says why none holds
        there, ``rule`` that it never flags there; ``evidence`` says what it lacked."""
        return Verdict(model=model, partition=partition, family=self.family, test=self.name, title=self.title,
                       task=task, flagged=None, statistic=None, pvalue=None, confidence_interval=None, n=None,
                       null=null, rule=rule, evidence=evidence, variant=variant)

    def not_run(self, *, task: str, partition: str, reason: str, variant: str | None = None) -> NotRun:
        """Why it could not run on a partition, for the run's results ("not tested: <why>" on its verdict)."""
        return NotRun(task=task, family=self.family, test=self.name, title=self.title, partition=partition,
                      reason=reason, variant=variant)


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
