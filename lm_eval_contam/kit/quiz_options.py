"""Quiz options: the generation prompt, parsing, validation, retries and the JSONL cache.

Four word-level perturbations per instance are generated once (by an instruct
model with the verbatim prompt below at temperature 1.0, or by the offline
WordNet perturber in :mod:`lm_eval_contam.kit.perturb`), validated, retried when
invalid, and cached in a JSONL file keyed by a hash of the instance string.
Instances still invalid after the last attempt are reported, never kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects, write_jsonl
from lm_eval_contam.core.registry import QUIZ_LEFT_OUT_KEY, QuizSample
from lm_eval_contam.core.text import normalize_whitespace
from lm_eval_contam.kit.instances import QuizInstance, instance_key, label_line, sample_instances
from lm_eval_contam.kit.perturb import offline_proposer
from lm_eval_contam.kit.proposal import NUM_OPTIONS, Proposal, Proposer
from lm_eval_contam.lmeval.generation import ModelSpec, generate
from lm_eval_contam.models.default_model import cache_home

# Verbatim from the official implementation; {original_instance} is filled by str.replace.
GENERATION_PROMPT = """Your task is to create a four-choice quiz by replacing the words in the provided INPUT TEXT with their contextually relevant synonyms.
The meaning and sentence structure of the four options MUST EXACTLY match every detail in the INPUT TEXT.
You MUST NOT include the provided INPUT TEXT as an option.

You MUST make sure that:
(1) You generate DISTINCT options based on the provided INPUT TEXT;
(2) The ONLY difference between options is WORD-LEVEL PERTURBATIONS.
(3) Options are ORDERED;
(4) There is NOT any extra explanation;
(5) You follow the following FORMAT to generate options;
(6) You comply with every specific symbol and letter detail in the given INPUT TEXT; and
(7) All options retain the EXACT LABEL from the INPUT TEXT, if there is one.
---
INPUT TEXT:
{original_instance}
---
FORMAT:

A)
First word-level perturbation goes here

B)
Second word-level perturbation goes here

C)
Third word-level perturbation goes here

D)
Fourth word-level perturbation goes here
---
"""

DEFAULT_ATTEMPTS = 3
# Word-level synonym swaps keep an instance's length roughly; a larger change means
# the generator rewrote, added or dropped text.
DEFAULT_MAX_LENGTH_CHANGE = 0.5
GENERATION_TEMPERATURE = 1.0
GENERATION_MAX_NEW_TOKENS = 4000  # the paper's generation budget

def generation_prompt(instance: str) -> str:
    return GENERATION_PROMPT.replace("{original_instance}", instance)


_OPTION_MARKER = re.compile(r"^[ \t]*\(?([A-E])\)[ \t]*", re.MULTILINE)
_RULE = re.compile(r"(?:\n[ \t]*-{3,}[ \t]*)+$")


def parse_options(completion: str) -> tuple[str, ...] | None:
    """The four option texts of an ``A)``..``D)`` completion, or None when it is not exactly that.

    Text before ``A)`` (a preamble) is ignored; a trailing ``---`` rule is dropped.
    """
    pieces = _OPTION_MARKER.split(completion)
    letters, bodies = pieces[1::2], pieces[2::2]
    if letters != ["A", "B", "C", "D"]:
        return None
    return tuple(_RULE.sub("", "\n" + body.strip()).strip() for body in bodies)


def _line_header(line: str) -> str | None:
    match = re.match(r"^([A-Za-z_]\w*):\s", line)
    return match.group(1) if match else None


def _lines(text: str) -> list[str]:
    return [line for line in text.strip().split("\n") if line.strip()]


def validate_options(
    instance: QuizInstance,
    options: Proposal,
    *,
    max_length_change: float = DEFAULT_MAX_LENGTH_CHANGE,
) -> list[str]:
    """Problems that make ``options`` unusable as perturbations of ``instance`` (empty = valid).

    Checks: four options; none empty; each differs from the original after
    whitespace normalisation; pairwise distinct; the label line unchanged; the same
    line structure (line count and ``column:`` headers); length within
    ``max_length_change`` (a fraction of the original's length).
    """
    if options is None:
        return ["no options produced (a completion that is not four A) .. D) blocks, or no replaceable word)"]
    if len(options) != NUM_OPTIONS:
        return [f"expected {NUM_OPTIONS} options, got {len(options)}"]
    problems: list[str] = []
    original = normalize_whitespace(instance.text)
    original_lines = _lines(instance.text)
    original_label = instance.label_line
    normalized = [normalize_whitespace(option) for option in options]
    for letter, option, flat in zip("ABCD", options, normalized):
        if not flat:
            problems.append(f"option {letter} is empty")
            continue
        if flat == original:
            problems.append(f"option {letter} equals the original")
        lines = _lines(option)
        if [_line_header(line) for line in lines] != [_line_header(line) for line in original_lines]:
            problems.append(f"option {letter} changes the line structure")
        elif original_label is not None and label_line(option, instance.label_field) != original_label:
            problems.append(f"option {letter} changes the label line {original_label!r}")
        if abs(len(flat) - len(original)) > max_length_change * len(original):
            problems.append(f"option {letter} changes the length from {len(original)} to {len(flat)} characters")
    for i in range(NUM_OPTIONS):
        for j in range(i + 1, NUM_OPTIONS):
            if normalized[i] and normalized[i] == normalized[j]:
                problems.append(f"options {'ABCD'[i]} and {'ABCD'[j]} are identical")
    return problems


@dataclass(frozen=True)
class OptionsEntry:
    """One cached, validated set of four perturbations."""

    key: str
    instance: str
    label_field: str | None
    options: tuple[str, str, str, str]
    generator: str
    attempts: int


@dataclass(frozen=True)
class OptionsFailure:
    """An instance whose options were still invalid after the last attempt."""

    key: str
    instance: str
    problems: tuple[str, ...]
    attempts: int


@dataclass(frozen=True)
class OptionsRun:
    entries: tuple[OptionsEntry, ...]
    failures: tuple[OptionsFailure, ...]


def collect_options(
    instances: Sequence[QuizInstance],
    propose: Proposer,
    *,
    generator: str,
    attempts: int = DEFAULT_ATTEMPTS,
    max_length_change: float = DEFAULT_MAX_LENGTH_CHANGE,
    chunk_size: int = 16,
    progress: bool = True,
) -> OptionsRun:
    """Propose options for each instance, retrying invalid ones up to ``attempts`` times in total."""
    from tqdm.auto import tqdm

    if attempts < 1:
        raise ContamError(f"attempts must be at least 1, got {attempts}", field="attempts")
    entries: list[OptionsEntry] = []
    failures: list[OptionsFailure] = []
    bar = tqdm(total=len(instances), desc=f"dcq options ({generator})", unit="instance", disable=not progress)
    for start in range(0, len(instances), chunk_size):
        pending = list(instances[start : start + chunk_size])
        problems: dict[str, list[str]] = {}
        for attempt in range(1, attempts + 1):
            proposals = propose(pending, attempt)
            still_pending = []
            for instance, options in zip(pending, proposals, strict=True):
                found = validate_options(instance, options, max_length_change=max_length_change)
                if found:
                    problems[instance.key] = found
                    still_pending.append(instance)
                else:
                    entries.append(OptionsEntry(instance.key, instance.text, instance.label_field,
                                                tuple(options), generator, attempt))  # type: ignore[arg-type]
            pending = still_pending
            if not pending:
                break
        failures.extend(
            OptionsFailure(i.key, i.text, tuple(problems[i.key]), attempts) for i in pending
        )
        bar.update(min(chunk_size, len(instances) - start))
    bar.close()
    return OptionsRun(tuple(entries), tuple(failures))


def model_proposer(complete: Callable[[list[str]], list[str]]) -> Proposer:
    """Proposals from an instruct model: ``complete`` maps generation prompts to completions."""

    def propose(instances: Sequence[QuizInstance], attempt: int) -> list[Proposal]:
        completions = complete([generation_prompt(instance.text) for instance in instances])
        return [parse_options(completion) for completion in completions]

    return propose


def model_completer(
    spec: str, *, device: str | None = None, batch_size: int | str = 1, max_gen_toks: int = GENERATION_MAX_NEW_TOKENS
) -> Callable[[list[str]], list[str]]:
    """Completions at temperature 1.0 from any lm-eval model (HF folder or ``backend:model_args``)."""
    model = ModelSpec.parse(spec, device=device, batch_size=batch_size).build()

    def complete(prompts: list[str]) -> list[str]:
        return generate(model, prompts, max_gen_toks=max_gen_toks, temperature=GENERATION_TEMPERATURE)

    return complete


def read_options(path: str | Path, *, max_length_change: float = DEFAULT_MAX_LENGTH_CHANGE) -> dict[str, OptionsEntry]:
    """The cache at ``path`` keyed by instance hash; every entry is re-validated on load."""
    source = Path(path)
    if not source.is_file():
        return {}
    entries: dict[str, OptionsEntry] = {}
    lines_of: dict[str, int] = {}  # key -> the line it was first read from
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ContamError(f"not UTF-8 text (byte {error.start})", source=str(source)) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise TypeError(f"expected a JSON object, got {type(record).__name__}")
            for name in ("key", "instance"):
                if not isinstance(record.get(name), str):
                    raise TypeError(f"{name} must be text, got {record.get(name)!r}")
            if not isinstance(record.get("options"), list) or not all(
                    isinstance(option, str) for option in record["options"]):
                raise TypeError(f"options must be a list of texts, got {str(record.get('options'))[:60]}")
            entry = OptionsEntry(
                key=record["key"],
                instance=record["instance"],
                label_field=record.get("label_field"),
                options=tuple(record["options"]),  # type: ignore[arg-type]
                generator=record.get("generator", "unknown"),
                attempts=int(record.get("attempts", 1)),
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise ContamError(f"not an options record ({error})", source=where) from None
        if entry.key != instance_key(entry.instance):
            raise ContamError(f"key {entry.key!r} is not the hash of its instance", source=where, field="key")
        problems = validate_options(QuizInstance(entry.instance, entry.label_field), entry.options,
                                    max_length_change=max_length_change)
        if problems:
            raise ContamError("; ".join(problems), source=where, field="options")
        if entry.key in entries and entries[entry.key].options != entry.options:  # the later one won, silently
            raise ContamError(f"key {entry.key!r} is on line {lines_of[entry.key]} too, with other options; keep one "
                              f"set of options per instance", source=where, field="key")
        entries[entry.key] = entry
        lines_of.setdefault(entry.key, number)
    return entries


def append_options(path: str | Path, entries: Iterable[OptionsEntry]) -> None:
    write_jsonl(Path(path), (asdict(entry) for entry in entries), append=True)


def record_failures(options_path: str | Path, failures: Iterable[OptionsFailure]) -> Path:
    """Add ``failures`` to the list beside the cache (one record per instance, the latest kept); its path.

    The list is shared by every partition using the cache, so earlier records stay.
    """
    merged = {**read_failures(options_path), **{failure.key: failure for failure in failures}}
    target = failures_path(options_path)
    staged = target.with_name(target.name + ".tmp")
    write_jsonl(staged, (asdict(failure) for failure in merged.values()))
    staged.replace(target)
    return target


def failures_path(options_path: str | Path) -> Path:
    """Where ``dcq-options`` lists the instances it could not make valid options for."""
    path = Path(options_path)
    return path.with_name(path.name + ".failures.jsonl")


def read_failures(options_path: str | Path) -> dict[str, OptionsFailure]:
    """The recorded failures beside an options cache, keyed by instance hash (empty when none)."""
    source = failures_path(options_path)
    failures: dict[str, OptionsFailure] = {}
    for number, record in enumerate(read_jsonl_objects(source) if source.is_file() else [], start=1):
        try:
            failure = OptionsFailure(key=record["key"], instance=record["instance"],
                                     problems=tuple(record["problems"]), attempts=int(record["attempts"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ContamError(f"not a failure record ({error})", source=f"{source}:{number}") from None
        failures[failure.key] = failure
    return failures


def options_for(
    instances: Sequence[QuizInstance], cache: Mapping[str, OptionsEntry], *, cache_path: str | Path, command: str,
    left_out: Mapping[str, OptionsFailure] | None = None,
) -> list[OptionsEntry]:
    """The cached options of each instance, skipping uncached ones recorded in ``left_out`` (no valid options made).

    Any other missing instance is an error naming the command that makes its options.
    """
    left_out = left_out or {}
    quizzed = [instance for instance in instances if instance.key in cache or instance.key not in left_out]
    if not quizzed:
        raise ContamError(f"none of the {len(instances)} instances has valid quiz options "
                          f"(see {failures_path(cache_path)})", source=str(cache_path))
    instances = quizzed
    missing = [instance for instance in instances if instance.key not in cache]
    if missing:
        raise ContamError(
            f"{len(missing)} of {len(instances)} instances have no quiz options (first: "
            f"{missing[0].text[:80]!r}); generate them with `{command}`",
            source=str(cache_path),
        )
    return [cache[instance.key] for instance in instances]


# Task metadata key under which a quiz records the sampled instances it left out (no valid options), with why.
LEFT_OUT_KEY = QUIZ_LEFT_OUT_KEY
OFFLINE = "offline"  # the generator name of the WordNet perturber


def proposer(generator: str, seed: int, *, device: str | None = None, batch_size: int | str = 1,
             max_gen_toks: int = GENERATION_MAX_NEW_TOKENS) -> Proposer:
    """The WordNet perturber for ``offline``, else the paper's prompt to an instruct model (HF folder or spec)."""
    if generator == OFFLINE:
        return offline_proposer(seed)
    return model_proposer(model_completer(generator, device=device, batch_size=batch_size, max_gen_toks=max_gen_toks))


CHUNK_INSTANCES = 8  # instances per appended chunk: an interrupted run keeps what it finished


@dataclass(frozen=True)
class OptionsReport:
    """What one pass of option making did for a partition's sample."""

    instances: int
    cached: int  # already in the cache before this pass
    written: int
    failures: tuple[OptionsFailure, ...]


def make_options(
    instances: Sequence[QuizInstance],
    out: str | Path,
    propose: Proposer,
    *,
    generator: str,
    attempts: int = DEFAULT_ATTEMPTS,
    max_length_change: float = DEFAULT_MAX_LENGTH_CHANGE,
    progress: bool = True,
) -> OptionsReport:
    """Options for every instance not yet in the cache at ``out``, appended chunk by chunk (a re-run resumes).

    Instances still invalid after ``attempts`` tries are recorded beside the cache
    (:func:`record_failures`), which the quiz then leaves out, saying so.
    """
    cached = read_options(out, max_length_change=max_length_change)
    todo = [instance for instance in instances if instance.key not in cached]
    written, failures = 0, []
    for start in range(0, len(todo), CHUNK_INSTANCES):
        run = collect_options(todo[start : start + CHUNK_INSTANCES], propose, generator=generator, attempts=attempts,
                              max_length_change=max_length_change, progress=progress)
        append_options(out, run.entries)
        written += len(run.entries)
        failures += run.failures
    if failures:
        record_failures(out, failures)
    return OptionsReport(len(instances), len(instances) - len(todo), written, tuple(failures))


def make_quiz_options(samples: Sequence[QuizSample], generator: str, *, progress: bool = True) -> dict[str, int]:
    """Make the quiz options the samples lack (offline perturber by default), before any request; how many sampled
    instances got none, by partition label (only partitions with some).

    Instances that stay invalid are recorded beside the options cache; the quiz leaves
    them out and the task's logged metadata lists them (:data:`LEFT_OUT_KEY`).
    """
    proposers: dict[int, Proposer] = {}
    left_out: dict[str, int] = {}
    for sample in samples:
        instances = sample_instances(sample.partition, sample.partition.rows(), sample.num_instances, sample.seed)
        cached = read_options(sample.options_path)
        if all(instance.key in cached for instance in instances):
            continue
        if sample.seed not in proposers:  # an instruct-model generator loads once per seed, only when needed
            proposers[sample.seed] = proposer(generator, sample.seed)
        report = make_options(instances, sample.options_path, proposers[sample.seed], generator=generator,
                              progress=progress)
        print(f"{sample.partition.label}: made {report.written} quiz option sets with {generator} "
              f"({report.cached} cached) -> {sample.options_path}"
              + (f"; {len(report.failures)} instance(s) left out of the quiz (no valid options)" if report.failures
                 else ""))
        if report.failures:
            left_out[sample.partition.label] = left_out.get(sample.partition.label, 0) + len(report.failures)
    return left_out


OPTIONS_COMMAND = "lm-eval-contam dcq-options"


def default_options_path() -> Path:
    """One cache for every partition (entries are keyed by instance hash): ``$LM_EVAL_CONTAM_HOME/dcq/options.jsonl``."""
    return cache_home() / "dcq" / "options.jsonl"


def options_command(task: str) -> str:
    """The command that makes a quiz task's options."""
    return f"{OPTIONS_COMMAND} --task {task} --generator <instruct model, or offline>"


def sample_options_file(key: str) -> str:
    """The shipped options cache of a sample dataset, a file name under ``task_configs/samples/``."""
    return f"{key}_options.jsonl"
