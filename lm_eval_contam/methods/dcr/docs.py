"""A sheet item as an lm-eval doc (one flat schema for every item, the checks as JSON), and a doc's responses
as Check results.

The ``control_*`` fields hold the item's twin (empty strings when it has none: static items the sheet gives no
``control``, and every item in the paper check mode); the docs and records keep the name ``control``, which logged
samples already carry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_contam.methods.dcr.check_spec import check_to_dict, parse_check
from lm_eval_contam.methods.dcr.checks import Check
from lm_eval_contam.methods.dcr.schema import Sheet, SheetItem


def _check_json(check: Check) -> str:
    return json.dumps(check_to_dict(check), sort_keys=True)


def item_to_doc(sheet: Sheet, item: SheetItem) -> dict[str, Any]:
    """The lm-eval doc of one item (the check travels as JSON so every doc has one schema)."""
    twin = item.twin
    return {
        "sheet": sheet.benchmark,
        "level": item.level,
        "item_id": item.item_id,
        "prompt": item.prompt,
        "check": _check_json(item.check),
        "check_kind": item.check.kind,
        "source": item.source,
        "reference": item.reference,
        "twin_prompt": twin.prompt if twin else "",
        "twin_check": _check_json(twin.check) if twin else "",
        "twin_source": twin.source if twin else "",
        "twin_reference": twin.reference if twin else "",
    }


def check_result(check_json: str, item_id: str, prompt: str, response: str) -> float | None:
    """One Check on one response: 1.0 contaminated, 0.0 not, None undetermined."""
    verdict = parse_check(json.loads(check_json), field=f"{item_id}.check").evaluate(prompt, response)
    return None if verdict is None else float(verdict)


def item_record(doc: Mapping[str, Any], responses: Sequence[str]) -> dict[str, float | None]:
    """``{"original": r, "control": r}`` for one item, ``"control"`` its twin's result as logged samples keep it (no
    such key when the item has no twin)."""
    record = {"original": check_result(doc["check"], doc["item_id"], doc["prompt"], responses[0])}
    if doc["twin_prompt"]:
        record["control"] = check_result(doc["twin_check"], doc["item_id"], doc["twin_prompt"], responses[1])
    return record
