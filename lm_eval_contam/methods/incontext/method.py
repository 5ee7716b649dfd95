"""The in-context test's registry entry: every partition, log-likelihoods only, no control."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.core.method_verdict import NotRun
from lm_eval_contam.core.registry import MethodSpec, OneScoredTask
from lm_eval_contam.kit.instances import sample_indices
from lm_eval_contam.lmeval.context_window import MODEL_WINDOW_KEY, ModelWindow
from lm_eval_contam.methods.incontext import report_section
from lm_eval_contam.methods.incontext.configs import METHOD, render_task_config, shipped_task_configs, task_name
from lm_eval_contam.methods.incontext.docs import MAX_DESIGN_EFFECT, swap_clustering
from lm_eval_contam.methods.incontext.task import InContextSettings, build_docs
from lm_eval_contam.methods.incontext.verdicts import TEST, verdicts


def why_not_run(settings: InContextSettings, rows: Sequence[Mapping[str, Any]],
                window: ModelWindow | None) -> str | None:
    """Why the test cannot run on the rows: fewer instances than a context plus the scored one, none with a twin (no
    replaceable word), twins repeating the same swaps across items (its null cannot hold: see
    ``docs.MAX_DESIGN_EFFECT``), or an instance or twin longer than the audited model's window (lm-eval cannot score a
    continuation it would cut); None when it can."""
    sampled = len(sample_indices(settings.partition, rows, settings.num_instances, settings.seed))
    if sampled <= settings.context_instances:
        return (f"{sampled} instance(s); a context of {settings.context_instances} others needs at least "
                f"{settings.context_instances + 1}")
    docs = build_docs(settings, rows)
    if not docs:
        return "no instance has a perturbed twin (no word with a WordNet synonym)"
    swaps = swap_clustering(docs)
    if swaps.design_effect > MAX_DESIGN_EFFECT:
        return (f"the twins repeat their swaps across items ({swaps.word!r} is swapped in {swaps.twins} of "
                f"{swaps.docs} twins; design effect {swaps.design_effect:.1f} > {MAX_DESIGN_EFFECT:g}), as in "
                f"templated items: one swap's effect counts in many differences, so they are not symmetric about 0 "
                f"under H0")
    if window is None:
        return None
    return window.over((doc["row_index"], doc["context"], text) for doc in docs for text in (doc["text"], doc["twin"]))


def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
    settings = InContextSettings.from_metadata(config.get("metadata"), str(config.get("test_split")))
    reason = why_not_run(settings, settings.partition.rows(), config.get(MODEL_WINDOW_KEY))
    if reason is None:
        return None
    return TEST.not_run(task=task, partition=settings.partition.label, reason=reason)


TASKS = OneScoredTask(METHOD, task_name, render_task_config)

SPEC = MethodSpec(
    name=METHOD, order=44, title="In-context test (ours, after CoDeC, NVIDIA 2025)",
    task_names=TASKS.task_names, render_task_configs=TASKS.render_task_configs, verdicts=verdicts,
    section=report_section.SECTION,
    shipped_task_configs=shipped_task_configs,
    tests=(TEST,),
    evidence_kind="in-context",
    cannot_run=cannot_run,
)
