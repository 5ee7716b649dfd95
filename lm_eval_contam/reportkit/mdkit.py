"""Markdown building blocks shared by the page and the method renderers.

Data and model text pass through :func:`md`: no HTML gets through (``<``, ``>``
and ``&`` become entities), table pipes and newlines cannot break a table, and a bidi control is written out
(``[U+202E]``) rather than reordering the text after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.text import visible_bidi_controls
from lm_eval_contam.reportkit.facts import verdict_facts
from lm_eval_contam.verdicts.verdict import no_call_reason, stated_decision


def md(value: object) -> str:
    """Text safe inside a Markdown table cell."""
    text = visible_bidi_controls(str(value)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    return " ⏎ ".join(line for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Lines of a Markdown table; cells must already be escaped with :func:`md`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def decision(verdict: Verdict) -> str:
    text = md(stated_decision(verdict))
    return f"**{text}**" if verdict.flagged and no_call_reason(verdict) is None else text


def facts_table(verdicts: Sequence[Verdict]) -> list[str]:
    rows = [[md(v.title), decision(v), "; ".join(f"{md(name)}: {md(value)}" for name, value in verdict_facts(v))]
            for v in verdicts]
    return table(["method", "verdict", "numbers"], rows)
