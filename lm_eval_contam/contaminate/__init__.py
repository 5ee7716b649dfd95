"""Contamination on purpose: the seed papers' injection formats and a seeded training corpus.

Modules: :mod:`~.formats` (Time Travel's web format, DCR's L3/L4 blocks),
:mod:`~.rows` (which rows of a partition are injected), :mod:`~.corpus` (mixing
the contaminant with filler at a capped token share), :mod:`~.inject` (continued
pre-training and the manifest).
"""

from lm_eval_contam.contaminate.corpus import read_paragraphs
from lm_eval_contam.contaminate.formats import INJECTION_FORMATS, contaminant_texts
from lm_eval_contam.contaminate.inject import MANIFEST_FILE, InjectionSettings, inject, recipe, trained_with
from lm_eval_contam.contaminate.rows import audited_rows, partition_contaminant

__all__ = [
    "INJECTION_FORMATS",
    "MANIFEST_FILE",
    "InjectionSettings",
    "audited_rows",
    "contaminant_texts",
    "inject",
    "partition_contaminant",
    "read_paragraphs",
    "recipe",
    "trained_with",
]
