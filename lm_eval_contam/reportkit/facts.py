"""The facts every verdict states, and the id of its test, in the words both report formats use (unescaped)."""

from __future__ import annotations

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.verdicts.verdict import rate_key


def verdict_facts(verdict: Verdict) -> list[tuple[str, str]]:
    """What a verdict states in the details, around the method's own numbers.

    A decided verdict's null hypothesis, rule and measured rates are its test's, stated once per test
    (``report.layout.test_facts``); a quantity without a decision (DCR's factor) states its own here.
    """
    own = [("null hypothesis", verdict.null), ("rule", verdict.rule)] if verdict.flagged is None else []
    return [*([("instances", str(verdict.n))] if verdict.n is not None else []), *verdict.evidence.facts(), *own,
            *(("caveat", caveat) for caveat in verdict.caveats)]


def test_anchor(verdict: Verdict) -> str:
    """The id of a verdict's test (its null, rule and measured rates) in the report's tests section."""
    return "t-" + "".join(ch if ch.isalnum() else "-" for ch in rate_key(verdict))
