"""The one exception type the project raises for bad input.

Messages name the file (when there is one), the field and the bad value, so a
user can fix the input without reading a traceback; the CLI prints them bare.
"""

from __future__ import annotations


class ContamError(ValueError):
    """Bad input or configuration: the message names file, field and value."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None) -> None:
        parts = []
        if source:
            parts.append(str(source))
        if field:
            parts.append(f"field {field!r}")
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.source = source
        self.field = field
        self.reason = message  # the message without its source and field (e.g. a "not tested: <why>")
