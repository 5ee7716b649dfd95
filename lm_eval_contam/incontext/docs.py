"""Docs of the in-context test: each sampled instance, its perturbed twin, and a context of other instances.

The twin is the instance with a few words swapped for WordNet synonyms (DCQ's offline perturber, the first of its
four perturbations): same dataset, same style, same length, but text no model saw. The context is
:data:`DEFAULT_CONTEXT_INSTANCES` other sampled instances of the same partition, drawn per doc from the seed and
the doc's identity, so reruns and data-parallel shards agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lm_eval_contam.errors import ContamError
from lm_eval_contam.seeding import rng_for

DEFAULT_CONTEXT_INSTANCES = 3  # CoDeC's setting: a few other instances of the dataset in the context
CONTEXT_SEPARATOR = "\n\n"

# text -> its perturbed twin (None when no word of it can be swapped)
Twin = Callable[[str], "str | None"]


@dataclass(frozen=True)
class InContextDoc:
    """One scored instance: its text, its twin, and the context both are scored after."""

    row_index: int
    text: str
    twin: str
    context: str

    def as_dict(self) -> dict[str, object]:
        return {"row_index": self.row_index, "text": self.text, "twin": self.twin, "context": self.context}


def context_for(texts: Sequence[str], position: int, *, size: int, seed: int, identity: str) -> str:
    """``size`` other texts of ``texts`` (never the one at ``position``), seeded by the doc's identity."""
    others = [i for i in range(len(texts)) if i != position]
    if len(others) < size:
        raise ContamError(f"{len(texts)} instance(s); the in-context test needs at least {size + 1}",
                          field="num_instances")
    picked = rng_for(seed, "incontext-context", identity).choice(len(others), size=size, replace=False)
    return CONTEXT_SEPARATOR.join(texts[others[int(i)]] for i in sorted(picked)) + CONTEXT_SEPARATOR


def incontext_docs(texts: Sequence[str], row_indices: Sequence[int], twin: Twin, *, context_instances: int,
                   seed: int, partition_label: str) -> list[InContextDoc]:
    """One doc per text that has a twin; contexts drawn from every text (twinned or not)."""
    docs = []
    for position, (row_index, text) in enumerate(zip(row_indices, texts)):
        other = twin(text)
        if other is None or other == text:
            continue
        context = context_for(texts, position, size=context_instances, seed=seed,
                              identity=f"{partition_label}:{row_index}")
        docs.append(InContextDoc(row_index, text, other, context))
    return docs
