"""What the HTML and Markdown reports share, format-neutral: the evidence matrix, its cells' short lines, the
tests' statements (null, rule, measured rates: once per test) and the facts of each verdict.

Everything here returns unescaped text; each renderer escapes for its format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.formatting import p_equals, pvalue
from lm_eval_contam.core.method_verdict import DRIVES, Verdict
from lm_eval_contam.core.registry import papers_own_tests, registered_methods
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.dcr.configs import METHOD as DCR_METHOD
from lm_eval_contam.reportkit.facts import test_anchor
from lm_eval_contam.verdicts.detection_rates import (
    WHOLE_AUDIT_ITEMS,
    clean_bill,
    measured_detection,
    reordered_gap_note,
    whole_audit_false_positives,
    whole_audit_other_tests,
)
from lm_eval_contam.verdicts.verdict import (
    PARTITION_NULL,
    PARTITION_RULE,
    MeasuredRate,
    PartitionVerdict,
    measured,
    methods_without_a_call,
    order_of_tests,
    over_level,
    over_level_rate,
    rate_key,
    stated_decision,
    stated_rate,
)

NOT_MEASURED = "not measured"


def adjusted_heading() -> str:
    """The benchmark table's adjusted-score column, named after the registered method(s) that adjust benchmarks."""
    titles = ", ".join(spec.title for spec in registered_methods()  # the reordered score has its own column
                       if spec.benchmark_adjustment and not spec.benchmark_adjustment.scored_like_benchmark)
    return f"adjusted ({titles})" if titles else "adjusted"


def nothing_to_decide() -> str:
    """Said in place of the evidence when no verdict says yes or no: which tests would have (the registry's)."""
    titles = "; ".join(spec.title for spec in registered_methods() if spec.tests_in_role(DRIVES))
    return f"No partition-level test in this run ({titles}): nothing to decide."


def decided(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts that say yes or no (the summary grid); quantities such as DCR's factor show in the details."""
    return [verdict for verdict in verdicts if verdict.flagged is not None]


def grouped(verdicts: Iterable[Verdict], key: Callable[[Verdict], str]) -> dict[str, list[Verdict]]:
    """The verdicts by ``key``, in their order."""
    groups: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        groups.setdefault(key(verdict), []).append(verdict)
    return groups


def partition_groups(verdicts: Iterable[Verdict]) -> dict[str, list[Verdict]]:
    """The verdicts by partition, in their order (the details' sections of one model)."""
    return grouped(verdicts, lambda verdict: verdict.partition)


def task_groups(verdicts: Iterable[Verdict]) -> dict[str, list[Verdict]]:
    """The verdicts by task, in their order (one method section each)."""
    return grouped(verdicts, lambda verdict: verdict.task)


def cell_detail(verdict: Verdict) -> str:
    """The numbers behind one verdict, short enough for a table cell."""
    text = verdict.evidence.summary()
    return f"{text}; caveat: {len(verdict.caveats)} (see details)" if verdict.caveats else text


def rate_text(verdict: Verdict) -> str:
    """The verdict's measured false-positive rate (:func:`stated_rate`), naming its study unless it is the null
    study's, or "not measured"."""
    found = stated_rate(verdict)
    if found is None:
        return NOT_MEASURED
    return found.text() if found.study == MeasuredRate.study else f"{found.text()} in {found.study}"


def detection_text(verdict: Verdict) -> str:
    """The validation study's detection at the papers' injection strength for the verdict's method, or "not measured"."""
    found = measured_detection(verdict)
    return found.text() if found is not None else NOT_MEASURED


DETECTION = "detection measured by the validation study"
FALSE_POSITIVES = "measured false-positive rate"


def titled(verdict: Verdict) -> str:
    return f"{verdict.title} ({verdict.variant})" if verdict.variant else verdict.title


def evidence_line(verdict: Verdict, adjusted: float) -> str:
    """One calibrated test in a partition's verdict: its p, Holm-adjusted p and measured false-positive rate."""
    return (f"{titled(verdict)}: {p_equals(verdict.pvalue)}, Holm {p_equals(adjusted)}; "
            f"false-positive rate {rate_text(verdict)}")


def papers_line(verdict: Verdict) -> str:
    """One of the papers' own verdicts, unchanged: its decision and numbers."""
    return f"{titled(verdict)}: {verdict.decision} ({verdict.evidence.summary()})"


def left_out_line(audit: Mapping[str, Any] | None) -> str | None:
    """The registered methods the audit left out (its settings' ``skip_methods``), and why, so an absent test is
    never read as one that ran and found nothing."""
    skipped = list(((audit or {}).get("settings") or {}).get("skip_methods") or [])
    if not skipped:
        return None
    why = {name: "every test measured over its level; --methods runs it" for name in methods_without_a_call()}
    return "Methods left out of this audit: " + ", ".join(
        f"{name} ({why.get(name, 'by --methods or --no-likelihood')})" for name in skipped) + "."


def over_level_line(verdict: Verdict) -> str:
    """A test shown beside the partition's verdict because a study measured it over its level."""
    rate = over_level_rate(verdict)
    measured = f"{rate.text()} in {rate.study}" if rate else "not measured"
    return f"{titled(verdict)}: {stated_decision(verdict)} ({p_equals(verdict.pvalue)}); not driving: false-positive rate {measured}"


def partition_line(row: PartitionVerdict) -> str:
    """The partition verdict's own numbers: the partition-level p, the combined rule's measured rate and, under a
    "not flagged", what that clean bill is worth (the measured detection of the verdict that was computed)."""
    if row.flagged is None:
        return "no calibrated test ran"
    line = f"Holm {p_equals(row.pvalue)}; false-positive rate {rate_text(row.as_verdict())}"
    nulls = whole_audit_false_positives(row)
    if nulls is not None:  # the size nearest the items it compared, where the split study audited it whole
        line += f"; flagged {nulls.text()} of null pairs audited whole at {WHOLE_AUDIT_ITEMS} items a side (the split study)"
    line = line if row.flagged else f"{line}; {clean_bill(row)}"
    held = whole_audit_other_tests(row)
    if held is not None:  # the rates quoted at 96 were measured with another Holm set
        line += (f"; the split study's verdict held {len(held)} tests ({', '.join(held)}), this one "
                 f"{len(row.evidence)}")
    return line


def partition_statement(row: PartitionVerdict) -> str:
    """One line per model x partition, as the console prints it."""
    return f"{row.model} / {row.partition}: {row.decision.upper() if row.flagged else row.decision} ({partition_line(row)})"


@dataclass(frozen=True)
class TestColumn:
    """One test of the evidence matrix: a verdict rule in one prompt style, as the null study files its rate."""

    key: str  # verdict.rate_key: the method, and its prompt style where it has one
    verdicts: tuple[Verdict, ...]  # every model x partition's verdict of this test, in report order

    @property
    def title(self) -> str:
        return self.verdicts[0].title

    @property
    def variant(self) -> str | None:
        return self.verdicts[0].variant

    @property
    def label(self) -> str:
        return titled(self.verdicts[0])

    @property
    def anchor(self) -> str:
        return test_anchor(self.verdicts[0])


@dataclass(frozen=True)
class MatrixCell:
    """One model x partition's verdict(s) of one test (several: e.g. one per Judge B model); empty: not run."""

    verdicts: tuple[Verdict, ...]
    holm: float | None  # the Holm-adjusted p when this test drives the partition's verdict
    aside: str | None  # why it is shown beside the verdict without driving it

    @property
    def fired(self) -> bool:
        return self.holm is not None and self.holm <= ALPHA

    @property
    def shade(self) -> str:
        """The cell's colour class: by its smallest p-value (p3 <= 0.001, p2 <= 0.01, p1 <= 0.05, p0 above), by
        the decision of a rule without a p-value (hit, miss), or none (not run)."""
        if not self.verdicts:
            return "none"
        pvalues = [v.pvalue for v in self.verdicts if v.pvalue is not None]
        if not pvalues:
            return "hit" if any(v.flagged for v in self.verdicts) else "miss"
        smallest = min(pvalues)
        return "p3" if smallest <= 0.001 else "p2" if smallest <= 0.01 else "p1" if smallest <= ALPHA else "p0"

    @property
    def text(self) -> str:
        """The cell's short text: the test's p, or a rule's decision."""
        return " / ".join(pvalue(v.pvalue) if v.pvalue is not None else ("flagged" if v.flagged else "not flagged")
                          for v in self.verdicts) or "—"

    def tooltip(self) -> str:
        """The cell in a sentence (the p, Holm p and measured rate, or why it does not drive)."""
        lines = []
        for verdict in self.verdicts:
            if self.holm is not None:
                lines.append(evidence_line(verdict, self.holm))
            elif verdict.test in papers_own_tests():
                lines.append(papers_line(verdict))
            elif over_level(verdict):
                lines.append(over_level_line(verdict))
            else:
                lines.append(f"{titled(verdict)}: {stated_decision(verdict)} ({cell_detail(verdict)}); not driving: {self.aside}")
        return "\n".join(lines) or "not run"


@dataclass(frozen=True)
class MatrixRow:
    verdict: PartitionVerdict
    cells: tuple[MatrixCell, ...]  # one per test column

    @property
    def label(self) -> str:
        return f"{self.verdict.model} / {self.verdict.partition}"


def aside_reason(verdict: Verdict) -> str:
    """Why a decided verdict is shown beside its partition's verdict without driving it (``verdict.calibrated``)."""
    if verdict.test in papers_own_tests():
        return "the paper's own decision, shown unchanged"
    if verdict.pvalue is None:
        return "a rule without a p-value"
    rate = over_level_rate(verdict)
    if rate is not None:
        return f"{rate.study} measured it flagging never-seen partitions significantly more often than 0.05"
    if not measured(verdict):
        return "no measured false-positive rate (no study has measured how often it flags partitions a model never saw)"
    if " + " in verdict.task:
        return "it combines a test that is over its level; its other parts stand alone"
    return "counted through the test that combines it with others"


def test_columns(verdicts: Sequence[Verdict], rows: Sequence[PartitionVerdict]) -> list[TestColumn]:
    """The matrix's tests: those that drive some partition's verdict first, then those shown beside; each group in
    the order the methods emit them (a method's prompt styles side by side)."""
    by_key: dict[str, list[Verdict]] = {}
    for verdict in decided(verdicts):
        by_key.setdefault(rate_key(verdict), []).append(verdict)
    driving = {id(v) for row in rows for v, _ in row.evidence}
    order = order_of_tests(decided(verdicts))
    return [TestColumn(key, tuple(found)) for key, found in sorted(
        by_key.items(), key=lambda item: (not any(id(v) in driving for v in item[1]), order.index(item[1][0].test)))]


def drives(column: TestColumn, rows: Sequence[PartitionVerdict]) -> bool:
    """Whether the test drives the verdict of any partition shown."""
    driving = {id(v) for row in rows for v, _ in row.evidence}
    return any(id(v) in driving for v in column.verdicts)


def matrix(rows: Sequence[PartitionVerdict], columns: Sequence[TestColumn]) -> list[MatrixRow]:
    """One row per model x partition with a decided verdict; one cell per test."""
    found = []
    for row in rows:
        holm = {id(v): adjusted for v, adjusted in row.evidence}
        cells = []
        for column in columns:
            mine = tuple(v for v in column.verdicts if (v.model, v.partition) == (row.model, row.partition))
            driving = [holm[id(v)] for v in mine if id(v) in holm]
            cells.append(MatrixCell(mine, driving[0] if driving else None,
                                    None if driving or not mine else aside_reason(mine[0])))
        if any(cell.verdicts for cell in cells):
            found.append(MatrixRow(row, tuple(cells)))
    return found


def cell_lines(rows: Sequence[MatrixRow], columns: Sequence[TestColumn]) -> list[tuple[MatrixRow, TestColumn, Verdict,
                                                                                       MatrixCell]]:
    """The compact table: one line per verdict in the matrix, row by row."""
    return [(row, column, verdict, cell) for row in rows for column, cell in zip(columns, row.cells)
            for verdict in cell.verdicts]


def holm_text(cell: MatrixCell) -> str:
    """A compact-table line's Holm column: the adjusted p when the test drives the verdict."""
    return p_equals(cell.holm) if cell.holm is not None else "not driving"


def decision_text(verdict: Verdict, cell: MatrixCell) -> str:
    """A compact-table line's decision: a driving test flagged on its own p but not after Holm says so, so the line
    never reads "contaminated" beside a Holm p over the level."""
    if verdict.flagged and cell.holm is not None and not cell.fired:
        return f"p ≤ {ALPHA:g} alone; not after Holm"
    return stated_decision(verdict)


def _distinct(column: TestColumn, field: str) -> str:
    """A statement of the test, once; where it names the partition, once per partition."""
    texts: dict[str, list[str]] = {}
    for verdict in column.verdicts:
        texts.setdefault(getattr(verdict, field), [])
        if verdict.partition not in texts[getattr(verdict, field)]:
            texts[getattr(verdict, field)].append(verdict.partition)
    if len(texts) == 1:
        return next(iter(texts))
    return "; ".join(f"{', '.join(partitions)}: {text}" for text, partitions in texts.items())


def test_facts(column: TestColumn, rows: Sequence[PartitionVerdict]) -> list[tuple[str, str]]:
    """What the report states once per test: its role in the verdict, null, rule, the null study's false-positive
    rate and the validation study's detection at the papers' injection strength."""
    asides = list(dict.fromkeys(aside_reason(v) for v in column.verdicts
                                if id(v) not in {id(d) for row in rows for d, _ in row.evidence}))
    holm = ("drives the per-partition verdict (Holm)" if measured(column.verdicts[0]) else
            # the rule (verdicts.no_call_reason): a p <= 0.05 of a test no study measured makes no call
            "in the per-partition verdict's Holm set, never driving it: its false-positive rate is not measured, so its "
            "p ≤ 0.05 makes no call")
    role = (holm + (f"; elsewhere shown beside it: {'; '.join(asides)}" if asides else "")
            if drives(column, rows) else f"shown beside the per-partition verdict, not driving it: {'; '.join(asides)}")
    return [("role", role), ("null hypothesis", _distinct(column, "null")), ("rule", _distinct(column, "rule")),
            (FALSE_POSITIVES, rate_text(column.verdicts[0])), (DETECTION, detection_text(column.verdicts[0]))]


def partition_facts(rows: Sequence[PartitionVerdict]) -> list[tuple[str, str]]:
    """The per-partition verdict's own statement: its null, rule, measured false-positive rate and detection, for
    each kind computed here (with a control, with a reference model, with neither)."""
    kinds = {row.test: row for row in rows if row.flagged is not None}
    facts = [("null hypothesis", PARTITION_NULL), ("rule", PARTITION_RULE)]
    if not kinds:
        return facts + [(FALSE_POSITIVES, NOT_MEASURED), (DETECTION, NOT_MEASURED)]
    for row in kinds.values():
        kind = f" ({row.setting})" if len(kinds) > 1 else ""
        facts += [(FALSE_POSITIVES + kind, rate_text(row.as_verdict())), (DETECTION + kind, detection_text(row.as_verdict()))]
    return facts


def reference_description(model: ModelResults) -> str:
    """``reference: <backend and args>`` of a model audited with ``--reference-model``, else "—"."""
    return f"reference: {model.reference.model}" if model.reference is not None else "—"


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


@dataclass(frozen=True)
class BenchmarkScore:
    """A benchmark's own metric in an audit, its DCR-adjusted score and interval, and how it was scored."""

    model: str
    task: str
    metric: str  # "<metric>,<filter>" as lm-eval keys it
    score: float
    adjusted: float | None
    ci_low: float | None
    ci_high: float | None
    scored_with: str
    caveats: tuple[str, ...] = ()  # what the benchmark's items do to the score (audit.benchmark_caveats)
    # The score with each item's options reordered (<metric>_reordered: its 95 % interval), the gap original -
    # reordered (its interval) and the gap's p (reordered/stats.py); None where the run has none.
    reordered: float | None = None
    reordered_ci_low: float | None = None
    reordered_ci_high: float | None = None
    gap: float | None = None
    gap_ci_low: float | None = None
    gap_ci_high: float | None = None
    gap_p: float | None = None
    # audit --reference-model: the gap less the reference model's on the same items (its interval and p).
    vs_reference: float | None = None
    vs_reference_ci_low: float | None = None
    vs_reference_ci_high: float | None = None
    vs_reference_p: float | None = None
    vs_reference_items: float | None = None  # the items both models scored (a seeded sample of a large benchmark's)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def scoring_text(scoring: Mapping[str, Any] | None, task: str) -> str:
    """The settings that change a benchmark's score, as the audit recorded them (``benchmark_scoring``)."""
    if not scoring:
        return "not recorded"
    shots = (scoring.get("num_fewshot") or {}).get(task)
    parts = ["chat template" if scoring.get("apply_chat_template") else "no chat template",
             f"{shots}-shot" if shots is not None else "the task's fewshot",
             f"--limit {scoring['limit']}" if scoring.get("limit") else "every doc"]
    return ", ".join(parts)


def reordered_fields(row: Mapping[str, Any], metric: str, filtered: str) -> dict[str, float | None]:
    """A benchmark metric's reordered score, gap and p from its results row (``<metric>_reordered,<filter>``, …)."""
    keys = {"reordered": "", "reordered_ci_low": "_ci_low", "reordered_ci_high": "_ci_high", "gap": "_gap",
            "gap_ci_low": "_gap_ci_low", "gap_ci_high": "_gap_ci_high", "gap_p": "_p",
            "vs_reference": "_gap_vs_reference", "vs_reference_ci_low": "_gap_vs_reference_ci_low",
            "vs_reference_ci_high": "_gap_vs_reference_ci_high", "vs_reference_p": "_gap_vs_reference_p",
            "vs_reference_items": "_gap_vs_reference_items"}
    return {field: _number(row.get(f"{metric}_reordered{suffix},{filtered}")) for field, suffix in keys.items()}


def benchmark_scores(models: Sequence[Any], audit: Mapping[str, Any] | None = None) -> list[BenchmarkScore]:
    """Every task's metric that has ``<metric>_adj`` or ``<metric>_reordered`` beside it, per model: the scores the
    first screen shows (one without ``_adj`` says why it has none: ``audit``'s settings tell whether DCR ran)."""
    no_adjustment = no_adjustment_reason(audit)
    found = []
    for model in models:
        scoring = model.results.get("benchmark_scoring")
        for task, row in sorted((model.results.get("results") or {}).items()):
            derived = [(name.removesuffix(suffix), filtered) for key, value in row.items()
                       for name, _, filtered in (key.partition(","),) for suffix in ("_adj", "_reordered")
                       if name.endswith(suffix) and _number(value) is not None]
            for metric, filtered in dict.fromkeys(derived):
                score = _number(row.get(f"{metric},{filtered}"))
                if score is None:
                    continue
                adjusted = _number(row.get(f"{metric}_adj,{filtered}"))
                caveats = tuple(((scoring or {}).get("caveats") or {}).get(task) or ())
                found.append(BenchmarkScore(
                    model.label, task, f"{metric},{filtered}", score, adjusted,
                    _number(row.get(f"{metric}_adj_ci_low,{filtered}")),
                    _number(row.get(f"{metric}_adj_ci_high,{filtered}")), scoring_text(scoring, task),
                    caveats + ((no_adjustment,) if adjusted is None else ()),
                    **reordered_fields(row, metric, filtered)))
        found += unadjusted_scores(model, scoring, {score.task for score in found if score.model == model.label},
                                   no_adjustment)
    return found


NO_ADJUSTMENT = "no DCR-adjusted score: no DCR sheet could be built from it (the audit's log says why)"
DCR_LEFT_OUT = "no DCR-adjusted score: DCR was left out of this audit by --methods"


def no_adjustment_reason(audit: Mapping[str, Any] | None) -> str:
    """Why a benchmark score has no ``_adj``: the audit left DCR out (its settings' ``skip_methods``), or no sheet
    could be built from the task."""
    skipped = ((audit or {}).get("settings") or {}).get("skip_methods") or ()
    return DCR_LEFT_OUT if DCR_METHOD in skipped else NO_ADJUSTMENT


def unadjusted_scores(model: Any, scoring: Mapping[str, Any] | None, adjusted: set[str],
                      no_adjustment: str) -> list[BenchmarkScore]:
    """The audited benchmarks' own scores that have no ``<metric>_adj`` beside them (no DCR sheet could be built from
    the task, e.g. too few items): shown with a note, not dropped from the report."""
    results = model.results.get("results") or {}
    groups = model.results.get("group_subtasks") or {}  # a group's own row aggregates its subtasks: never adjusted
    audited = [*((scoring or {}).get("tasks") or ()), *((scoring or {}).get("num_fewshot") or {})]
    found = []
    for task in dict.fromkeys(audited):
        if task in adjusted or task not in results or task in groups:
            continue
        for key, value in sorted(results[task].items()):
            name, comma, filtered = key.partition(",")
            # A score is "<metric>,<filter>"; lm-eval's own entries without a filter (sample_len: the docs it
            # evaluated) are no scores.
            if (not comma or _number(value) is None or name.endswith("_stderr") or name.startswith("dcr_")
                    or "_reordered" in name):
                continue
            found.append(BenchmarkScore(
                model.label, task, key, float(value), None, None, None, scoring_text(scoring, task),
                (*(((scoring or {}).get("caveats") or {}).get(task) or ()), no_adjustment),
                **reordered_fields(results[task], name, filtered)))
    return found


def score_text(score: BenchmarkScore) -> str:
    """``1.0000``, with the benchmark's caveats beside it: ``1.0000 (caveat: every item has one choice: …)``."""
    return f"{score.score:.4f}" + "".join(f" (caveat: {caveat})" for caveat in score.caveats)


def adjusted_text(score: BenchmarkScore) -> str:
    """``0.2143 (95 % CI 0.10–0.35)``, or the point alone when the run has no interval."""
    if score.adjusted is None:
        return "—"
    if score.ci_low is None or score.ci_high is None:
        return f"{score.adjusted:.4f}"
    return f"{score.adjusted:.4f} (95 % CI {score.ci_low:.4f}–{score.ci_high:.4f})"


REORDERED_HEADING = "options reordered (95 % CI)"
GAP_HEADING = "gap: original − reordered (95 % CI), p"


def reordered_text(score: BenchmarkScore) -> str:
    """``0.5500 (95 % CI 0.5200–0.5800)``: the score with each item's options reordered; ``—`` when the run has none
    (not multiple choice, or no item's options are shown in its prompt: the log says why)."""
    if score.reordered is None:
        return "—"
    if score.reordered_ci_low is None or score.reordered_ci_high is None:
        return f"{score.reordered:.4f}"
    return f"{score.reordered:.4f} (95 % CI {score.reordered_ci_low:.4f}–{score.reordered_ci_high:.4f})"


def gap_text(score: BenchmarkScore) -> str:
    """``0.0700 (95 % CI 0.0400–0.1000), p = 0.003``: what rests on the original option order, and the exact test of
    H0 "the original order is exchangeable with the reorderings" (docs/guide/reordered.md)."""
    if score.gap is None:
        return "—"
    interval = ("" if score.gap_ci_low is None or score.gap_ci_high is None
                else f" (95 % CI {score.gap_ci_low:.4f}–{score.gap_ci_high:.4f})")
    text = f"{score.gap:.4f}{interval}" + (f", {p_equals(score.gap_p)}" if score.gap_p is not None else "")
    if score.vs_reference is None:
        return text
    versus = ("" if score.vs_reference_ci_low is None or score.vs_reference_ci_high is None
              else f" (95 % CI {score.vs_reference_ci_low:.4f}–{score.vs_reference_ci_high:.4f})")
    items = "" if score.vs_reference_items is None else f" on {score.vs_reference_items:.0f} items"
    return (text + f"; less the reference model's gap{items}: {score.vs_reference:.4f}{versus}"
            + (f", {p_equals(score.vs_reference_p)}" if score.vs_reference_p is not None else ""))


def reordered_note(scores: Sequence[BenchmarkScore]) -> str | None:
    """Under the benchmark scores, when a gap is shown: its measured false-positive and detection rates."""
    return reordered_gap_note() if any(score.gap is not None for score in scores) else None
