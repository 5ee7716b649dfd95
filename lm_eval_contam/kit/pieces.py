"""Cut an instance into the first piece (shown) and the second piece (to replicate), and a row's doc with both
pieces and both of Time Travel's prompts (:func:`build_doc`: Time Travel generates the second piece, the likelihood
lift mode scores it).

Multi-sentence texts are cut on sentence boundaries, single sentences on words;
the cut index is ``round(U(0.40·n, 0.70·n))`` units, as in the paper. Unlike the
released code (which re-seeded with one constant, so every instance was cut at
the same fraction), U is drawn per instance from the seed and the instance's
identity: reruns and data-parallel shards cut identically, instances differ.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.kit.guided_prompts import render_prompt

MIN_FRACTION = 0.40
MAX_FRACTION = 0.70


@dataclass(frozen=True)
class Split:
    first_piece: str
    second_piece: str
    unit: str  # "sentence" or "word"
    n_units: int
    cut: int  # number of units in the first piece
    drawn_fraction: float  # U / n before rounding, in [MIN_FRACTION, MAX_FRACTION]


# NLTK's trained English Punkt model (the paper's splitter) is a download, which this project cannot rely on; untrained
# Punkt ends a sentence at every "U.S." or "Mr.". These common English abbreviations (lower case, no final period, as
# Punkt stores them) are given instead; tests/timetravel/test_timetravel_unit.py measures what they change.
ENGLISH_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "gen", "sen", "rep", "gov", "rev", "capt", "col",
    "lt", "sgt", "u.s", "u.k", "u.n", "e.u", "d.c", "l.a", "n.y", "a.m", "p.m", "e.g", "i.e", "etc", "vs", "cf", "al",
    "inc", "ltd", "co", "corp", "bros", "dept", "univ", "assn", "approx", "est", "fig", "vol", "no", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
})


@functools.lru_cache(maxsize=1)
def _sentence_tokenizer() -> PunktSentenceTokenizer:
    parameters = PunktParameters()
    parameters.abbrev_types = set(ENGLISH_ABBREVIATIONS)
    return PunktSentenceTokenizer(parameters)


def sentences(text: str) -> list[str]:
    return _sentence_tokenizer().tokenize(text.strip())


def split_units(text: str) -> tuple[str, list[str]]:
    """Sentences when there is more than one, else whitespace-separated words."""
    found = sentences(text)
    if len(found) > 1:
        return "sentence", found
    return "word", text.split()


def split_text(text: str, *, seed: int, identity: tuple[object, ...]) -> Split | None:
    """The seeded cut of ``text``; ``None`` when it has fewer than two units to cut between."""
    unit, units = split_units(text)
    n = len(units)
    if n < 2:
        return None
    drawn = rng_for(seed, "timetravel-split", *identity).uniform(MIN_FRACTION * n, MAX_FRACTION * n)
    # Both pieces stay non-empty even when rounding reaches an end (short texts).
    cut = min(max(round(drawn), 1), n - 1)
    return Split(
        first_piece=" ".join(units[:cut]),
        second_piece=" ".join(units[cut:]),
        unit=unit,
        n_units=n,
        cut=cut,
        drawn_fraction=drawn / n,
    )


def build_doc(
    row: Mapping[str, Any], row_index: int, partition: Partition, *, seed: int, style: str
) -> dict[str, Any] | None:
    """One doc with both pieces and both prompts; ``None`` when the text cannot be cut."""
    dataset = partition.dataset
    source = f"{partition.label} row {row_index}"
    for column in (dataset.text_field, dataset.second_field, dataset.label_field if dataset.labelled else None):
        if column is not None and column not in row:
            raise ContamError(f"no such column; the row has {sorted(row)}", source=source, field=column)
    text = str(row[dataset.text_field])
    if dataset.task_type == "nli":
        first_piece, second_piece = text.strip(), str(row[dataset.second_field]).strip()
        cut = {"split_unit": "sentence", "n_units": 2, "cut": 1, "drawn_fraction": None}
    else:
        split = split_text(text, seed=seed, identity=(dataset.display_name, partition.split, row_index))
        if split is None:
            return None
        first_piece, second_piece = split.first_piece, split.second_piece
        cut = {"split_unit": split.unit, "n_units": split.n_units, "cut": split.cut, "drawn_fraction": split.drawn_fraction}
    prompt_fields = {"split_name": partition.split, "dataset_name": dataset.display_name, "first_piece": first_piece}
    if dataset.labelled:
        prompt_fields["label"] = partition.label_text(row[dataset.label_field], source)
    return {
        "row_index": row_index,
        "first_piece": first_piece,
        "reference": second_piece,
        "label": prompt_fields.get("label", ""),
        **cut,
        "guided_prompt": render_prompt("guided", dataset.task_type, style, **prompt_fields),
        "general_prompt": render_prompt("general", dataset.task_type, style, **prompt_fields),
    }
