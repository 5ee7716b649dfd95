"""The training corpus: the contaminant mixed with filler so it is at most ``share`` of the tokens.

DCR's default share is 15 %.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for


@functools.lru_cache(maxsize=1)
def read_paragraphs(path: str | Path) -> list[str]:
    """A text file's paragraphs (blank-line separated, whitespace collapsed): filler or extra contaminant."""
    source = Path(path)
    if not source.is_file():
        raise ContamError("file not found", source=str(source))
    try:
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ContamError(f"not UTF-8 text (byte {error.start})", source=str(source)) from None
    paragraphs = [" ".join(block.split()) for block in text.split("\n\n")]
    paragraphs = [paragraph for paragraph in paragraphs if paragraph]
    if not paragraphs:
        raise ContamError("no text", source=str(source))
    return paragraphs


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
