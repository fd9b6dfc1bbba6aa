"""What the operation mixins (``_upload_calls``, ``_videos``, ``_subtitles``, ``_live``,
``_raw``, ``_account``) may use of ``Client``: its machinery, declared here and defined
by ``Client`` (``_client``), which holds how requests are made while the mixins say
which requests. Plus the two small helpers they share with it.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

from . import _protocol as wire
from ._errors import InvalidArgumentError

if TYPE_CHECKING:
    from ._aio import Transport
    from ._config import Timeouts
    from ._retry import RetryPolicy
    from ._sources import SourcePolicy

__all__ = ["CallsBase", "_bool", "_deprecated"]


class CallsBase:
    """``Client``'s machinery as the mixins see it (every method is ``Client``'s)."""

    base_url: str
    retry: RetryPolicy
    timeouts: Timeouts
    read_size: int
    range_size: int
    chunked_threshold: int | None
    source_policy: SourcePolicy
    max_source_size: int
    _transport: Transport

    def _check_open(self) -> None:
        raise NotImplementedError  # pragma: no cover - Client's

    def _api(self, method: str, path: str, **kw: Any) -> wire.Request:
        raise NotImplementedError  # pragma: no cover - Client's

    def _call(self, request: wire.Request) -> Awaitable[Mapping[str, Any]]:
        raise NotImplementedError  # pragma: no cover - Client's

    async def _call_once(self, request: wire.Request) -> Mapping[str, Any]:
        raise NotImplementedError  # pragma: no cover - Client's

    def _server_url(self, url: object, name: str) -> str:
        raise NotImplementedError  # pragma: no cover - Client's


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(name, f"expected True or False, got {value!r}")
    return value
