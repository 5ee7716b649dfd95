"""JSONL files: reading them (shipped data, lm-eval's logged samples) with errors that name the file and line, and
the one way the project writes them (UTF-8, one compact object per line, non-ASCII kept)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lm_eval_contam.core.errors import ContamError


def read_utf8(path: Path, *, bom: bool = False) -> str:
    """A text file's contents; unreadable or non-UTF-8 bytes are a ContamError naming the file and line."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ContamError(f"cannot read: {error.strerror or error}", source=str(path)) from None
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ContamError(f"not UTF-8 text (byte {data[error.start:error.start + 1]!r} at offset {error.start}); "
                          f"save the file as UTF-8", source=f"{path}:{line}") from None


def read_jsonl_objects(path: Path) -> list[dict[str, Any]]:
    """One dict per non-blank line; a missing file, non-UTF-8 bytes, bad JSON or a non-object line is a ContamError."""
    lines = read_utf8(path).splitlines()
    objects = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ContamError(f"not JSON ({error.msg})", source=f"{path}:{number}") from None
        if not isinstance(value, dict):
            raise ContamError("each line must be a JSON object", source=f"{path}:{number}")
        objects.append(value)
    return objects


def jsonl_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """The JSONL text of ``rows``: one object per line."""
    return "".join(json.dumps(dict(row), ensure_ascii=False) + "\n" for row in rows)


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]], *, append: bool = False) -> Path:
    """Write (or with ``append`` add) ``rows`` to ``path`` as JSONL, its folder made if missing; the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write(jsonl_text(rows))
    return path
