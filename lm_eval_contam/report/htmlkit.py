"""HTML building blocks shared by the page and the method renderers; every text goes through :func:`e`."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from lm_eval_contam.report.layout import verdict_facts
from lm_eval_contam.verdict import Verdict


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, raw: bool = False) -> str:
    """A table; cells are escaped unless ``raw`` (then the caller built them from escaped parts)."""
    head = "".join(f"<th>{e(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell if raw else e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def badge(verdict: Verdict) -> str:
    kind = "none" if verdict.flagged is None else "flag" if verdict.flagged else "ok"
    return f'<span class="badge {kind}">{e(verdict.decision)}</span>'


def anchor(verdict: Verdict) -> str:
    return "d-" + "".join(ch if ch.isalnum() else "-" for ch in f"{verdict.model}-{verdict.task}")


def facts_table(verdicts: Sequence[Verdict]) -> str:
    rows = [(e(v.title), badge(v), "<br>".join(f"{e(name)}: <b>{e(value)}</b>" for name, value in verdict_facts(v)))
            for v in verdicts]
    return table(("method", "verdict", "numbers"), rows, raw=True)
