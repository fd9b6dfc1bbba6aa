"""The one "not given" sentinel, typed (as openai-python's ``NotGiven``).

Where ``None`` would mean something (``Client(chunked_threshold=None)``: never by
size), an argument that was not passed at all is ``NOT_GIVEN``. It is the single member
of an enum so that type checkers narrow on it: ``limit: int | NotGiven`` is an ``int``
after ``if limit is NOT_GIVEN: ...; return``, and a caller passing ``object()`` is told
so by ``mypy --strict`` (an ``int | object`` parameter takes anything).
"""

from __future__ import annotations

import enum
from typing import Final, Literal

__all__ = ["NOT_GIVEN", "NotGiven"]


class NotGiven(enum.Enum):
    """The type of ``NOT_GIVEN``: "this argument was not passed". It is falsy."""

    NOT_GIVEN = "NOT_GIVEN"
    """The one member (``vidapi_async.NOT_GIVEN``)."""

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Final = NotGiven.NOT_GIVEN
"""The default of an argument whose absence differs from ``None``."""
