"""An answer as the layers above read it: ``(status, headers, body)``."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

__all__ = ["RawResponse"]


@attrs.frozen
class RawResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes
