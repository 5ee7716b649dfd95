"""The WordNet 3.0 database, read directly from Debian's ``wordnet-base`` files (``index.*``/``data.*``; Princeton
WordNet licence): most-frequent-sense synonyms and the synsets' glosses.

One reader for every user: DCQ's offline perturber (and through it DCR's twins and the in-context test's), the null
study's vocabulary (words with synonyms) and the validation study's filler (the glosses).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from lm_eval_contam.core.errors import ContamError

WORDNET_INSTALL_COMMAND = "apt-get install -y --no-install-recommends wordnet-base"
DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
WORDNET_DIR_ENV = "LM_EVAL_CONTAM_WORDNET"
PARTS_OF_SPEECH = ("noun", "verb", "adj", "adv")


def wordnet_dir() -> Path:
    return Path(os.environ.get(WORDNET_DIR_ENV, DEFAULT_WORDNET_DIR))


@dataclass(frozen=True)
class _Sense:
    tagged: int  # tagsense_cnt: how often the lemma's senses were tagged in SemCor
    pos: str
    offset: int  # byte offset of its first (most frequent) synset in data.<pos>


class WordNet:
    """Most-frequent-sense synonyms from a WordNet 3.0 database directory."""

    def __init__(self, directory: Path) -> None:
        missing = [f"{kind}.{pos}" for pos in PARTS_OF_SPEECH for kind in ("index", "data")
                   if not (directory / f"{kind}.{pos}").is_file()]
        if missing:
            raise ContamError(
                f"WordNet database files {', '.join(missing)} are missing; install them with "
                f"`{WORDNET_INSTALL_COMMAND}` or point ${WORDNET_DIR_ENV} at a WordNet 3.0 dict directory",
                source=str(directory),
            )
        self.directory = directory
        self._senses = self._read_indexes()

    def _read_indexes(self) -> dict[str, _Sense]:
        senses: dict[str, _Sense] = {}
        for pos in PARTS_OF_SPEECH:
            with (self.directory / f"index.{pos}").open(encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("  "):  # licence header
                        continue
                    fields = line.split()
                    synset_count, pointer_count = int(fields[2]), int(fields[3])
                    tagged = int(fields[5 + pointer_count])
                    offset = int(fields[-synset_count])
                    best = senses.get(fields[0])
                    if best is None or tagged > best.tagged:
                        senses[fields[0]] = _Sense(tagged, pos, offset)
        return senses

    @functools.lru_cache(maxsize=None)
    def _synset_words(self, pos: str, offset: int) -> tuple[str, ...]:
        with (self.directory / f"data.{pos}").open("rb") as handle:
            handle.seek(offset)
            fields = handle.readline().decode("utf-8").split()
        count = int(fields[3], 16)
        # Adjective lemmas may carry a syntactic marker such as "(a)" or "(p)".
        return tuple(re.sub(r"\(\w+\)$", "", fields[4 + 2 * i]) for i in range(count))

    def _lemma_synonyms(self, lemma: str, pos: str | None = None) -> tuple[str, ...]:
        sense = self._senses.get(lemma)
        if sense is None or (pos is not None and sense.pos != pos):
            return ()
        words = self._synset_words(sense.pos, sense.offset)
        return tuple(sorted({w for w in words if w.isalpha() and w.islower() and w != lemma}))

    def synonyms(self, word: str) -> tuple[str, ...]:
        """Single-word, lower-case synonyms of ``word`` in its most frequent sense (sorted, deduplicated).

        A regular plural ("pictures") that is not a lemma itself gets its singular's
        noun synonyms, pluralised the same regular way.
        """
        lemma = word.lower()
        if lemma in self._senses:
            return self._lemma_synonyms(lemma)
        if len(lemma) > 3 and lemma.endswith("s") and not lemma.endswith("ss"):
            return tuple(_plural(w) for w in self._lemma_synonyms(lemma[:-1], "noun"))
        return ()


def _plural(noun: str) -> str:
    return noun + ("es" if noun.endswith(("s", "x", "z", "ch", "sh")) else "s")


@functools.lru_cache(maxsize=4)
def load_wordnet(directory: Path | None = None) -> WordNet:
    return WordNet(directory or wordnet_dir())


def glosses(directory: Path) -> list[str]:
    """Every synset's gloss (its definitions and examples, ending in a full stop), part of speech by part of speech
    in :data:`PARTS_OF_SPEECH` order, each in its ``data.<pos>`` file's order."""
    found = []
    for pos in PARTS_OF_SPEECH:
        for line in (directory / f"data.{pos}").read_text(encoding="utf-8").splitlines():
            if not line.startswith(" ") and " | " in line:  # the licence header's lines start with spaces
                found.append(line.split(" | ", 1)[1].strip().rstrip(";") + ".")
    return found
