"""A deterministic offline perturber: WordNet synonym substitution, no model in the loop.

For each option a seeded share of the instance's replaceable words is swapped for
a synonym from the word's most frequent WordNet sense (the part of speech with
the most tagged senses, its first synset). Column headers and the label line are
never touched; function words and words WordNet does not list as lemmas are left
alone. When those words cannot make four distinct options (a one-line question with
one or two replaceable words), numbers become replaceable too (another number of the
same digit count) and the options are the variants with the fewest changes, in seeded
order; only a text with fewer than four variants in all gets none. WordNet's database is
read by :mod:`lm_eval_contam.core.wordnet`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.text import normalize_whitespace
from lm_eval_contam.core.wordnet import WordNet, load_wordnet
from lm_eval_contam.kit.instances import QuizInstance
from lm_eval_contam.kit.proposal import NUM_OPTIONS, Proposal, Proposer

DEFAULT_SUBSTITUTION_RATE = 0.3
# Draws per option before giving up on finding one distinct from the others.
MAX_DRAWS = 25

# Function words have WordNet entries that are not synonyms in context ("a" ->
# "angstrom", "in" -> "inch"); they are never replaced.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves one two three also
    may might must shall""".split()
)
_WORD = re.compile(r"(?<![\w'-])[A-Za-z]+(?![\w'-])")
_NUMBER = re.compile(r"(?<![\w.,])\d+(?![\w.,]\d)")
NUMBER_ALTERNATIVES = 8  # other numbers a number may become
_HEADER = re.compile(r"^[A-Za-z_]\w*: ")


def _match_case(template: str, word: str) -> str:
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[0].isupper():
        return word[0].upper() + word[1:]
    return word


@dataclass(frozen=True)
class _Slot:
    start: int
    end: int
    synonyms: tuple[str, ...]


def substitution_slots(instance: QuizInstance, wordnet: WordNet) -> list[_Slot]:
    """Replaceable words of the instance: outside headers and the label line, not stopwords, with synonyms."""
    slots: list[_Slot] = []
    position = 0
    for line in instance.text.split("\n"):
        if line != instance.label_line:
            header = _HEADER.match(line)
            body_start = header.end() if header else 0
            for match in _WORD.finditer(line, body_start):
                word = match.group(0)
                if len(word) < 3 or word.lower() in STOPWORDS:
                    continue
                synonyms = wordnet.synonyms(word)
                if synonyms:
                    slots.append(_Slot(position + match.start(), position + match.end(), synonyms))
        position += len(line) + 1
    return slots


def number_slots(instance: QuizInstance) -> list[_Slot]:
    """The instance's whole numbers outside headers and the label line, each with nearby numbers of its digit count."""
    slots: list[_Slot] = []
    position = 0
    for line in instance.text.split("\n"):
        if line != instance.label_line:
            header = _HEADER.match(line)
            for match in _NUMBER.finditer(line, header.end() if header else 0):
                digits = match.group(0)
                value, lowest = int(digits), 10 ** (len(digits) - 1) if len(digits) > 1 else 0
                nearby = sorted((n for n in range(max(lowest, value - 20), min(10 ** len(digits), value + 21))
                                 if n != value), key=lambda n: (abs(n - value), n))[:NUMBER_ALTERNATIVES]
                if nearby:
                    slots.append(_Slot(position + match.start(), position + match.end(),
                                       tuple(str(n).zfill(len(digits)) for n in nearby)))
        position += len(line) + 1
    return slots


def _substitute(text: str, slots: Sequence[_Slot], choices: Sequence[str | None]) -> str:
    """``text`` with each slot's chosen replacement (None: kept), right to left so offsets stay valid."""
    for slot, choice in sorted(zip(slots, choices), key=lambda pair: pair[0].start, reverse=True):
        if choice is not None:
            text = text[: slot.start] + _match_case(text[slot.start : slot.end], choice) + text[slot.end :]
    return text


def fewest_change_options(instance: QuizInstance, slots: Sequence[_Slot], *, seed: int,
                          attempt: int) -> tuple[str, ...] | None:
    """Four distinct variants changing as few slots as possible, seeded order within each count (None: fewer exist)."""
    if math.prod(len(slot.synonyms) + 1 for slot in slots) - 1 < NUM_OPTIONS:
        return None
    rng = rng_for(seed, "dcq-perturb-fewest", instance.text, attempt)
    seen = {normalize_whitespace(instance.text)}
    options: list[str] = []
    for changed in range(1, len(slots) + 1):
        variants = []
        for indices in itertools.combinations(range(len(slots)), changed):
            for words in itertools.product(*(slots[i].synonyms for i in indices)):
                choices: list[str | None] = [None] * len(slots)
                for index, word in zip(indices, words):
                    choices[index] = word
                variants.append(_substitute(instance.text, slots, choices))
        for index in rng.permutation(len(variants)):
            flat = normalize_whitespace(variants[index])
            if flat not in seen:
                seen.add(flat)
                options.append(variants[index])
                if len(options) == NUM_OPTIONS:
                    return tuple(options)
    return None


def perturb(
    instance: QuizInstance,
    *,
    seed: int,
    attempt: int = 1,
    wordnet: WordNet | None = None,
    rate: float = DEFAULT_SUBSTITUTION_RATE,
) -> tuple[str, ...] | None:
    """Four distinct synonym perturbations of ``instance`` (None when fewer than four variants exist).

    Deterministic in (seed, instance text, attempt). Seeded draws of ``rate`` of the
    replaceable words first; when they cannot tell four options apart, numbers join
    the words and the variants with the fewest changes are taken
    (:func:`fewest_change_options`).
    """
    wordnet = wordnet or load_wordnet()
    slots = substitution_slots(instance, wordnet)
    drawn = _drawn_options(instance, slots, seed=seed, attempt=attempt, rate=rate) if slots else None
    if drawn is not None and len({normalize_whitespace(option) for option in drawn}
                                 - {normalize_whitespace(instance.text)}) == NUM_OPTIONS:
        return drawn
    every_slot = sorted([*slots, *number_slots(instance)], key=lambda slot: slot.start)
    return fewest_change_options(instance, every_slot, seed=seed, attempt=attempt) if every_slot else None


def synonym_variants(instance: QuizInstance, *, seed: int, wordnet: WordNet | None = None,
                     rate: float = DEFAULT_SUBSTITUTION_RATE) -> tuple[str, ...]:
    """The distinct synonym perturbations the quiz's first seeded draws give (up to four; fewer when the text allows
    fewer): a twin needs one, where a quiz needs four (:func:`perturb`)."""
    wordnet = wordnet or load_wordnet()
    slots = substitution_slots(instance, wordnet)
    if not slots:
        return ()
    original = normalize_whitespace(instance.text)
    drawn = _drawn_options(instance, slots, seed=seed, attempt=1, rate=rate)
    return tuple(dict.fromkeys(option for option in drawn if normalize_whitespace(option) != original))


def _drawn_options(instance: QuizInstance, slots: Sequence[_Slot], *, seed: int, attempt: int,
                   rate: float) -> tuple[str, ...]:
    """Four options, each swapping a seeded ``rate`` of the slots (more after collisions); may repeat one."""
    rng = rng_for(seed, "dcq-perturb", instance.text, attempt)
    per_option = max(1, round(rate * len(slots)))
    seen = {normalize_whitespace(instance.text)}
    options: list[str] = []
    for _ in range(NUM_OPTIONS):
        for draw in range(MAX_DRAWS):
            # Collisions mean few variants of this size exist: swap more words as draws go on.
            size = min(len(slots), per_option + draw // 5)
            chosen = sorted(rng.choice(len(slots), size=size, replace=False))
            text = instance.text
            for index in reversed(chosen):  # right to left keeps earlier offsets valid
                slot = slots[index]
                synonym = slot.synonyms[int(rng.integers(len(slot.synonyms)))]
                text = text[: slot.start] + _match_case(text[slot.start : slot.end], synonym) + text[slot.end :]
            if normalize_whitespace(text) not in seen:
                break
        seen.add(normalize_whitespace(text))
        options.append(text)
    return tuple(options)


def offline_proposer(seed: int = 0, *, wordnet: WordNet | None = None,
                     rate: float = DEFAULT_SUBSTITUTION_RATE) -> Proposer:
    """A :data:`~lm_eval_contam.kit.proposal.Proposer` backed by :func:`perturb`."""
    loaded = wordnet or load_wordnet()

    def propose(instances: Sequence[QuizInstance], attempt: int) -> list[Proposal]:
        return [perturb(instance, seed=seed, attempt=attempt, wordnet=loaded, rate=rate) for instance in instances]

    return propose
