"""The benchmark partitions the papers audit, shared by Time Travel and DCQ.

One record per dataset: where it lives on the Hub, how the papers name it in
prompts, which columns hold the text, and how labels are written
(``index (name)``, e.g. ``2 (Business)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lm_eval_contam.errors import ContamError

TaskType = Literal["cls", "nli", "sum", "xsum", "question"]


@dataclass(frozen=True)
class DatasetSpec:
    key: str  # used in task names, e.g. "ag_news"
    display_name: str  # as written in the papers' prompts, e.g. "AG News"
    hf_path: str
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


def dataset_spec(key: str) -> DatasetSpec:
    try:
        return DATASETS[key]
    except KeyError:
        raise ContamError(f"unknown dataset {key!r}; known: {', '.join(sorted(DATASETS))}", field="dataset") from None
