"""An audit directory belongs to one audit: what it audits is recorded in ``audit.json`` and a different run refused.

The identity is what decides the verdicts' meaning: the partitions and tasks audited, one's own data and the controls,
the DCR sheet, the quiz modes, the likelihood modes and ``--limit``. It holds the names as the user gave them, never
a path under the audit directory, so a copied directory re-runs with the same command. Each model label is bound to
one model: another model under a used label would replace the first one's results without a word.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lm_eval_contam.errors import ContamError

AUDIT_FILE = "audit.json"
IDENTITY_KEY = "identity"


def read_audit(out_dir: Path) -> dict[str, Any] | None:
    """``audit.json`` of ``out_dir``, or None when there is none yet."""
    path = out_dir / AUDIT_FILE
    if not path.is_file():
        return None
    try:
        audit = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ContamError(f"cannot read it ({type(error).__name__}); expected the JSON an audit writes",
                          source=str(path)) from None
    if not isinstance(audit, dict):
        raise ContamError("expected a JSON object", source=str(path))
    return audit


def _differences(recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    keys = sorted(set(recorded) | set(wanted))
    return [f"{key} {recorded.get(key)!r} -> {wanted.get(key)!r}" for key in keys if recorded.get(key) != wanted.get(key)]


def check_same_audit(out_dir: Path, identity: Mapping[str, Any], label: str, backend: str, model_args: str) -> None:
    """Refuse a run that would mix another audit, or another model under a used label, into ``out_dir``."""
    audit = read_audit(out_dir)
    if audit is None:
        return
    recorded = audit.get(IDENTITY_KEY)
    if recorded is not None:
        changed = _differences(recorded, json.loads(json.dumps(identity)))
        if changed:
            raise ContamError(f"holds another audit ({'; '.join(changed)}); re-run its own command to resume it, or "
                              f"give a new --output_path", source=str(out_dir), field="--output_path")
    for entry in audit.get("models") or []:
        if isinstance(entry, dict) and entry.get("label") == label and (
                entry.get("model"), entry.get("model_args")) != (backend, model_args):
            raise ContamError(f"label {label!r} is model {entry.get('model')}:{entry.get('model_args')} in this audit, "
                              f"not {backend}:{model_args}; give another --label", source=str(out_dir),
                              field="--label")


def record_identity(out_dir: Path, identity: Mapping[str, Any]) -> None:
    """Write the identity into ``audit.json`` (after the run recorded its model there)."""
    audit = read_audit(out_dir) or {"version": 1, "models": []}
    audit[IDENTITY_KEY] = dict(identity)
    (out_dir / AUDIT_FILE).write_text(json.dumps(audit, indent=2, default=str) + "\n", encoding="utf-8")


def relative_to_audit(path: str, out_dir: Path) -> str:
    """A path under the audit directory as a path relative to it (the directory stays relocatable); others as given."""
    try:
        return str(Path(path).resolve().relative_to(out_dir.resolve()))
    except ValueError:
        return path
