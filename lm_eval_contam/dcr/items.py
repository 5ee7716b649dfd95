"""Generated sheet items: L3 completion / membership and L4 label association, built from benchmark rows.

Which rows a generator uses is a seeded choice (``seed``, the sheet's benchmark,
the level, the generator's position), so a level's items are the same on every run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.dcr.checks import LabelCheck, NumberCheck, OverlapCheck, RegexCheck, numbers_in, parse_check
from lm_eval_contam.dcr.sheet import DataSource, Generator, Sheet, SheetItem, with_answer_key
from lm_eval_contam.errors import ContamError
from lm_eval_contam.seeding import rng_for


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


def _generated_item(sheet: Sheet, level: int, generator: Generator, row: Mapping[str, Any],
                    row_id: str) -> SheetItem:
    data = sheet.data
    assert data is not None  # parse_sheet guarantees it for sheets with generators
    source = str(sheet.path)
    text = str(row[data.text_field])
    first_half, second_half = split_instance(text)
    labels = ", ".join(data.label_names)
    prompt = generator.template.format(name=sheet.name, text=text, first_half=first_half, labels=labels)
    if generator.kind == "completion":
        reference, default = second_half, OverlapCheck(reference=second_half)
    elif generator.kind == "membership":
        reference, default = "yes", RegexCheck(pattern=r"^\W*yes\b")
    else:
        reference = gold_answer(data, row, source)
        default = (LabelCheck(label=reference, labels=data.label_names) if data.label_names
                   else NumberCheck(value=numbers_in(reference)[0]) if numbers_in(reference)
                   else OverlapCheck(reference=reference))
    check = (parse_check(with_answer_key(dict(generator.check), reference, data.label_names),
                         source=source, field=f"levels.l{level}.generate.check")
             if generator.check is not None else default)
    where = data.dataset_path or (data.data_files.name if data.data_files else "")
    return SheetItem(item_id=f"l{level}-{generator.kind}-{row_id}", level=level, prompt=prompt, check=check,
                     source=f"{where} {data.split} row {row_id}", reference=reference)


def level_items(sheet: Sheet, level: int, rows: Sequence[Mapping[str, Any]] = (), *, seed: int = 0) -> list[SheetItem]:
    """All items of one level: the static ones, then the generated ones (seeded choice of rows)."""
    spec = sheet.levels[level - 1]
    items = list(spec.items)
    for index, generator in enumerate(spec.generators):
        eligible = [i for i, row in enumerate(rows)
                    if generator.kind != "completion" or len(str(row[sheet.data.text_field]).split()) >= 4]  # type: ignore[union-attr]
        if len(eligible) < generator.count:
            raise ContamError(f"needs {generator.count} rows but the benchmark split offers {len(eligible)} usable",
                              source=str(sheet.path), field=f"levels.l{level}.generate[{index}].count")
        order = rng_for(seed, sheet.benchmark, level, index, generator.kind).permutation(len(eligible))
        for position in sorted(order[: generator.count]):
            row_index = eligible[position]
            items.append(_generated_item(sheet, level, generator, rows[row_index], str(row_index)))
    return items
