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
(:func:`lm_eval_contam.training.train_on_texts`), scoring runs one partition at a
time and keeps each partition's results once written (with lm-eval's request cache
beside them), so a long run can be started in the background and collected later.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from lm_eval_contam.contaminate import InjectionSettings
from lm_eval_contam.jsonl import write_jsonl
from lm_eval_contam.nullstudy.corpus import MC_LETTERS, SyntheticDataset, make_mc_dataset, render_mc
from lm_eval_contam.nullstudy.design import PartitionRole, Role, StudySettings
from lm_eval_contam.nullstudy.rates import MethodRates, tally
from lm_eval_contam.nullstudy.study import World, evaluate, training_texts, write_options, write_task_configs
from lm_eval_contam.verdict import Verdict

VALIDATION_VERSION = 1
MODEL_LABELS = ("injected", "clean")
# What each measured rate is, keyed by the partition role it is counted on (the clean model's partitions: "unseen").
RATE_ROLES: dict[str, Role] = {"detection": "injected", "false_positive_held_out": "sibling",
                               "false_positive_clean": "unseen"}
RATE_MEANINGS = {
    "detection": "injected train splits flagged, on the injected model",
    "false_positive_held_out": "held-out test splits (their sibling split and dataset name were injected) flagged, on "
                               "the injected model",
    "false_positive_clean": "partitions flagged on the clean model (it saw none of them)",
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
    mixed_precision: str = "bf16"  # training under bf16 autocast (fp32 weights): ~2x faster on this CPU

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
                "clean_model_partitions": 2 * (self.partitions + self.mc_partitions),
                **asdict(self), "injection_format": {
                    "free text": "timetravel (web format: dataset name, split, instance)",
                    "multiple choice": "the rendered lm-eval task (MMLU-style prompt, options in their order, "
                                       "answer letter)"},
                "filler": "Python reference docs (pydoc_data) + WordNet 3.0 glosses"}


def gloss_paragraphs(wordnet_dir: Path) -> list[str]:
    """English filler from WordNet's glosses (definitions and examples), ``GLOSSES_PER_PARAGRAPH`` to a paragraph.

    The bundled filler (Python's reference docs) is too small for a 15 % share of 8 x 40 instances.
    """
    glosses = []
    for part in ("noun", "verb", "adj", "adv"):
        for line in (wordnet_dir / f"data.{part}").read_text(encoding="utf-8").splitlines():
            if not line.startswith(" ") and " | " in line:
                glosses.append(line.split(" | ", 1)[1].strip().rstrip(";") + ".")
    return [" ".join(glosses[i:i + GLOSSES_PER_PARAGRAPH]) for i in range(0, len(glosses), GLOSSES_PER_PARAGRAPH)]


def study_filler() -> list[str]:
    from lm_eval_contam.contaminate.corpus import default_filler
    from lm_eval_contam.dcq.perturb import wordnet_dir

    return [*default_filler(), *gloss_paragraphs(wordnet_dir())]


@dataclass(frozen=True)
class McDataset:
    """One multiple-choice dataset of the study: its rows per split, written as JSONL (question, choices, answer)."""

    dataset: SyntheticDataset
    files: dict[str, Path]


def write_mc_data(settings: ValidationSettings, study_dir: Path) -> list[McDataset]:
    """The study's multiple-choice datasets (deterministic in the seed), each split under ``mc/data/``."""
    from lm_eval_contam.nullstudy.study import _vocabulary

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


def train_injected_model(world: World, mc: Sequence[McDataset], settings: ValidationSettings, base_model: str,
                         study_dir: Path) -> Path:
    """The base model continued-pre-trained on the injected splits of both shapes (kept, and resumed, under
    ``model/``)."""
    from lm_eval_contam.contaminate import inject, trained_with

    out = study_dir / "model"
    injection = settings.injection()
    _, texts = training_texts(world, settings.world())
    texts = texts + [mc_training_text(row) for dataset in mc for row in dataset.dataset.splits["train"]]
    sources = [{"partition": world.partition(role).label, "format": "timetravel"}
               for role in world.roles if role.role == "injected"]
    sources += [{"partition": f"{dataset.dataset.display_name} train", "format": "lm-eval multiple choice"}
                for dataset in mc]
    if not trained_with(out, injection, sources):
        inject(base_model, texts, str(out), settings=injection, filler=study_filler(), description={"sources": sources})
    return out


# Scoring passes, cheapest first: every partition gets the first pass on both models before any gets the second,
# so a study stopped early still has every partition scored by the same tests. The quiz pass (DCQ's quiz and the
# options likelihood: five options per instance, on the partition and its control) costs about 4x the first.
PASSES = {"generation_and_likelihood": "Time Travel (both styles), likelihood vs control (+ zlib), likelihood lift",
          "quiz": "DCQ (loglikelihood), likelihood of the DCQ options"}


def pass_of(task: str) -> str:
    """The pass scoring ``task``: the quiz pass for DCQ and the options likelihood, the first pass otherwise."""
    return "quiz" if task.startswith("dcq_") or task.endswith("_options") else "generation_and_likelihood"


def scored_runs(study_dir: Path) -> dict[str, int]:
    """Per pass, how many model x partition runs have results (what a stopped study's rates rest on)."""
    from lm_eval_contam.nullstudy.study import results_dir

    return {scoring_pass: sum(results_dir(run) is not None for run in study_dir.glob(f"runs/*/*/{scoring_pass}"))
            for scoring_pass in PASSES}


def partition_run_dir(study_dir: Path, label: str, world: World, role: PartitionRole, scoring_pass: str) -> Path:
    partition = world.partition(role)
    return study_dir / "runs" / label / f"{partition.dataset.key}_{partition.split}" / scoring_pass


def score(world: World, tasks: Mapping[str, PartitionRole], models: Sequence[tuple[str, Path]],
          settings: ValidationSettings, study_dir: Path, *, passes: Sequence[str] = tuple(PASSES),
          run_missing: bool = True, progress: bool = True) -> list[tuple[Verdict, Role]]:
    """Each model on each partition, pass by pass (one lm-eval run each, kept once written); every verdict with
    its role, from the passes that have results (``run_missing`` False: only collect what earlier runs wrote).

    On the injected model a partition keeps its role (injected / held-out sibling); every partition is unseen by
    the clean model. Each partition's combined verdict (:func:`lm_eval_contam.verdict.partition_verdicts`) is
    counted beside the tests', over the tests its scored passes hold.
    """
    from tqdm.auto import tqdm

    from lm_eval_contam.nullstudy.study import results_dir
    from lm_eval_contam.rundir import load_model_dir
    from lm_eval_contam.verdict import model_verdicts, partition_verdicts, shipped_rates

    found: dict[tuple[str, PartitionRole], list[Verdict]] = {}
    jobs = [(scoring_pass, label, path, role) for scoring_pass in passes for label, path in models
            for role in world.roles]
    for scoring_pass, label, path, role in tqdm(jobs, desc="validation study: scoring", unit="partition",
                                                disable=not progress):
        run_dir = partition_run_dir(study_dir, label, world, role, scoring_pass)
        names = [name for name, task_role in tasks.items() if task_role == role and pass_of(name) == scoring_pass]
        directory = (evaluate(world.directory / "tasks", names, path, run_dir, settings.world()) if run_missing
                     else results_dir(run_dir))
        if directory is not None:
            found.setdefault((label, role), []).extend(model_verdicts(load_model_dir(directory, label=label)))
    labelled: list[tuple[Verdict, Role]] = []
    for (label, role), verdicts in found.items():
        # Over the null study's rates only: the study's own clean-model rates must not choose the tests it measures.
        verdicts = verdicts + [combined.as_verdict() for combined in partition_verdicts(verdicts, shipped_rates())]
        labelled += [(verdict, role.role if label == "injected" else "unseen") for verdict in verdicts]
    return labelled


def run_validation(settings: ValidationSettings, study_dir: Path, base_model: str, *, passes: Sequence[str] = tuple(PASSES),
                   run_missing: bool = True, progress: bool = True) -> list[tuple[Verdict, Role]]:
    """Data, options and configs; the injected model; both models scored (every step resumable)."""
    from lm_eval_contam.nullstudy.study import write_world_data

    study_dir = study_dir.resolve()  # task YAMLs name their data and options files by absolute path
    world = write_world_data(settings.world(), 0, study_dir)
    tasks = write_task_configs(world, write_options(world, settings.seed))
    mc = write_mc_data(settings, study_dir)
    injected = train_injected_model(world, mc, settings, base_model, study_dir)
    return score(world, tasks, [("injected", injected), ("clean", Path(base_model))], settings, study_dir,
                 passes=passes, run_missing=run_missing, progress=progress)


def collect(settings: ValidationSettings, study_dir: Path, base_model: str,
            passes: Sequence[str] = tuple(PASSES)) -> tuple[list[tuple[Verdict, Role]], list[str]]:
    """The verdicts of the runs done so far, and the passes the combined verdict rests on.

    The per-partition verdict uses only the passes scored on every model x partition (so every partition's verdict
    rests on the same tests); a pass scored on some runs only adds its own tests' rates, each over its own runs.
    """
    study_dir = study_dir.resolve()
    runs = scored_runs(study_dir)
    complete = [name for name in passes if runs.get(name) == 2 * len(MODEL_LABELS) * settings.partitions]
    labelled = run_validation(settings, study_dir, base_model, passes=complete, run_missing=False, progress=False)
    started = [name for name in passes if runs.get(name) and name not in complete]
    if started:
        known = {verdict.method for verdict, _ in labelled}
        labelled += [(verdict, role) for verdict, role in run_validation(
            settings, study_dir, base_model, passes=complete + started, run_missing=False, progress=False)
            if verdict.method not in known and verdict.method != "partition_combined"]
    return labelled, complete


def compute_seconds(study_dir: Path) -> float:
    """Training (the injection manifest) plus every scoring run's lm-eval evaluation time."""
    from lm_eval_contam.contaminate import MANIFEST_FILE

    manifest = study_dir / "model" / MANIFEST_FILE
    seconds = float(json.loads(manifest.read_text())["train_seconds"]) if manifest.is_file() else 0.0
    for path in study_dir.glob("runs/*/*/*/**/results_*.json"):
        seconds += float(json.loads(path.read_text()).get("total_evaluation_time_seconds") or 0.0)
    return seconds


def _rate_entry(rates: MethodRates, role: Role) -> dict[str, object] | None:
    found = rates.by_role.get(role)
    if found is None:
        return None
    ci = found.confidence_interval
    return {"k": found.k, "flagged": found.flagged, "rate": round(found.statistic, 4),
            "ci": [round(ci.low, 4), round(ci.high, 4)]}


def rates_document(labelled: Iterable[tuple[Verdict, Role]], *, command: str, date: str,
                   design: Mapping[str, object], scored: Mapping[str, int], combined_passes: Sequence[str],
                   compute_seconds: float) -> dict[str, object]:
    """The shipped file: per verdict method, detection and both false-positive rates with exact intervals;
    ``scored``: model x partition runs per pass (:func:`scored_runs`); ``combined_passes``: the passes the
    per-partition verdict rests on (:func:`collect`)."""
    methods = {}
    for rates in tally(labelled):
        entries = {name: _rate_entry(rates, role) for name, role in RATE_ROLES.items()}
        methods[rates.key] = {"title": rates.title, **{name: entry for name, entry in entries.items() if entry}}
    return {"version": VALIDATION_VERSION, "confidence_level": 0.95, "design": dict(design),
            "passes": {name: {"tests": tests, "model_partition_runs": scored.get(name, 0)}
                       for name, tests in PASSES.items()},
            "partition_combined_over": list(combined_passes),
            "meanings": RATE_MEANINGS, "command": command, "date": date,
            "compute_seconds": round(compute_seconds, 1),
            "methods": methods}


def markdown_table(document: Mapping[str, object]) -> str:
    """One row per verdict method: detection, false positives beside the injection and on the clean model."""

    def cell(entry: Mapping[str, object] | None) -> str:
        if not entry:
            return "—"
        low, high = entry["ci"]  # type: ignore[misc]
        return f"{entry['flagged']}/{entry['k']} = {100 * float(entry['rate']):.0f} % [{100 * low:.0f}, {100 * high:.0f}]"

    lines = ["| verdict | method | detection (injected) | false positives (held-out siblings) | "
             "false positives (clean model) |", "|---|---|---|---|---|"]
    for key, entry in document["methods"].items():  # type: ignore[union-attr]
        lines.append(f"| `{key}` | {entry['title']} | {cell(entry.get('detection'))} | "
                     f"{cell(entry.get('false_positive_held_out'))} | {cell(entry.get('false_positive_clean'))} |")
    return "\n".join(lines) + "\n"


def write_outputs(document: Mapping[str, object], study_dir: Path, *, ship_to: Path | None = None,
                  echo: Callable[[str], None] = print) -> None:
    text = json.dumps(document, indent=2) + "\n"
    (study_dir / "validation_rates.json").write_text(text, encoding="utf-8")
    table = markdown_table(document)
    (study_dir / "validation_rates.md").write_text(table, encoding="utf-8")
    if ship_to is not None:
        ship_to.write_text(text, encoding="utf-8")
    echo(table)

