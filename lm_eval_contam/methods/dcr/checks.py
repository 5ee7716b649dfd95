"""The Check step: does one response show contamination? (Eq. 2's ``Check(p, r)``.)

One frozen dataclass per check kind, each with ``evaluate(prompt, response)``, which
answers ``True`` (contaminated), ``False`` (not) or ``None`` (undetermined: a manual
item, or a judge reply that is not the asked-for JSON). Undetermined items are left
out of the level score and exported for a person (:mod:`lm_eval_contam.methods.dcr.check_csv`).
Reading a check from a sheet, and writing it into a doc, is :mod:`lm_eval_contam.methods.dcr.check_spec`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from lm_eval_contam.core.text import rouge_l_f
from lm_eval_contam.methods.dcr.judge import judge_response


def _word_pattern(phrase: str) -> str:
    # Hyphens count as word characters so "false" does not match inside "mostly-false".
    return rf"(?<![\w-]){re.escape(phrase)}(?![\w-])"


def mentions(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as a whole word or phrase, ignoring case."""
    return re.search(_word_pattern(phrase), text, flags=re.IGNORECASE) is not None


@dataclass(frozen=True)
class KeywordsCheck:
    """Contaminated when the response names any (or all) of the keywords."""

    any_of: tuple[str, ...] = ()
    all_of: tuple[str, ...] = ()
    kind: str = "keywords"

    def evaluate(self, prompt: str, response: str) -> bool | None:
        if self.all_of:
            return all(mentions(response, word) for word in self.all_of)
        return any(mentions(response, word) for word in self.any_of)


@dataclass(frozen=True)
class RegexCheck:
    """Contaminated when the pattern matches anywhere in the response."""

    pattern: str
    ignore_case: bool = True
    kind: str = "regex"

    def evaluate(self, prompt: str, response: str) -> bool | None:
        flags = re.IGNORECASE if self.ignore_case else 0
        return re.search(self.pattern, response, flags=flags) is not None


_NUMBER = re.compile(r"(?<![\w.])(-?\d{1,3}(?:,\d{3})+|-?\d+)(\.\d+)?\s*(k|thousand)?(?![\w])", re.IGNORECASE)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text``: ``1,821``, ``67.3k``, ``18 thousand``, ``2013``."""
    values = []
    for whole, fraction, thousands in _NUMBER.findall(text):
        value = float(whole.replace(",", "") + (fraction or ""))
        values.append(value * 1000 if thousands else value)
    return values


@dataclass(frozen=True)
class NumberCheck:
    """Contaminated when some number in the response lies within ``tolerance`` of ``value``.

    ``relative`` makes the tolerance a fraction of ``value`` (0.05 = within 5%).
    """

    value: float
    tolerance: float = 0.0
    relative: bool = False
    kind: str = "number"

    def evaluate(self, prompt: str, response: str) -> bool | None:
        allowed = self.tolerance * abs(self.value) if self.relative else self.tolerance
        return any(abs(number - self.value) <= allowed + 1e-12 for number in numbers_in(response))


@dataclass(frozen=True)
class OverlapCheck:
    """Contaminated when ROUGE-L F between the reference and the response reaches ``threshold``."""

    reference: str
    threshold: float = 0.5
    kind: str = "overlap"

    def evaluate(self, prompt: str, response: str) -> bool | None:
        return rouge_l_f(self.reference, response) >= self.threshold


@dataclass(frozen=True)
class LabelCheck:
    """Contaminated when the first label the response names is the gold ``label``."""

    label: str
    labels: tuple[str, ...]
    kind: str = "label"

    def evaluate(self, prompt: str, response: str) -> bool | None:
        named = first_label(response, self.labels)
        return named is not None and named.lower() == self.label.lower()


def first_label(text: str, labels: Sequence[str]) -> str | None:
    """The label mentioned earliest in ``text`` (longest wins a tie), or None."""
    found = []
    for label in labels:
        match = re.search(_word_pattern(label), text, flags=re.IGNORECASE)
        if match:
            found.append((match.start(), -len(label), label))
    return min(found)[2] if found else None


@dataclass(frozen=True)
class JudgeCheck:
    """An LLM judge with the paper's Appendix B.4 prompt; ``model`` is any generation.ModelSpec."""

    level: int
    model: str
    kind: str = "judge"

    def evaluate(self, prompt: str, response: str) -> bool | None:
        return judge_response(self.model, self.level, prompt, response)


@dataclass(frozen=True)
class ManualCheck:
    """Left to a person: exported to CSV, filled in, imported (see ``lm-eval-contam dcr-export``)."""

    kind: str = "manual"

    def evaluate(self, prompt: str, response: str) -> bool | None:
        return None


Check = Union[KeywordsCheck, RegexCheck, NumberCheck, OverlapCheck, LabelCheck, JudgeCheck, ManualCheck]
