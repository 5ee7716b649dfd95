"""The benchmark partitions the papers audit, shared by Time Travel and DCQ.

One record per dataset: where it lives on the Hub (or, for the small sample
datasets written for this project, which JSONL files under
``task_configs/samples/`` hold it), how the papers name it in prompts, which
columns hold the text, and how labels are written (``index (name)``, e.g.
``2 (Business)``). A partition is named ``<dataset key>:<split>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lm_eval_contam.errors import ContamError
from lm_eval_contam.jsonl import read_jsonl_objects

TaskType = Literal["cls", "nli", "sum", "xsum", "question"]


@dataclass(frozen=True)
class DatasetSpec:
    key: str  # used in task names, e.g. "ag_news"
    display_name: str  # as written in the papers' prompts, e.g. "AG News"
    hf_path: str | None  # None for a shipped sample dataset
    hf_name: str | None
    task_type: TaskType
    splits: tuple[str, ...]  # the partitions the papers audit
    text_field: str  # the column split into first/second piece (sentence1 for NLI)
    second_field: str | None  # NLI only: the reference column (sentence2)
    label_field: str | None
    label_names: tuple[str, ...]  # index -> name; empty when unlabelled
    dcq_columns: tuple[str, ...]  # columns in the DCQ instance string, in order
    # The column injected beside text_field in contamination formats: a summary's
    # document, a question's answer; None for classification and NLI.
    companion_field: str | None = None
    # Shipped sample datasets only: split -> JSONL file name under task_configs/samples/.
    data_files: Mapping[str, str] | None = field(default=None, hash=False)

    def label_text(self, index: int) -> str:
        """A label as the papers write it: ``index (name)``."""
        if not 0 <= index < len(self.label_names):
            raise ContamError(
                f"label {index!r} is outside 0..{len(self.label_names) - 1} for {self.display_name}",
                field=self.label_field,
            )
        return f"{index} ({self.label_names[index]})"


DATASETS: dict[str, DatasetSpec] = {
    spec.key: spec
    for spec in (
        DatasetSpec("imdb", "IMDB", "stanfordnlp/imdb", None, "cls", ("train", "test"),
                    "text", None, "label", ("neg", "pos"), ("text", "label")),
        DatasetSpec("ag_news", "AG News", "fancyzhx/ag_news", None, "cls", ("train", "test"),
                    "text", None, "label", ("World", "Sports", "Business", "Sci/Tech"), ("text", "label")),
        DatasetSpec("yelp", "Yelp", "Yelp/yelp_review_full", None, "cls", ("train", "test"),
                    "text", None, "label", ("1 star", "2 star", "3 stars", "4 stars", "5 stars"), ("text", "label")),
        DatasetSpec("rte", "RTE", "nyu-mll/glue", "rte", "nli", ("train", "validation"),
                    "sentence1", "sentence2", "label", ("entailment", "not_entailment"),
                    ("sentence1", "sentence2", "label")),
        DatasetSpec("wnli", "WNLI", "nyu-mll/glue", "wnli", "nli", ("train", "validation"),
                    "sentence1", "sentence2", "label", ("not_entailment", "entailment"),
                    ("sentence1", "sentence2", "label")),
        DatasetSpec("samsum", "SAMSum", "Samsung/samsum", None, "sum", ("train", "test"),
                    "summary", None, None, (), ("summary",), "dialogue"),
        DatasetSpec("xsum", "XSum", "EdinburghNLP/xsum", None, "xsum", ("train", "test"),
                    "summary", None, None, (), ("summary",), "document"),
        DatasetSpec("gsm8k", "GSM8k", "openai/gsm8k", "main", "question", ("train", "test"),
                    "question", None, None, (), ("question",), "answer"),
    )
}


SAMPLES_DIR = "samples"  # under task_configs/
# The same directory as seen from a generated sample task YAML (task_configs/<family>/samples/);
# lm-eval-contam resolves a task's data paths against its YAML.
SAMPLES_DIR_FROM_TASK_YAML = f"../../{SAMPLES_DIR}"


def _sample(key: str, display_name: str, task_type: TaskType, **columns: Any) -> DatasetSpec:
    splits = ("train", "test")
    return DatasetSpec(key, display_name, None, None, task_type, splits, **columns,
                       data_files={split: f"{key}_{split}.jsonl" for split in splits})


# Small datasets written for this project (12 rows per split), shipped so every
# method runs offline; their columns follow the Hub dataset of the same task type.
SAMPLE_DATASETS: dict[str, DatasetSpec] = {
    spec.key: spec
    for spec in (
        _sample("toy_news", "Toy News", "cls", text_field="text", second_field=None, label_field="label",
                label_names=("World", "Sports", "Business", "Science"), dcq_columns=("text", "label")),
        _sample("toy_reviews", "Toy Reviews", "cls", text_field="text", second_field=None, label_field="label",
                label_names=("negative", "positive"), dcq_columns=("text", "label")),
        _sample("toy_pairs", "Toy Pairs", "nli", text_field="sentence1", second_field="sentence2",
                label_field="label", label_names=("entailment", "not_entailment"),
                dcq_columns=("sentence1", "sentence2", "label")),
        _sample("toy_dialogues", "Toy Dialogues", "sum", text_field="summary", second_field=None, label_field=None,
                label_names=(), dcq_columns=("summary",), companion_field="dialogue"),
    )
}


def partition_spec(key: str) -> DatasetSpec:
    """The Hub or sample dataset registered under ``key``."""
    spec = DATASETS.get(key) or SAMPLE_DATASETS.get(key)
    if spec is None:
        known = ", ".join(sorted({*DATASETS, *SAMPLE_DATASETS}))
        raise ContamError(f"unknown dataset {key!r}; known: {known}", field="dataset")
    return spec


# The older name, still imported by callers of the Hub registry.
dataset_spec = partition_spec


def parse_partition(name: str) -> tuple[DatasetSpec, str]:
    """``"toy_news:train"`` -> (the dataset's spec, ``"train"``)."""
    key, colon, split = name.partition(":")
    if not colon or not key or not split or ":" in split:
        raise ContamError(f"expected <dataset>:<split>, e.g. toy_news:train; got {name!r}", field="partition")
    spec = partition_spec(key)
    if split not in spec.splits:
        raise ContamError(f"{spec.display_name} has no audited split {split!r}; known: {', '.join(spec.splits)}",
                          field="partition")
    return spec, split


def sample_data_dir() -> Path:
    from lm_eval_contam import task_dir

    return task_dir() / SAMPLES_DIR


def partition_rows(spec: DatasetSpec, split: str) -> list[dict]:
    """Every row of one partition: the shipped JSONL of a sample dataset, else the Hub split."""
    if spec.data_files is None:
        import datasets  # slow import; only Hub partitions need it

        return datasets.load_dataset(spec.hf_path, spec.hf_name, split=split).to_list()
    if split not in spec.data_files:
        raise ContamError(f"{spec.display_name} has no split {split!r}; known: {', '.join(spec.data_files)}",
                          field="split")
    return read_jsonl_objects(sample_data_dir() / spec.data_files[split])


def sample_partitions() -> list[str]:
    """Every shipped sample partition as ``<key>:<split>``, in registry order."""
    return [f"{spec.key}:{split}" for spec in SAMPLE_DATASETS.values() for split in spec.splits]
