"""The one evaluation path: a model over task names through lm-eval, under a request cache, and the run saved.

The audit (``audit.run_model``, its reference model's run too) and the null and validation studies
(``nullstudy.study.evaluate``) all run models through :func:`evaluate` and :func:`save_run`, so what the studies
calibrate is what the audit runs: the same task objects (the generation cap on the methods that ask for it), the
same request cache, the same post-processing (``harness.post_process``) and lm-eval's own output layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.harness import generation_capped_tasks
from lm_eval_contam.lmeval.benchmark_docs import LoadedBenchmark
from lm_eval_contam.lmeval.generation import ModelSpec, default_device


def evaluation_tasks(tasks: Sequence[str], task_manager: Any, max_gen_toks: int | None,
                     benchmarks: Mapping[str, LoadedBenchmark] | None = None) -> list[Any]:
    """What ``simple_evaluate`` runs for the task names: the ``--tasks`` benchmarks as the audit built them (not built
    again), and the tasks of methods that cap their generation built with the cap (``harness.generation_capped_tasks``).
    """
    benchmarks = benchmarks or {}
    capped = generation_capped_tasks(task_manager, list(tasks), max_gen_toks) if max_gen_toks is not None else {}
    return [built for task in tasks
            for built in (benchmarks[task].evaluated if task in benchmarks else (capped.get(task, task),))]


def tracker(run_dir: Path) -> Any:
    """lm-eval's EvaluationTracker writing under ``run_dir`` (lm-eval's layout: ``<model>/results_*.json``)."""
    from lm_eval.loggers import EvaluationTracker

    return EvaluationTracker(output_path=str(run_dir))


def evaluate(model: ModelSpec, tasks: Sequence[str], task_manager: Any, *, cache: Path, chat_template: bool,
             max_gen_toks: int | None = None, batch_size: int | str = 1, device: str | None = None,
             limit: int | None = None, benchmarks: Mapping[str, LoadedBenchmark] | None = None,
             evaluation_tracker: Any = None, samples: Mapping[str, list[int]] | None = None) -> dict[str, Any] | None:
    """One ``simple_evaluate`` call of ``model`` over ``tasks`` (:func:`evaluation_tasks`), samples logged, every
    request answered from or written to lm-eval's request cache ``cache`` (an interrupted run resumes from it);
    None on a non-zero rank under accelerate. ``samples``: lm-eval's choice of docs by task name (not with
    ``limit``)."""
    import lm_eval

    return lm_eval.simple_evaluate(
        model=model.backend,
        model_args=model.model_args,
        tasks=evaluation_tasks(tasks, task_manager, max_gen_toks, benchmarks),
        batch_size=batch_size,
        device=device or default_device(),
        use_cache=str(cache),
        log_samples=True,
        evaluation_tracker=evaluation_tracker,
        apply_chat_template=chat_template,
        task_manager=task_manager,
        limit=limit,
        samples=dict(samples) if samples else None,
    )


def save_run(results: dict[str, Any], evaluation_tracker: Any) -> None:
    """Write a run's results and each task's samples as lm-eval writes them (the samples leave ``results``)."""
    samples = results.pop("samples")
    evaluation_tracker.save_results_aggregated(results=results, samples=samples)
    for task_name in results["configs"]:
        evaluation_tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
