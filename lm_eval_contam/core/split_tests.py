"""Tests of two splits' labels, exact when the splits are exchangeable (ours; issue 49).

When a benchmark's two splits were drawn at random from one pool, a model that saw neither (or both alike) treats
them as exchangeable, and a permutation test of the split labels keeps its level at any size. The unit permuted is
the unit that was randomised: items that share a passage, a context or option texts (:func:`shared_context_clusters`)
are relabelled together, so a reading-comprehension split by passage is tested passage by passage.

* :func:`cluster_label_test`: one-sided, mean(partition) - mean(control) of a per-item score (H1: the audited split
  scores higher), Monte-Carlo p with the +1 correction.
* :func:`texts_differ_test`: the comparability check, model-free: a kernel two-sample test (MMD) on the items' character
  3-gram profiles and their log lengths, two-sided by construction, with the same relabellings. It has power against
  a second split of another kind (other case, other words, another template or source) that the lengths alone miss.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.stats import ALPHA, TestResult, finite_scores

N_RESAMPLES = 10_000  # the split-label test's relabellings (p resolution 1e-4)
CHECK_RESAMPLES = 999  # the comparability check's
# A line (or option set) links the items that share it when it is this long and held by at most this share of the
# pooled items (and at least 2): a passage or a context, not the template every item repeats.
PASSAGE_MIN_CHARS = 30
SHARED_MAX_SHARE = 0.02
SHARED_MAX_ITEMS = 50
NGRAM, NGRAM_BUCKETS = 3, 4096
_CHUNK = 500  # relabellings scored at once (bounds the memory of a 4,000-item relabelling matrix)


def shared_context_clusters(texts: Sequence[str], choices: Sequence[Sequence[str]] | None = None) -> list[int]:
    """A cluster id per item: items that share a passage line (>= ``PASSAGE_MIN_CHARS`` characters) or the same option
    texts are one cluster (connected components), unless that line or option set is held by more than
    ``SHARED_MAX_SHARE`` of the items (or ``SHARED_MAX_ITEMS``): then it is the task's template, shared by design."""
    parent = list(range(len(texts)))

    def root(item: int) -> int:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    holders: dict[tuple[str, object], list[int]] = {}
    for item, text in enumerate(texts):
        for line in dict.fromkeys(line.strip() for line in text.split("\n")):
            if len(line) >= PASSAGE_MIN_CHARS:
                holders.setdefault(("line", line), []).append(item)
        options = tuple(sorted(str(choice) for choice in (choices[item] if choices else ())))
        if len(options) > 1:
            holders.setdefault(("options", options), []).append(item)
    limit = max(2, min(SHARED_MAX_ITEMS, int(SHARED_MAX_SHARE * len(texts))))
    for items in holders.values():
        if 1 < len(items) <= limit:
            for other in items[1:]:
                parent[root(other)] = root(items[0])
    ids: dict[int, int] = {}
    return [ids.setdefault(root(item), len(ids)) for item in range(len(texts))]


@dataclass(frozen=True)
class SplitLabelResult(TestResult):
    """``statistic``: mean(partition) - mean(control) per item; ``null_sd``: its SD over the relabellings drawn;
    ``clusters``: the units relabelled (the partition's, the control's); ``mixed_items``: items left out because their
    cluster holds items of both splits (no one label to give it)."""

    partition_mean: float
    control_mean: float
    n_partition: int
    n_control: int
    clusters: tuple[int, int]
    mixed_items: int
    n_resamples: int
    null_sd: float

    @property
    def standardised(self) -> float:
        return self.statistic / self.null_sd if self.null_sd > 0 else 0.0


def _units(is_partition: np.ndarray, clusters: Sequence[int] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kept items, their unit index, each unit's label) with the clusters holding both labels left out."""
    ids = np.arange(is_partition.size) if clusters is None else np.asarray(clusters)
    if ids.size != is_partition.size:
        raise ContamError(f"{ids.size} cluster ids for {is_partition.size} items", field="clusters")
    units, unit_of = np.unique(ids, return_inverse=True)
    share = np.bincount(unit_of, weights=is_partition.astype(float), minlength=units.size)
    sizes = np.bincount(unit_of, minlength=units.size)
    pure = (share == 0) | (share == sizes)
    kept = pure[unit_of]
    _, unit_of_kept = np.unique(unit_of[kept], return_inverse=True)
    labels = (share[pure] > 0)
    return kept, unit_of_kept, labels


@dataclass(frozen=True)
class SplitUnits:
    """The units a split-label test relabels: each side's (``partition``, ``control``) and the items they hold
    (``items``, of which ``partition_items`` on the audited side); ``mixed_items``: items left out because their
    cluster holds items of both splits."""

    partition: int
    control: int
    items: int
    mixed_items: int
    partition_items: int

    @property
    def testable(self) -> bool:
        """Units on both sides and 3 items: less leaves no relabelling to compare with."""
        return self.partition >= 1 and self.control >= 1 and self.items >= 3

    @property
    def sides(self) -> tuple[int, int]:
        """The items the test compares on each side (audited, control): those of units of one split alone."""
        return self.partition_items, self.items - self.partition_items

    @property
    def shared_out(self) -> bool:
        """Untestable because items of both splits share units (a side left without one), not for want of items."""
        return self.mixed_items > 0 and (self.partition == 0 or self.control == 0)


@dataclass(frozen=True)
class NoUnitsResult(TestResult):
    """What a split-label test or check gives where :class:`SplitUnits` leave nothing to relabel (every cluster holds
    items of both splits: a passage benchmark split by question, not by passage): no statistic, no p (NaN, read
    as "not measured"), and the units it found."""

    units: SplitUnits
    partition_mean: float = math.nan
    control_mean: float = math.nan

    @classmethod
    def of(cls, units: SplitUnits) -> NoUnitsResult:
        return cls(statistic=math.nan, confidence_interval=None, pvalue=math.nan, units=units)


def split_units(is_partition: Sequence[bool], clusters: Sequence[int] | None) -> SplitUnits:
    """:class:`SplitUnits` of items labelled ``is_partition``, grouped by ``clusters`` (None: every item its own)."""
    labelled = np.asarray(is_partition, dtype=bool)
    kept, _, labels = _units(labelled, clusters)
    return SplitUnits(int(labels.sum()), int((~labels).sum()), int(kept.sum()), int((~kept).sum()),
                      int((labelled & kept).sum()))


def _relabellings(labels: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` relabellings of the units (boolean, count x units), each keeping the number of partition units."""
    return rng.permuted(np.tile(labels, (count, 1)), axis=1)


def _relabelled(statistic: Callable[[np.ndarray], np.ndarray], unit_of: np.ndarray, labels: np.ndarray,
                n_resamples: int, rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """The statistic of the observed item labels and of ``n_resamples`` unit relabellings (each a (k, items) boolean
    label matrix handed to ``statistic``)."""
    observed = float(statistic(labels[unit_of][None, :])[0])
    null = [statistic(_relabellings(labels, min(_CHUNK, n_resamples - start), rng)[:, unit_of])
            for start in range(0, n_resamples, _CHUNK)]
    return observed, np.concatenate(null)


def cluster_label_test(scores: Sequence[float], is_partition: Sequence[bool], clusters: Sequence[int] | None = None,
                       *, seed: int = 0, n_resamples: int = N_RESAMPLES) -> SplitLabelResult:
    """One-sided permutation test of the split labels on a per-item score (H0: the two splits' units are
    exchangeable; H1: the partition scores higher), units relabelled as wholes; p = (1 + hits) / (1 + resamples)."""
    values = finite_scores(scores, "scores")
    labels_of_items = np.asarray(is_partition, dtype=bool)
    if labels_of_items.size != values.size:
        raise ContamError(f"{labels_of_items.size} labels for {values.size} scores", field="is_partition")
    units = split_units(labels_of_items, clusters)
    if not units.testable:
        raise ContamError(f"the split-label test needs units on both sides and 3 items; got {units.partition} "
                          f"partition and {units.control} control unit(s) of {units.items} item(s)",
                          field="is_partition")
    kept, unit_of, labels = _units(labels_of_items, clusters)
    values = values[kept]
    if n_resamples < 1:
        raise ContamError(f"n_resamples must be >= 1, got {n_resamples!r}", field="n_resamples")

    def mean_difference(mask: np.ndarray) -> np.ndarray:
        inside, total = mask.sum(axis=1), values.sum()
        within = mask.astype(float) @ values
        return within / inside - (total - within) / (values.size - inside)

    observed, null = _relabelled(mean_difference, unit_of, labels, n_resamples,
                                 rng_for(seed, "split-label-test"))
    mine = labels[unit_of]
    return SplitLabelResult(
        statistic=observed, pvalue=float((1 + np.sum(null >= observed - 1e-12)) / (1 + null.size)),
        confidence_interval=None, partition_mean=float(values[mine].mean()), control_mean=float(values[~mine].mean()),
        n_partition=int(mine.sum()), n_control=int((~mine).sum()),
        clusters=(int(labels.sum()), int((~labels).sum())), mixed_items=int((~kept).sum()),
        n_resamples=n_resamples, null_sd=float(null.std()))


def text_features(texts: Sequence[str]) -> np.ndarray:
    """Each text's character ``NGRAM``-gram counts hashed into ``NGRAM_BUCKETS`` (crc32, stable across runs), scaled to
    unit length: the profile the comparability check compares (case, words and template all change it)."""
    import zlib

    features = np.zeros((len(texts), NGRAM_BUCKETS))
    for row, text in enumerate(texts):
        padded = f"\x02{text}\x03"
        for start in range(max(1, len(padded) - NGRAM + 1)):
            features[row, zlib.crc32(padded[start:start + NGRAM].encode("utf-8")) % NGRAM_BUCKETS] += 1
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    return features / np.where(norms > 0, norms, 1.0)


@dataclass(frozen=True)
class TextsDifferResult(TestResult):
    """``statistic``: the squared maximum mean discrepancy of the two splits' items (profile kernel x length kernel);
    ``pvalue``: its relabelling p (large values: the splits differ)."""

    n_partition: int
    n_control: int
    n_resamples: int

    def differ(self, alpha: float = ALPHA) -> bool:
        return self.pvalue <= alpha


def texts_differ_test(texts: Sequence[str], control_texts: Sequence[str], clusters: Sequence[int] | None = None, *,
                      seed: int = 0, n_resamples: int = CHECK_RESAMPLES) -> TextsDifferResult:
    """The comparability check of two splits' items: MMD with the kernel k(a, b) = cos(profile a, profile b) *
    exp(-(log len a - log len b)^2 / 2) (:func:`text_features`), units relabelled as :func:`cluster_label_test` does
    (H0: the two splits' units are exchangeable, as two random splits of one pool are); p = (1 + hits) / (1 + resamples).
    Exact at any size under H0; a split of other case, words, template or lengths moves it."""
    every = [*texts, *control_texts]
    mine = np.array([True] * len(texts) + [False] * len(control_texts))
    if not split_units(mine, clusters).testable:
        raise ContamError("the comparability check needs units on both sides and 3 items", field="texts")
    kept, unit_of, labels = _units(mine, clusters)
    kept_texts = [text for text, keep in zip(every, kept) if keep]
    profile = text_features(kept_texts)
    lengths = np.log1p(np.array([len(text) for text in kept_texts], dtype=float))
    kernel = (profile @ profile.T) * np.exp(-np.subtract.outer(lengths, lengths) ** 2 / 2)

    def discrepancy(mask: np.ndarray) -> np.ndarray:
        inside = mask.sum(axis=1, keepdims=True)
        weights = np.where(mask, 1.0 / inside, -1.0 / (mask.shape[1] - inside))
        return np.einsum("ij,ij->i", weights @ kernel, weights)

    observed, null = _relabelled(discrepancy, unit_of, labels, n_resamples, rng_for(seed, "split-texts-check"))
    inside = labels[unit_of]
    return TextsDifferResult(statistic=observed, pvalue=float((1 + np.sum(null >= observed - 1e-12)) / (1 + null.size)),
                             confidence_interval=None, n_partition=int(inside.sum()), n_control=int((~inside).sum()),
                             n_resamples=n_resamples)


def binomial_interval(hits: int, runs: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Clopper-Pearson interval of a rate (the level checks quote it)."""
    from scipy.stats import binomtest

    found = binomtest(hits, runs).proportion_ci(confidence_level=confidence, method="exact")
    return float(found.low), float(found.high)


def rate_entry(flagged: float, k: int) -> dict[str, Any]:
    """A rates file's entry: partitions flagged of ``k`` tested (a mean over draws may be fractional), the rate and
    its 95 % Clopper-Pearson interval (of the rounded count)."""
    low, high = binomial_interval(round(flagged), k)
    return {"flagged": round(flagged, 2), "k": k, "rate": round(flagged / k, 4), "ci": [round(low, 4), round(high, 4)]}


def within_level(hits: int, runs: int, alpha: float = ALPHA, confidence: float = 0.95) -> bool:
    """Whether ``alpha`` lies in the rejection rate's binomial interval (``confidence``)."""
    low, high = binomial_interval(hits, runs, confidence)
    return low <= alpha <= high and not math.isnan(low)
