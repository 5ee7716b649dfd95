"""A sheet item as an lm-eval doc: one flat schema for every item, the checks as JSON.

The ``control_*`` fields hold the item's control (empty strings when it has none:
static items, and every item in the paper check mode).
"""

from __future__ import annotations

import json
from typing import Any

from lm_eval_contam.dcr.checks import Check, check_to_dict
from lm_eval_contam.dcr.sheet import Sheet, SheetItem


def _check_json(check: Check) -> str:
    return json.dumps(check_to_dict(check), sort_keys=True)


def item_to_doc(sheet: Sheet, item: SheetItem) -> dict[str, Any]:
    """The lm-eval doc of one item (the check travels as JSON so every doc has one schema)."""
    control = item.control
    return {
        "sheet": sheet.benchmark,
        "level": item.level,
        "item_id": item.item_id,
        "prompt": item.prompt,
        "check": _check_json(item.check),
        "check_kind": item.check.kind,
        "source": item.source,
        "reference": item.reference,
        "control_prompt": control.prompt if control else "",
        "control_check": _check_json(control.check) if control else "",
        "control_source": control.source if control else "",
        "control_reference": control.reference if control else "",
    }
