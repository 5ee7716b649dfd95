"""Generated sheet items: L3 completion / membership and L4 label association, built from benchmark rows.

Which rows a generator uses is a seeded choice (``seed``, the sheet's benchmark,
the level, the generator's position), so a level's items are the same on every run.
In the controlled check mode each generated item carries its control
(:mod:`lm_eval_contam.methods.dcr.twins`): the same prompt about the row's perturbed twin.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.methods.dcr.check_spec import parse_check, with_answer_key
from lm_eval_contam.methods.dcr.checks import Check, LabelCheck, NumberCheck, OverlapCheck, RegexCheck, numbers_in
from lm_eval_contam.methods.dcr.schema import DataSource, Generator, Sheet, SheetItem, Twin
from lm_eval_contam.methods.dcr.sheet import valid_check_mode
from lm_eval_contam.methods.dcr.twins import perturbed_twin


def split_instance(text: str) -> tuple[str, str]:
    """First and second half of an instance, by words (the first half gets the odd word)."""
    words = text.split()
    cut = (len(words) + 1) // 2
    return " ".join(words[:cut]), " ".join(words[cut:])


def gold_answer(data: DataSource, row: Mapping[str, Any], source: str) -> str:
    """The row's gold label as text: a label name, or the answer_pattern's capture."""
    value = row.get(data.label_field) if data.label_field else None
    if data.label_names:
        if isinstance(value, str) and value in data.label_names:
            return value
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(data.label_names):
            return data.label_names[value]
        raise ContamError(f"label {value!r} is neither a label name nor an index into {list(data.label_names)}",
                          source=source, field="data.label_names")
    match = re.search(data.answer_pattern or "", str(value), flags=re.DOTALL)
    if not match:
        raise ContamError(f"answer_pattern {data.answer_pattern!r} finds no answer in {str(value)[:80]!r}",
                          source=source, field="data.answer_pattern")
    return match.group(1).strip()


def _prompt_and_check(sheet: Sheet, level: int, generator: Generator, text: str, gold: str) -> tuple[str, Check, str]:
    """The prompt, Check and reference of one generated item about ``text`` (gold: its label, for L4)."""
    data = sheet.data
    assert data is not None  # parse_sheet guarantees it for sheets with generators
    first_half, second_half = split_instance(text)
    labels = ", ".join(data.label_names)
    prompt = generator.template.format(name=sheet.name, text=text, first_half=first_half, labels=labels)
    if generator.kind == "completion":
        reference, default = second_half, OverlapCheck(reference=second_half)
    elif generator.kind == "membership":
        reference, default = "yes", RegexCheck(pattern=r"^\W*yes\b")
    else:
        reference = gold
        default = (LabelCheck(label=reference, labels=data.label_names) if data.label_names
                   else NumberCheck(value=numbers_in(reference)[0]) if numbers_in(reference)
                   else OverlapCheck(reference=reference))
    check = (parse_check(with_answer_key(dict(generator.check), reference, data.label_names),
                         source=str(sheet.path), field=f"levels.l{level}.generate.check")
             if generator.check is not None else default)
    return prompt, check, reference


TWIN_ROLES = {
    "completion": "its perturbed twin, completed against the twin's second half",
    "membership": "its perturbed twin as the non-member",
    "association": "its perturbed twin, which keeps the gold label",
}


def asks_another_question(kind: str, text: str) -> Callable[[str], bool]:
    """Whether a twin makes a different item: a completion item shows the first half and checks the second, so
    both must change (an unchanged first half asks the same question; an unchanged second half is passed by
    recalling the original)."""
    if kind != "completion":
        return lambda twin: True
    halves = split_instance(text)
    return lambda twin: all(new != old for new, old in zip(split_instance(twin), halves))


def _generated_item(sheet: Sheet, level: int, generator: Generator, row: Mapping[str, Any], row_id: str,
                    twin_text: str | None) -> SheetItem:
    data = sheet.data
    assert data is not None  # parse_sheet guarantees it for sheets with generators
    gold = gold_answer(data, row, str(sheet.path)) if generator.kind == "association" else ""
    prompt, check, reference = _prompt_and_check(sheet, level, generator, str(row[data.text_field]), gold)
    where = data.dataset_path or (data.data_files.name if data.data_files else "")
    source = f"{where} {data.split} row {row_id}"
    twin = None
    if twin_text is not None:
        twin_prompt, twin_check, twin_reference = _prompt_and_check(sheet, level, generator, twin_text, gold)
        twin = Twin(prompt=twin_prompt, check=twin_check, reference=twin_reference,
                    source=f"control of {source}: {TWIN_ROLES[generator.kind]}")
    return SheetItem(item_id=f"l{level}-{generator.kind}-{row_id}", level=level, prompt=prompt, check=check,
                     source=source, reference=reference, twin=twin)


def level_items(sheet: Sheet, level: int, rows: Sequence[Mapping[str, Any]] = (), *, seed: int = 0,
                check_mode: str | None = None) -> list[SheetItem]:
    """All items of one level: the static ones, then the generated ones (seeded choice of rows).

    ``check_mode`` (default: the sheet's) "controlled" gives every generated item its perturbed twin
    (rows whose text has no word to perturb are passed over) and keeps the twins (``control``) a sheet gives its
    static items. "paper" builds the items alone.
    """
    mode = valid_check_mode(check_mode or sheet.check_mode)
    spec = sheet.levels[level - 1]
    items = list(spec.items) if mode == "controlled" else [replace(item, twin=None) for item in spec.items]
    def text_of(row_index: int) -> str:
        return str(rows[row_index][sheet.data.text_field])  # type: ignore[union-attr]

    for index, generator in enumerate(spec.generators):
        eligible = [i for i in range(len(rows)) if generator.kind != "completion" or len(text_of(i).split()) >= 4]
        where = f"levels.l{level}.generate[{index}].count"
        if len(eligible) < generator.count:
            raise ContamError(f"needs {generator.count} rows but the benchmark split offers {len(eligible)} usable",
                              source=str(sheet.path), field=where)
        order = rng_for(seed, sheet.benchmark, level, index, generator.kind).permutation(len(eligible))
        if mode == "paper":
            chosen = {eligible[position]: None for position in order[: generator.count]}
        else:
            # Walk the same seeded order, so the originals are the paper mode's rows wherever those have a twin.
            chosen = {}
            for position in order:
                text = text_of(eligible[position])
                twin = perturbed_twin(text, seed=seed, usable=asks_another_question(generator.kind, text))
                if twin is not None:
                    chosen[eligible[position]] = twin
                if len(chosen) == generator.count:
                    break
            if len(chosen) < generator.count:
                raise ContamError(f"needs {generator.count} rows with a word WordNet can replace (for the controlled "
                                  f"check's twin) but the split offers {len(chosen)}; use check_mode: paper",
                                  source=str(sheet.path), field=where)
        for row_index in sorted(chosen):
            items.append(_generated_item(sheet, level, generator, rows[row_index], str(row_index), chosen[row_index]))
    return items
