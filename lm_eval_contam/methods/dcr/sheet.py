"""Reading a DCR test sheet: the YAML file listing, per level L1–L4, the prompts and their Check.

A sheet is data, read with ``yaml.safe_load`` and never executed, into the dataclasses
of :mod:`lm_eval_contam.methods.dcr.schema`. Items are either
static (a prompt, an answer-key check and the source of the fact) or generated
from the benchmark's own rows (L3 completion / membership, L4 label association;
see :mod:`lm_eval_contam.methods.dcr.items`). Every problem raises ContamError naming the
sheet file, the field and the bad value. The schema is documented in
``task_configs/dcr/README.md``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import task_dir
from lm_eval_contam.core.jsonl import read_utf8
from lm_eval_contam.methods.dcr.check_spec import parse_check, with_answer_key
from lm_eval_contam.methods.dcr.checks import Check
from lm_eval_contam.methods.dcr.schema import (
    CHECK_MODES,
    DEFAULT_CHECK_MODE,
    DEFAULT_TEMPLATES,
    GENERATOR_KINDS,
    ITEMS_PER_LEVEL,
    LEVELS,
    TEMPLATE_FIELDS,
    AdjustTarget,
    DataSource,
    Generator,
    Level,
    Sheet,
    SheetItem,
    Twin,
)

_BENCHMARK = re.compile(r"^[a-z0-9_]+$")


def sheets_dir() -> Path:
    return task_dir() / "dcr" / "sheets"


def resolve_sheet(ref: str | Path) -> Path:
    """A sheet path from a path or a shipped sheet's name (``sst2`` → sheets/sst2.yaml)."""
    path = Path(ref)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path.resolve()
    shipped = sheets_dir() / f"{ref}.yaml"
    if shipped.is_file():
        return shipped
    available = sorted(p.stem for p in sheets_dir().glob("*.yaml"))
    raise ContamError(f"no sheet file {str(ref)!r} and no shipped sheet of that name (shipped: {available})",
                      field="sheet")


def load_sheet(ref: str | Path, *, judge_model: str | None = None) -> Sheet:
    """Read and validate a sheet; ``judge_model`` fills judge checks that name no model."""
    path = resolve_sheet(ref)
    source = str(path)
    try:
        raw = yaml.safe_load(read_utf8(path))
    except yaml.YAMLError as error:
        raise ContamError(f"not valid YAML: {' '.join(str(error).split())}", source=source) from None
    return parse_sheet(raw, path=path, judge_model=judge_model)


def _require(raw: Mapping[str, Any], key: str, kind: type | tuple[type, ...], source: str, field: str) -> Any:
    if key not in raw:
        raise ContamError("required field is missing", source=source, field=field)
    value = raw[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ContamError(f"expected {_kind_name(kind)}, got {value!r}", source=source, field=field)
    if isinstance(value, str) and not value.strip():
        raise ContamError("must not be empty", source=source, field=field)
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "text", int: "an integer", list: "a list", dict: "a mapping"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _no_unknown(raw: Mapping[str, Any], allowed: set[str], source: str, field: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ContamError(f"unknown key(s) {unknown}; allowed: {sorted(allowed)}", source=source, field=field)


def parse_sheet(raw: Any, *, path: Path, judge_model: str | None = None) -> Sheet:
    source = str(path)
    if not isinstance(raw, dict):
        raise ContamError(f"a sheet must be a YAML mapping, got {type(raw).__name__}", source=source)
    _no_unknown(raw, {"benchmark", "name", "description", "adjusts", "items_per_level", "data", "levels",
                      "check_mode", "drawn_across"}, source, "sheet")
    benchmark = _require(raw, "benchmark", str, source, "benchmark")
    if not _BENCHMARK.match(benchmark):
        raise ContamError(f"use lower-case letters, digits and '_' (it names tasks), got {benchmark!r}",
                          source=source, field="benchmark")
    name = _require(raw, "name", str, source, "name")
    adjusts_raw = _require(raw, "adjusts", list, source, "adjusts")
    if not adjusts_raw:
        raise ContamError("list at least one {task, metric} to adjust", source=source, field="adjusts")
    adjusts = []
    for index, target in enumerate(adjusts_raw):
        field = f"adjusts[{index}]"
        if not isinstance(target, dict):
            raise ContamError(f"expected a mapping with task and metric, got {target!r}", source=source, field=field)
        _no_unknown(target, {"task", "metric"}, source, field)
        adjusts.append(AdjustTarget(_require(target, "task", str, source, f"{field}.task"),
                                    _require(target, "metric", str, source, f"{field}.metric")))
    items_per_level = _items_per_level(raw.get("items_per_level", ITEMS_PER_LEVEL), source)
    drawn_across = raw.get("drawn_across", [])
    if not isinstance(drawn_across, list) or not all(isinstance(task, str) and task for task in drawn_across):
        raise ContamError(f"expected a list of task names, got {drawn_across!r}", source=source, field="drawn_across")
    data = _parse_data(raw["data"], path) if raw.get("data") is not None else None
    levels_raw = _require(raw, "levels", dict, source, "levels")
    _no_unknown(levels_raw, {f"l{n}" for n in LEVELS}, source, "levels")
    levels = []
    seen_ids: set[str] = set()
    for number in LEVELS:
        level = _parse_level(levels_raw.get(f"l{number}") or {}, number, source, judge_model, seen_ids)
        total = len(level.items) + sum(g.count for g in level.generators)
        if total != items_per_level[number - 1]:
            raise ContamError(f"level has {total} items (static + generated) but items_per_level is "
                              f"{items_per_level[number - 1]}", source=source, field=f"levels.l{number}")
        if level.generators and data is None:
            raise ContamError("generated items need a 'data' section naming the benchmark's rows",
                              source=source, field=f"levels.l{number}.generate")
        if data is not None:
            for index, generator in enumerate(level.generators):
                if generator.kind == "association" and not (data.label_names or data.answer_pattern):
                    raise ContamError("association items need data.label_names or data.answer_pattern",
                                      source=source, field=f"levels.l{number}.generate[{index}]")
        levels.append(level)
    return Sheet(path=path, benchmark=benchmark, name=name, adjusts=tuple(adjusts),
                 items_per_level=items_per_level, data=data, levels=tuple(levels),  # type: ignore[arg-type]
                 check_mode=valid_check_mode(raw.get("check_mode", DEFAULT_CHECK_MODE), source=source, field="check_mode"),
                 drawn_across=tuple(drawn_across))


def _items_per_level(raw: Any, source: str) -> tuple[int, int, int, int]:
    """One count for every level, or a mapping ``{l1: n1, ..., l4: n4}`` giving each level its own."""
    def count(value: Any, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ContamError(f"expected a positive integer, got {value!r}", source=source, field=field)
        return value

    if isinstance(raw, dict):
        _no_unknown(raw, {f"l{n}" for n in LEVELS}, source, "items_per_level")
        return tuple(count(raw.get(f"l{n}"), f"items_per_level.l{n}") for n in LEVELS)  # type: ignore[return-value]
    return (count(raw, "items_per_level"),) * 4  # type: ignore[return-value]


def valid_check_mode(value: Any, *, source: str | None = None, field: str = "check_mode") -> str:
    """A valid check mode (``controlled`` or ``paper``), or ContamError naming where the bad value came from."""
    if value not in CHECK_MODES:
        raise ContamError(f"expected one of {list(CHECK_MODES)}, got {value!r}", source=source, field=field)
    return value


def _parse_data(raw: Any, path: Path) -> DataSource:
    source, field = str(path), "data"
    if not isinstance(raw, dict):
        raise ContamError(f"expected a mapping, got {raw!r}", source=source, field=field)
    _no_unknown(raw, {"dataset_path", "dataset_name", "data_files", "split", "text_field", "label_field",
                      "label_names", "answer_pattern"}, source, field)
    if ("dataset_path" in raw) == ("data_files" in raw):
        raise ContamError("give exactly one of dataset_path (Hub) or data_files (local JSON/JSONL)",
                          source=source, field=field)
    data_files = None
    if "data_files" in raw:
        data_files = (path.parent / _require(raw, "data_files", str, source, "data.data_files")).resolve()
        if not data_files.is_file():
            raise ContamError(f"file not found: {data_files}", source=source, field="data.data_files")
    label_names = raw.get("label_names") or []
    if not isinstance(label_names, list) or not all(isinstance(n, str) and n for n in label_names):
        raise ContamError(f"expected a list of label names, got {label_names!r}", source=source,
                          field="data.label_names")
    answer_pattern = raw.get("answer_pattern")
    if answer_pattern is not None:
        try:
            if re.compile(answer_pattern).groups != 1:
                raise ContamError(f"needs exactly one capture group, got {answer_pattern!r}", source=source,
                                  field="data.answer_pattern")
        except (re.error, TypeError) as error:
            raise ContamError(f"not a valid regular expression {answer_pattern!r}", source=source,
                              field="data.answer_pattern") from error
    if (label_names or answer_pattern) and "label_field" not in raw:
        raise ContamError("label_names/answer_pattern need the label_field they read", source=source,
                          field="data.label_field")
    return DataSource(
        split=_require(raw, "split", str, source, "data.split"),
        text_field=_require(raw, "text_field", str, source, "data.text_field"),
        dataset_path=raw.get("dataset_path"),
        dataset_name=raw.get("dataset_name"),
        data_files=data_files,
        label_field=raw.get("label_field"),
        label_names=tuple(label_names),
        answer_pattern=answer_pattern,
    )


def _parse_level(raw: Any, number: int, source: str, judge_model: str | None, seen_ids: set[str]) -> Level:
    field = f"levels.l{number}"
    if not isinstance(raw, dict):
        raise ContamError(f"expected a mapping with items and/or generate, got {raw!r}", source=source, field=field)
    _no_unknown(raw, {"items", "generate"}, source, field)
    items = []
    for index, item in enumerate(raw.get("items") or []):
        item_field = f"{field}.items[{index}]"
        if not isinstance(item, dict):
            raise ContamError(f"expected a mapping, got {item!r}", source=source, field=item_field)
        _no_unknown(item, {"id", "prompt", "check", "source", "reference", "control"}, source, item_field)
        item_id = str(_require(item, "id", (str, int), source, f"{item_field}.id"))
        if item_id in seen_ids:
            raise ContamError(f"duplicate item id {item_id!r}", source=source, field=f"{item_field}.id")
        seen_ids.add(item_id)
        check_spec = _require(item, "check", dict, source, f"{item_field}.check")
        check = parse_check(_with_judge_defaults(check_spec, number, judge_model), source=source,
                            field=f"{item_field}.check")
        items.append(SheetItem(
            item_id=item_id,
            level=number,
            prompt=_require(item, "prompt", str, source, f"{item_field}.prompt"),
            check=check,
            source=_require(item, "source", str, source, f"{item_field}.source"),
            reference=str(item.get("reference", "")),
            twin=(_parse_twin(item["control"], check, number, judge_model, source, f"{item_field}.control")
                  if "control" in item else None),
        ))
    generators = []
    for index, gen in enumerate(raw.get("generate") or []):
        gen_field = f"{field}.generate[{index}]"
        if not isinstance(gen, dict):
            raise ContamError(f"expected a mapping, got {gen!r}", source=source, field=gen_field)
        _no_unknown(gen, {"kind", "count", "template", "check"}, source, gen_field)
        kind = gen.get("kind")
        if kind not in GENERATOR_KINDS:
            raise ContamError(f"expected one of {list(GENERATOR_KINDS)}, got {kind!r}", source=source,
                              field=f"{gen_field}.kind")
        count = _require(gen, "count", int, source, f"{gen_field}.count")
        if count < 1:
            raise ContamError(f"expected a positive integer, got {count!r}", source=source, field=f"{gen_field}.count")
        template = gen.get("template", DEFAULT_TEMPLATES[kind])
        _validate_template(template, source, f"{gen_field}.template")
        check = gen.get("check")
        if check is not None:
            # Validate now (with a placeholder answer key) so a bad check fails at load time.
            parse_check(with_answer_key(_with_judge_defaults(check, number, judge_model), "x", ("x",)),
                        source=source, field=f"{gen_field}.check")
            check = _with_judge_defaults(check, number, judge_model)
        generators.append(Generator(kind=kind, count=count, template=template, check=check))
    return Level(number=number, items=tuple(items), generators=tuple(generators))


def _parse_twin(raw: Any, check: Check, level: int, judge_model: str | None, source: str, field: str) -> Twin:
    """A static item's ``control`` (its twin): the same question about something the model cannot have seen in the
    benchmark (``prompt``), checked with the item's own check unless it names one."""
    if not isinstance(raw, dict):
        raise ContamError(f"expected a mapping with prompt and source, got {raw!r}", source=source, field=field)
    _no_unknown(raw, {"prompt", "check", "source", "reference"}, source, field)
    return Twin(
        prompt=_require(raw, "prompt", str, source, f"{field}.prompt"),
        check=(parse_check(_with_judge_defaults(raw["check"], level, judge_model), source=source, field=f"{field}.check")
               if "check" in raw else check),
        source=_require(raw, "source", str, source, f"{field}.source"),
        reference=str(raw.get("reference", "")),
    )


def _validate_template(template: Any, source: str, field: str) -> None:
    if not isinstance(template, str) or not template.strip():
        raise ContamError(f"expected template text, got {template!r}", source=source, field=field)
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as error:
        raise ContamError(f"not a valid template ({error}; write a literal brace as {{{{ or }}}}), got {template!r}",
                          source=source, field=field) from None
    # Only bare names: "{name.__class__}" or "{text[0]}" would reach into Python objects.
    if names - TEMPLATE_FIELDS or not names & {"text", "first_half"}:
        raise ContamError(f"placeholders must be among {sorted(TEMPLATE_FIELDS)} and include {{text}} or "
                          f"{{first_half}}, got {sorted(names)}", source=source, field=field)


def _with_judge_defaults(spec: Any, level: int, judge_model: str | None) -> Any:
    if isinstance(spec, dict) and spec.get("kind") == "judge":
        spec = dict(spec)
        spec.setdefault("level", level)
        if judge_model and not spec.get("model"):
            spec["model"] = judge_model
    return spec
