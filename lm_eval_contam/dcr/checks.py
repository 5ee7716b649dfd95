"""The Check step: does one response show contamination? (Eq. 2's ``Check(p, r)``.)

Every check answers ``True`` (contaminated), ``False`` (not) or ``None``
(undetermined: a manual item, or a judge reply that is not the asked-for JSON).
Undetermined items are left out of the level score and exported for a person
(:mod:`lm_eval_contam.dcr.check_csv`). A check is read from a sheet's YAML mapping
with :func:`parse_check` and travels in lm-eval docs as :func:`check_to_dict`'s JSON.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Union

from lm_eval_contam.dcr.judge import LEVEL_NAMES, judge_response
from lm_eval_contam.errors import ContamError
from lm_eval_contam.text import rouge_l_f


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
CHECK_KINDS: dict[str, type] = {
    cls.kind: cls  # type: ignore[attr-defined]
    for cls in (KeywordsCheck, RegexCheck, NumberCheck, OverlapCheck, LabelCheck, JudgeCheck, ManualCheck)
}


def check_to_dict(check: Check) -> dict[str, Any]:
    """A JSON-ready dict that :func:`parse_check` reads back."""
    data = asdict(check)
    return {key: list(value) if isinstance(value, tuple) else value for key, value in data.items()}


def parse_check(spec: Any, *, source: str | None = None, field: str = "check") -> Check:
    """One check from its YAML mapping; ContamError names the file, field and bad value."""
    if not isinstance(spec, Mapping):
        raise ContamError(f"a check must be a mapping with a 'kind', got {spec!r}", source=source, field=field)
    kind = spec.get("kind")
    if kind not in CHECK_KINDS:
        raise ContamError(f"unknown check kind {kind!r}; expected one of {sorted(CHECK_KINDS)}",
                          source=source, field=f"{field}.kind")
    cls = CHECK_KINDS[kind]
    allowed = {f.name for f in fields(cls)}
    params = {("any_of" if k == "any" else "all_of" if k == "all" else k): v for k, v in spec.items()}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ContamError(f"unknown key(s) {unknown} for a {kind!r} check", source=source, field=field)
    types = {f.name: f.type for f in fields(cls)}
    for key, value in params.items():
        _check_type(key, value, str(types[key]), source=source, field=field)
    try:
        check = cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()})
    except TypeError as error:
        raise ContamError(f"{kind!r} check is missing a required key ({error})", source=source, field=field) from error
    _validate(check, source=source, field=field)
    return check


_KEY_NAMES = {"any_of": "any", "all_of": "all"}


def _check_type(key: str, value: Any, annotation: str, *, source: str | None, field: str) -> None:
    """A YAML value must have its field's type: a list for tuples, true/false for bools, text for strings."""
    if annotation.startswith("tuple"):
        ok, expected = isinstance(value, list), "a list"
    elif annotation == "bool":
        ok, expected = isinstance(value, bool), "true or false"
    elif annotation == "int":
        ok, expected = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif annotation == "str":
        ok, expected = isinstance(value, str), "text"
    else:
        return  # numbers are checked with their range in _validate
    if not ok:
        raise ContamError(f"expected {expected}, got {value!r}", source=source,
                          field=f"{field}.{_KEY_NAMES.get(key, key)}")


def _validate(check: Check, *, source: str | None, field: str) -> None:
    def bad(key: str, message: str) -> ContamError:
        return ContamError(message, source=source, field=f"{field}.{key}")

    def strings(key: str, values: Any) -> None:
        if not all(isinstance(v, str) and v.strip() for v in values):
            raise bad(key, f"expected non-empty strings, got {list(values)!r}")

    if isinstance(check, KeywordsCheck):
        if bool(check.any_of) == bool(check.all_of):
            raise bad("any", f"give exactly one of 'any' or 'all' (a non-empty list), got any={list(check.any_of)!r}, "
                             f"all={list(check.all_of)!r}")
        strings("any" if check.any_of else "all", check.any_of or check.all_of)
    elif isinstance(check, RegexCheck):
        try:
            re.compile(check.pattern)
        except (re.error, TypeError) as error:
            raise bad("pattern", f"not a valid regular expression {check.pattern!r}: {error}") from error
    elif isinstance(check, NumberCheck):
        for key in ("value", "tolerance"):
            value = getattr(check, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                raise bad(key, f"expected a number, got {value!r}")
        if check.tolerance < 0:
            raise bad("tolerance", f"must be >= 0, got {check.tolerance!r}")
    elif isinstance(check, OverlapCheck):
        if not isinstance(check.reference, str) or not check.reference.strip():
            raise bad("reference", f"expected non-empty text, got {check.reference!r}")
        if isinstance(check.threshold, bool) or not isinstance(check.threshold, (int, float)) \
                or not 0.0 < check.threshold <= 1.0:
            raise bad("threshold", f"expected a number in (0, 1], got {check.threshold!r}")
    elif isinstance(check, LabelCheck):
        strings("labels", check.labels)
        if not isinstance(check.label, str) or check.label.lower() not in {lab.lower() for lab in check.labels}:
            raise bad("label", f"{check.label!r} is not one of labels {list(check.labels)!r}")
    elif isinstance(check, JudgeCheck):
        if check.level not in LEVEL_NAMES:
            raise bad("level", f"expected 1..4, got {check.level!r}")
        if not isinstance(check.model, str) or not check.model.strip():
            raise bad("model", f"a judge check needs a judge model spec, got {check.model!r}")
