"""Running the null study: per world, write the data, task YAMLs and their quiz options, train the model, run lm-eval.

Every step is resumable under the study directory: data and options are
regenerated identically (seeded), a trained model is kept once ``training.json``
is written, a world whose lm-eval results exist is not run again, and lm-eval's
request cache answers what an interrupted run had finished.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lm_eval_contam import harness
from lm_eval_contam.contaminate import contaminant_texts
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import write_jsonl
from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.partitions import DatasetSpec, Partition, dataset_from_task_metadata
from lm_eval_contam.core.registry import task_quiz_samples
from lm_eval_contam.core.rundir import load_model_dir
from lm_eval_contam.core.wordnet import load_wordnet
from lm_eval_contam.harness import evaluation
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.methods.catalogue import OFFLINE_QUIZ_OPTION_GENERATOR, QUIZ_OPTION_MAKER
from lm_eval_contam.models.tiny_model import build_tiny_model
from lm_eval_contam.models.training import train_on_texts
from lm_eval_contam.nullstudy import configs
from lm_eval_contam.nullstudy.corpus import SyntheticDataset, background_texts, make_dataset, vocabulary
from lm_eval_contam.nullstudy.design import PartitionRole, Role, StudySettings, world_roles
from lm_eval_contam.verdicts.verdict import model_verdicts, partition_verdicts

TRAINING_FILE = "training.json"
TIMING_FILE = "timing.json"  # seconds per step, recorded when the step ran (a resumed step keeps its first time)


@dataclass(frozen=True)
class World:
    index: int
    directory: Path
    datasets: dict[int, SyntheticDataset]  # by dataset index
    specs: dict[int, DatasetSpec]
    roles: tuple[PartitionRole, ...]

    def partition(self, role: PartitionRole) -> Partition:
        return self.specs[role.dataset_index].partition(role.split)

    @property
    def label(self) -> str:
        return f"world{self.index}"

    @property
    def options_path(self) -> Path:
        """The world's one quiz options file, as the shipped samples keep one per dataset: a task reading a control
        partition's options (the likelihood family) finds them beside the audited partition's. Absolute: lm-eval
        resolves a relative one against the task YAML's folder."""
        return self.directory.resolve() / "options.jsonl"


def _vocabulary() -> tuple[tuple[str, ...], tuple[str, ...]]:
    wordnet = load_wordnet()
    return vocabulary(lambda word: bool(wordnet.synonyms(word)))


def write_world_data(settings: StudySettings, index: int, study_dir: Path) -> World:
    """The world's datasets as JSONL partitions, described as own-data partitions (deterministic in the seed)."""
    nouns, adjectives = _vocabulary()
    directory = study_dir / f"world{index}"
    roles = tuple(world_roles(settings, index))
    datasets, specs = {}, {}
    for dataset_index in dict.fromkeys(role.dataset_index for role in roles):
        dataset = make_dataset(settings.seed, dataset_index, nouns, adjectives, rows_per_split=settings.rows_per_split)
        files = {}
        for split, rows in dataset.splits.items():
            path = write_jsonl(directory / "data" / f"{dataset.key}_{split}.jsonl", rows)
            files[split] = str(path.resolve())
        datasets[dataset_index] = dataset
        specs[dataset_index] = dataset_from_task_metadata({
            "dataset_name": dataset.display_name, "data_files": files, "task_type": "cls", "text_field": "text",
            "label_field": "label", "label_names": list(dataset.label_names), "columns": ["text", "label"]})
    return World(index, directory, datasets, specs, roles)


def write_task_configs(world: World) -> dict[str, PartitionRole]:
    """Every family's tasks for every partition of the world, under ``tasks/``, and the quiz options they read in
    :attr:`World.options_path`; task name -> partition role.

    The options are made as the audit makes them (``catalogue.QUIZ_OPTION_MAKER``, offline, over the tasks'
    ``MethodSpec.quiz``): every task samples and perturbs with its own seed (the pattern's, which the
    retargeted YAMLs carry whatever the study's seed), so every instance a task quizzes has options. An instance left
    without valid options stops the study: the rates count every sampled instance.
    """
    task_dir = world.directory / "tasks"
    task_dir.mkdir(parents=True, exist_ok=True)
    tasks, written = {}, []
    for role in world.roles:
        partition = world.partition(role)
        for pattern in configs.patterns(role.split):
            config = configs.retarget(pattern, partition, options_path=world.options_path)
            (task_dir / f"{config['task']}.yaml").write_text(configs.dump(config), encoding="utf-8")
            tasks[str(config["task"])] = role
            written.append(config)
    left_out = QUIZ_OPTION_MAKER(task_quiz_samples(written), OFFLINE_QUIZ_OPTION_GENERATOR, progress=False)
    if left_out:
        raise ContamError("no valid quiz options for " + ", ".join(
            f"{count} sampled instance(s) of {label}" for label, count in left_out.items())
            + " (the failures are recorded beside the options); the null study quizzes every sampled instance",
            source=str(world.options_path))
    return tasks


def training_texts(world: World, settings: StudySettings) -> tuple[list[str], list[str]]:
    """(background, injected): English paragraphs, and the sibling datasets' train rows in Time Travel's web format."""

    nouns, adjectives = _vocabulary()
    background = background_texts(settings.seed + world.index, settings.background_texts, nouns, adjectives)
    injected = []
    for role in world.roles:
        if role.role == "injected":
            partition = world.partition(role)
            # "timetravel" names contaminate/'s injection format (Time Travel's web format), not a method the study
            # depends on.
            injected += contaminant_texts(partition, partition.rows(), "timetravel")
    return background, injected


def train_world_model(world: World, settings: StudySettings, *, progress: bool = True) -> Path:
    """A tiny model trained from scratch (tokenizer and weights) on :func:`training_texts` only."""

    model_dir = world.directory / "model"
    if (model_dir / TRAINING_FILE).is_file():
        return model_dir
    background, injected = training_texts(world, settings)
    texts = background + injected
    build_tiny_model(model_dir, texts, vocab_size=settings.vocab_size, n_layer=settings.n_layer,
                     n_embd=settings.n_embd, n_head=max(1, settings.n_embd // 32), n_positions=1024,
                     seed=settings.seed + world.index)
    history = train_on_texts(model_dir, texts, epochs=settings.epochs, learning_rate=settings.learning_rate,
                             batch_size=8, max_length=128, seed=settings.seed + world.index, pack=True,
                             progress=progress)
    (model_dir / TRAINING_FILE).write_text(json.dumps({
        "injected_texts": len(injected), "background_texts": len(background), **history}, indent=2) + "\n")
    return model_dir


def results_dir(run_dir: Path) -> Path | None:
    """The folder holding lm-eval's results under ``run_dir``, once written."""
    found = sorted(run_dir.rglob("results_*.json"))
    return found[-1].parent if found else None


def study_model(model_dir: Path) -> ModelSpec:
    """A study's model as the audit takes it: lm-eval's ``hf`` backend in float32 on the CPU."""
    return ModelSpec.parse(f"hf:pretrained={model_dir},dtype=float32", device="cpu")


def evaluate(task_dir: Path, tasks: list[str], model_dir: Path, run_dir: Path, settings: StudySettings) -> Path:
    """lm-eval over ``tasks`` into ``run_dir`` through the audit's evaluation path (``evaluation.evaluate``, the
    generation cap, ``harness.post_process``, ``evaluation.save_run``), with the chat template (skipped when its
    results exist; an interrupted run resumes from lm-eval's request cache beside it); the results folder."""
    done = results_dir(run_dir)
    if done is not None:
        return done
    model = study_model(model_dir)
    manager = harness.task_manager(str(task_dir))
    run_tracker = evaluation.tracker(run_dir)
    results = evaluation.evaluate(model, tasks, manager, cache=run_dir.with_name(run_dir.name + ".cache"),
                                  chat_template=True, max_gen_toks=settings.max_gen_toks,
                                  batch_size=settings.batch_size, device="cpu", evaluation_tracker=run_tracker)
    evaluation.save_run(harness.post_process(results, model), run_tracker)
    found = results_dir(run_dir)
    assert found is not None, "lm-eval wrote no results file"
    return found


def run_world(world: World, tasks: list[str], model_dir: Path, settings: StudySettings) -> Path:
    """lm-eval over the world's tasks (skipped when its results exist); the results folder."""
    return evaluate(world.directory / "tasks", tasks, model_dir, world.directory / "run", settings)


def world_verdicts(world: World, tasks: dict[str, PartitionRole]) -> list[tuple[Verdict, Role]]:
    """Every verdict of the world's run as users get them (``verdict.model_verdicts``), then each partition's
    combined verdict (``verdict.partition_verdicts``), each with its partition's role."""

    directory = results_dir(world.directory / "run")
    if directory is None:
        return []
    found = model_verdicts(load_model_dir(directory, label=world.label))
    found += [combined.as_verdict() for combined in partition_verdicts(found)]
    roles_by_label = {world.partition(role).label: role.role for role in tasks.values()}
    return [(verdict, roles_by_label[verdict.partition]) for verdict in found]


def _timed(world: World, step: str, work) -> object:
    """Run ``work()``; record its seconds under ``step`` unless an earlier run already did the step."""
    import time

    path = world.directory / TIMING_FILE
    timing = json.loads(path.read_text()) if path.is_file() else {}
    started = time.perf_counter()
    result = work()
    if step not in timing:
        timing[step] = round(time.perf_counter() - started, 1)
        path.write_text(json.dumps(timing, indent=2) + "\n")
    return result


def recorded_seconds(study_dir: Path) -> float:
    """The study's compute time: every world's recorded step times (resumed runs add no time already counted)."""
    return sum(sum(json.loads(path.read_text()).values()) for path in sorted(study_dir.glob(f"world*/{TIMING_FILE}")))


def run_study(settings: StudySettings, study_dir: Path, *, progress: bool = True) -> list[tuple[Verdict, Role]]:
    """Every world in turn (resumable); every verdict with its partition's role."""
    from tqdm.auto import tqdm

    done = []
    for index in tqdm(range(settings.worlds), desc="null study worlds", unit="world", disable=not progress):
        world = write_world_data(settings, index, study_dir)
        world.directory.mkdir(parents=True, exist_ok=True)
        tasks = _timed(world, "data_options_configs", lambda: write_task_configs(world))
        model_dir = _timed(world, "training", lambda: train_world_model(world, settings, progress=progress))
        _timed(world, "evaluation", lambda: run_world(world, list(tasks), model_dir, settings))
        done.append((world, tasks))
    # Verdicts only once every world has run: reading them never holds up the expensive part.
    return [labelled for world, tasks in done for labelled in world_verdicts(world, tasks)]
