"""What the operation mixins (``_upload_calls``, ``_videos``, ``_subtitles``, ``_live``,
``_raw``, ``_account``) use of ``Client``: its requester (``_requester``), which holds
how requests are made while the mixins say which requests. Plus the two small helpers
they share with it.
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
    from ._models import AccessToken
    from ._requester import Requester
    from ._retry import RetryPolicy
    from ._sources import SourcePolicy

__all__ = ["CallsBase", "_bool", "_deprecated"]


class CallsBase:
    """What the operation modules use of ``Client``: its one requester (``_requester``,
    which holds the token, retries, limits and decoding) and its upload settings. Every
    method here hands over to the requester; nothing is left for a subclass to fill."""

    read_size: int
    range_size: int
    chunked_threshold: int | None
    source_policy: SourcePolicy
    max_source_size: int
    _requester: Requester

    @property
    def base_url(self) -> str:
        """The API's address (``https://api.dailymotion.com``, a partner host, the
        emulator's); the token goes to its origin only."""
        return self._requester.base_url

    @property
    def timeouts(self) -> Timeouts:
        """How long connecting, reading and uploading may take (``Timeouts``)."""
        return self._requester.timeouts

    @timeouts.setter
    def timeouts(self, value: Timeouts) -> None:
        self._requester.timeouts = value

    @property
    def retry(self) -> RetryPolicy:
        """How failed requests are retried (``NO_RETRY`` to never retry)."""
        return self._requester.retry

    @retry.setter
    def retry(self, value: RetryPolicy) -> None:
        self._requester.retry = value

    @property
    def _transport(self) -> Transport:
        return self._requester.transport

    def _check_open(self) -> None:
        self._requester.check_open()

    def _api(self, method: str, path: str, **kw: Any) -> wire.Request:
        return self._requester.api(method, path, **kw)

    def _call(self, request: wire.Request) -> Awaitable[Mapping[str, Any]]:
        return self._requester.call(request)

    def _call_once(self, request: wire.Request) -> Awaitable[Mapping[str, Any]]:
        return self._requester.call_once(request)

    def _server_url(self, url: object, name: str) -> str:
        return self._requester.server_url(url, name)

    def _check_scope(self, request: wire.Request, token: AccessToken) -> None:
        self._requester.check_scope(request, token)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(name, f"expected True or False, got {value!r}")
    return value
