"""Docs of the in-context test: each sampled instance, its perturbed twin, and a context of other instances.

The twin is the instance with a few words swapped for WordNet synonyms (DCQ's offline perturber, the first of its
four perturbations): same dataset, same style, same length, but text no model saw. The context is
:data:`DEFAULT_CONTEXT_INSTANCES` other sampled instances of the same partition, drawn per doc from the seed and
the doc's identity, so reruns and data-parallel shards agree.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for

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


# The sign-flip test treats each instance's difference as its own draw, symmetric about 0 under H0. A swap shared by
# several twins (templated items: the same replaceable word in every item) puts its one effect, which has no reason to
# be 0, into each of them: the differences are clustered by swap and the test's variance is too small by the design
# effect. At MAX_DESIGN_EFFECT the test's level is 12 % where the swaps' effects outweigh the rest (P(Z > 1.645 /
# sqrt(2))); the shipped samples are at 1.0 and the natural-text fresh partitions of the validation study at most 1.85.
MAX_DESIGN_EFFECT = 2.0
_WORD = re.compile(r"[^\W_]+")


def swapped_words(text: str, twin: str) -> set[str]:
    """The words (lower-cased) of ``text`` its twin replaced."""
    return set(Counter(_WORD.findall(text.lower())) - Counter(_WORD.findall(twin.lower())))


@dataclass(frozen=True)
class SwapClustering:
    design_effect: float  # sum over swapped words of (twins swapping it)^2 / sum of (twins swapping it); 1: no repeats
    word: str  # the word swapped in the most twins
    twins: int  # how many twins swap it
    docs: int


def swap_clustering(docs: Sequence[Mapping[str, object]]) -> SwapClustering:
    """How much the twins' swaps repeat across the docs (``text``/``twin`` each)."""
    counts = Counter(word for doc in docs for word in swapped_words(str(doc["text"]), str(doc["twin"])))
    if not counts:
        return SwapClustering(1.0, "", 0, len(docs))
    word, twins = counts.most_common(1)[0]
    return SwapClustering(sum(k * k for k in counts.values()) / sum(counts.values()), word, twins, len(docs))
