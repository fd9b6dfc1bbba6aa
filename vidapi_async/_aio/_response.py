"""An answer as the layers above read it: ``(status, headers, body)``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["RawResponse"]


# A named tuple: one is made per request, and a tuple is made in C (an attrs class,
# even without slots, runs its __init__ in Python: about 3k instructions more; issue 43).
class RawResponse(NamedTuple):
    status: int
    headers: Mapping[str, str]
    body: bytes
