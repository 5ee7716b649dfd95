"""The Check step: does one response show contamination? (Eq. 2's ``Check(p, r)``.)

Every check answers ``True`` (contaminated), ``False`` (not) or ``None``
(undetermined: a manual item, or a judge reply that is not the asked-for JSON).
Undetermined items are left out of the level score and exported for a person
(:func:`write_check_csv` / :func:`read_check_csv`).
"""

from __future__ import annotations

import csv
import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Union

from lm_eval_contam.errors import ContamError
from lm_eval_contam.text import rouge_l_f

LEVEL_NAMES = {1: "L1 (Semantic)", 2: "L2 (Information)", 3: "L3 (Data)", 4: "L4 (Label)"}

# Appendix B.4 of Xu et al. (2025), verbatim: the judge's system and user turns.
JUDGE_SYSTEM = (
    "You are tasked with assessing whether the provided answer indicates signs of benchmark data "
    "contamination (BDC) at one level specified in the four dimensions:\n\n"
    " L1 (Semantic): The model has been exposed to content that is semantically equivalent or closely "
    "related to the benchmark data, even if the exact wording differs.\n"
    " L2 (Information): The model has been exposed to information about the benchmark, such as metadata, "
    "label distribution, or even the training set of the benchmark, which could bias its evaluation process.\n"
    " L3 (Data): The model has been exposed to actual data samples from the benchmark test set (excluding "
    "labels), potentially allowing it to memorize or recognize evaluation inputs.\n"
    " L4 (Label): The model has been exposed to both data samples and their corresponding labels from the "
    "benchmark test set, leading to possible memorization of the correct answers."
)
JUDGE_USER = (
    'Return only the JSON object with the key "result", providing "yes" or "no" to indicate the presence '
    "or absence of BDC, respectively, based on the question used to test the {bdc_level} level and its "
    "corresponding answer. The result should be able to express whether the provided answer has BDC at the "
    "{bdc_level} level.\n\nQuestion: {question}\nAnswer: {answer}"
)


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
        from lm_eval_contam.generation import generate

        reply = generate(_judge_model(self.model), [judge_prompt(self.level, prompt, response)], max_gen_toks=32)[0]
        return parse_judge_reply(reply)


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


def judge_prompt(level: int, question: str, answer: str) -> str:
    """The B.4 judge prompt as one user turn (system text first: generation sends single user turns)."""
    user = JUDGE_USER.format(bdc_level=LEVEL_NAMES[level], question=question, answer=answer)
    return f"{JUDGE_SYSTEM}\n\n{user}"


def parse_judge_reply(reply: str) -> bool | None:
    """``{"result": "yes"}`` → True, ``"no"`` → False; anything else → None (left for a person)."""
    match = re.search(r"\{.*?\}", reply, flags=re.DOTALL)
    if match:
        try:
            result = json.loads(match.group(0)).get("result")
        except (json.JSONDecodeError, AttributeError):
            result = None
        if isinstance(result, str) and result.strip().lower() in ("yes", "no"):
            return result.strip().lower() == "yes"
    return None


@functools.lru_cache(maxsize=4)
def _judge_model(spec: str) -> Any:
    from lm_eval_contam.generation import ModelSpec

    return ModelSpec.parse(spec).build()


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
    try:
        check = cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()})
    except TypeError as error:
        raise ContamError(f"{kind!r} check is missing a required key ({error})", source=source, field=field) from error
    _validate(check, source=source, field=field)
    return check


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


# --- manual checks: CSV export and import --------------------------------------------------------

CSV_COLUMNS = ("sheet", "task", "level", "item_id", "check_kind", "prompt", "response", "reference",
               "auto_result", "contaminated")
_TRUE = {"1", "yes", "y", "true"}
_FALSE = {"0", "no", "n", "false"}


@dataclass(frozen=True)
class CheckRow:
    """One prompt/response pair for a person; ``contaminated`` is what they decide."""

    sheet: str
    task: str
    level: int
    item_id: str
    check_kind: str
    prompt: str
    response: str
    reference: str
    auto_result: bool | None
    contaminated: bool | None


def _cell(value: bool | None) -> str:
    return "" if value is None else str(int(value))


def _parse_bool(text: str, *, source: str, field: str, blank_ok: bool) -> bool | None:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if blank_ok and not value:
        return None
    raise ContamError(f"expected 1/0 (or yes/no), got {text!r}", source=source, field=field)


def write_check_csv(rows: Iterable[CheckRow], path: str | Path) -> Path:
    """Write rows for manual checking; ``contaminated`` is pre-filled with the automatic result."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow([row.sheet, row.task, row.level, row.item_id, row.check_kind, row.prompt,
                             row.response, row.reference, _cell(row.auto_result), _cell(row.contaminated)])
    return path


def read_check_csv(path: str | Path) -> list[CheckRow]:
    """Read a filled check CSV; every ``contaminated`` cell must be 1/0 (yes/no)."""
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise ContamError("check CSV not found", source=source)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ContamError(f"missing column(s) {missing}", source=source, field="header")
        rows = []
        for number, record in enumerate(reader, start=2):
            where = f"row {number} {{}}"
            level_text = record["level"].strip()
            if level_text not in ("1", "2", "3", "4"):
                raise ContamError(f"level must be 1..4, got {level_text!r}", source=source,
                                  field=where.format("level"))
            contaminated = _parse_bool(record["contaminated"], source=source, field=where.format("contaminated"),
                                       blank_ok=False)
            rows.append(CheckRow(
                sheet=record["sheet"], task=record["task"], level=int(level_text), item_id=record["item_id"],
                check_kind=record["check_kind"], prompt=record["prompt"], response=record["response"],
                reference=record["reference"],
                auto_result=_parse_bool(record["auto_result"], source=source, field=where.format("auto_result"),
                                        blank_ok=True),
                contaminated=contaminated,
            ))
    if not rows:
        raise ContamError("the check CSV has no rows", source=source)
    return rows


def level_items_by_sheet(rows: Iterable[CheckRow]) -> dict[str, list[list[float]]]:
    """Per sheet, the four levels' item results (1.0 contaminated, 0.0 not) from filled rows."""
    by_sheet: dict[str, list[list[float]]] = {}
    for row in rows:
        levels = by_sheet.setdefault(row.sheet, [[], [], [], []])
        levels[row.level - 1].append(1.0 if row.contaminated else 0.0)
    return by_sheet
