"""The lm-eval glue that turns a loaded lm-eval task into its rendered evaluation docs.

:func:`load_tasks` loads tasks and groups by name (registered, a group such as ``mmlu``, or the user's
YAML under an include path) into ``{group: LoadedBenchmark}`` (``{subtask: Task}``, with what the evaluation runs and
every subtask's docs rendered); a plain task is its own group of one. Each name is built once and each doc rendered
once per audit: the partitions, the DCR sheets and the evaluation all take what it loaded.
:func:`benchmark_docs` renders each evaluation doc with the task's own methods (``doc_to_text``,
``doc_to_target``, ``doc_to_choice``: Jinja templates, column names and Python functions alike) into a
:class:`BenchmarkDoc`. The evaluation docs are lm-eval's: the test split, else the validation split,
after the task's ``process_docs``.

How each output type becomes text and target:

- ``multiple_choice``: text = ``doc_to_text``; target = the gold choice's text (``doc_to_target`` may be an
  index into ``doc_to_choice`` or the choice string itself). Tasks with one context per choice (lm-eval's
  "multiple input", e.g. winogrande: ``doc_to_text`` is the gold index) give text = the gold context and
  target = ``doc_to_target``, the continuation every context shares.
- ``generate_until`` and ``loglikelihood``: text = ``doc_to_text``, target = ``doc_to_target`` as text.
- ``loglikelihood_rolling``: the scored text is ``doc_to_target`` (lm-eval scores it whole): text = it,
  target = "".

A target given as a list (several gold answers) keeps its first. A doc whose text renders empty, a task
without evaluation docs, or any other output type is a :class:`ContamError` naming the task.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import OUTPUT_TYPES
from lm_eval_contam.lmeval.lm_eval_compat import built_for_evaluation, built_tasks, selected_task_configs, task_index


@dataclass(frozen=True)
class BenchmarkDoc:
    """One evaluation doc of an lm-eval task, rendered as the model sees it."""

    task: str  # lm-eval task name (a subtask for groups)
    index: int  # position in the task's evaluation docs
    text: str  # the instance text (question/context) as doc_to_text renders it
    target: str  # the gold answer as text
    choices: tuple[str, ...]  # doc_to_choice(doc) for multiple choice, () otherwise
    output_type: str  # lm-eval's output_type


def _first_line(error: BaseException) -> str:
    text = str(error.args[0] if isinstance(error, KeyError) and error.args else error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__


def _why(error: BaseException) -> str:
    """Why lm-eval could not build a task, in words."""
    if isinstance(error, IndexError) and "choice[0]" in (traceback.extract_tb(error.__traceback__)[-1].line or ""):
        # lm-eval's build reads the first character of each choice of the first doc (its delimiter check)
        return "a choice of its first doc is empty (lm-eval cannot score an empty continuation)"
    if isinstance(error, (StopIteration, IndexError)):
        return "its evaluation split has no docs"
    if isinstance(error, ValueError) and "must have valid or test docs" in str(error):
        return "it has no test or validation split (no docs to evaluate)"
    return f"lm-eval cannot load it ({type(error).__name__}: {_first_line(error)})"


@dataclass(frozen=True, eq=False)
class LoadedBenchmark(Mapping[str, Any]):
    """One ``--tasks`` name as lm-eval built it: a mapping of its (sub)tasks' names to their Tasks (a plain task is its
    own one subtask), with what the evaluation runs in the name's place and every subtask's docs, rendered once."""

    name: str
    evaluated: tuple[Any, ...]  # the built Task, or the Group holding the subtasks (a tag: its Tasks)
    tasks: Mapping[str, Any]  # subtask -> Task, in lm-eval's order
    docs: Mapping[str, tuple[BenchmarkDoc, ...]]  # subtask -> its evaluation docs, rendered

    def __getitem__(self, subtask: str) -> Any:
        return self.tasks[subtask]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)


def _load_one(name: str, task_manager: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """lm-eval's build of one name (:func:`~lm_eval_contam.lmeval.lm_eval_compat.built_for_evaluation`); a failure names
    the task (for a group: the failing subtask)."""
    if name not in task_index(task_manager):
        raise ContamError("lm-eval does not know this task or group (check the name and --include_path)",
                          source=name, field="--tasks")
    try:
        return built_for_evaluation(task_manager, name)
    except Exception as error:  # noqa: BLE001 - lm-eval raises anything from datasets, Jinja or the task's code
        # The plain tasks the group (or tag) selects, from lm-eval's index: only a failed build builds them one by one.
        leaves = [leaf for leaf in sorted(selected_task_configs(task_manager, name)) if leaf != name]
        for leaf in leaves:
            try:
                built_tasks(task_manager, [leaf])
            except Exception as leaf_error:  # noqa: BLE001
                raise ContamError(f"subtask {leaf!r} of group {name!r}: {_why(leaf_error)}", source=name,
                                  field="--tasks") from None
        raise ContamError(_why(error), source=name, field="--tasks") from None


def _rendered(name: str, subtask: str, task: Any) -> tuple[BenchmarkDoc, ...]:
    """Every evaluation doc of a subtask of ``name``, rendered; a task that cannot be audited fails here."""
    try:
        return tuple(benchmark_docs(subtask, task))
    except ContamError as error:
        if subtask == name:
            raise
        raise ContamError(f"subtask of group {name!r}: {error}", source=name, field="--tasks") from None
    except Exception as error:  # noqa: BLE001 - Jinja or the task's own functions
        where = "" if subtask == name else f"subtask {subtask!r} of group {name!r}: "
        raise ContamError(f"{where}its docs cannot be rendered ({type(error).__name__}: "
                          f"{_first_line(error)})", source=name, field="--tasks") from None


def load_tasks(names: Sequence[str], task_manager: Any) -> dict[str, LoadedBenchmark]:
    """``{group: LoadedBenchmark}`` (``{subtask: Task}``) for lm-eval task/group names; a plain task is its own group.

    Every task is checked here, before anything runs or is written: an unknown name, a task lm-eval cannot
    build, a task without evaluation docs, an output type the audit cannot render, or a doc that renders no
    text is a one-line :class:`ContamError` naming the task (and the failing subtask of a group).
    """
    if not names:
        raise ContamError("no task named", field="--tasks")
    loaded: dict[str, LoadedBenchmark] = {}
    for name in dict.fromkeys(names):
        evaluated, tasks = _load_one(name, task_manager)
        if not tasks:
            raise ContamError("the group has no tasks", source=name, field="--tasks")
        docs = {subtask: _rendered(name, subtask, task) for subtask, task in tasks.items()}
        loaded[name] = LoadedBenchmark(name, evaluated, tasks, docs)
    return loaded



def loaded_subtask(name: str, loaded: Mapping[str, LoadedBenchmark],
                   task_manager: Any) -> tuple[Any, tuple[BenchmarkDoc, ...]]:
    """A plain (sub)task and its rendered docs: from the benchmarks an audit already loaded (``loaded``), else loaded
    here; what every method that adjusts a benchmark's score builds its tasks from."""
    for benchmark in loaded.values():
        if name in benchmark:
            return benchmark[name], benchmark.docs[name]
    benchmark = load_tasks([name], task_manager)[name]
    return benchmark[name], benchmark.docs[name]

def _text(value: Any, what: str, task: str, index: int) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ContamError(f"doc {index}: {what} rendered {type(value).__name__} {value!r:.80}, expected text",
                          source=task, field=what)
    return str(value)


def _choice(choices: Sequence[str], value: Any, task: str, index: int) -> str:
    """A gold answer as text: an index into ``choices`` or the text itself."""
    if isinstance(value, int) and not isinstance(value, bool) and choices:
        if not 0 <= value < len(choices):
            raise ContamError(f"doc {index}: gold index {value} is outside the {len(choices)} choices",
                              source=task, field="doc_to_target")
        return choices[value]
    text = _text(value, "doc_to_target", task, index)
    if choices and text not in choices:  # lm-eval would score the doc as wrong whatever the model answers
        raise ContamError(f"doc {index}: gold answer {text!r} is not among the choices {list(choices)!r:.200}",
                          source=task, field="doc_to_target")
    return text


def render_doc(name: str, task: Any, index: int, doc: Mapping[str, Any]) -> BenchmarkDoc:
    """One evaluation doc rendered with the task's own ``doc_to_*`` methods."""
    output_type = str(task.OUTPUT_TYPE)
    if output_type not in OUTPUT_TYPES:
        raise ContamError(f"output_type {output_type!r} cannot be audited; supported: {', '.join(OUTPUT_TYPES)}",
                          source=name, field="output_type")
    if getattr(task.config, "doc_to_image", None) or getattr(task.config, "doc_to_audio", None):
        raise ContamError("a task with images or audio cannot be audited (the methods read text only)", source=name,
                          field="doc_to_image")
    choices: tuple[str, ...] = ()
    if output_type == "multiple_choice":
        choices = tuple(_text(choice, "doc_to_choice", name, index) for choice in task.doc_to_choice(doc))
        empty = next((number for number, choice in enumerate(choices) if not choice), None)
        if empty is not None:  # lm-eval cannot score an empty continuation (its assertion, mid-run)
            raise ContamError(f"doc {index}: choice {empty} is empty ({list(choices)!r:.200})", source=name,
                              field="doc_to_choice")
    target = task.doc_to_target(doc)
    if isinstance(target, list):
        if not target:
            raise ContamError(f"doc {index}: doc_to_target rendered an empty list", source=name, field="doc_to_target")
        target = target[0]
    text_value = task.doc_to_text(doc)
    if output_type == "loglikelihood_rolling":
        text, answer = _text(target, "doc_to_target", name, index), ""
    elif output_type == "multiple_choice" and isinstance(text_value, int) and not isinstance(text_value, bool):
        text, answer = _choice(choices, text_value, name, index), _text(target, "doc_to_target", name, index)
    else:
        text = _text(text_value, "doc_to_text", name, index)
        answer = _choice(choices, target, name, index) if choices else _text(target, "doc_to_target", name, index)
    if not text.strip():
        raise ContamError(f"doc {index} renders no text (doc_to_text is empty): nothing to audit", source=name,
                          field="doc_to_text")
    return BenchmarkDoc(task=name, index=index, text=text, target=answer, choices=choices, output_type=output_type)


def benchmark_docs(name: str, task: Any) -> list[BenchmarkDoc]:
    """Every evaluation doc of ``task`` (lm-eval's test split, else its validation split), rendered."""
    try:
        docs = list(task.eval_docs)
    except ValueError as error:
        raise ContamError(_why(error), source=name, field="--tasks") from None
    if not docs:
        raise ContamError(_why(StopIteration()), source=name, field="--tasks")
    return [render_doc(name, task, index, doc) for index, doc in enumerate(docs)]


def single_choice_caveat(docs: Sequence[BenchmarkDoc]) -> str | None:
    """Multiple-choice items with one choice are right whatever the model does: what that does to the score, in words
    (None when no item has one choice)."""
    single = sum(doc.output_type == "multiple_choice" and len(doc.choices) == 1 for doc in docs)
    if not single:
        return None
    if single == len(docs):
        return "every item has one choice: acc is 1 by construction"
    return f"{single} of {len(docs)} items have one choice: each counts as right by construction"


def eval_split(task: Any) -> str:
    """The split lm-eval evaluates: ``test_split``, else ``validation_split``."""
    return str(task.config.test_split or task.config.validation_split)


def second_split(task: Any) -> str | None:
    """The split ``audit --tasks`` takes as the control when no flag names one: the first of the task's
    ``validation_split``, ``training_split``, ``fewshot_split`` that is not its evaluation split and that its dataset
    holds (None: the task names no second split)."""
    evaluated = eval_split(task)
    available = set(getattr(task, "dataset", None) or {})
    config = task.config
    return next((str(split) for split in (config.validation_split, config.training_split, config.fewshot_split)
                 if split and str(split) != evaluated and split in available), None)


def _processed(task: Any, docs: Any) -> list[dict[str, Any]]:
    process = task.config.process_docs
    return list(process(docs) if process is not None else docs)


def split_docs(name: str, task: Any, split: str) -> list[BenchmarkDoc]:
    """Another split of the task's own dataset (e.g. a control), through the task's ``process_docs`` and rendering."""
    available = sorted(getattr(task, "dataset", None) or {})
    if split not in available:
        raise ContamError(f"the task's dataset has no split {split!r}; it has {', '.join(available) or 'none'}",
                          source=name, field="--control-split")
    docs = _processed(task, task.dataset[split])
    if not docs:
        raise ContamError(f"split {split!r} has no docs", source=name, field="--control-split")
    # lm-eval never renders this split (a template written for the evaluated split's rows may fail on it)
    return rendered_docs(name, task, docs, lambda index: f"{name} {split}", "--control-split")


def rows_docs(name: str, task: Any, rows: Sequence[Mapping[str, Any]], source: str) -> list[BenchmarkDoc]:
    """Docs of the task's schema from elsewhere (e.g. ``--control-data``), through ``process_docs`` and rendering.

    A row the task's templates cannot render is a ContamError naming ``source`` and the row's line.
    """
    import datasets

    if not rows:
        raise ContamError("no rows", source=source, field="--control-data")
    try:
        docs = _processed(task, datasets.Dataset.from_list([dict(row) for row in rows]))
    except Exception as error:  # noqa: BLE001 - the task's own process_docs may raise anything
        raise ContamError(f"task {name!r} cannot process these rows ({type(error).__name__}: {_first_line(error)})",
                          source=source, field="--control-data") from None
    return rendered_docs(name, task, docs, lambda index: f"{source}:{index + 1}", "--control-data")


def rendered_docs(name: str, task: Any, docs: Sequence[Mapping[str, Any]], where: Callable[[int], str],
                  field: str) -> list[BenchmarkDoc]:
    """Docs the evaluation does not read (a control's), rendered by the task's templates; a doc they cannot render is
    a ContamError naming ``where(index)`` and ``field``."""
    rendered = []
    for index, doc in enumerate(docs):
        try:
            rendered.append(render_doc(name, task, index, doc))
        except ContamError:
            raise
        except Exception as error:  # noqa: BLE001 - Jinja or the task's functions on a row of another schema
            raise ContamError(f"doc {index}: task {name!r} cannot render it ({type(error).__name__}: "
                              f"{_first_line(error)})", source=where(index), field=field) from None
    return rendered
