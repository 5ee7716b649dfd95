"""lm-eval glue for the Data Contamination Quiz: one doc per instance, five quizzes per doc.

A task's YAML selects :class:`DCQTask` with ``class:``; its ``output_type``
picks the answering mode:

* ``generate_until``: greedy generation (``max_gen_toks`` 1 by default), the
  first option letter parsed strictly; an unparseable reply counts as wrong.
* ``loglikelihood``: the five letters scored as continuations of each quiz; the
  argmax is the answer. lm-eval's HF backend groups requests that share a
  context, so each quiz costs one forward pass.

Task ``metadata`` (YAML, overridable with ``--metadata``): the partition in the
schema every method shares (``lm_eval_contam.core.partitions``), and
``num_instances`` (100), ``seed`` (0), ``options_path``, ``confidence_level``
(0.95). Relative paths resolve against the task's YAML directory. Per doc, the
five parsed answers are one structured record ``{"bdq": letter, "bcq": {"A":
letter, ...}}`` (None = unparseable) under every estimate, chance-test and answer metric.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
from lm_eval.api.instance import Instance
from lm_eval.api.metrics import mean
from lm_eval.api.task import ConfigurableTask

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition, metadata_number, resolve_path
from lm_eval_contam.kit.instances import DEFAULT_NUM_INSTANCES, sample_instances
from lm_eval_contam.kit.quiz_options import (
    LEFT_OUT_KEY,
    default_options_path,
    failures_path,
    options_command,
    options_for,
    read_failures,
    read_options,
)
from lm_eval_contam.lmeval.lm_eval_compat import aggregate_without_bootstrapping_task_statistics, task_request
from lm_eval_contam.methods.dcq.chance import ChanceTestResult, chance_test
from lm_eval_contam.methods.dcq.estimate import DCQEstimate, InstanceAnswers, estimate, top_letter_share
from lm_eval_contam.methods.dcq.quiz import (
    LETTERS,
    POSITIONS,
    QUIZ_NAMES,
    build_quizzes,
    letter_continuations,
    parse_answer,
    quiz_prompt,
)

log = logging.getLogger("lm_eval_contam.methods.dcq")
QUIZ_KEY = "dcq_quiz"  # set on a copy of the doc to select which quiz doc_to_text renders


@dataclass(frozen=True)
class DCQSettings:
    """What a DCQ task quizzes on, read from its metadata."""

    partition: Partition
    num_instances: int
    seed: int
    options_path: Path
    confidence_level: float

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None, split: str) -> "DCQSettings":
        metadata = dict(metadata or {})
        options = metadata.get("options_path")
        return cls(
            partition=Partition.from_task_metadata(metadata, split),
            num_instances=metadata_number(metadata, "num_instances", DEFAULT_NUM_INSTANCES, minimum=1),
            seed=metadata_number(metadata, "seed", 0),
            options_path=resolve_path(options, metadata) if options else default_options_path(),
            confidence_level=metadata_number(metadata, "confidence_level", 0.95, kind=float, minimum=0.5,
                                             maximum=0.999),
        )


def answers_record(letters: Sequence[str | None]) -> dict[str, Any]:
    """A doc's five parsed answers (QUIZ_NAMES order) as a structured record; None = unparseable."""
    bdq, *bcq = letters
    return {"bdq": bdq, "bcq": dict(zip(POSITIONS, bcq))}


AnswersKey = tuple[tuple[str | None, ...], ...]


def _answers(key: AnswersKey) -> list[InstanceAnswers]:
    return [InstanceAnswers(bdq=a[0], bcq=dict(zip(POSITIONS, a[1:]))) for a in key]


def _answers_key(records: Sequence[Mapping[str, Any]]) -> AnswersKey:
    return tuple((r["bdq"], *(r["bcq"][p] for p in POSITIONS)) for r in records)


@functools.lru_cache(maxsize=64)
def _estimate(answers: AnswersKey, confidence_level: float) -> DCQEstimate:
    return estimate(_answers(answers), confidence_level=confidence_level)


@functools.lru_cache(maxsize=64)
def _chance_test(answers: AnswersKey, seed: int) -> ChanceTestResult:
    return chance_test(_answers(answers), seed=seed)


def partition_answers(records: Sequence[Mapping[str, Any]]) -> list[InstanceAnswers]:
    """One partition's per-doc answer records as the methods' answers."""
    return _answers(_answers_key(records))


def partition_estimate(records: Sequence[Mapping[str, Any]], confidence_level: float) -> DCQEstimate:
    """The DCQ estimate over one partition's per-doc answer records, computed once."""
    return _estimate(_answers_key(records), confidence_level)


def partition_chance_test(records: Sequence[Mapping[str, Any]], seed: int) -> ChanceTestResult:
    """Our test of the whole procedure under no memory over the same records, computed once."""
    return _chance_test(_answers_key(records), seed)


# Metrics that need every doc's answers (the per-doc value is the answer record).
ESTIMATE_METRICS = {
    "dcq_max": lambda e: e.max,
    "dcq_min": lambda e: e.min,
    "dcq_kappa": lambda e: e.kappa,
    "dcq_pvalue": lambda e: e.pvalue,
    "dcq_max_ci_low": lambda e: e.confidence_interval.low,
    "dcq_max_ci_high": lambda e: e.confidence_interval.high,
    **{f"dcq_non_preferred_{p}": (lambda e, p=p: float(p in e.non_preferred)) for p in POSITIONS},
}
# Metrics of our chance test (lm_eval_contam.methods.dcq.chance), from the same records.
CHANCE_METRICS = {
    "dcq_pvalue_null": lambda t: t.pvalue,
    "dcq_chance_max": lambda t: t.chance_max,
}
# Metrics of the answers themselves, from the same records. The top letter itself gets no metric (lm-eval's are
# numbers): the verdict needs it only at share 1.0, where it is the letter whose BDQ pick rate is 1.0, already here.
ANSWER_METRICS = {
    "dcq_top_letter_share": top_letter_share,
}
# Every metric whose per-doc value is the answer record.
RECORD_METRICS = (*ESTIMATE_METRICS, *CHANCE_METRICS, *ANSWER_METRICS)
# Metrics that are means of per-doc values.
MEAN_METRICS = (
    *(f"dcq_bdq_{letter}" for letter in LETTERS),
    *(f"dcq_bcq_{p}" for p in POSITIONS),
    "dcq_unparseable",
)


def per_doc_metrics(letters: Sequence[str | None]) -> dict[str, Any]:
    """process_results' output for one doc from its five parsed answers (QUIZ_NAMES order)."""
    bdq, *bcq = letters
    record = answers_record(letters)
    return {
        **{name: record for name in RECORD_METRICS},
        **{f"dcq_bdq_{letter}": float(bdq == letter) for letter in LETTERS},
        **{f"dcq_bcq_{p}": float(reply == p) for p, reply in zip(POSITIONS, bcq)},
        "dcq_unparseable": sum(letter is None for letter in letters) / len(letters),
    }


def argmax_letter(loglikelihoods: Sequence[float]) -> str:
    best = max(range(len(LETTERS)), key=lambda i: loglikelihoods[i])
    return LETTERS[best]


class DCQTask(ConfigurableTask):
    """The DCQ over one partition: BDQ + BCQ-A..D per sampled instance."""

    def __init__(self, config: dict | None = None, **kwargs: Any) -> None:
        # `class` selected this Task subclass; it is no TaskConfig field.
        super().__init__(config={key: value for key, value in (config or {}).items() if key != "class"}, **kwargs)

    @property
    def settings(self) -> DCQSettings:
        return DCQSettings.from_metadata(self.config.metadata, self.config.test_split)

    def test_docs(self) -> datasets.Dataset:
        # lm-eval reads the eval docs several times; build them once.
        if getattr(self, "_dcq_docs", None) is None:
            self._dcq_docs = self._build_docs()
        return self._dcq_docs

    def _build_docs(self) -> datasets.Dataset:
        settings = self.settings
        rows = self.dataset[self.config.test_split]
        instances = sample_instances(settings.partition, rows, settings.num_instances, settings.seed)
        cache = read_options(settings.options_path)
        left_out = read_failures(settings.options_path)
        entries = options_for(instances, cache, cache_path=settings.options_path,
                              command=options_command(self.config.task), left_out=left_out)
        quizzed = {entry.key for entry in entries}
        # Recorded in the task's logged config, where the verdict and the audit read it: never a silent drop.
        self.config.metadata[LEFT_OUT_KEY] = [
            {"instance": left_out[i.key].instance, "problems": list(left_out[i.key].problems)}
            for i in instances if i.key not in quizzed]
        if len(entries) < len(instances):
            log.warning("%s: %d of %d instances left out of the quiz (no valid options; listed in %s)",
                        self.config.task, len(instances) - len(entries), len(instances),
                        failures_path(settings.options_path))
        return datasets.Dataset.from_list(
            [
                {
                    "instance": entry.instance,
                    "key": entry.key,
                    "options": list(entry.options),
                    "dataset_name": settings.partition.dataset.display_name,
                    "split": settings.partition.split,
                }
                for entry in entries
            ]
        )

    def doc_to_text(self, doc: dict, doc_to_text: Any = None) -> str:
        quizzes = build_quizzes(doc["instance"], doc["options"])
        quiz = quizzes[QUIZ_NAMES.index(doc.get(QUIZ_KEY, QUIZ_NAMES[0]))]
        prompt = quiz_prompt(quiz.options, split_name=doc["split"], dataset_name=doc["dataset_name"])
        # Loglikelihood mode (ours) scores " A".." E" as the continuation of "ANSWER:"; the paper's
        # generate mode sends the prompt verbatim, final newline included.
        return prompt.removesuffix("\n") if self.OUTPUT_TYPE == "loglikelihood" else prompt

    def doc_to_target(self, doc: dict, doc_to_target: Any = None) -> str:
        """The correct letters of the five quizzes, e.g. "E A B C D"."""
        return " ".join(quiz.answer for quiz in build_quizzes(doc["instance"], doc["options"]))

    def fewshot_context(self, doc: dict, num_fewshot: int, **kwargs: Any) -> list[str]:  # type: ignore[override]
        """One context per quiz, each rendered by lm-eval (system prompt, chat template) exactly as usual."""
        if num_fewshot:
            raise ContamError(f"the quiz is zero-shot; got num_fewshot={num_fewshot}", field="num_fewshot")
        return [super(DCQTask, self).fewshot_context(doc={**doc, QUIZ_KEY: name}, num_fewshot=0, **kwargs)
                for name in QUIZ_NAMES]

    def construct_requests(self, doc: dict, ctx: list[str], **kwargs: Any) -> list[Instance]:
        apply_chat_template = kwargs.get("apply_chat_template", False)
        if self.OUTPUT_TYPE == "generate_until":
            return [task_request(self, doc, (context, deepcopy(self.config.generation_kwargs)), i, **kwargs)
                    for i, context in enumerate(ctx)]
        if self.OUTPUT_TYPE != "loglikelihood":
            raise ContamError(f"DCQ tasks answer by generate_until or loglikelihood, not {self.OUTPUT_TYPE!r}",
                              field="output_type")
        # Under a chat template the context ends with the assistant header: no space before the letter.
        continuations = letter_continuations("" if apply_chat_template else self.config.target_delimiter)
        return [
            task_request(self, doc, (context, continuation), q * len(LETTERS) + i, **kwargs)
            for q, context in enumerate(ctx)
            for i, continuation in enumerate(continuations)
        ]

    def parsed_answers(self, results: Sequence[Any]) -> list[str | None]:
        """The five quizzes' letters from the model's replies (generate) or loglikelihoods."""
        if self.OUTPUT_TYPE == "generate_until":
            return [parse_answer(reply) for reply in results]
        loglikelihoods = [ll for ll, _is_greedy in results]
        width = len(LETTERS)
        return [argmax_letter(loglikelihoods[q * width : (q + 1) * width]) for q in range(len(QUIZ_NAMES))]

    def process_results(self, doc: dict, results: Sequence[Any]) -> dict[str, Any]:
        return per_doc_metrics(self.parsed_answers(results))

    def aggregation(self) -> dict:
        settings = self.settings

        def from_estimate(read):
            return lambda records: read(partition_estimate(records, settings.confidence_level))

        def from_chance_test(read):
            return lambda records: read(partition_chance_test(records, settings.seed))

        def from_answers(read):
            return lambda records: read(partition_answers(records))

        return {
            **{name: from_estimate(read) for name, read in ESTIMATE_METRICS.items()},
            **{name: from_chance_test(read) for name, read in CHANCE_METRICS.items()},
            **{name: from_answers(read) for name, read in ANSWER_METRICS.items()},
            **{name: mean for name in MEAN_METRICS},
        }

    def aggregate(self, bootstrap_iters: int | None = 100_000) -> tuple[dict[str, Any], int]:
        """lm-eval 0.5's aggregation entry point: no bootstrap of the partition statistics (see lm_eval_compat)."""
        return aggregate_without_bootstrapping_task_statistics(self, bootstrap_iters)

    def higher_is_better(self) -> dict:
        lower = {"dcq_pvalue", "dcq_pvalue_null", "dcq_chance_max", "dcq_unparseable", "dcq_top_letter_share"}
        return {name: name not in lower for name in (*RECORD_METRICS, *MEAN_METRICS)}
