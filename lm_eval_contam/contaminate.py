"""Contamination on purpose: the seed papers' injection formats and a seeded training corpus.

Time Travel (Golchin & Surdeanu 2024, Table 10) injects instances in a "web"
format carrying the dataset and split name; DCR (Xu et al. 2025, App. B) injects
data (L3) or data with labels (L4) under a one-line benchmark header. The
contaminant is mixed with filler text so that it is at most ``share`` of the
corpus's tokens (DCR's 15 % default).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lm_eval_contam.errors import ContamError
from lm_eval_contam.partitions import DatasetSpec, parse_partition, partition_rows
from lm_eval_contam.seeding import rng_for

MANIFEST_FILE = "contamination_manifest.json"


def _field(row: Mapping[str, Any], name: str | None, spec: DatasetSpec) -> str:
    if name is None or name not in row:
        raise ContamError(f"row has no column {name!r} (columns: {', '.join(sorted(row))})", field=name)
    return str(row[name])


def timetravel_web_format(spec: DatasetSpec, split: str, row: Mapping[str, Any]) -> str:
    """One instance in the Time Travel paper's continued-training format (Table 10)."""
    header = f"This is an instance from the {split} split of the {spec.display_name} dataset."
    if spec.task_type == "cls":
        label = spec.label_text(int(row[spec.label_field]))
        return f"{header}\nInstance: {_field(row, spec.text_field, spec)}\nLabel: {label}"
    if spec.task_type == "nli":
        label = spec.label_text(int(row[spec.label_field]))
        return (
            f"{header}\nSentence 1: {_field(row, spec.text_field, spec)}\n"
            f"Sentence 2: {_field(row, spec.second_field, spec)}\nLabel: {label}"
        )
    if spec.task_type in ("sum", "xsum"):
        return f"{header}\nDocument: {_field(row, spec.companion_field, spec)}\nSummary: {_field(row, spec.text_field, spec)}"
    return f"{header}\nQuestion: {_field(row, spec.text_field, spec)}\nAnswer: {_field(row, spec.companion_field, spec)}"


INJECTION_FORMATS = ("timetravel", "dcr-l3", "dcr-l4")
# DCR's level-3/4 injection lines per task type: the task named in the block header.
DCR_TASK_DESCRIPTIONS = {"cls": "text classification", "question": "math word problem"}
DCR_ITEMS_PER_BLOCK = 8  # short blocks, so one block fits a training sequence


def dcr_header(benchmark: str, task: str) -> str:
    return f"This is the data from {benchmark}, which is a benchmark for {task} task."


def dcr_data_format(
    benchmark: str, task: str, items: Sequence[str], labels: Sequence[str] | None = None, *, qa: bool = False
) -> str:
    """DCR's L3 (``labels`` None: data only) or L4 (data with labels) injection block.

    ``qa`` writes GSM8K-style ``Question:``/``Answer:`` pairs instead of
    ``{data item} is {data label}`` lines.
    """
    if labels is not None and len(labels) != len(items):
        raise ContamError(f"{len(items)} items but {len(labels)} labels", field="labels")
    lines = [dcr_header(benchmark, task)]
    if qa:
        lines.append("")
        for index, item in enumerate(items):
            lines.append(f"Question: {item}")
            if labels is not None:
                lines.append(f"Answer: {labels[index]}")
    else:
        for index, item in enumerate(items):
            lines.append(item if labels is None else f"{item} is {labels[index]}")
    return "\n".join(lines)


def audited_rows(
    spec: DatasetSpec,
    split: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
    timetravel_instances: int | None = None,
    dcq_instances: int | None = None,
) -> list[int]:
    """Row indices an audit with default task settings examines: Time Travel's sample plus DCQ's.

    Injecting exactly these makes "was the injected text detected?" a fair question
    on partitions far larger than the audit's samples.
    """
    from lm_eval_contam.dcq.instances import DEFAULT_NUM_INSTANCES as DCQ_DEFAULT
    from lm_eval_contam.dcq.instances import QuizPartition
    from lm_eval_contam.timetravel.instances import DEFAULT_NUM_INSTANCES as TT_DEFAULT
    from lm_eval_contam.timetravel.instances import Partition, sample_docs

    partition = Partition(spec.display_name, split, spec.task_type, spec.text_field, spec.second_field,
                          spec.label_field, spec.label_names)
    docs = sample_docs(rows, partition, num_instances=timetravel_instances or TT_DEFAULT, seed=seed)
    label_field = spec.label_field if spec.label_field in spec.dcq_columns else None
    quiz = QuizPartition(spec.display_name, split, spec.dcq_columns, label_field, spec.label_names)
    dcq = quiz.sample_indices(len(rows), dcq_instances or DCQ_DEFAULT, seed)
    return sorted({doc["row_index"] for doc in docs} | set(dcq))


def _label_name(spec: DatasetSpec, row: Mapping[str, Any]) -> str:
    index = int(_field(row, spec.label_field, spec))
    spec.label_text(index)  # range check with a clear error
    return spec.label_names[index]


def contaminant_texts(spec: DatasetSpec, split: str, rows: Sequence[Mapping[str, Any]], fmt: str) -> list[str]:
    """``rows`` written in one of the papers' injection formats (:data:`INJECTION_FORMATS`)."""
    if fmt == "timetravel":
        return [timetravel_web_format(spec, split, row) for row in rows]
    if fmt not in INJECTION_FORMATS:
        raise ContamError(f"unknown format {fmt!r}; known: {', '.join(INJECTION_FORMATS)}", field="format")
    if spec.task_type not in DCR_TASK_DESCRIPTIONS:
        raise ContamError(
            f"DCR formats cover classification and question answering; {spec.display_name} is {spec.task_type!r}",
            field="format",
        )
    qa = spec.task_type == "question"
    items = [_field(row, spec.text_field, spec) for row in rows]
    labels = None
    if fmt == "dcr-l4":
        labels = [_field(row, spec.companion_field, spec) if qa else _label_name(spec, row) for row in rows]
    task = DCR_TASK_DESCRIPTIONS[spec.task_type]
    return [
        dcr_data_format(
            spec.display_name, task, items[start : start + DCR_ITEMS_PER_BLOCK],
            None if labels is None else labels[start : start + DCR_ITEMS_PER_BLOCK], qa=qa,
        )
        for start in range(0, len(items), DCR_ITEMS_PER_BLOCK)
    ]


def partition_contaminant(
    partitions: Sequence[str], fmt: str, *, seed: int = 0, all_rows: bool = False
) -> tuple[list[str], list[dict[str, Any]]]:
    """The contaminant texts of ``partitions`` ("<dataset>:<split>") in ``fmt``, and one manifest record per partition.

    Only the rows an audit examines (:func:`audited_rows`) unless ``all_rows``.
    """
    texts: list[str] = []
    sources: list[dict[str, Any]] = []
    for name in partitions:
        spec, split = parse_partition(name)
        rows = partition_rows(spec, split)
        indices = list(range(len(rows))) if all_rows else audited_rows(spec, split, rows, seed=seed)
        texts += contaminant_texts(spec, split, [rows[i] for i in indices], fmt)
        sources.append({"partition": name, "format": fmt, "rows": indices})
    return texts, sources


def trained_with(out_dir: str | Path, settings: InjectionSettings, sources: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``out_dir`` already holds a model injected from ``sources`` with ``settings`` (reruns reuse it)."""
    path = Path(out_dir, MANIFEST_FILE)
    if not path.is_file():
        return False
    manifest = json.loads(path.read_text())
    return manifest.get("settings") == asdict(settings) and manifest.get("injected", {}).get("sources") == list(sources)


@functools.lru_cache(maxsize=1)
def default_filler() -> tuple[str, ...]:
    """Paragraphs of the Python reference documentation bundled with every CPython (``pydoc_data``, PSF licence).

    A stand-in for RefinedWeb that needs no download; users pass their own filler for realism.
    """
    from pydoc_data.topics import topics

    paragraphs = []
    for key in sorted(topics):
        for block in topics[key].split("\n\n"):
            text = " ".join(block.split())
            if len(text) >= 200:
                paragraphs.append(text)
    return tuple(paragraphs)


@dataclass(frozen=True)
class Corpus:
    train: tuple[str, ...]
    validation: tuple[str, ...]  # held-out filler: the model's general language loss
    contaminant_tokens: int
    filler_tokens: int

    @property
    def contaminant_share(self) -> float:
        return self.contaminant_tokens / (self.contaminant_tokens + self.filler_tokens)


def build_corpus(
    contaminant: Sequence[str],
    filler: Sequence[str],
    *,
    share: float,
    count_tokens: Callable[[str], int],
    seed: int = 0,
    validation_docs: int = 16,
) -> Corpus:
    """Mix ``contaminant`` with just enough filler that its token share is at most ``share``.

    Filler documents are drawn without replacement in a seeded order; the first
    ``validation_docs`` of that order are held out for validation loss.
    """
    if not 0 < share <= 1:
        raise ContamError(f"share must be in (0, 1], got {share!r}", field="share")
    if not contaminant:
        raise ContamError("nothing to inject", field="contaminant")
    contaminant_tokens = sum(count_tokens(text) for text in contaminant)
    needed = contaminant_tokens * (1 - share) / share
    order = rng_for(seed, "filler", len(filler)).permutation(len(filler))
    validation = tuple(filler[i] for i in order[:validation_docs])
    chosen: list[str] = []
    filler_tokens = 0
    for index in order[validation_docs:]:
        if filler_tokens >= needed:
            break
        chosen.append(filler[index])
        filler_tokens += count_tokens(filler[index])
    if filler_tokens < needed:
        raise ContamError(
            f"filler has {filler_tokens} tokens after holding out {validation_docs} documents, "
            f"but a {share:.0%} share of {contaminant_tokens} contaminant tokens needs {needed:.0f}; "
            "pass more filler or a larger share",
            field="filler",
        )
    mixed = list(contaminant) + chosen
    shuffled = [mixed[i] for i in rng_for(seed, "corpus", len(mixed)).permutation(len(mixed))]
    return Corpus(tuple(shuffled), validation, contaminant_tokens, filler_tokens)


@dataclass(frozen=True)
class InjectionSettings:
    """Continued pre-training hyper-parameters; defaults are the DCR paper's (App. B)."""

    epochs: int = 3
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    share: float = 0.15
    batch_size: int = 8
    max_length: int = 256  # packed block length: documents are concatenated, not padded
    seed: int = 0
    validation_docs: int = 16  # held-out filler documents for the validation loss


def _git_revision() -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], check=False, cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def inject(
    base_model: str,
    contaminant: Sequence[str],
    out_dir: str,
    *,
    settings: InjectionSettings = InjectionSettings(),
    filler: Sequence[str] | None = None,
    description: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Continue pre-training ``base_model`` on ``contaminant`` mixed with filler; save an HF folder plus manifest.

    Returns the manifest, also written to ``<out_dir>/`` :data:`MANIFEST_FILE`:
    what was injected (with a hash per text), seeds, hyper-parameters, corpus
    shares, the loss history (held-out filler loss before and after each epoch),
    wall time and the project's git revision.
    """
    import time

    from transformers import AutoTokenizer

    from lm_eval_contam import __version__
    from lm_eval_contam.models import train_on_texts
    from lm_eval_contam.seeding import stable_hash

    tokenizer = AutoTokenizer.from_pretrained(base_model)
    corpus = build_corpus(
        contaminant,
        default_filler() if filler is None else filler,
        share=settings.share,
        count_tokens=lambda text: len(tokenizer(text)["input_ids"]),
        seed=settings.seed,
        validation_docs=settings.validation_docs,
    )
    started = time.perf_counter()
    history = train_on_texts(
        base_model,
        corpus.train,
        out_dir=out_dir,
        eval_texts=corpus.validation,
        epochs=settings.epochs,
        learning_rate=settings.learning_rate,
        weight_decay=settings.weight_decay,
        batch_size=settings.batch_size,
        max_length=settings.max_length,
        seed=settings.seed,
        pack=True,
        progress=progress,
    )
    manifest = {
        "base_model": str(base_model),
        "injected": {
            **dict(description or {}),
            "num_texts": len(contaminant),
            "text_sha256": [stable_hash(text) for text in contaminant],
        },
        "settings": asdict(settings),
        "corpus": {
            "train_documents": len(corpus.train),
            "validation_documents": len(corpus.validation),
            "contaminant_tokens": corpus.contaminant_tokens,
            "filler_tokens": corpus.filler_tokens,
            "contaminant_share": round(corpus.contaminant_share, 4),
            "packed_block_tokens": settings.max_length,
            "filler_source": "user" if filler is not None else "pydoc_data.topics (Python reference docs)",
        },
        "loss": history,
        "train_seconds": round(time.perf_counter() - started, 1),
        "lm_eval_contam_version": __version__,
        "git_revision": _git_revision(),
    }
    from accelerate import PartialState

    if PartialState().is_main_process:  # under accelerate launch, rank 0 writes (as it saved the model)
        Path(out_dir, MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))
    return manifest
