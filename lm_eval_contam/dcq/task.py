"""lm-eval glue for the Data Contamination Quiz: one doc per instance, five quizzes per doc.

A task's YAML selects :class:`DCQTask` with ``class:``; its ``output_type``
picks the answering mode:

* ``generate_until``: greedy generation (``max_gen_toks`` 1 by default), the
  first option letter parsed strictly; an unparseable reply counts as wrong.
* ``loglikelihood``: the five letters scored as continuations of each quiz; the
  argmax is the answer. lm-eval's HF backend groups requests that share a
  context, so each quiz costs one forward pass.

Task ``metadata`` (YAML, overridable with ``--metadata``): ``dataset`` (a key of
``lm_eval_contam.partitions.DATASETS``) or, for one's own data, ``dataset_name``
+ ``columns`` [+ ``label_field``, ``label_names``] + ``data_files``; and
``num_instances`` (100), ``seed`` (0), ``options_path``, ``confidence_level``
(0.95). Relative paths resolve against the task's YAML directory.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
from lm_eval.api.instance import Instance
from lm_eval.api.metrics import mean
from lm_eval.api.task import ConfigurableTask

from lm_eval_contam.datafiles import data_file, resolve_path
from lm_eval_contam.dcq.estimate import DCQEstimate, InstanceAnswers, estimate
from lm_eval_contam.dcq.instances import DEFAULT_NUM_INSTANCES, QuizPartition
from lm_eval_contam.dcq.options import options_for, read_options
from lm_eval_contam.dcq.quiz import (
    LETTERS,
    POSITIONS,
    QUIZ_NAMES,
    build_quizzes,
    letter_continuations,
    parse_answer,
    quiz_prompt,
)
from lm_eval_contam.errors import ContamError
from lm_eval_contam.models import cache_home

OPTIONS_COMMAND = "lm-eval-contam dcq-options"
QUIZ_KEY = "dcq_quiz"  # set on a copy of the doc to select which quiz doc_to_text renders
UNPARSEABLE = "-"  # stands for an unparseable reply in a doc's answer string


def default_options_path() -> Path:
    """One cache for every partition (entries are keyed by instance hash): ``$LM_EVAL_CONTAM_HOME/dcq/options.jsonl``."""
    return cache_home() / "dcq" / "options.jsonl"


@dataclass(frozen=True)
class DCQSettings:
    """What a DCQ task quizzes on, read from its metadata."""

    partition: QuizPartition
    num_instances: int
    seed: int
    options_path: Path
    confidence_level: float
    dataset_flags: tuple[str, ...]  # how `dcq-options` names this partition

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None, split: str) -> "DCQSettings":
        metadata = dict(metadata or {})
        source = metadata.get("config_source")
        if "dataset" in metadata:
            partition = QuizPartition.from_dataset(str(metadata["dataset"]), split)
            flags: tuple[str, ...] = ("--dataset", str(metadata["dataset"]))
        else:
            missing = [key for key in ("dataset_name", "columns", "data_files") if key not in metadata]
            if missing:
                raise ContamError(
                    f"set `dataset` (a registry key) or {', '.join(missing)} in the task metadata",
                    source=source, field="metadata",
                )
            partition = QuizPartition(
                display_name=str(metadata["dataset_name"]),
                split=split,
                columns=tuple(metadata["columns"]),
                label_field=metadata.get("label_field"),
                label_names=tuple(metadata.get("label_names") or ()),
            )
            flags = (
                "--dataset", str(data_file(metadata, split)),
                "--dataset-name", partition.display_name,
                "--columns", ",".join(partition.columns),
            )
            if partition.label_field:
                flags += ("--label-field", partition.label_field)
            if partition.label_names:
                flags += ("--label-names", ",".join(partition.label_names))
        options = metadata.get("options_path")
        return cls(
            partition=partition,
            num_instances=int(metadata.get("num_instances", DEFAULT_NUM_INSTANCES)),
            seed=int(metadata.get("seed", 0)),
            options_path=resolve_path(options, metadata) if options else default_options_path(),
            confidence_level=float(metadata.get("confidence_level", 0.95)),
            dataset_flags=flags,
        )

    def options_command(self) -> str:
        args = [
            *self.dataset_flags,
            "--split", self.partition.split,
            "--num-instances", str(self.num_instances),
            "--seed", str(self.seed),
            "--generator", "<instruct model, or offline>",
            "--out", str(self.options_path),
        ]
        return f"{OPTIONS_COMMAND} {shlex.join(args)}"


def answers_string(letters: Sequence[str | None]) -> str:
    """A doc's five parsed answers (BDQ, BCQ-A..D) as one string, e.g. "EAB-D" ('-' = unparseable)."""
    return "".join(letter or UNPARSEABLE for letter in letters)


def instance_answers(answers: str) -> InstanceAnswers:
    letters = [None if letter == UNPARSEABLE else letter for letter in answers]
    return InstanceAnswers(bdq=letters[0], bcq=dict(zip(POSITIONS, letters[1:])))


@functools.lru_cache(maxsize=64)
def _estimate(answers: tuple[str, ...], confidence_level: float) -> DCQEstimate:
    return estimate([instance_answers(a) for a in answers], confidence_level=confidence_level)


# Metrics that need every doc's answers (the per-doc value is the answer string).
ESTIMATE_METRICS = {
    "dcq_max": lambda e: e.max,
    "dcq_min": lambda e: e.min,
    "dcq_kappa": lambda e: e.kappa,
    "dcq_pvalue": lambda e: e.pvalue,
    "dcq_max_ci_low": lambda e: e.confidence_interval.low,
    "dcq_max_ci_high": lambda e: e.confidence_interval.high,
    **{f"dcq_non_preferred_{p}": (lambda e, p=p: float(p in e.non_preferred)) for p in POSITIONS},
}
# Metrics that are means of per-doc values.
MEAN_METRICS = (
    *(f"dcq_bdq_{letter}" for letter in LETTERS),
    *(f"dcq_bcq_{p}" for p in POSITIONS),
    "dcq_unparseable",
)


def per_doc_metrics(letters: Sequence[str | None]) -> dict[str, Any]:
    """process_results' output for one doc from its five parsed answers (QUIZ_NAMES order)."""
    bdq, *bcq = letters
    answers = answers_string(letters)
    return {
        **{name: answers for name in ESTIMATE_METRICS},
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
        instances = settings.partition.sample(rows, settings.num_instances, settings.seed)
        cache = read_options(settings.options_path)
        entries = options_for(instances, cache, cache_path=settings.options_path, command=settings.options_command())
        return datasets.Dataset.from_list(
            [
                {
                    "instance": entry.instance,
                    "key": entry.key,
                    "options": list(entry.options),
                    "dataset_name": settings.partition.display_name,
                    "split": settings.partition.split,
                }
                for entry in entries
            ]
        )

    def doc_to_text(self, doc: dict, doc_to_text: Any = None) -> str:
        quizzes = build_quizzes(doc["instance"], doc["options"])
        quiz = quizzes[QUIZ_NAMES.index(doc.get(QUIZ_KEY, QUIZ_NAMES[0]))]
        return quiz_prompt(quiz.options, split_name=doc["split"], dataset_name=doc["dataset_name"])

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
        apply_chat_template = kwargs.pop("apply_chat_template", False)
        kwargs.pop("chat_template", None)
        if self.OUTPUT_TYPE == "generate_until":
            return [
                Instance("generate_until", doc, (context, deepcopy(self.config.generation_kwargs)), idx=i, **kwargs)
                for i, context in enumerate(ctx)
            ]
        if self.OUTPUT_TYPE != "loglikelihood":
            raise ContamError(f"DCQ tasks answer by generate_until or loglikelihood, not {self.OUTPUT_TYPE!r}",
                              field="output_type")
        # Under a chat template the context ends with the assistant header: no space before the letter.
        delimiter = "" if apply_chat_template else self.config.target_delimiter
        continuations = letter_continuations(delimiter)
        return [
            Instance("loglikelihood", doc, (context, continuation), idx=q * len(LETTERS) + i, **kwargs)
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
        level = self.settings.confidence_level

        def from_estimate(read):
            return lambda answers: read(_estimate(tuple(answers), level))

        return {
            **{name: from_estimate(read) for name, read in ESTIMATE_METRICS.items()},
            **{name: mean for name in MEAN_METRICS},
        }

    def higher_is_better(self) -> dict:
        lower = {"dcq_pvalue", "dcq_unparseable"}
        return {name: name not in lower for name in (*ESTIMATE_METRICS, *MEAN_METRICS)}
