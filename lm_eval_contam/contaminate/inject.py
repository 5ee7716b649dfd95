"""Injection: continued pre-training on the mixed corpus, saved with a manifest of what was injected."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from lm_eval_contam.contaminate.corpus import Corpus, build_corpus, default_filler
from lm_eval_contam.core.install import __version__
from lm_eval_contam.core.seeding import stable_hash
from lm_eval_contam.models.training import CHECKPOINT_FILE, train_on_texts

MANIFEST_FILE = "contamination_manifest.json"


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
    mixed_precision: str = "no"  # accelerate's: "bf16" trains under bf16 autocast (fp32 weights and optimizer)


def recipe(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A fine-tune's settings less how they were computed: its precision follows the machine (bf16 where native),
    so a model trained in bf16 on one machine is the same recipe as one in fp32 on another (its manifest says which)."""
    return {key: value for key, value in settings.items() if key != "mixed_precision"}


def trained_with(out_dir: str | Path, settings: InjectionSettings, sources: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``out_dir`` already holds a model injected from ``sources`` with ``settings``' recipe (reruns reuse it,
    whatever precision it was trained in)."""
    path = Path(out_dir, MANIFEST_FILE)
    if not path.is_file():
        return False
    manifest = json.loads(path.read_text())
    return (recipe(manifest.get("settings") or {}) == recipe(asdict(settings))
            and manifest.get("injected", {}).get("sources") == list(sources))


def _git_revision() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], check=False, cwd=Path(__file__).resolve().parent, capture_output=True,
            text=True, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _manifest(
    base_model: str,
    contaminant: Sequence[str],
    description: Mapping[str, Any] | None,
    settings: InjectionSettings,
    corpus: Corpus,
    *,
    user_filler: bool,
    history: Mapping[str, Any],
    train_seconds: float,
) -> dict[str, Any]:
    return {
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
            "filler_source": "user" if user_filler else "pydoc_data.topics (Python reference docs)",
        },
        "loss": dict(history),
        "train_seconds": round(train_seconds, 1),
        "lm_eval_contam_version": __version__,
        "git_revision": _git_revision(),
    }


def inject(
    base_model: str,
    contaminant: Sequence[str],
    out_dir: str,
    *,
    settings: InjectionSettings = InjectionSettings(),
    filler: Sequence[str] | None = None,
    description: Mapping[str, Any] | None = None,
    progress: bool = True,
    filler_only: bool = False,
) -> dict[str, Any]:
    """Continue pre-training ``base_model`` on ``contaminant`` mixed with filler; save an HF folder plus manifest.

    ``filler_only``: the same corpus with the contaminant documents taken out (contaminant share 0, the same filler
    in the same order, the same hyper-parameters): the null a reference-differenced test is measured on, a model
    fine-tuned from the same base that saw none of the audited instances.

    Returns the manifest, also written to ``<out_dir>/`` :data:`MANIFEST_FILE`:
    what was injected (with a hash per text), seeds, hyper-parameters, corpus
    shares, the loss history (held-out filler loss before and after each epoch),
    wall time and the project's git revision.
    """
    from accelerate import PartialState
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base_model)
    corpus = build_corpus(
        contaminant,
        default_filler() if filler is None else filler,
        share=settings.share,
        count_tokens=lambda text: len(tokenizer(text)["input_ids"]),
        seed=settings.seed,
        validation_docs=settings.validation_docs,
    )
    if filler_only:
        dropped = set(contaminant)
        corpus = replace(corpus, train=tuple(text for text in corpus.train if text not in dropped), contaminant_tokens=0)
        description = {**dict(description or {}), "filler_only": True}
        contaminant = ()
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
        checkpoint_dir=out_dir,  # an interrupted injection resumes after its last finished epoch
        mixed_precision=settings.mixed_precision,
    )
    manifest = _manifest(base_model, contaminant, description, settings, corpus, user_filler=filler is not None,
                         history=history, train_seconds=time.perf_counter() - started)
    if PartialState().is_main_process:  # under accelerate launch, rank 0 writes (as it saved the model)
        Path(out_dir, MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))
        Path(out_dir, CHECKPOINT_FILE).unlink(missing_ok=True)  # the saved model supersedes it
    return manifest
