"""The method registry: one typed entry (:class:`MethodSpec`) per detection-method family.

Each family declares its entry in its own package (``<family>/method.py``: ``SPEC = MethodSpec(...)``); this layer
names none of them. The methods layer registers them: importing :mod:`lm_eval_contam.methods` hands
:func:`register_lazily` its loader (``catalogue.load_methods``: the built-in methods, then the plug-ins), run the first
time the registered methods are read, and the entry points above call it themselves; a test registers its own with
:func:`register_method`. The audit, the own-data renderer, the verdict collection, the null study and the report loop
over :func:`registered_methods` and never name a family; a task reaches its family through its YAML's
``metadata.method`` (:func:`method_of`). Modelled on lm-eval's ``register_*`` decorators: a name registers once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import TEMPLATE, package_template
from lm_eval_contam.core.method_verdict import PAPERS_OWN, NotRun, Test, TestRole, Verdict
from lm_eval_contam.core.partitions import OUTPUT_TYPES, Partition
from lm_eval_contam.core.rundir import ModelResults

# Task metadata key under which a quiz records the sampled instances it left out (no valid options), with why.
QUIZ_LEFT_OUT_KEY = "quiz_left_out"
# Results key (task -> NotRun record) of the tasks the audit left out because their method cannot run on the partition.
NOT_RUN_KEY = "not_run"


@dataclass(frozen=True)
class AuditedModel:
    """What the audited model can do, as the audit plan needs it."""

    chat: bool  # the model takes messages (a chat template, or a chat API)
    plain_text: bool  # a local backend: continues plain text and scores prompt log-probabilities
    quiz_modes: tuple[str, ...] = ("loglikelihood",)  # how multiple-choice quizzes are answered (--dcq-mode)
    # The audit names a reference model (--reference-model): a method whose tests read only u runs only then.
    reference: bool = False


@dataclass(frozen=True)
class RenderTarget:
    """Where a partition's task YAMLs point: the installed templates and the partition's quiz options file; and
    whether a reference model scores them too."""

    templates: Path  # the installed task_configs/ directory (``lm_eval_contam.task_dir()``)
    options_path: Path  # the partition's quiz options cache, shared by every method that reads quiz options
    # A reference model scores the tasks too (--reference-model): a method whose reference-differenced tests read
    # more texts than its tests without a reference (the option-order test: every order) asks for them only then.
    reference: bool = False

    def include(self, method: str) -> str:
        """The path of a method's installed template (``task_configs/<method>/_template_yaml``)."""
        return str(self.templates / method / TEMPLATE)


@dataclass(frozen=True)
class QuizSample:
    """One sample of a partition whose quiz options must exist before the run."""

    partition: Partition
    num_instances: int
    seed: int
    options_path: Path


@dataclass(frozen=True)
class PlannedTasks:
    """What a method's own audit input adds to the audit plan."""

    tasks: tuple[str, ...]  # its own tasks (e.g. a DCR sheet's group)
    benchmark_tasks: tuple[str, ...] = ()  # the lm-eval tasks they need run beside them, scored as lm-eval scores them


@dataclass(frozen=True)
class ExplicitInput:
    """A method's own audit input beside the partitions (e.g. DCR's ``--dcr-sheet``: a sheet name or file)."""

    what: str  # in words, for messages ("a DCR sheet")
    plan: Callable[[str], PlannedTasks]  # the input as the user gave it -> what it adds to the audit plan


@dataclass(frozen=True)
class Generation:
    """How a method's generate tasks take part in a run."""

    capped: bool = False  # the audit's --max_gen_toks caps its generate tasks (and only theirs)
    # A task it runs that needs prompt log-probabilities -> its generate-mode twin, for an API model without them.
    alternative: Callable[[str], str | None] | None = None


@dataclass(frozen=True)
class Quiz:
    """A method whose tasks read quiz options, made before the run."""

    # (task metadata, test split) -> the quiz samples that task reads options for.
    samples: Callable[[Mapping[str, Any], str], Sequence[QuizSample]]


class ReferenceResult(Protocol):
    """What a test on u gives ``run --reference-model`` for its task's row: its p-value (``<test>_pvalue``) and its
    statistic standardised against its null (``<test>_z``); a relabelling test's result, the likelihood family's
    two-sample one."""

    @property
    def pvalue(self) -> float: ...

    @property
    def standardised(self) -> float: ...


# audit --reference-model: the reference model's logged samples (task -> samples) in lm-eval's results while the
# audited model's are post-processed (a hook may pair them item by item); removed before the results are saved.
REFERENCE_SAMPLES_KEY = "reference_samples"


@dataclass(frozen=True)
class BenchmarkAdjustment:
    """A method that adjusts benchmark scores: every plain benchmark of a run gets an adjusted score beside its own."""

    # (the run's task names, its TaskManager, run metadata, benchmarks already loaded by name) -> the tasks to add
    # (e.g. DCR's sheet per benchmark); the report's benchmark table names the adjusted score after the method.
    tasks: Callable[[Sequence[Any], Any, Mapping[str, Any] | None, Mapping[str, Any] | None], list[str]]
    # Adds the derived rows to lm-eval's results before they are saved (e.g. DCR's factor and <metric>_adj).
    post_process: Callable[[dict[str, Any]], dict[str, Any]]
    # Its tasks score the benchmark's own items (the reordered options): the audit runs them with the benchmarks' chat
    # setting, not the audit's prompts' (DCR's sheets ask questions of their own: False).
    scored_like_benchmark: bool = False


class ReportSection(Protocol):
    """A method's report section: a module with these two functions, or an object with them."""

    def html(self, verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str: ...

    def markdown(self, verdicts: Sequence[Verdict]) -> list[str]: ...


class _NoSection:
    """The section of a method with no verdicts of its own (a score beside the benchmark's): nothing to draw."""

    def html(self, verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
        return ""

    def markdown(self, verdicts: Sequence[Verdict]) -> list[str]:
        return []


NO_SECTION: ReportSection = _NoSection()


def _always(partition: Partition, reference: bool) -> bool:
    return True


@dataclass(frozen=True)
class OneScoredTask:
    """A method's tasks when it scores one task per partition with prompt log-probabilities (a local backend), where
    ``applies(partition, reference model named)`` holds: its ``MethodSpec.task_names`` and ``render_task_configs``."""

    method: str
    task_name: Callable[[Partition], str]
    render: Callable[..., str]  # (partition, include=its template's path) -> the task's YAML
    applies: Callable[[Partition, bool], bool] = _always
    # The package that ships its template beside its modules (a plug-in's); None: task_configs/<method>/ (built in).
    package: str | None = None

    def include(self, target: RenderTarget) -> str:
        return package_template(self.package) if self.package else target.include(self.method)

    def task_names(self, partition: Partition, model: AuditedModel) -> list[str]:
        return [self.task_name(partition)] if model.plain_text and self.applies(partition, model.reference) else []

    def render_task_configs(self, partition: Partition, target: RenderTarget) -> dict[str, str]:
        if not self.applies(partition, target.reference):
            return {}
        return {self.task_name(partition): self.render(partition, include=self.include(target))}


def not_run_without_docs(test: Test, settings_type: type, build_docs: Callable[[Any, Any], object]
                         ) -> Callable[[str, Mapping[str, Any]], NotRun | None]:
    """A ``MethodSpec.cannot_run`` for a partition-level test whose docs builder raises :class:`ContamError` when the
    partition gives it nothing to test (``settings_type.from_metadata(metadata, split)`` reads its settings, with
    the ``partition``): "not tested" with that reason, checked before the run, where lm-eval would stop on it."""
    def cannot_run(task: str, config: Mapping[str, Any]) -> NotRun | None:
        settings = settings_type.from_metadata(config.get("metadata"), str(config.get("test_split")))
        try:
            build_docs(settings, settings.partition.rows())
        except ContamError as error:
            return test.not_run(task=task, partition=settings.partition.label, reason=error.reason)
        return None

    return cannot_run


@dataclass(frozen=True)
class MethodSpec:
    """Everything the core needs to know about one method family; the functions live in the family's package.

    What every method provides comes first (its tasks for a partition, their YAMLs, its verdicts from results, its
    report section); what only some do is an optional capability, one object per kind (``generation``, ``quiz``,
    ``benchmark_adjustment``, ``explicit_input``).
    """

    name: str  # the task YAMLs' metadata.method; also the verdicts' family
    title: str  # in words, e.g. "Time Travel (Golchin & Surdeanu 2024)"
    order: int  # its place in reports (lower first)
    # The tasks auditing a partition for a model (empty: the method does not apply, e.g. no logprobs).
    task_names: Callable[[Partition, AuditedModel], Sequence[str]]
    # Task name -> YAML text for every task of a card partition (own data, --tasks); registered datasets ship theirs
    # (shipped_task_configs).
    render_task_configs: Callable[[Partition, RenderTarget], Mapping[str, str]]
    verdicts: Callable[[ModelResults], Sequence[Verdict]]  # its verdicts from one model's run
    section: ReportSection  # its report section for one task's verdicts (html and markdown)
    # Every test it runs, declared once: its name and words, what it compares with, its role, its rates' keys. What
    # the method needs of a run follows from them: a control partition, a reference model scoring its tasks.
    tests: tuple[Test, ...] = ()
    # Benchmark output types (--tasks) it audits; a partition of another type gets none of its tasks.
    output_types: frozenset[str] = frozenset(OUTPUT_TYPES)
    # (the model's logged samples of one of its tasks, the reference model's of the same task, the task's config,
    # where the reference's samples come from) -> its reference-differenced tests' results by Verdict.test: what
    # ``run --reference-model`` adds to the task's row (the same functions its verdicts read).
    reference_tests: Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]], Mapping[str, Any], str],
                              Mapping[str, ReferenceResult]] | None = None
    # (a task's metadata) -> whether the reference model scores that task, for a method with a test compared with the
    # reference whose tests on u read only some of its tasks (the likelihood family: its control mode); None: every task.
    reference_scores: Callable[[Mapping[str, Any]], bool] | None = None
    # (a task's metadata) -> the docs (positions) of that task the reference model scores, None: every doc; for a
    # method whose comparison with the reference needs fewer items than the model's own score (the reordered score).
    reference_docs: Callable[[Mapping[str, Any]], Sequence[int] | None] | None = None
    evidence_kind: str = ""  # how the per-partition verdict names its evidence ("" : its name)
    # The task YAMLs it ships (scripts/generate_task_configs.py writes them, the null study retargets the sample
    # partition's): path relative to task_configs/<name>/ -> YAML text (None: it ships none).
    shipped_task_configs: Callable[[], Mapping[str, str]] | None = None
    # (task name, its config) -> why it cannot run on its partition (None: it can); asked once the quiz options
    # exist, before the run, so an untestable partition is "not tested: <why>" and the rest of the audit runs.
    cannot_run: Callable[[str, Mapping[str, Any]], NotRun | None] | None = None
    # Why the null study leaves one of its task configs out (None: it runs).
    null_study_exclusion: Callable[[Mapping[str, Any]], str | None] | None = None
    # Optional capabilities. It has generate tasks (Time Travel, DCQ, DCR), capped or twinned:
    generation: Generation | None = None
    # Its tasks read quiz options (DCQ, the likelihood options mode):
    quiz: Quiz | None = None
    # It adjusts benchmark scores (DCR):
    benchmark_adjustment: BenchmarkAdjustment | None = None
    # Its own audit input beside the partitions (AuditSettings.method_inputs), and the tasks that input plans (DCR):
    explicit_input: ExplicitInput | None = None

    @property
    def kind(self) -> str:
        return self.evidence_kind or self.name

    def __post_init__(self) -> None:
        strays = [test.name for test in self.tests if test.family != self.name]
        if strays:
            raise ContamError(f"test(s) {strays} declare another family than {self.name!r}", field="Test.family")

    def compares_with(self, what: str) -> bool:
        """Whether any of its tests compares with ``what`` ("control", "reference"): a reference model then scores
        its tasks too (those its ``reference_scores`` chooses)."""
        return any(what in test.compares for test in self.tests)

    def tests_in_role(self, role: TestRole) -> tuple[str, ...]:
        return tuple(test.name for test in self.tests if test.role == role)

    @property
    def rate_keys(self) -> tuple[str, ...]:
        """The keys of its tests' rates in null_rates.json / validation_rates.json (``verdict.rate_key``)."""
        return tuple(key for test in self.tests for key in test.keys)

    @property
    def papers_own_tests(self) -> tuple[str, ...]:
        return self.tests_in_role(PAPERS_OWN)

    @property
    def controlled_tests(self) -> tuple[str, ...]:
        return tuple(test.name for test in self.tests if "control" in test.compares)

    @property
    def referenced_tests(self) -> tuple[str, ...]:
        return tuple(test.name for test in self.tests if "reference" in test.compares)


_REGISTRY: dict[str, MethodSpec] = {}
# What registers methods the first time the registry is read, handed in from above (the methods layer's loader:
# the built-in methods, then the installed plug-ins), so that importing a method package imports no third party's code.
_PENDING_LOADERS: list[Callable[[], object]] = []


def register_lazily(loader: Callable[[], object]) -> None:
    """Run ``loader`` (which registers methods) once, the first time the registered methods are read."""
    _PENDING_LOADERS.append(loader)


def _registry() -> dict[str, MethodSpec]:
    while _PENDING_LOADERS:  # popped first: a loader that reads the registry does not run itself again
        _PENDING_LOADERS.pop(0)()
    return _REGISTRY


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` to the registry, after the methods whose loaders are pending; a name registers once (a second
    spec of that name is refused)."""
    if spec.name in _registry():
        raise ContamError(f"a method named {spec.name!r} is already registered", field="MethodSpec.name")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_method(name: str) -> None:
    """Remove a registered method (a test's toy method, once its test is done)."""
    _REGISTRY.pop(name, None)


def registered_methods() -> list[MethodSpec]:
    """Every registered method, in report order."""
    return sorted(_registry().values(), key=lambda spec: (spec.order, spec.name))


def method_of(family: str) -> MethodSpec:
    """The registered method of a task's ``metadata.method``."""
    try:
        return _registry()[family]
    except KeyError:
        raise ContamError(f"no registered method {family!r} (known: {', '.join(sorted(_REGISTRY)) or 'none'})",
                          field="metadata.method") from None


def shipped_task_configs(task_dir: Path) -> dict[Path, str]:
    """Every registered method's shipped task YAMLs (``MethodSpec.shipped_task_configs``) under ``task_dir``: path
    (``task_dir/<name>/<relative path>``) -> YAML text, in report order."""
    return {task_dir / spec.name / relative: text for spec in registered_methods() if spec.shipped_task_configs
            for relative, text in spec.shipped_task_configs().items()}


def task_quiz_samples(configs: Iterable[Mapping[str, Any]]) -> list[QuizSample]:
    """Every quiz sample the task configs read options for (their methods' ``quiz.samples``), each once, in the
    configs' order; a config without ``metadata.method`` (a benchmark's own task) reads none."""
    found: dict[tuple[str, int, int, str], QuizSample] = {}
    for config in configs:
        metadata = config.get("metadata") or {}
        family = metadata.get("method")
        spec = method_of(str(family)) if family else None
        if spec is None or spec.quiz is None:
            continue
        for sample in spec.quiz.samples(metadata, str(config.get("test_split"))):
            found.setdefault((sample.partition.name, sample.num_instances, sample.seed, str(sample.options_path)), sample)
    return list(found.values())


def controlled_tests() -> frozenset[str]:
    """Every registered method's tests against a control partition (Verdict.test)."""
    return frozenset(rule for spec in _registry().values() for rule in spec.controlled_tests)


def referenced_tests() -> frozenset[str]:
    """Every registered method's tests on u = log p(model) - log p(reference) (Verdict.test)."""
    return frozenset(rule for spec in _registry().values() for rule in spec.referenced_tests)


def tests_in_role(role: TestRole) -> frozenset[str]:
    """Every registered method's tests (Verdict.test) declared in ``role``."""
    return frozenset(test for spec in _registry().values() for test in spec.tests_in_role(role))


def papers_own_tests() -> frozenset[str]:
    """Every registered method's papers'-own decision rules (Verdict.test)."""
    return tests_in_role(PAPERS_OWN)


def reference_methods() -> frozenset[str]:
    """The registered methods whose tasks a reference model scores too (a test of theirs compares with it)."""
    return frozenset(spec.name for spec in _registry().values() if spec.compares_with("reference"))


def reference_docs(metadata: Mapping[str, Any]) -> Sequence[int] | None:
    """The docs (positions) of a task the reference model scores, from its YAML's ``metadata`` (None: every doc, or
    not a method's task)."""
    family = metadata.get("method")
    if not family or str(family) not in reference_methods():
        return None
    chosen = method_of(str(family)).reference_docs
    return None if chosen is None else chosen(metadata)


def scored_by_reference(metadata: Mapping[str, Any]) -> bool:
    """Whether a reference model scores a task too, from its YAML's ``metadata``: a task of a method with a test
    compared with the reference that its ``reference_scores`` chooses (every task when it has none); a task
    without ``metadata.method`` (a benchmark's own) is not."""
    family = metadata.get("method")
    if not family or str(family) not in reference_methods():
        return False
    spec = method_of(str(family))
    return spec.reference_scores is None or spec.reference_scores(metadata)
