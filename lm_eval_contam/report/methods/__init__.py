"""One renderer module per method family, named as the tasks' ``metadata.method`` (``timetravel``, ``dcq``, ``dcr``).

Each module exposes

* ``html(verdicts, anchor) -> str``: the details of one task's verdicts (same
  model, same task), as escaped HTML; ``anchor(verdict)`` is the id the summary
  table links to, to be set on the section's heading;
* ``markdown(verdicts) -> list[str]``: the same as Markdown lines.

A new method family adds a module here; the report finds it by name
(:func:`renderer`) and nothing else in the report changes.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from lm_eval_contam.errors import ContamError


def renderer(family: str) -> ModuleType:
    try:
        return importlib.import_module(f"{__name__}.{family}")
    except ModuleNotFoundError:
        raise ContamError(f"no report renderer for method {family!r} (lm_eval_contam/report/methods/{family}.py)",
                          field="metadata.method") from None
