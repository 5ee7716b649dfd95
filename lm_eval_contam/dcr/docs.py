"""A sheet item as an lm-eval doc: one flat schema for every item, the check as JSON."""

from __future__ import annotations

import json
from typing import Any

from lm_eval_contam.dcr.checks import check_to_dict
from lm_eval_contam.dcr.sheet import Sheet, SheetItem


def item_to_doc(sheet: Sheet, item: SheetItem) -> dict[str, Any]:
    """The lm-eval doc of one item (the check travels as JSON so every doc has one schema)."""
    return {
        "sheet": sheet.benchmark,
        "level": item.level,
        "item_id": item.item_id,
        "prompt": item.prompt,
        "check": json.dumps(check_to_dict(item.check), sort_keys=True),
        "check_kind": item.check.kind,
        "source": item.source,
        "reference": item.reference,
    }
