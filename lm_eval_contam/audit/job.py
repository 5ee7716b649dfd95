"""The audit: every registered method's tasks for one model (and a method's own input, e.g. a DCR sheet with its
benchmark), through lm-eval.

One ``simple_evaluate`` call per model over every partition's tasks, with lm-eval's
request cache (``use_cache``) under the audit directory: an interrupted audit
re-run with the same arguments answers every finished request from the cache.
Outputs follow lm-eval's layout; ``audit.json`` records what ran (the report
reads it; see ``lm_eval_contam.report``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from lm_eval_contam import harness
from lm_eval_contam.audit.benchmark_partitions import (
    BENCHMARK_SAMPLE,
    derive_partitions,
    write_partition,
)
from lm_eval_contam.audit.own_data import check_partition_rows, write_task_configs
from lm_eval_contam.audit.reference_model import REFERENCE_FLAG, ChosenReference
from lm_eval_contam.contaminate import MANIFEST_FILE
from lm_eval_contam.core.audit_identity import (
    AUDIT_FILE,
    AUDIT_ID_KEY,
    recorded_audit_id,
    relative_to_audit,
    request_cache_name,
)
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import (
    broken_task_yaml,
    check_control_source,
    check_label,
    check_tasks_named_once,
    with_control_overlap,
)
from lm_eval_contam.core.partitions import Control, Partition, resolve_partition
from lm_eval_contam.core.registry import (
    NOT_RUN_KEY,
    QUIZ_LEFT_OUT_KEY,
    REFERENCE_SAMPLES_KEY,
    AuditedModel,
    PlannedTasks,
    method_of,
    reference_docs,
    reference_methods,
    registered_methods,
    scored_by_reference,
)
from lm_eval_contam.core.rundir import load_run
from lm_eval_contam.harness.evaluation import evaluate, save_run, tracker
from lm_eval_contam.lmeval.benchmark_docs import LoadedBenchmark, load_tasks, single_choice_caveat
from lm_eval_contam.lmeval.context_window import ModelWindow
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.lmeval.lm_eval_compat import index_task_folders, selected_task_configs, task_index
from lm_eval_contam.methods.reordered.orders import REFERENCE_ITEMS_KEY
from lm_eval_contam.verdicts.verdict import collect, methods_without_a_call, partition_verdicts

PLAIN_TEXT_BACKENDS = ("hf", "vllm")  # lm-eval backends that can continue plain text (Time Travel's completion style)


@dataclass(frozen=True)
class AuditSettings:
    partitions: tuple[str, ...]  # "<dataset key>:<split>", or a partition card (own data; see own_data.py)
    quiz_modes: tuple[str, ...] = ("loglikelihood",)  # how quizzes are answered (AuditedModel.quiz_modes; --dcq-mode)
    # (registered method, its own input: MethodSpec.explicit_input), e.g. ("dcr", "sst2") for --dcr-sheet sst2
    method_inputs: tuple[tuple[str, str], ...] = ()
    max_gen_toks: int | None = None  # Time Travel completions; None keeps each task's own
    batch_size: int | str = 1
    device: str | None = None
    apply_chat_template: bool | None = None  # None: when the model's tokenizer has a chat template
    include_path: tuple[str, ...] = ()
    limit: int | None = None  # lm-eval's --limit, for smoke runs
    seed: int = 0  # recorded; task seeds live in the task configs
    quiz_option_generator: str = "offline"  # makes the quiz options a partition lacks, before the run
    # Registered methods left out of this audit (--methods, --no-likelihood); by default those whose every test is
    # measured over its level (they could make no call).
    skip_methods: tuple[str, ...] = field(default_factory=methods_without_a_call)
    # lm-eval tasks/groups audited with --tasks (their partitions' cards are in ``partitions``); they run too, so the
    # results carry each benchmark's own metric (and the DCR hook's adjusted one) beside the audit's.
    benchmark_tasks: tuple[str, ...] = ()
    task_groups: tuple[tuple[str, str], ...] = ()  # (--tasks name, partition label) of every derived partition
    # The benchmarks are scored as lm-eval scores them by default (no chat template), whatever the audit's own
    # prompts get: their score is then the one the user reports. True applies the chat template to them too.
    benchmark_chat_template: bool = False
    # The checkpoint the audited model was fine-tuned from, parsed, checked and with how it was found (--reference-model
    # as given, an audited PEFT adapter's base, --reference-model auto's chain of model cards): it scores the same
    # requests of every method that differences the two (a test of it compares with the reference). One value from
    # the CLI to :func:`run_model`; audit.json records it as ``reference_model`` and ``reference_found_by``.
    reference: ChosenReference | None = None
    # Run metadata handed to the benchmark adjustments (MethodSpec.benchmark_adjustment), e.g. (("reorderings", 8),)
    # from --reorderings: what ``run --metadata`` gives them.
    adjustment_metadata: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class ModelRunRecord:
    """One model's entry in ``audit.json``: what ran, where its lm-eval outputs are, and how long it took."""

    label: str
    model: str  # lm-eval backend
    model_args: str
    run_dir: str  # relative to the audit directory
    injection: dict[str, Any] | None = None
    tasks: tuple[str, ...] = field(default=())
    seconds: float = 0.0
    # DCQ task -> the sampled instances its quiz left out (no valid options could be made), with why.
    quiz_left_out: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # How the benchmark tasks were scored (the settings that change their score), when the audit ran any.
    benchmark_scoring: dict[str, Any] | None = None
    # The reference model's run of the same tasks (--reference-model): model, model_args, run_dir, tasks, seconds, and
    # found_by when the audit found it (AuditSettings.reference).
    reference: dict[str, Any] | None = None


def partition_tasks(name: str | Partition, quiz_modes: Sequence[str], *, chat: bool = True, plain_text: bool = True,
                    reference: bool = False, skip_methods: Sequence[str] = ()) -> list[str]:
    """The tasks auditing one partition (``<dataset>:<split>``, a card, or a Partition): every registered method's
    (``MethodSpec.task_names``), in report order.

    ``chat``: the model takes messages (else it is treated as a base model); ``plain_text``: a local backend, which
    continues plain text and scores prompt log-probabilities (a chat API does neither); ``reference``: the audit names
    a reference model; each method decides what it runs for such a model.
    """
    partition = name if isinstance(name, Partition) else resolve_partition(name)
    model = AuditedModel(chat=chat, plain_text=plain_text, quiz_modes=tuple(quiz_modes), reference=reference)
    return [task for spec in registered_methods() if spec.name not in skip_methods
            for task in spec.task_names(partition, model)]


@dataclass(frozen=True)
class AuditPlan:
    tasks: tuple[str, ...]
    # method -> the tasks its own input planned (MethodSpec.explicit_input, e.g. a DCR sheet's group and benchmarks)
    method_inputs: Mapping[str, PlannedTasks] = field(default_factory=dict)
    benchmark_tasks: tuple[str, ...] = ()  # the lm-eval tasks/groups audited with --tasks, run as themselves too

    @property
    def needs_builtins(self) -> bool:
        """A method's own input (e.g. a DCR sheet adjusting lm-eval's sst2) or a --tasks benchmark may name one of
        lm-eval's own tasks."""
        return bool(self.method_inputs) or bool(self.benchmark_tasks)

    @property
    def scored_benchmarks(self) -> list[str]:
        """The benchmark tasks run as lm-eval runs them: --tasks, then those the methods' own inputs need."""
        return [*self.benchmark_tasks, *(task for planned in self.method_inputs.values()
                                         for task in planned.benchmark_tasks)]


def planned_inputs(method_inputs: Sequence[tuple[str, str]]) -> dict[str, PlannedTasks]:
    """Each method's own input (``MethodSpec.explicit_input``) planned: method -> the tasks it adds."""
    planned = {}
    for name, given in method_inputs:
        explicit = method_of(name).explicit_input
        if explicit is None:
            raise ContamError(f"method {name!r} takes no input of its own", field="method_inputs")
        planned[name] = explicit.plan(given)
    return planned


def plan_audit(settings: AuditSettings, *, chat: bool = True, plain_text: bool = True) -> AuditPlan:
    """Every task name of the audit: partitions first, then the tasks the methods' own inputs add (e.g. a DCR
    sheet's group and benchmarks), then the benchmark tasks audited with ``--tasks`` (run as lm-eval runs them: their
    raw metrics in the results)."""
    if not settings.partitions and not settings.method_inputs:
        inputs = ["partitions", *(spec.explicit_input.what for spec in registered_methods() if spec.explicit_input)]
        raise ContamError(f"nothing to audit: give {' and/or '.join(inputs)}", field="partitions")
    tasks = [task for partition in settings.partitions
             for task in partition_tasks(partition, settings.quiz_modes, chat=chat, plain_text=plain_text,
                                         reference=settings.reference is not None,
                                         skip_methods=settings.skip_methods)]
    method_inputs = planned_inputs(settings.method_inputs)
    tasks += [task for planned in method_inputs.values() for task in (*planned.tasks, *planned.benchmark_tasks)]
    tasks += settings.benchmark_tasks
    return AuditPlan(tuple(dict.fromkeys(tasks)), method_inputs, settings.benchmark_tasks)


def _injection_manifest(model: ModelSpec) -> dict[str, Any] | None:
    manifest = Path(str(model.arguments.get("pretrained", "")), MANIFEST_FILE)
    return json.loads(manifest.read_text()) if manifest.is_file() else None


def run_model(spec: ModelSpec, label: str, out_dir: Path, settings: AuditSettings,
              loaded: LoadedBenchmarks | None = None) -> ModelRunRecord:
    """Audit one model (its spec, parsed once by the caller: its tokenizer and window load once, on the spec); write
    lm-eval's results and samples under ``out_dir/runs/<label>``.

    ``loaded``: the ``--tasks`` benchmarks as :func:`derive_benchmark_partitions` built them; their TaskManager serves
    the whole audit, and the DCR sheets and the evaluation take the built tasks and rendered docs as they are.
    The reference model (``settings.reference``) comes checked (the CLI's ``check_reference_model``).
    """
    from lm_eval.utils import make_table

    check_label(label)
    chat = settings.apply_chat_template
    if chat is None:
        chat = spec.has_chat_template
    # Local backends score plain text; chat APIs only take messages.
    plan = plan_audit(settings, chat=chat, plain_text=spec.backend in PLAIN_TEXT_BACKENDS)
    tasks = list(plan.tasks)
    own_dirs = own_task_dirs(settings, out_dir)
    if loaded is None:
        task_manager = harness.task_manager((*settings.include_path, *own_dirs), include_defaults=plan.needs_builtins)
    else:  # the one TaskManager of the audit: it loaded the benchmarks, then indexes the task YAMLs written from them
        task_manager = loaded.task_manager
        index_task_folders(task_manager, own_dirs)
    built = loaded.benchmarks if loaded is not None else {}  # the --tasks benchmarks as they were built
    missing = [task for task in tasks if task not in task_index(task_manager)]
    if missing:
        raise ContamError(f"no such lm-eval task(s): {', '.join(missing)} (is the partition's task config installed?)",
                          field="tasks")
    # Both checks before the benchmarks' DCR sheets are written under the cache home (their level tasks generate: the
    # model check finds the same scoring tasks without them).
    window = spec.window
    check_choices_fit(built, window)
    for line in prompts_over_window(built, window):
        print(line)
    harness.check_model_can_run(spec, tasks, task_manager)
    like_benchmarks: list[str] = []  # adjustment tasks scored with the benchmarks' chat setting (reordered items)
    if plan.benchmark_tasks:  # each benchmark's adjusted score beside its raw metric (MethodSpec.benchmark_adjustment)
        adjustment_metadata = {"seed": settings.seed, **dict(settings.adjustment_metadata)}
        audit_id = recorded_audit_id(out_dir)  # the adjustment tasks (cache home) carry it too; None: no audit.json
        if audit_id is not None:
            adjustment_metadata[AUDIT_ID_KEY] = audit_id
        tasks += harness.adjustment_tasks(plan.benchmark_tasks, task_manager, metadata=adjustment_metadata,
                                          loaded=built, like_benchmark=False, skip_methods=settings.skip_methods)
        like_benchmarks = harness.adjustment_tasks(plan.benchmark_tasks, task_manager, metadata=adjustment_metadata,
                                                   loaded=built, like_benchmark=True,
                                                   skip_methods=settings.skip_methods)
        tasks += like_benchmarks
    reference_items = dict(settings.adjustment_metadata).get(REFERENCE_ITEMS_KEY)
    if reference_items is not None and not like_benchmarks:  # known only once the benchmarks' tasks are built
        print(f"--reference-items {reference_items} not used: no --tasks benchmark gets a reordered score (none is "
              "multiple choice with its options listed in its prompt)")
    reference = settings.reference.spec if settings.reference is not None else None
    reference_tasks = []
    if settings.reference is not None and settings.reference.found_by is not None and not referenced_tasks(
            tasks, task_manager):
        # Found, not asked for: the audit runs as it would without it, and says so.
        print(f"reference model {reference.backend} {reference.model_args} not run: "
              f"{nothing_to_score(spec.backend)}")
        reference = None
    elif reference is not None:
        reference_tasks = check_reference(spec.backend, tasks, task_manager)
    harness.prepare_quiz_options(tasks, task_manager, settings.quiz_option_generator)
    not_run = harness.tasks_not_run(tasks, task_manager, window)
    tasks = [task for task in tasks if task not in not_run]
    reference_tasks = [task for task in reference_tasks if task not in not_run]
    if not tasks:  # lm-eval cannot run an empty task list: say why each method could not run instead
        raise ContamError("no method can run on the partitions: " + "; ".join(
            f"{entry.task}: {entry.reason}" for entry in not_run.values()), field="partitions")
    for entry in not_run.values():
        print(f"{entry.partition}: {entry.task} not tested: {entry.reason}")
    run_dir = Path("runs") / label
    cache_dir = out_dir / "cache"
    # Keyed by the model's fingerprint, not the label alone: no model is answered from another model's cache.
    cache = cache_dir / request_cache_name(label, spec.backend, spec.model_args)
    cache_dir.mkdir(parents=True, exist_ok=True)
    run_tracker = tracker(out_dir / run_dir)

    def evaluate_tasks(names: list[str], chat_template: bool, tracked: Any) -> dict[str, Any] | None:
        return evaluate(spec, names, task_manager, cache=cache, chat_template=chat_template,
                        max_gen_toks=settings.max_gen_toks, batch_size=settings.batch_size, device=settings.device,
                        limit=settings.limit, benchmarks=built, evaluation_tracker=tracked)

    # The benchmarks (--tasks, a method's own input's) get their own call when their chat setting differs from the
    # audit's.
    benchmarks = plan.scored_benchmarks
    separate = ([task for task in tasks if task in benchmarks or task in like_benchmarks]
                if chat != settings.benchmark_chat_template else [])
    started = time.perf_counter()
    own = [task for task in tasks if task not in separate]  # none when --methods keeps only benchmark adjustments
    results = (evaluate_tasks(own, chat, run_tracker) if own
               else evaluate_tasks(separate, settings.benchmark_chat_template, run_tracker))
    if results is not None and own and separate:
        results = merge_results(results, evaluate_tasks(separate, settings.benchmark_chat_template, None))
    seconds = round(time.perf_counter() - started, 1)
    if results is None:  # a non-zero rank under accelerate: rank 0 writes
        return ModelRunRecord(label, spec.backend, spec.model_args, str(run_dir), tasks=tuple(tasks), seconds=seconds)
    if benchmarks:
        results[BENCHMARK_SCORING_KEY] = benchmark_scoring(
            results, benchmarks, spec.backend, spec.model_args,
            chat if not separate else settings.benchmark_chat_template, settings.limit,
            benchmark_caveats(built, window))
    results[NOT_RUN_KEY] = {task: entry.record() for task, entry in not_run.items()}
    reference_run = None
    if reference is not None:  # before the post-processing, which pairs the two models' items where it can
        reference_run, results[REFERENCE_SAMPLES_KEY] = run_reference(reference, reference_tasks, label, out_dir,
                                                                      settings, task_manager, cache_dir)
    results = harness.post_process(results, spec)
    results.pop(REFERENCE_SAMPLES_KEY, None)
    save_run(results, run_tracker)
    print(make_table(results))
    if "groups" in results:
        print(make_table(results, "groups"))
    run = ModelRunRecord(label, spec.backend, spec.model_args, str(run_dir), _injection_manifest(spec),
                         tuple(tasks), seconds, quiz_left_out(results["configs"]), results.get(BENCHMARK_SCORING_KEY),
                         reference_run)
    record_run(out_dir, run, settings, plan.method_inputs)
    return run


REFERENCE_SUFFIX = ".reference"  # runs/<label>.reference: beside the model's run_dir, never inside it
REFERENCE_SAMPLE_DOC = "--reference-items; docs/guide/reordered.md"


def _task_configs(tasks: Sequence[str], task_manager: Any) -> dict[str, dict[str, Any]]:
    """Each task's YAML config by the name or path the audit gives it, read without building the task."""
    import yaml

    configs = selected_task_configs(task_manager, list(tasks))
    for task in tasks:  # a task added as its YAML's path (a benchmark's reordered task): its own file says its method
        if task not in configs and str(task).endswith(".yaml") and Path(task).is_file():
            configs[task] = yaml.safe_load(Path(task).read_text(encoding="utf-8")) or {}
    return configs


def referenced_tasks(tasks: Sequence[str], task_manager: Any) -> list[str]:
    """The tasks a reference model scores too (:func:`~lm_eval_contam.core.registry.scored_by_reference`): every task of a
    method with a test compared with the reference, or those of its tasks its ``reference_scores`` chooses."""
    configs = _task_configs(tasks, task_manager)
    return [task for task in tasks if scored_by_reference((configs.get(task) or {}).get("metadata") or {})]


def reference_samples(tasks: Sequence[str], task_manager: Any) -> dict[str, list[int]]:
    """lm-eval's ``samples`` for the reference model's run: the docs of each task it scores only some of
    (:func:`~lm_eval_contam.core.registry.reference_docs`: the reordered forms of a large benchmark's sampled items),
    by task name; a task not in it is scored whole."""
    found: dict[str, list[int]] = {}
    for task, config in _task_configs(tasks, task_manager).items():
        chosen = reference_docs(config.get("metadata") or {})
        if chosen is not None:
            found[str(config.get("task", task))] = list(chosen)
    return found


def nothing_to_score(backend: str) -> str:
    """Why an audit has nothing for a reference model to score."""
    if backend not in PLAIN_TEXT_BACKENDS:
        return "the audited model is a chat API without prompt log-probabilities"
    return (f"no task of a method that differences the two models ({', '.join(sorted(reference_methods()))}) is among "
            "the tasks")


def check_reference(backend: str, tasks: Sequence[str], task_manager: Any) -> list[str]:
    """The tasks the reference model scores, refused before any request when there is none: the audited model (its
    ``backend``) must run a test that differences the two. The reference itself is checked before
    (:func:`~lm_eval_contam.audit.reference_model.check_reference_model`)."""
    found = referenced_tasks(tasks, task_manager)
    if not found:
        raise ContamError(f"nothing for the reference model to score: {nothing_to_score(backend)}",
                          field=REFERENCE_FLAG)
    return found


def run_reference(spec: ModelSpec, tasks: Sequence[str], label: str, out_dir: Path, settings: AuditSettings,
                  task_manager: Any, cache_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reference model on the audited model's reference-differenced tasks, under ``runs/<label>.reference``: its
    record, and its logged samples by task (empty on a non-zero rank).

    The same task YAMLs build the same docs and requests (everything is seeded by the doc's identity), so each doc's
    logged scores pair with the audited model's; ``u`` is per text, so another tokenizer is no obstacle."""
    run_dir = Path("runs") / f"{label}{REFERENCE_SUFFIX}"
    run_tracker = tracker(out_dir / run_dir)
    # lm-eval takes --limit or a choice of docs, not both: under --limit the reference scores the same first docs.
    chosen_docs = reference_samples(tasks, task_manager) if settings.limit is None else {}
    if chosen_docs:
        print(f"reference model: {sum(map(len, chosen_docs.values()))} docs of {len(chosen_docs)} task(s) "
              f"({', '.join(sorted(chosen_docs)[:3])}{', ...' if len(chosen_docs) > 3 else ''}), a seeded sample of "
              f"their items, the rest scored by the audited model alone ({REFERENCE_SAMPLE_DOC})")
    started = time.perf_counter()
    results = evaluate(spec, tasks, task_manager,
                       cache=cache_dir / request_cache_name(f"{label}{REFERENCE_SUFFIX}", spec.backend, spec.model_args),
                       chat_template=False, batch_size=settings.batch_size, device=settings.device,
                       limit=settings.limit, samples=chosen_docs or None, evaluation_tracker=run_tracker)
    seconds = round(time.perf_counter() - started, 1)
    samples: dict[str, Any] = {}
    if results is not None:
        samples = results["samples"]  # save_run takes them out of the results
        save_run(results, run_tracker)
    found_by = {"found_by": settings.reference.found_by} if settings.reference and settings.reference.found_by else {}
    return {"model": spec.backend, "model_args": spec.model_args, "run_dir": str(run_dir), "tasks": list(tasks),
            "seconds": seconds, **found_by}, samples


def check_choices_fit(benchmarks: Mapping[str, LoadedBenchmark], window: ModelWindow | None) -> None:
    """Refuse a ``--tasks`` benchmark with a choice longer than the audited model's window before the run: lm-eval's
    local backends stop on such a continuation with an assertion, mid-run (the methods' own requests say "not tested"
    instead; the benchmark is the user's and runs as it is, or not at all)."""
    if window is None:
        return
    for benchmark in benchmarks.values():
        for subtask, docs in benchmark.docs.items():
            # lm-eval scores each choice after the prompt and its target delimiter (a space by default)
            reason = window.over(((doc.index, f"{doc.text} ", choice) for doc in docs for choice in doc.choices),
                                 "'s longest choice")
            if reason:
                raise ContamError(f"{reason}: lm-eval cannot score a choice longer than the window", source=subtask,
                                  field="doc_to_choice")


def prompts_over_window(benchmarks: Mapping[str, LoadedBenchmark], window: ModelWindow | None) -> list[str]:
    """Per ``--tasks`` subtask, a line saying how many of its docs are longer than the audited model's window with
    their longest choice (:func:`cut_prompt_caveats`), said before the run."""
    return [f"{subtask}: {caveat}" for subtask, caveat in cut_prompt_caveats(benchmarks, window).items()]


def cut_prompt_caveats(benchmarks: Mapping[str, LoadedBenchmark], window: ModelWindow | None) -> dict[str, str]:
    """Per ``--tasks`` subtask with docs longer than the audited model's window with their longest choice, how many:
    lm-eval cuts them from the left, and the verdicts on them carry it (``truncated_docs``); the benchmark's score
    carries it too (:func:`benchmark_caveats`). A reference's window is at least as long (a shorter one is refused),
    so they fit it too."""
    if window is None:
        return {}
    found = {}
    for benchmark in benchmarks.values():
        for subtask, docs in benchmark.docs.items():
            texts = [f"{doc.text} {max(doc.choices, key=len)}" if doc.choices else doc.text for doc in docs]
            # A token holds at least one byte: a text of no more bytes than the window fits it without tokenizing.
            over = sum(1 for text in texts
                       if len(text.encode()) > window.tokens and len(window.encode(text)) > window.tokens)
            if over:
                found[subtask] = (f"{over} of {len(docs)} docs are longer than the audited model's window of "
                                  f"{window.tokens} tokens (with their longest choice); lm-eval cuts them from the "
                                  "left, and the verdicts whose samples hold them say so")
    return found


BENCHMARK_SCORING_KEY = "benchmark_scoring"  # in the results JSON and audit.json: how the benchmarks were scored
# Per-task results entries lm-eval keys by task name; two calls' entries are merged key by key.
PER_TASK_KEYS = ("results", "groups", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better",
                 "n-samples", "samples", "task_hashes")


def merge_results(audit: dict[str, Any], benchmarks: dict[str, Any]) -> dict[str, Any]:
    """One results dict of two ``simple_evaluate`` calls on the same model (its run-wide fields are the first's)."""
    merged = dict(audit)
    for key in PER_TASK_KEYS:
        if key in audit or key in benchmarks:
            merged[key] = {**(audit.get(key) or {}), **(benchmarks.get(key) or {})}
    return merged


def benchmark_scoring(results: Mapping[str, Any], benchmarks: Sequence[str], backend: str, model_args: str,
                      chat_template: bool, limit: int | None,
                      caveats: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """The settings that change a benchmark's score, as they were used, and what its data does to the score
    (``caveats``: subtask -> lines, when any): written beside the score."""
    shots = results.get("n-shot") or {}
    return {"tasks": list(benchmarks), "model": backend, "model_args": model_args,
            "apply_chat_template": chat_template, "limit": limit,
            "num_fewshot": {task: shot for task, shot in shots.items()
                            if task in benchmarks or task in _subtasks(results, benchmarks)},
            **({"caveats": {task: list(lines) for task, lines in caveats.items()}} if caveats else {})}


def benchmark_caveats(benchmarks: Mapping[str, LoadedBenchmark],
                      window: ModelWindow | None = None) -> dict[str, list[str]]:
    """Per benchmark subtask, what its items do to its score (e.g. one-choice items are right by construction; docs
    longer than the audited model's ``window`` are cut: :func:`cut_prompt_caveats`)."""
    cut = cut_prompt_caveats(benchmarks, window)
    found = {subtask: [caveat for caveat in (single_choice_caveat(docs), cut.get(subtask)) if caveat]
             for benchmark in benchmarks.values() for subtask, docs in benchmark.docs.items()}
    return {subtask: caveats for subtask, caveats in found.items() if caveats}


def _subtasks(results: Mapping[str, Any], groups: Sequence[str]) -> set[str]:
    tree = results.get("group_subtasks") or {}
    found: set[str] = set()
    pending = [group for group in groups if group in tree]
    while pending:
        for task in tree.get(pending.pop(), []):
            if task not in found:
                found.add(task)
                pending.append(task)
    return found


@dataclass(frozen=True)
class LoadedBenchmarks:
    """The ``--tasks`` benchmarks of one audit, built and rendered once, and the one TaskManager that loaded them."""

    task_manager: Any
    benchmarks: Mapping[str, LoadedBenchmark]  # --tasks name -> its built (sub)tasks and rendered docs


@dataclass(frozen=True)
class BenchmarkPartitionCards:
    """The cards of the partitions ``audit --tasks`` derived from its benchmarks, written under the audit directory."""

    cards: tuple[str, ...]  # partition card paths, one per (sub)task
    groups: tuple[tuple[str, str], ...]  # (--tasks name, partition label), in the same order
    loaded: LoadedBenchmarks  # what the partitions were derived from, for the rest of the audit (run_model)
    # What each partition took as its control when no flag named one (PartitionCardDraft.statement), one line each.
    control_statements: tuple[str, ...] = ()


@dataclass(frozen=True)
class DerivedBenchmarks:
    """The ``--tasks`` benchmarks loaded and rendered, and every partition (and control) derived from them, before
    anything is written (:func:`derive_benchmark_partitions`; :func:`write_benchmark_partitions` writes them)."""

    partitions: tuple[PartitionCardDraft, ...]
    loaded: LoadedBenchmarks


def derive_benchmark_partitions(names: Sequence[str], include_path: Sequence[str], control: Control | None = None,
                                sample: int | None = BENCHMARK_SAMPLE,
                                per_subtask: bool = False) -> DerivedBenchmarks:
    """Load the lm-eval tasks and derive every (sub)task's partition (and control), writing nothing; ``control``
    None: each task's own second split (:func:`~lm_eval_contam.audit.benchmark_partitions.task_split_control`);
    ``sample``: each card's cap on the methods' sample (``--sample``; None: the methods' own sizes); a group gets one
    partition drawn across its subtasks, or with ``per_subtask`` one per subtask.

    Bad input (an unknown task, a task without docs, a group with a failing subtask, a control that cannot be one)
    is refused here, so the audit runs it before its first write."""
    try:
        task_manager = harness.task_manager(tuple(include_path), include_defaults=True)
        loaded = load_tasks(names, task_manager)
    except ContamError as error:  # lm-eval skips a YAML it cannot read: name the YAML's own error instead
        broken = broken_task_yaml(str(error.source), include_path) if error.source in names else None
        if broken is None:
            raise
        raise ContamError(broken, source=error.source, field="--tasks") from None
    check_tasks_named_once(loaded)
    derived = derive_partitions(loaded, control, sample, per_subtask=per_subtask)
    return DerivedBenchmarks(tuple(derived), LoadedBenchmarks(task_manager, loaded))


def write_benchmark_partitions(derived: DerivedBenchmarks, out_dir: Path) -> BenchmarkPartitionCards:
    """The cards and rows of :func:`derive_benchmark_partitions`' partitions, written under ``out_dir``."""
    partitions = derived.partitions
    cards = tuple(str(write_partition(partition, out_dir)) for partition in partitions)
    return BenchmarkPartitionCards(cards, tuple((p.group, p.label) for p in partitions), derived.loaded,
                                   tuple(filter(None, (partition.statement() for partition in partitions))))


@dataclass(frozen=True)
class GroupSummary:
    """One model's partition verdicts over the subtasks of one ``--tasks`` name (a group, or a task alone)."""

    group: str
    model: str
    partitions: int
    flagged: tuple[str, ...]  # partition labels whose verdict is "contaminated"
    untested: tuple[str, ...]  # partition labels with no calibrated evidence

    def line(self) -> str:
        text = f"{self.group} ({self.model}): {len(self.flagged)} of {self.partitions} partition(s) contaminated"
        if self.flagged:
            text += f" ({', '.join(self.flagged)})"
        return text + (f"; {len(self.untested)} without calibrated evidence" if self.untested else "")


def group_summaries(out_dir: Path) -> list[GroupSummary]:
    """Per ``--tasks`` name and model: how many of its subtasks' partitions the per-partition verdict flags."""
    audit = json.loads((out_dir / AUDIT_FILE).read_text())
    groups: dict[str, list[str]] = {}
    for group, label in (audit.get("settings") or {}).get("task_groups") or []:
        groups.setdefault(group, []).append(label)
    if not groups:
        return []
    verdicts = {(v.model, v.partition): v for v in partition_verdicts(collect(load_run(out_dir)))}
    models = list(dict.fromkeys(model for model, _ in verdicts))
    summaries = []
    for group, labels in groups.items():
        for model in models:
            mine = [(label, verdicts.get((model, label))) for label in labels]
            summaries.append(GroupSummary(
                group, model, len(labels),
                tuple(label for label, verdict in mine if verdict is not None and verdict.flagged),
                tuple(label for label, verdict in mine if verdict is None or verdict.flagged is None)))
    return summaries


def own_task_dirs(settings: AuditSettings, out_dir: Path) -> list[str]:
    """Task YAMLs for every card partition (one's own data), written under the audit directory."""
    partitions = [resolve_partition(name) for name in settings.partitions]
    folders: dict[str, str] = {}
    for name, partition in zip(settings.partitions, partitions):  # one card per task folder: none overwrites another
        other = folders.setdefault(f"{partition.dataset.key}_{partition.split}", name)
        if other != name and not partition.dataset.registered:
            raise ContamError(f"names the same dataset key and split as {other!r}; give one a `key`",
                              source=name, field="--partitions")
    # An empty or malformed data file, or a control that is the audited data, stops the audit before any task YAML is
    # written.
    for partition in partitions:
        if not partition.dataset.registered and partition.data_file is not None:
            check_partition_rows(partition, partition.rows(), str(partition.data_file))
            # The card's control file gets the checks --control-data gets (it was read mid-run, after files were
            # written, in two messages naming no file)
            if partition.control.kind != "none":
                check_control_source(partition)
                control = partition.dataset.partition(str(partition.control.split))
                check_partition_rows(control, control.rows(), str(control.data_file))
    # The control's overlap with the audited rows, measured once per audit (a card the audit wrote carries it, one
    # written by hand is measured here), before any task YAML is written; the task YAMLs carry it to the verdicts.
    measured = [with_control_overlap(partition) for partition in partitions if not partition.dataset.registered]
    audit_id = recorded_audit_id(out_dir)  # claimed in audit.json before any task YAML is written (None: no audit)
    return [str(write_task_configs(partition, out_dir, reference=settings.reference is not None, audit_id=audit_id))
            for partition in measured]


def quiz_left_out(configs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per quiz task of a run's logged configs, the instances its quiz left out (tasks leaving none are omitted)."""
    found = {task: (config.get("metadata") or {}).get(QUIZ_LEFT_OUT_KEY) for task, config in configs.items()}
    return {task: left_out for task, left_out in sorted(found.items()) if left_out}


def reference_record(reference: ChosenReference | None) -> dict[str, str | None]:
    """How audit.json's settings keep the reference: its spec as given and how it was found."""
    return {"reference_model": reference.spec.spec if reference is not None else None,
            "reference_found_by": reference.found_by if reference is not None else None}


def record_run(out_dir: Path, run: ModelRunRecord, settings: AuditSettings,
               method_inputs: Mapping[str, PlannedTasks] | None = None) -> Path:
    """Add (or replace, by label) the model's entry in ``audit.json``, with what the methods' own inputs planned."""
    path = out_dir / AUDIT_FILE
    audit = json.loads(path.read_text()) if path.is_file() else {"version": 1, "models": []}
    entry = asdict(run)
    # The tasks an earlier run of the same label and model wrote results for stay recorded (a re-run with other
    # --methods adds its own): the report takes a task not recorded here for another audit's (rundir).
    earlier = next((found for found in audit.get("models", []) if found.get("label") == run.label
                    and (found.get("model"), found.get("model_args")) == (run.model, run.model_args)), None)
    if earlier is not None and isinstance(earlier.get("tasks"), list):
        entry["tasks"] = list(dict.fromkeys([*map(str, earlier["tasks"]), *entry["tasks"]]))
    audit["models"] = [found for found in audit.get("models", []) if found.get("label") != run.label]
    audit["models"].append(entry)
    # Cards under the audit directory are recorded relative to it: a copied directory stays one audit.
    partitions = [relative_to_audit(partition, out_dir) for partition in settings.partitions]
    audit["partitions"] = list(dict.fromkeys([*audit.get("partitions", []), *partitions]))
    audit["settings"] = {key: value for key, value in asdict(replace(settings, reference=None)).items()
                         if key not in ("partitions", "reference")} | reference_record(settings.reference)
    planned = {name: asdict(tasks) for name, tasks in (method_inputs or {}).items()}
    audit["method_inputs"] = planned or audit.get("method_inputs")
    path.write_text(json.dumps(audit, indent=2, default=str) + "\n")
    return path
