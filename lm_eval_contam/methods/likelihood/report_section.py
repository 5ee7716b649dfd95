"""The likelihood modes' details (ours): each verdict's scores on the partition and its reference, and the test."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.reportkit import htmlkit, mdkit
from lm_eval_contam.reportkit.htmlkit import e
from lm_eval_contam.reportkit.mdkit import md

MODE_NOTES = {
    "control": ("Mean log-likelihood of the instance texts (per byte, and per zlib-compressed byte) on the partition "
                "vs a control partition of the same distribution; a model that saw neither scores both alike."),
    "lift": ("Log-likelihood of each instance's true second piece after Time Travel's guided prompt minus after the "
             "general prompt, vs the same contrast on another instance's second piece: what the dataset name tells "
             "about style lifts both, memory only the instance's own."),
    "options": ("Log-likelihood of the original instance minus the mean of its four word-level perturbations (DCQ's "
                "options), vs the same gap on the control partition: unseen originals are already more natural than "
                "their perturbations; memorised ones stand out further."),
}


def _heading(verdict: Verdict) -> str:
    return f"Likelihood, {verdict.variant or 'control'} mode (ours)"


def html(verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
    first = verdicts[0]
    return (f'<h5 id="{anchor(first)}">{e(_heading(first))} — <code>{e(first.task)}</code></h5>'
            + htmlkit.facts_table(verdicts)
            + f'<p class="note">{e(MODE_NOTES.get(first.variant or "control", ""))}</p>')


def markdown(verdicts: Sequence[Verdict]) -> list[str]:
    first = verdicts[0]
    return [f"##### {md(_heading(first))} — {md(first.task)}", "", *mdkit.facts_table(verdicts),
            md(MODE_NOTES.get(first.variant or "control", "")), ""]
