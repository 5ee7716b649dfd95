"""Reading JSONL files (shipped data, lm-eval's logged samples) with errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lm_eval_contam.errors import ContamError


def read_jsonl_objects(path: Path) -> list[dict[str, Any]]:
    """One dict per non-blank line; a missing file, bad JSON or a non-object line is a ContamError."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ContamError(f"cannot read: {error.strerror or error}", source=str(path)) from None
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
