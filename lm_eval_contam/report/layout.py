"""What the HTML and Markdown reports share: the summary grid and plain-text wording of numbers.

Everything here returns unescaped text; each renderer escapes for its format.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lm_eval_contam.intervals import ConfidenceInterval
from lm_eval_contam.report.summary import METHODS, Method, Partition, Verdict

MATCH_NAMES = {"exact": "exact", "near_exact": "near-exact", "inexact": "inexact"}


@dataclass(frozen=True)
class SummaryRow:
    """One model × partition line of the summary table: that partition's verdicts per method."""

    model: str
    partition: Partition
    cells: dict[Method, tuple[Verdict, ...]]

    @property
    def flagged(self) -> bool:
        return any(v.flagged for cell in self.cells.values() for v in cell)


def number(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"


def pvalue(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def p_equals(value: float | None) -> str:
    """``p = 0.0123`` or ``p < 0.0001``."""
    text = pvalue(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def interval(ci: ConfidenceInterval | None) -> str:
    if ci is None:
        return "n/a"
    return f"[{number(ci.low)}, {number(ci.high)}] ({ci.confidence_level:.0%} CI)"


def methods_present(verdicts: Iterable[Verdict]) -> list[Method]:
    seen = {v.method for v in verdicts}
    return [method for method in METHODS if method in seen]


def summary_rows(verdicts: Sequence[Verdict]) -> list[SummaryRow]:
    """Rows in the verdicts' order (model, then partition)."""
    rows: dict[tuple[str, Partition], SummaryRow] = {}
    for verdict in verdicts:
        row = rows.setdefault((verdict.model, verdict.partition), SummaryRow(verdict.model, verdict.partition, {}))
        row.cells[verdict.method] = (*row.cells.get(verdict.method, ()), verdict)
    return list(rows.values())


def decision(verdict: Verdict) -> str:
    return "contaminated" if verdict.flagged else "not flagged"


def cell_detail(verdict: Verdict) -> str:
    """The numbers behind one verdict, short enough for a table cell."""
    if verdict.method == "tt_alg1":
        text = p_equals(verdict.pvalue)
    elif verdict.method in ("tt_alg2_judge_a", "tt_judge_b"):
        text = f"{verdict.exact_matches} exact, {verdict.near_exact_matches} near-exact"
    else:
        text = f"{p_equals(verdict.pvalue)}, max {number(verdict.dcq_max)}"
    return f"{text} ({verdict.variant})" if verdict.variant and verdict.variant != "instruct" else text


def verdict_facts(verdict: Verdict) -> list[tuple[str, str]]:
    """(name, value) lines describing one verdict in the details section."""
    facts = [("task", verdict.task), ("verdict", decision(verdict))]
    if verdict.n_instances is not None:
        facts.append(("instances", str(verdict.n_instances)))
    if verdict.method == "tt_alg1":
        facts += [("mean ROUGE-L guided", number(verdict.rouge_guided)),
                  ("mean ROUGE-L general", number(verdict.rouge_general)),
                  ("bootstrap p-value (guided > general)", pvalue(verdict.pvalue)),
                  ("rule", "flagged when p <= 0.05 (the task's alg1_contaminated)")]
    elif verdict.method in ("tt_alg2_judge_a", "tt_judge_b"):
        facts += [("exact matches", str(verdict.exact_matches)),
                  ("near-exact matches", str(verdict.near_exact_matches)),
                  ("rule", "flagged at >= 1 exact or >= 2 near-exact matches")]
        if verdict.judge_model:
            facts.append(("judge model", verdict.judge_model))
    else:
        facts += [("dcq_max (upper bound)", f"{number(verdict.dcq_max)} {interval(verdict.dcq_max_ci)}"),
                  ("dcq_min (lower bound)", number(verdict.dcq_min)),
                  ("Cohen's kappa (BCQ positions)", number(verdict.dcq_kappa)),
                  ("McNemar p-value (BCQ hits vs BDQ picks)", pvalue(verdict.pvalue)),
                  ("unparseable replies", number(verdict.unparseable)),
                  ("rule", "flagged when p < 0.05")]
    return facts


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
