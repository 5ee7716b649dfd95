"""What the HTML and Markdown reports share, format-neutral: the summary grid and the facts every verdict states.

Everything here returns unescaped text; each renderer escapes for its format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_contam.formatting import p_equals
from lm_eval_contam.verdict import PartitionVerdict, Verdict, evidence_kind, measured_rate, method_order

NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class SummaryRow:
    """One model × partition line of the summary table: that partition's verdicts per method."""

    model: str
    partition: str
    cells: dict[str, tuple[Verdict, ...]]

    @property
    def flagged(self) -> bool:
        return any(v.flagged for cell in self.cells.values() for v in cell)


def decided(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts that say yes or no (the summary grid); quantities such as DCR's factor show in the details."""
    return [verdict for verdict in verdicts if verdict.flagged is not None]


def summary_columns(verdicts: Sequence[Verdict]) -> list[tuple[str, str]]:
    """(method, title) per summary column, in the order the methods emit them."""
    titles = {verdict.method: verdict.title for verdict in verdicts}
    return [(method, titles[method]) for method in method_order(decided(verdicts))]


def summary_rows(verdicts: Sequence[Verdict]) -> list[SummaryRow]:
    """Rows in the verdicts' order (model, then partition)."""
    rows: dict[tuple[str, str], SummaryRow] = {}
    for verdict in verdicts:
        row = rows.setdefault((verdict.model, verdict.partition), SummaryRow(verdict.model, verdict.partition, {}))
        row.cells[verdict.method] = (*row.cells.get(verdict.method, ()), verdict)
    return list(rows.values())


def cell_detail(verdict: Verdict) -> str:
    """The numbers behind one verdict, short enough for a table cell."""
    text = verdict.evidence.summary()
    text = f"{text} ({verdict.variant})" if verdict.variant and verdict.variant != "instruct" else text
    return f"{text}; caveat: {len(verdict.caveats)} (see details)" if verdict.caveats else text


def rate_text(verdict: Verdict) -> str:
    """The null study's measured false-positive rate of the verdict's method, or "not measured"."""
    found = measured_rate(verdict)
    return found.text() if found is not None else NOT_MEASURED


def verdict_facts(verdict: Verdict) -> list[tuple[str, str]]:
    """What every verdict states, around the method's own numbers."""
    return [*([("instances", str(verdict.n))] if verdict.n is not None else []), *verdict.evidence.facts(),
            ("null hypothesis", verdict.null), ("rule", verdict.rule),
            # A quantity without a decision (DCR's factor) has no false-positive rate to measure.
            *([("false-positive rate measured by the null study", rate_text(verdict))]
              if verdict.flagged is not None else []),
            *(("caveat", caveat) for caveat in verdict.caveats)]


def evidence_kinds(partitions: Sequence[PartitionVerdict]) -> list[str]:
    """The evidence kinds (generation, quiz, likelihood, ...) present, in family order of first appearance."""
    return list(dict.fromkeys(evidence_kind(v.family) for row in partitions for v, _ in row.evidence))


def titled(verdict: Verdict) -> str:
    return f"{verdict.title} ({verdict.variant})" if verdict.variant else verdict.title


def evidence_line(verdict: Verdict, adjusted: float) -> str:
    """One calibrated test in a partition's verdict: its p, Holm-adjusted p and measured false-positive rate."""
    return (f"{titled(verdict)}: {p_equals(verdict.pvalue)}, Holm {p_equals(adjusted)}; "
            f"false-positive rate {rate_text(verdict)}")


def papers_line(verdict: Verdict) -> str:
    """One of the papers' own verdicts, unchanged: its decision and numbers."""
    return f"{titled(verdict)}: {verdict.decision} ({verdict.evidence.summary()})"


def over_level_line(verdict: Verdict) -> str:
    """A test shown beside the partition's verdict because the null study measured it over its level."""
    return (f"{titled(verdict)}: {verdict.decision} ({p_equals(verdict.pvalue)}); not driving: false-positive rate "
            f"{rate_text(verdict)} in the null study")


def partition_line(row: PartitionVerdict) -> str:
    """The partition verdict's own numbers: the partition-level p and the combined rule's measured rate."""
    if row.flagged is None:
        return "no calibrated test ran"
    return f"Holm {p_equals(row.pvalue)}; false-positive rate {rate_text(row.as_verdict())}"


def model_description(injection: dict | None) -> str:
    """One line about what was injected into a model and how strongly (audit manifests), or ''."""
    if not injection:
        return ""
    injected = injection.get("injected") or {}
    sources = []
    for source in injected.get("sources") or []:
        if "partition" in source:
            rows = source.get("rows")
            count = f", {len(rows)} rows" if isinstance(rows, list) else ""
            sources.append(f"{source['partition']} ({source.get('format', '?')} format{count})")
        elif "text_file" in source:
            sources.append(f"text from {source['text_file']}")
    if not sources:
        sources.append(f"{injected.get('num_texts', '?')} texts")
    settings = injection.get("settings") or {}
    share = (injection.get("corpus") or {}).get("contaminant_share")
    strength = ", ".join(part for part in (
        f"{settings['epochs']} epochs" if "epochs" in settings else "",
        f"lr {settings['learning_rate']:g}" if "learning_rate" in settings else "",
        f"contaminant share {share:.0%}" if isinstance(share, (int, float)) else "",
    ) if part)
    return "injected: " + "; ".join(sources) + (f" — {strength}" if strength else "")
