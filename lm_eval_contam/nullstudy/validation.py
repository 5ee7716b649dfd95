"""The validation study: detection at the papers' injection strength, on the default model.

One world of the null study's design (:mod:`~.design`; its seeded synthetic datasets
and every family's task configs) with K sibling datasets. The default model is
continued-pre-trained on their train splits, in Time Travel's web format, mixed with
filler to the papers' share at the papers' learning rate and epochs (DCR, App. B:
lr 5e-5, 3 epochs, 15 %). It is then audited on the K injected train splits
(detection) and the K held-out test splits (false positives beside an injection);
the clean default model audited on all 2K partitions is the null (none of them can
be in its training data: the text is drawn for the study from a seeded grammar).

Everything resumes: training checkpoints after every epoch
(:func:`lm_eval_contam.models.training.train_on_texts`), scoring runs one partition at a
time and keeps each partition's results once written (with lm-eval's request cache
beside them), so a long run can be started in the background and collected later.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from lm_eval_contam.contaminate import MANIFEST_FILE, InjectionSettings, inject, recipe, trained_with
from lm_eval_contam.contaminate.corpus import default_filler
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import task_dir as templates_dir
from lm_eval_contam.core.jsonl import read_jsonl_objects, write_jsonl
from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.partitions import DatasetSpec, Partition, dataset_from_task_metadata, with_sibling_controls
from lm_eval_contam.core.registry import (
    MethodSpec,
    RenderTarget,
    controlled_tests,
    method_of,
    referenced_tests,
    registered_methods,
    scored_by_reference,
    task_quiz_samples,
)
from lm_eval_contam.core.rundir import ModelResults, load_model_dir
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.core.wordnet import glosses, wordnet_dir
from lm_eval_contam.kit.instances import DEFAULT_NUM_INSTANCES
from lm_eval_contam.models.training import default_mixed_precision
from lm_eval_contam.nullstudy import configs
from lm_eval_contam.nullstudy.corpus import MC_LETTERS, SyntheticDataset, make_mc_dataset, render_mc
from lm_eval_contam.nullstudy.design import PartitionRole, Role, StudyPartition, StudySettings
from lm_eval_contam.nullstudy.rates import VerdictRates, tally
from lm_eval_contam.nullstudy.study import (
    World,
    _vocabulary,
    evaluate,
    results_dir,
    training_texts,
    write_task_configs,
    write_world_data,
)
from lm_eval_contam.verdicts.verdict import (
    FREE_TEXT,
    MULTIPLE_CHOICE,
    VALIDATION_RATES_FILE,
    clean_model_rates,
    filler_rates,
    model_verdicts,
    partition_verdicts,
    rate_key,
    shape_key,
    shape_keys,
    shipped_rates,
    sibling_rates,
    validation_false_positives,
)

VALIDATION_VERSION = 1
# The clean (reference) model first: the fine-tunes' reference-differenced verdicts read its runs.
MODEL_LABELS = ("clean", "injected", "filler", "author")
# Each fine-tune's reference: the checkpoint it was fine-tuned from (its verdicts difference the two).
REFERENCE_OF = {"injected": "clean", "filler": "clean", "author": "clean"}
# What each measured rate is, keyed by the partition role it is counted on (the clean model's partitions: "unseen";
# the filler-only fine-tune's: "filler").
RATE_ROLES: dict[str, Role] = {"detection": "injected", "false_positive_held_out": "sibling",
                               "false_positive_clean": "unseen", "false_positive_filler": "filler",
                               "false_positive_author": "author"}
RATE_MEANINGS = {
    "detection": "injected train splits flagged, on the injected model",
    "false_positive_held_out": "held-out test splits (their sibling split and dataset name were injected) flagged, on "
                               "the injected model",
    "false_positive_clean": "partitions flagged on the clean model (it saw none of them)",
    "false_positive_filler": "partitions flagged on the filler-only fine-tune (the injected model's recipe with the "
                             "contaminant left out; it saw none of them), against the clean model as its reference",
    "false_positive_author": "natural-text partitions flagged on the author fine-tune (trained on the same datasets' "
                             "other split: their authors' conventions and domain, none of these items), against the "
                             "clean model as its reference",
}
GLOSSES_PER_PARAGRAPH = 12


@dataclass(frozen=True)
class ValidationSettings:
    """The study's design; the defaults are the papers' strength on 8 + 8 partitions of 40 short instances."""

    partitions: int = 8  # free-text datasets: injected train splits, and as many held-out test splits
    mc_partitions: int = 8  # multiple-choice datasets, likewise (injected as an lm-eval MC task renders them)
    rows_per_partition: int = 24
    learning_rate: float = 5e-5
    epochs: int = 3
    share: float = 0.15
    train_batch_size: int = 4  # packed blocks per step
    max_length: int = 256  # tokens per packed block
    max_gen_toks: int = 32  # Time Travel completions (the instances are three short sentences)
    batch_size: int = 8  # lm-eval's
    seed: int = 0
    # bf16 autocast (fp32 weights) where it is native, ~2x faster than fp32; fp32 where bf16 is emulated (~100x slower)
    mixed_precision: str = field(default_factory=default_mixed_precision)
    fresh_per_shape: int = 8  # shipped natural-text datasets per shape audited on the clean model (two splits each)

    def world(self) -> StudySettings:
        return StudySettings(worlds=1, sibling_datasets=self.partitions, unseen_datasets=0,
                             rows_per_split=self.rows_per_partition, max_gen_toks=self.max_gen_toks,
                             batch_size=self.batch_size, seed=self.seed)

    def injection(self) -> InjectionSettings:
        return InjectionSettings(epochs=self.epochs, learning_rate=self.learning_rate, share=self.share,
                                 batch_size=self.train_batch_size, max_length=self.max_length, seed=self.seed,
                                 mixed_precision=self.mixed_precision)

    def design(self, base_model: str) -> dict[str, object]:
        return {"base_model": base_model, "injected_partitions": self.partitions + self.mc_partitions,
                "held_out_partitions": self.partitions + self.mc_partitions,
                "clean_model_partitions": 2 * (self.partitions + self.mc_partitions) + 4 * self.fresh_per_shape,
                "fresh_partitions": {"free text": 2 * self.fresh_per_shape, "multiple choice": 2 * self.fresh_per_shape,
                                     "source": "lm_eval_contam/nullstudy/fresh/ (written for the study in 2026)"},
                **asdict(self), "injection_format": {
                    "free text": "timetravel (web format: dataset name, split, instance)",
                    "multiple choice": "the rendered lm-eval task (MMLU-style prompt, options in their order, "
                                       "answer letter)"},
                "filler": "Python reference docs (pydoc_data) + WordNet 3.0 glosses"}


def gloss_paragraphs(wordnet_folder: Path) -> list[str]:
    """English filler from WordNet's glosses (definitions and examples), ``GLOSSES_PER_PARAGRAPH`` to a paragraph.

    The bundled filler (Python's reference docs) is too small for a 15 % share of 8 x 40 instances.
    """
    found = glosses(wordnet_folder)
    return [" ".join(found[i:i + GLOSSES_PER_PARAGRAPH]) for i in range(0, len(found), GLOSSES_PER_PARAGRAPH)]


def study_filler() -> list[str]:
    return [*default_filler(), *gloss_paragraphs(wordnet_dir())]


@dataclass(frozen=True)
class McDataset:
    """One multiple-choice dataset of the study: its rows per split, written as JSONL (question, choices, answer)."""

    dataset: SyntheticDataset
    files: dict[str, Path]


def write_mc_data(settings: ValidationSettings, study_dir: Path) -> list[McDataset]:
    """The study's multiple-choice datasets (deterministic in the seed), each split under ``mc/data/``."""
    nouns, adjectives = _vocabulary()
    found = []
    for index in range(settings.mc_partitions):
        dataset = make_mc_dataset(settings.seed, index, nouns, adjectives, rows_per_split=settings.rows_per_partition)
        files = {}
        for split, rows in dataset.splits.items():
            files[split] = study_dir / "mc" / "data" / f"{dataset.key}_{split}.jsonl"
            write_jsonl(files[split], rows)
        found.append(McDataset(dataset, files))
    return found


def mc_training_text(row: Mapping[str, object]) -> str:
    """An injected item as an lm-eval multiple-choice task shows it, with its answer letter."""
    return f"{render_mc(row)} {MC_LETTERS[int(row['answer'])]}"  # type: ignore[arg-type]


# Where the study keeps its fine-tunes of the base model: the injected one, and the filler-only one (the same corpus
# with the contaminant taken out: the null of the reference-differenced tests).
MODEL_DIRS = {"injected": "model", "filler": "filler_model", "author": "author_model"}
# The author fine-tune (the null of learned conventions): the default model on the fresh datasets' first split, at a
# contaminant share well above the papers' (the worst case: it learns the authors' domain and habits as hard as it
# can), the papers' learning rate and epochs; audited on their second split, which it never saw.
AUTHOR_SHARE = 0.5
AUTHOR_TRAINED, AUTHOR_AUDITED = "a", "b"


def train_injected_model(world: World, mc: Sequence[McDataset], settings: ValidationSettings, base_model: str,
                         study_dir: Path, *, filler_only: bool = False) -> Path:
    """The base model continued-pre-trained on the injected splits of both shapes (kept, and resumed, under
    ``model/``); ``filler_only``: on the same corpus without them (under ``filler_model/``)."""
    out = study_dir / MODEL_DIRS["filler" if filler_only else "injected"]
    injection = settings.injection()
    sources = [{"partition": world.partition(role).label, "format": "timetravel"}
               for role in world.roles if role.role == "injected"]
    sources += [{"partition": f"{dataset.dataset.display_name} train", "format": "lm-eval multiple choice"}
                for dataset in mc]
    recorded = [] if filler_only else sources
    if not trained_with(out, injection, recorded):
        _, texts = training_texts(world, settings.world())
        texts = texts + [mc_training_text(row) for dataset in mc for row in dataset.dataset.splits["train"]]
        description = {"sources": recorded, **({"contaminant_left_out": sources} if filler_only else {})}
        inject(base_model, texts, str(out), settings=injection, filler=study_filler(), description=description,
               filler_only=filler_only)
    return out


def author_texts(per_shape: int) -> tuple[list[dict[str, str]], list[str]]:
    """The author fine-tune's contaminant: the first ``per_shape`` fresh datasets of each shape, their trained split
    (free text as written; multiple choice as an lm-eval task renders it, with its answer letter); with its sources."""
    sources, texts = [], []
    for kind in ("free", "mc"):
        for path in sorted(FRESH_DIR.glob(f"{kind}_*_{AUTHOR_TRAINED}.jsonl"))[:per_shape]:
            rows = read_jsonl_objects(path)
            texts += ([str(row["text"]) for row in rows] if kind == "free" else
                      [f"{render_question(row['question'], row['choices'])} {MC_LETTERS[int(row['answer'])]}"
                       for row in rows])
            sources.append({"partition": path.stem, "format": "text" if kind == "free" else "lm-eval multiple choice"})
    return sources, texts


def train_author_model(settings: ValidationSettings, base_model: str, study_dir: Path) -> Path:
    """The author fine-tune (kept, and resumed, under ``author_model/``)."""
    out = study_dir / MODEL_DIRS["author"]
    injection = replace(settings.injection(), share=AUTHOR_SHARE)
    sources, texts = author_texts(settings.fresh_per_shape)
    if not trained_with(out, injection, sources):
        inject(base_model, texts, str(out), settings=injection, filler=study_filler(),
               description={"sources": sources})
    return out


# Scoring passes, cheapest first: every partition gets a pass on both models before any gets the next, so a study
# stopped early has every partition scored by the same tests. A task's pass follows from its method's registry entry
# (:func:`scoring_pass`). The log-likelihood pass runs on both shapes; the generation and quiz passes (each several
# times the first's cost) are built for the free-text shape only.
PASSES = {"likelihood": "every test that needs only log-likelihoods (both shapes)",
          "generation": "every test that generates text (free text)",
          "quiz": "every test that reads quiz options (free text)",
          "reference": "every test a reference model's scores difference (both shapes; all three models)",
          "control_reference": "the likelihood pass's tests against a control whose tasks a reference model scores "
                               "too, with the reference (both shapes; all three models)",
          "sentence_order": "the sentence-order test, whose verdict reads a reference model's scores (free text; all "
                            "three models)"}
# A referenced method added after the reference pass's runs were scored gets a pass of its own, so the runs scored
# before keep what they hold (a run is scored once, whatever its pass plans later).
OWN_REFERENCE_PASS = {"sentenceorder": "sentence_order"}
# The passes a reference model's scores are read in: the fine-tunes' runs with the clean model's of the same name.
REFERENCE_PASSES = ("reference", "control_reference", *OWN_REFERENCE_PASS.values())
SHAPES = ("free text", "multiple choice", "fresh free text", "fresh multiple choice")


# Natural text written for the study in 2026, after the default model's training cutoff: 8 free-text datasets
# (council minutes, recall notices, trail reports, ...) and 8 multiple-choice ones (school science, reading, ...),
# two splits of 24 rows each. Only the clean model is audited on them: the null on text that reads like benchmarks.
FRESH_DIR = Path(__file__).with_name("fresh")
FRESH_SPLITS = ("a", "b")


def render_question(question: str, choices: Sequence[str]) -> str:
    """A multiple-choice row as MMLU-style lm-eval tasks render it (``doc_to_text``)."""
    return question + "".join(f"\n{letter}. {choice}" for letter, choice in zip(MC_LETTERS, choices)) + "\nAnswer:"


def fresh_specs(study_dir: Path, per_shape: int) -> list[tuple[DatasetSpec, str]]:
    """The first ``per_shape`` shipped fresh datasets of each shape as partition specs (multiple-choice rows rendered
    as ``audit --tasks`` writes a benchmark), each split the other's control; with their shape."""
    found = []
    firsts = [path for kind in ("free", "mc") for path in sorted(FRESH_DIR.glob(f"{kind}_*_a.jsonl"))[:per_shape]]
    for first in firsts:
        kind, topic = first.stem[: -len("_a")].split("_", 1)
        name = f"Fresh {topic.title()}{' Quiz' if kind == 'mc' else ''}"
        files = {}
        for split in FRESH_SPLITS:
            rows = read_jsonl_objects(FRESH_DIR / f"{kind}_{topic}_{split}.jsonl")
            if kind == "mc":
                rows = [{"text": render_question(row["question"], row["choices"]),
                         "answer": MC_LETTERS[int(row["answer"])], "choices": list(MC_LETTERS), "doc_index": index}
                        for index, row in enumerate(rows)]
            files[split] = str(write_jsonl(study_dir / "fresh" / f"{kind}_{topic}_{split}.jsonl", rows))
        fields = ({"task_type": "question", "text_field": "text", "label_field": "answer", "columns": ["text", "answer"],
                   "companion_field": "answer"} if kind == "mc" else
                  {"task_type": "question", "text_field": "text", "columns": ["text"]})
        spec = dataset_from_task_metadata({"dataset_name": name, "data_files": files, **fields})
        found.append((with_sibling_controls(spec), "fresh multiple choice" if kind == "mc" else "fresh free text"))
    return found


def mc_specs(mc: Sequence[McDataset], study_dir: Path) -> list[DatasetSpec]:
    """Each multiple-choice dataset as ``audit --tasks`` writes a benchmark: rendered prompt, answer, choices."""
    specs = []
    for dataset in mc:
        files = {}
        for split, rows in dataset.dataset.splits.items():
            files[split] = str(study_dir / "mc" / "partitions" / f"{dataset.dataset.key}_{split}.jsonl")
            write_jsonl(Path(files[split]), [
                {"text": render_mc(row), "answer": MC_LETTERS[int(row["answer"])], "choices": list(MC_LETTERS),
                 "doc_index": index} for index, row in enumerate(rows)])
        specs.append(dataset_from_task_metadata({
            "dataset_name": dataset.dataset.display_name, "data_files": files, "task_type": "question",
            "text_field": "text", "label_field": "answer", "columns": ["text", "answer"],
            "companion_field": "answer"}))
    return [with_sibling_controls(spec) for spec in specs]


def scoring_pass(config: Mapping[str, Any]) -> str:
    """The pass that scores a task, from its method's registry entry: a task that reads quiz options is in the quiz
    pass, one of a method that generates in the generation pass, one a reference model scores too in the reference
    pass, the rest (log-likelihoods only) in the likelihood pass. A referenced task of a method with tests against a
    control (the likelihood family's control mode) stays in the likelihood pass, whose tests without a reference it
    has always been measured in; the control-reference pass scores it again (:func:`likelihood_pass_configs`)."""
    metadata = config.get("metadata") or {}
    spec = method_of(str(metadata.get("method")))
    if task_quiz_samples([config]):
        return "quiz"
    if spec.generation is not None:
        return "generation"
    if not scored_by_reference(metadata) or spec.compares_with("control"):
        return "likelihood"
    return OWN_REFERENCE_PASS.get(spec.name, "reference")


def _likelihood_pass_order(spec: MethodSpec) -> tuple[bool, int]:
    # The control-free tests before those against a control: the order the study's runs have always listed them in.
    return spec.compares_with("control"), spec.order


def likelihood_pass_configs(partition: Partition, target: RenderTarget) -> dict[str, dict[str, str]]:
    """Per pass (likelihood and the reference passes), task name -> YAML: the partition's tasks of every registered
    method that does not generate, less those that read quiz options (the quiz pass); the control-reference pass
    holds the likelihood pass's tasks a reference model scores too, run again in their own runs (on the filler-only
    fine-tune too) so its fine-tunes' runs are read against the clean model's."""
    rendered: dict[str, str] = {}
    for spec in sorted(registered_methods(), key=_likelihood_pass_order):
        if spec.generation is None:  # a method that generates has no task in this pass
            rendered.update(spec.render_task_configs(partition, target))
    rows = len(partition.rows())
    if rows > DEFAULT_NUM_INSTANCES:  # the methods draw 100 rows unless told: a larger partition is scored whole
        rendered = {name: configs.dump(every_row(configs.load(text), rows)) for name, text in rendered.items()}
    loaded = {name: configs.load(text) for name, text in rendered.items()}
    passes = {name: scoring_pass(config) for name, config in loaded.items()}
    found = {scored: {name: text for name, text in rendered.items() if passes[name] == scored}
             for scored in ("likelihood", "reference", *OWN_REFERENCE_PASS.values())}
    found["control_reference"] = {name: text for name, text in found["likelihood"].items()
                                  if scored_by_reference(loaded[name].get("metadata") or {})}
    return found


def every_row(config: Mapping[str, Any], rows: int) -> dict[str, Any]:
    """A task config that draws all ``rows`` of its partition (``num_instances``, which every method's task reads)."""
    return {**config, "metadata": {**(config.get("metadata") or {}), "num_instances": rows}}


def study_partitions(world: World, world_tasks: Mapping[str, PartitionRole], mc: Sequence[McDataset],
                     study_dir: Path, options: Path, fresh_per_shape: int) -> list[StudyPartition]:
    """Both shapes' partitions with their tasks per pass, every task YAML written under ``study_dir/tasks``."""
    task_dir = study_dir / "tasks"
    task_dir.mkdir(parents=True, exist_ok=True)
    # The reference pass scores every task on the clean model first, as the fine-tunes' reference: every option order.
    target = RenderTarget(templates=templates_dir(), options_path=options, reference=True)
    found = []
    shaped = [(with_sibling_controls(world.specs[role.dataset_index]).partition(role.split), role.role, "free text")
              for role in world.roles]
    shaped += [(spec.partition(split), "injected" if split == "train" else "sibling", "multiple choice")
               for spec in mc_specs(mc, study_dir) for split in ("train", "test")]
    # Split a of every fresh dataset before any split b: a study stopped early has both shapes of natural text.
    fresh = fresh_specs(study_dir, fresh_per_shape)
    shaped += [(spec.partition(split), "unseen", shape) for split in FRESH_SPLITS for spec, shape in fresh]
    for partition, role, shape in shaped:
        tasks: dict[str, tuple[str, ...]] = {}
        for scored, rendered in likelihood_pass_configs(partition, target).items():
            for name, text in rendered.items():
                (task_dir / f"{name}.yaml").write_text(text, encoding="utf-8")
            tasks[scored] = tuple(rendered)
        if shape == "free text":  # the other passes: the null study's retargeted patterns (the world's task folder)
            own = sorted(name for name, task_role in world_tasks.items()
                         if world.partition(task_role).label == partition.label)
            passes = {name: scoring_pass(configs.load(
                (world.directory / "tasks" / f"{name}.yaml").read_text(encoding="utf-8"))) for name in own}
            tasks.update({scored: tuple(name for name in own if passes[name] == scored)
                          for scored in ("generation", "quiz")})
        found.append(StudyPartition(partition, role, shape, tasks, clean_only=shape.startswith("fresh")))
    return found


# Partitions per lm-eval run: one model load and one request cache for several partitions' tasks.
PARTITIONS_PER_RUN = 8


def runs(partitions: Sequence[StudyPartition], scoring_pass: str,
         label: str) -> list[tuple[str, list[StudyPartition]]]:
    """The runs of one pass on one model: (run name, its partitions), in order; the injected model skips the
    partitions only the clean model is audited on (natural text it may have been trained near; the filler-only
    fine-tune is audited on them as on every other), and only the reference passes run on the filler-only and author
    fine-tunes. The author fine-tune audits the natural-text split it was not trained on, in runs named as the clean
    model's runs that hold them (its reference's), in the passes whose tests need no control (the split's control is
    the split it was trained on)."""
    if label == "filler" and scoring_pass not in REFERENCE_PASSES:
        return []
    if label == "author" and scoring_pass not in ("reference", *OWN_REFERENCE_PASS.values()):
        return []
    if label == "author":
        return [(name, audited) for name, members in runs(partitions, scoring_pass, "clean")
                if (audited := [p for p in members if p.clean_only and p.partition.split == AUTHOR_AUDITED])]
    mine = [p for p in partitions if p.tasks.get(scoring_pass) and not (p.clean_only and label == "injected")]
    return [(f"{scoring_pass}_{start // PARTITIONS_PER_RUN:02d}", mine[start:start + PARTITIONS_PER_RUN])
            for start in range(0, len(mine), PARTITIONS_PER_RUN)]


def scored_runs(study_dir: Path) -> dict[str, int]:
    """Per pass, how many lm-eval runs have results (what a stopped study's rates rest on)."""
    return {scoring_pass: sum(results_dir(run) is not None for run in study_dir.glob(f"runs/*/{scoring_pass}_*"))
            for scoring_pass in PASSES}


def expected_runs(partitions: Sequence[StudyPartition]) -> dict[str, int]:
    return {name: sum(len(runs(partitions, name, label)) for label in MODEL_LABELS) for name in PASSES}


def without_control(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts an audit without a control computes: every test that compares with a control left out."""
    controlled = controlled_tests()
    return [verdict for verdict in verdicts if verdict.test not in controlled]


def without_reference(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts an audit without a reference model computes: every test on u left out."""
    referenced = referenced_tests()
    return [verdict for verdict in verdicts if verdict.test not in referenced]


PRIOR_RATES_FILE = "prior_validation_rates.json"


def prior_rates(study_dir: Path) -> dict[str, object]:
    """The validation rates shipped when the study began (kept in the study folder at its first run, so a later
    collect reads the same)."""
    path = study_dir / PRIOR_RATES_FILE
    if not path.is_file():
        study_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(VALIDATION_RATES_FILE.read_text(encoding="utf-8") if VALIDATION_RATES_FILE.is_file() else "{}",
                        encoding="utf-8")
    return json.loads(path.read_text(encoding="utf-8"))


def combined_verdicts(verdicts: Sequence[Verdict], prior: Mapping[str, object],
                      candidates: frozenset[str] | None = None) -> list[Verdict]:
    """Each partition's verdict with its control and without one (as :func:`partition_verdicts` computes them); with
    a reference model's tests among the verdicts, each of those with the reference and without it too: four verdicts,
    each under its own rate key (:attr:`PartitionVerdict.test`), as an audit with or without those options computes it.

    Over the null study's rates and the earlier validation study's (``prior``): the study's own rates must not
    choose the tests it measures. The reference-differenced tests have no earlier rate: they drive as the study's
    ``candidates`` (default: every one; the verdict with a reference is what it measures).
    """
    rates = [shipped_rates(), clean_model_rates(prior), sibling_rates(prior), filler_rates(prior),
             validation_false_positives(prior, "false_positive_author")]
    candidates = referenced_keys(verdicts) if candidates is None else candidates
    subsets = [verdicts, without_control(verdicts)]
    if len(without_reference(verdicts)) < len(verdicts):  # with a reference: also the verdicts without it
        subsets += [without_reference(verdicts), without_control(without_reference(verdicts))]
    found: dict[tuple[str, str, str], Verdict] = {}  # a subset without a control test gives the next one's verdict
    for subset in subsets:
        for combined in partition_verdicts(subset, rates, candidates):
            found.setdefault((combined.model, combined.partition, combined.test), combined.as_verdict())
    return list(found.values())


def score(partitions: Sequence[StudyPartition], models: Sequence[tuple[str, Path]], settings: ValidationSettings,
          study_dir: Path, prior: Mapping[str, object], *, passes: Sequence[str] = tuple(PASSES), run_missing: bool = True,
          progress: bool = True) -> list[tuple[Verdict, Role, str]]:
    """Each model on the partitions, pass by pass (lm-eval runs of several partitions, kept once written); every verdict with
    its role and shape, from the passes that have results (``run_missing`` False: only collect what earlier runs
    wrote). On the injected model a partition keeps its role (injected / held-out sibling); every partition is
    unseen by the clean model, and "filler" on the filler-only fine-tune. A fine-tune's run is read with the clean
    model's run of the same name as its reference (:data:`REFERENCE_OF`), so its reference-differenced tests decide
    too; each run's models are scored one after the other (the clean one first) before the next run. Each
    partition's combined verdicts, with and without its control (and without its reference), are counted beside the
    tests', over the tests its scored passes hold."""
    from tqdm.auto import tqdm

    by_label = {partition.partition.label: partition for partition in partitions}
    paths = dict(models)
    found: dict[tuple[str, str], list[Verdict]] = {}
    planned = {(scoring_pass, label): dict(runs(partitions, scoring_pass, label))
               for scoring_pass in passes for label in paths}
    jobs = sorted(((scoring_pass, name, label) for (scoring_pass, label), named in planned.items() for name in named),
                  key=lambda job: (passes.index(job[0]), job[1], MODEL_LABELS.index(job[2])))
    loaded: dict[tuple[str, str], Path | None] = {}
    counted: set[tuple[str, str, str, str | None]] = set()  # (model, task, test, variant) of the runs read
    for scoring_pass, name, label in tqdm(jobs, desc="validation study: scoring", unit="run", disable=not progress):
        members = planned[(scoring_pass, label)][name]
        run_dir = study_dir / "runs" / label / name
        tasks = [task for partition in members for task in partition.tasks[scoring_pass]]
        task_dir = study_dir / "world0" / "tasks" if scoring_pass in ("generation", "quiz") else study_dir / "tasks"
        directory = evaluate(task_dir, tasks, paths[label], run_dir, settings.world()) if run_missing else results_dir(run_dir)
        loaded[(label, name)] = directory
        if directory is None:
            continue
        reference = None
        if scoring_pass in REFERENCE_PASSES and label in REFERENCE_OF:
            reference = _reference_run(planned, loaded, scoring_pass, name, label)
            if reference is None:
                continue  # its reference's run is not scored yet: this run waits for it
        # A task scored in two passes (the likelihood control mode: again in the control-reference pass) counts its
        # tests once, from the earlier pass's run.
        read = [verdict for verdict in model_verdicts(load_model_dir(directory, label=label, reference=reference))
                if (label, verdict.task, verdict.test, verdict.variant) not in counted]
        counted.update((label, verdict.task, verdict.test, verdict.variant) for verdict in read)
        for verdict in read:  # the study knows each partition's shape (a pass may hold no multiple-choice-only test)
            shaped = replace(verdict, shape=items_of(by_label[verdict.partition].shape))
            found.setdefault((label, verdict.partition), []).append(shaped)
    roles = {(label, partition): {"injected": by_label[partition].role, "filler": "filler",
                                  "author": "author"}.get(label, "unseen")
             for label, partition in found}
    # The tests this study measures drive its combined verdicts as candidates; a test it measures over its level drives
    # none of them, whatever an earlier study measured (as the shipped verdict will leave it out).
    over_here = over_level_here(
        [(verdict, roles[key]) for key, verdicts in found.items() for verdict in verdicts])  # type: ignore[misc]
    candidates = referenced_keys(verdict for verdicts in found.values() for verdict in verdicts) - over_here
    labelled: list[tuple[Verdict, Role, str]] = []
    for (label, partition_label), verdicts in found.items():
        shape = by_label[partition_label].shape
        driving = [verdict for verdict in verdicts if not over_here & set(shape_keys(verdict))]
        labelled += [(verdict, roles[(label, partition_label)], shape)  # type: ignore[misc]
                     for verdict in verdicts + combined_verdicts(driving, prior, candidates)]
    return labelled


def referenced_keys(verdicts: Iterable[Verdict]) -> frozenset[str]:
    """The rate keys of the reference-differenced tests among ``verdicts`` (a test's key carries its variant, e.g.
    the control mode on u's ``likelihood_control_reference:control``)."""
    referenced = referenced_tests()
    return frozenset(rate_key(verdict) for verdict in verdicts if verdict.test in referenced)


def over_level_here(labelled: Iterable[tuple[Verdict, Role]]) -> frozenset[str]:
    """The rate keys this study measures flagging null partitions (never-seen, held-out siblings, the filler-only and
    author fine-tunes') significantly more often than ALPHA (the interval's lower end above it): pooled, and on each
    shape of items (filed as the shipped rates file them, :func:`shape_key`)."""
    labelled = list(labelled)
    groups = [(None, labelled), *((shape, [(verdict, role) for verdict, role in labelled if verdict.shape == shape])
                                  for shape in (MULTIPLE_CHOICE, FREE_TEXT))]
    return frozenset(rates.key if shape is None else shape_key(rates.key, shape)
                     for shape, group in groups for rates in tally(group)
                     if any(rates.by_role[role].confidence_interval.low > ALPHA
                            for role in ("unseen", "sibling", "filler", "author") if role in rates.by_role))


def items_of(shape: str) -> str:
    """The shape of a study shape's items (a fresh shape's are its own: written after the model's cutoff)."""
    return shape.removeprefix("fresh ")


def _reference_run(planned: Mapping[tuple[str, str], Mapping[str, Sequence[StudyPartition]]],
                   loaded: Mapping[tuple[str, str], Path | None], scoring_pass: str, name: str,
                   label: str) -> ModelResults | None:
    """The reference model's run of the same name, which must hold the fine-tune's partitions (None: not scored)."""
    reference = REFERENCE_OF[label]
    mine = [p.partition.label for p in planned[(scoring_pass, label)][name]]
    theirs = [p.partition.label for p in (planned.get((scoring_pass, reference)) or {}).get(name, [])]
    if theirs and not set(mine) <= set(theirs):
        raise ContamError(f"the {reference} model's run {name} holds other partitions than the {label} model's "
                          f"({sorted(set(mine) - set(theirs))} missing)", field="runs")
    directory = loaded.get((reference, name))
    return load_model_dir(directory, label=reference) if directory is not None else None


SETTINGS_FILE = "settings.json"


def check_same_study(settings: ValidationSettings, study_dir: Path) -> None:
    """A study folder holds one design: its runs are named by position, so another design would reuse them for other
    partitions (or other rows) without a word. Recorded on the first call, refused on a later one that differs."""
    # The fine-tunes' recipe (contaminate.recipe: not their precision, which follows the machine); batch_size
    # changes no number.
    def design(fields: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in recipe(fields).items() if key != "batch_size"}

    wanted = design(asdict(settings))
    path = study_dir / SETTINGS_FILE
    if not path.is_file():
        study_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(wanted, indent=2) + "\n", encoding="utf-8")
        return
    recorded = design(json.loads(path.read_text(encoding="utf-8")))
    changed = [f"{key} {recorded.get(key)!r} -> {wanted.get(key)!r}" for key in sorted({*recorded, *wanted})
               if recorded.get(key) != wanted.get(key)]
    if changed:
        raise ContamError(f"holds a study of other settings ({'; '.join(changed)}); give a new --out",
                          source=str(study_dir), field="--out")


def prepare(settings: ValidationSettings, study_dir: Path) -> tuple[list[StudyPartition], World, list[McDataset]]:
    """Data, options and task configs of both shapes (every step resumable); the world and the MC data they came from."""
    check_same_study(settings, study_dir)
    world = write_world_data(settings.world(), 0, study_dir)
    world_tasks = write_task_configs(world)
    mc = write_mc_data(settings, study_dir)
    return study_partitions(world, world_tasks, mc, study_dir, world.options_path, settings.fresh_per_shape), world, mc


def run_validation(settings: ValidationSettings, study_dir: Path, base_model: str, *,
                   passes: Sequence[str] = ("likelihood",), progress: bool = True) -> list[tuple[Verdict, Role, str]]:
    """The study's data and injected model (and, for the reference pass, the filler-only fine-tune), then the models
    scored pass by pass."""
    study_dir = study_dir.resolve()  # task YAMLs name their data and options files by absolute path
    partitions, world, mc = prepare(settings, study_dir)
    injected = train_injected_model(world, mc, settings, base_model, study_dir)
    models = [("clean", Path(base_model)), ("injected", injected)]
    if any(name in passes for name in REFERENCE_PASSES):
        models.append(("filler", train_injected_model(world, mc, settings, base_model, study_dir, filler_only=True)))
        models.append(("author", train_author_model(settings, base_model, study_dir)))
    return score(partitions, models, settings, study_dir, prior_rates(study_dir), passes=passes, progress=progress)


def collect(settings: ValidationSettings, study_dir: Path, base_model: str,
            passes: Sequence[str] = tuple(PASSES)) -> tuple[list[tuple[Verdict, Role, str]], list[str]]:
    """The verdicts of the runs done so far, and the passes every run of which is done; nothing is trained or run.

    A partition's combined verdicts rest on the passes scored on it (the log-likelihood pass alone unless the
    generation and quiz passes ran too); the rates document records the runs done per pass.
    """
    study_dir = study_dir.resolve()
    partitions, _, _ = prepare(settings, study_dir)
    done, expected = scored_runs(study_dir), expected_runs(partitions)
    complete = [name for name in passes if expected[name] and done.get(name) == expected[name]]
    started = [name for name in passes if done.get(name)]
    models = [("clean", Path(base_model)), *((label, study_dir / folder) for label, folder in MODEL_DIRS.items())]
    return score(partitions, models, settings, study_dir, prior_rates(study_dir), passes=started, run_missing=False,
                 progress=False), complete


def compute_seconds(study_dir: Path) -> float:
    """Training (the injection manifest) plus every scoring run's lm-eval evaluation time."""
    manifest = study_dir / "model" / MANIFEST_FILE
    seconds = float(json.loads(manifest.read_text())["train_seconds"]) if manifest.is_file() else 0.0
    for path in study_dir.glob("runs/*/*/*/**/results_*.json"):
        seconds += float(json.loads(path.read_text()).get("total_evaluation_time_seconds") or 0.0)
    return seconds


def _rate_entry(rates: VerdictRates, role: Role) -> dict[str, object] | None:
    found = rates.by_role.get(role)
    if found is None:
        return None
    ci = found.confidence_interval
    return {"k": found.k, "flagged": found.flagged, "rate": round(found.statistic, 4),
            "ci": [round(ci.low, 4), round(ci.high, 4)]}


def _method_entries(labelled: Iterable[tuple[Verdict, Role]]) -> dict[str, dict[str, object]]:
    """Per rate key: its title, its rates per role, and ``largest_n``, the most instances (as the test counts them:
    a control test counts both sides) it was tested on, beyond which its rates say nothing (an audit's caveat)."""
    labelled = list(labelled)
    largest: dict[str, int] = {}
    for verdict, _ in labelled:
        if verdict.n is not None and verdict.family != "combined":  # a combined verdict's n counts its tests
            largest[rate_key(verdict)] = max(largest.get(rate_key(verdict), 0), verdict.n)
    entries = {}
    for rates in tally(labelled):
        found = {name: _rate_entry(rates, role) for name, role in RATE_ROLES.items()}
        entries[rates.key] = {"title": rates.title, **{name: entry for name, entry in found.items() if entry},
                              **({"largest_n": largest[rates.key]} if rates.key in largest else {})}
    return entries


def rates_document(labelled: Iterable[tuple[Verdict, Role, str]], *, command: str, date: str,
                   design: Mapping[str, object], scored: Mapping[str, int], combined_passes: Sequence[str],
                   compute_seconds: float, prior: Mapping[str, object] | None = None,
                   measured_keys: Collection[str] | None = None) -> dict[str, object]:
    """The shipped file: per verdict method, detection and both false-positive rates with exact intervals, over
    both shapes and per shape (``by_shape``); ``scored``: model x partition runs per pass (:func:`scored_runs`);
    ``combined_passes``: the passes the per-partition verdicts rest on (:func:`collect`). Methods this study did not
    score keep their entries from ``prior`` (an earlier study's document), each with that study's command, date and
    design, so the rules that read them (a test over its level does not drive) keep what was measured;
    ``measured_keys``: the only rate keys this study measures (e.g. a reference pass alone must not re-measure the
    per-partition verdicts the likelihood pass decided), the others kept from ``prior``."""
    labelled = [(verdict, role, shape) for verdict, role, shape in labelled
                if measured_keys is None or rate_key(verdict) in measured_keys]
    methods = _method_entries((verdict, role) for verdict, role, _ in labelled)
    for shape in SHAPES:
        for key, entry in _method_entries((v, role) for v, role, found in labelled if found == shape).items():
            methods[key].setdefault("by_shape", {})[shape] = {k: v for k, v in entry.items()
                                                              if k not in ("title", "largest_n")}
    for key, entry in ((prior or {}).get("methods") or {}).items():  # type: ignore[union-attr]
        if key not in methods:
            methods[key] = {**entry, "command": entry.get("command") or prior["command"],  # type: ignore[index]
                            "date": entry.get("date") or prior["date"],  # type: ignore[index]
                            "design": entry.get("design") or _design_summary(prior.get("design") or {})}  # type: ignore[union-attr]
    return {"version": VALIDATION_VERSION, "confidence_level": 0.95, "design": dict(design),
            "passes": {name: {"tests": tests, "model_partition_runs": scored.get(name, 0)}
                       for name, tests in PASSES.items()},
            "partition_combined_over": list(combined_passes),
            "meanings": RATE_MEANINGS, "command": command, "date": date,
            "compute_seconds": round(compute_seconds, 1),
            "methods": methods}


def _design_summary(design: Mapping[str, object]) -> str:
    return (f"{design.get('injected_partitions')} injected + {design.get('held_out_partitions')} held-out "
            f"partitions of {design.get('rows_per_partition')} free-text instances")


def markdown_table(document: Mapping[str, object]) -> str:
    """One row per verdict method (and per shape where measured on both): detection, false positives beside the
    injection, on the clean model and on the two null fine-tunes; rows carried over from an earlier study say so."""

    def cell(entry: Mapping[str, object] | None) -> str:
        if not entry:
            return "—"
        low, high = entry["ci"]  # type: ignore[misc]
        return f"{entry['flagged']}/{entry['k']} = {100 * float(entry['rate']):.0f} % [{100 * low:.0f}, {100 * high:.0f}]"

    def row(key: str, title: str, entry: Mapping[str, object]) -> str:
        columns = ("detection", "false_positive_held_out", "false_positive_clean", "false_positive_filler",
                   "false_positive_author")
        return f"| `{key}` | {title} | " + " | ".join(cell(entry.get(column)) for column in columns) + " |"  # type: ignore[arg-type]

    lines = ["| verdict | test | detection (injected) | false positives (held-out siblings) | "
             "false positives (clean model) | false positives (filler-only fine-tune) | "
             "false positives (author fine-tune) |", "|---|---|---|---|---|---|---|"]
    for key, entry in document["methods"].items():  # type: ignore[union-attr]
        earlier = f" — earlier study ({entry['date']})" if "design" in entry else ""
        lines.append(row(key, f"{entry['title']}{earlier}", entry))
        shapes = entry.get("by_shape") or {}
        if len(shapes) > 1:
            lines += [row(key, f"… {shape} only", shapes[shape]) for shape in SHAPES if shape in shapes]
    return "\n".join(lines) + "\n"


# The adjusted benchmark scores' rates (acc_reordered's gap: the reordered pass, :mod:`.reordered_validation`): not
# verdicts, kept under their own key, which a verdict pass's shipped document keeps as the shipped file has it.
RATES_KEY = "benchmark_adjustments"


def write_outputs(document: Mapping[str, object], study_dir: Path, *, ship_to: Path | None = None,
                  echo: Callable[[str], None] = print) -> None:
    if ship_to is not None and RATES_KEY not in document and ship_to.is_file():
        kept = json.loads(ship_to.read_text(encoding="utf-8")).get(RATES_KEY)
        document = {**document, **({RATES_KEY: kept} if kept is not None else {})}
    text = json.dumps(document, indent=2) + "\n"
    (study_dir / "validation_rates.json").write_text(text, encoding="utf-8")
    table = markdown_table(document)
    (study_dir / "validation_rates.md").write_text(table, encoding="utf-8")
    if ship_to is not None:
        ship_to.write_text(text, encoding="utf-8")
    echo(table)

