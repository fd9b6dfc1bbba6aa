"""An answer as the layers above read it: ``(status, headers, body)``."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

__all__ = ["RawResponse"]


# Not slotted: one is made per request, and a frozen slotted class sets each field
# through object.__setattr__, a frozen dict class writes its __dict__ (issue 43).
@attrs.frozen(slots=False)
class RawResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes
