"""DCR's registry entry: no per-partition tasks (a DCR sheet runs as its own group, planned from ``--dcr-sheet``); its
verdicts, report section and the post-processing that adds the DCR Factor and adjusted metrics to lm-eval's results."""

from __future__ import annotations

from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import (
    AuditedModel,
    BenchmarkAdjustment,
    ExplicitInput,
    Generation,
    MethodSpec,
    PlannedTasks,
    RenderTarget,
)
from lm_eval_contam.methods.dcr import report_section
from lm_eval_contam.methods.dcr.benchmark_sheets import adjustment_tasks
from lm_eval_contam.methods.dcr.configs import METHOD, shipped_task_configs
from lm_eval_contam.methods.dcr.hook import post_process_results
from lm_eval_contam.methods.dcr.sheet import load_sheet
from lm_eval_contam.methods.dcr.verdicts import FACTOR, verdicts


def task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return []  # a DCR sheet (--dcr-sheet, or one per --tasks benchmark) is its own task group


def render_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    return {}


def planned_sheet(sheet: str) -> PlannedTasks:
    """``--dcr-sheet``: the sheet's group, and the benchmark tasks it adjusts (run as lm-eval runs them)."""
    loaded = load_sheet(sheet)
    return PlannedTasks(tasks=(loaded.group,),
                        benchmark_tasks=tuple(dict.fromkeys(target.task for target in loaded.adjusts)))


SPEC = MethodSpec(
    name=METHOD, order=30, title="DCR",
    tests=(FACTOR,),
    task_names=task_names, render_task_configs=render_task_configs, verdicts=verdicts, section=report_section,
    shipped_task_configs=shipped_task_configs,
    generation=Generation(),  # its sheets' level tasks generate, uncapped
    benchmark_adjustment=BenchmarkAdjustment(tasks=adjustment_tasks, post_process=post_process_results),
    explicit_input=ExplicitInput(what="a DCR sheet", plan=planned_sheet),
)
