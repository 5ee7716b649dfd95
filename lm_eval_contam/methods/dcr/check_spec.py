"""A check as data: read from a sheet's YAML mapping, written into an lm-eval doc as JSON, and read back.

:func:`parse_check` validates a mapping (ContamError names the file, field and bad
value); :func:`check_to_dict` is its inverse; :func:`with_answer_key` fills a
generated item's answer key from the benchmark row it was built from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.dcr.checks import (
    Check,
    JudgeCheck,
    KeywordsCheck,
    LabelCheck,
    ManualCheck,
    NumberCheck,
    OverlapCheck,
    RegexCheck,
    numbers_in,
)
from lm_eval_contam.methods.dcr.judge import LEVEL_NAMES

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


def with_answer_key(spec: dict[str, Any], reference: str, labels: Sequence[str]) -> dict[str, Any]:
    """Fill the answer key a generated item's check needs from the row it was built from."""
    spec = dict(spec)
    if spec.get("kind") == "overlap":
        spec.setdefault("reference", reference)
    elif spec.get("kind") == "label":
        spec.setdefault("label", reference)
        spec.setdefault("labels", list(labels))
    elif spec.get("kind") == "number":
        spec.setdefault("value", (numbers_in(reference) or [float("nan")])[0])
    return spec
