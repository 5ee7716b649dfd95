"""HTML building blocks shared by the page and the method renderers; every text goes through :func:`e`."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.text import visible_bidi_controls
from lm_eval_contam.reportkit.facts import test_anchor, verdict_facts
from lm_eval_contam.verdicts.verdict import no_call_reason, stated_decision


def e(value: object) -> str:
    return html.escape(visible_bidi_controls(str(value)), quote=True)


def scroll(content: str, *, tall: bool = False) -> str:
    """A box that scrolls its content sideways (and, ``tall``, downwards) instead of widening the page."""
    return f'<div class="scroll{" tall" if tall else ""}">{content}</div>'


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, raw: bool = False) -> str:
    """A table in its own scroll box; cells are escaped unless ``raw`` (then the caller built them from escaped
    parts)."""
    head = "".join(f"<th>{e(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell if raw else e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return scroll(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def badge(verdict: Verdict) -> str:
    kind = ("none" if verdict.flagged is None or no_call_reason(verdict) else "flag" if verdict.flagged else "ok")
    return f'<span class="badge {kind}">{e(stated_decision(verdict))}</span>'


def anchor(verdict: Verdict) -> str:
    return "d-" + "".join(ch if ch.isalnum() else "-" for ch in f"{verdict.model}-{verdict.task}")


def facts_table(verdicts: Sequence[Verdict]) -> str:
    """Each verdict's numbers; a decided verdict's title links to its test's null, rule and measured rates."""
    rows = [(f'<a href="#{test_anchor(v)}">{e(v.title)}</a>' if v.flagged is not None else e(v.title), badge(v),
             "<br>".join(f"{e(name)}: <b>{e(value)}</b>" for name, value in verdict_facts(v))) for v in verdicts]
    return table(("method", "verdict", "numbers"), rows, raw=True)
