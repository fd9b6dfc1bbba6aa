"""The aiohttp layer: one session, one ``send``, and the one place that translates
aiohttp's exceptions into ours.

Everything above this package speaks ``(status, headers, body)``; nothing above it
imports aiohttp at run time.
"""

from __future__ import annotations

import asyncio
import ssl as ssl_module
from collections.abc import Mapping
from typing import Any

import aiohttp
import attrs
import yarl
from aiohttp.payload import Payload

from .. import _errors as e
from .._config import Timeouts
from .._protocol import url_for_humans
from ._bodies import FileBody, SendBudget

__all__ = ["RawResponse", "Transport", "api_timeout", "upload_timeout"]

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""API responses are small JSON; anything bigger is refused rather than buffered."""


def api_timeout(timeouts: Timeouts) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(
        total=timeouts.api_total, sock_connect=timeouts.connect, sock_read=timeouts.api_read
    )


def upload_timeout(timeouts: Timeouts) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(
        total=None, sock_connect=timeouts.connect, sock_read=timeouts.upload_read
    )


@attrs.frozen
class RawResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes


class Transport:
    """Sends requests over a caller's session, or over one it creates and owns.

    A caller's session is never closed here; an owned one is closed by ``close``.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession | None,
        *,
        limit: int = 100,
        ssl: ssl_module.SSLContext | None = None,
        sendfile: bool = True,
    ) -> None:
        self._session = session
        self._owns_session = session is None
        self._limit = limit
        self._ssl = ssl
        self.budget = SendBudget()
        """File bodies in flight through this transport (for read-ahead decisions)."""
        self.sendfile = sendfile
        """Whether file bodies may use sendfile(2) on plain-TCP connections."""

    def file_body(self, path: str, **options: Any) -> FileBody:
        """A body streamed from ``path`` (see ``FileBody``), sent the way this
        transport sends files."""
        return FileBody(path, sendfile=self.sendfile, budget=self.budget, **options)

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            # Created lazily: ClientSession() needs a running loop.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit, ssl=self._ssl or True),
                auto_decompress=True,
            )
        return self._session

    @property
    def limit(self) -> int | None:
        """Connections that may be open at once (``None``: no limit)."""
        if self._session is None or self._owns_session:
            return self._limit or None
        connector = self._session.connector
        return (connector.limit or None) if connector is not None else None

    async def close(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
        self._session = None

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        data: bytes | Payload | None,
        timeout: aiohttp.ClientTimeout,
        body_error: Payload | None = None,
        exact_url: bool = False,
        answer_within: float | None = None,
    ) -> RawResponse:
        """Send one request and read the whole (small) answer, to its last byte.

        Redirects are not followed: the API does not redirect, and following one could
        carry a request somewhere the caller did not choose. ``exact_url``: the url is a
        server's (an upload address) and goes out byte for byte, its percent-escapes
        untouched. ``answer_within``: seconds the whole answer may take once the body
        is sent (a server trickling its answer cannot hold the request forever).
        ``body_error`` is a ``FileBody`` whose own failure (the file changed, the
        progress callback raised) outranks the transport error aiohttp reports for it.
        """
        session = self._get_session()
        target = yarl.URL(url, encoded=True) if exact_url else url
        failure: BaseException
        try:
            async with asyncio.timeout(None) as deadline:
                if answer_within is not None:
                    _start_answer_clock(data, deadline, answer_within)
                async with session.request(
                    method,
                    target,
                    headers=dict(headers),
                    data=data,
                    timeout=timeout,
                    allow_redirects=False,
                ) as resp:
                    body = await _read_capped(resp, method, url)
                    return RawResponse(resp.status, dict(resp.headers), body)
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            own = getattr(body_error, "error", None)
            # Translated outside this block: neither __cause__ nor __context__ may hold
            # aiohttp's exception, whose request_info carries the Authorization header.
            failure = own if isinstance(own, Exception) else translate(exc, method, url)
        raise failure


async def _read_capped(resp: aiohttp.ClientResponse, method: str, url: str) -> bytes:
    """The whole body, however many segments it arrives in; refused past the cap. A body
    shorter than its Content-Length raises aiohttp's payload error (translated)."""
    declared = resp.content_length
    if declared is not None and declared > MAX_RESPONSE_BYTES:
        raise _too_large(resp.status, method, url)
    body = bytearray()
    async for piece in resp.content.iter_any():
        body += piece
        if len(body) > MAX_RESPONSE_BYTES:
            raise _too_large(resp.status, method, url)
    return bytes(body)


def _too_large(status: int, method: str, url: str) -> e.UnexpectedResponseError:
    return e.UnexpectedResponseError(
        f"{method} {url_for_humans(url)}: response larger than {MAX_RESPONSE_BYTES} bytes",
        status=status,
    )


def _start_answer_clock(
    data: bytes | Payload | None, deadline: asyncio.Timeout, seconds: float
) -> None:
    """Arm ``deadline`` when the body has been handed over (at once for a small one)."""
    loop = asyncio.get_running_loop()

    def arm() -> None:
        if not deadline.expired():
            deadline.reschedule(loop.time() + seconds)

    if isinstance(data, FileBody):
        data.on_written = arm
    else:
        arm()


def translate(exc: BaseException, method: str, url: str) -> e.VidapiError:
    """aiohttp's (and asyncio's) exception, as ours. The url is shown without its query;
    of the original only its class (and an OS error's text) is kept."""
    shown = url_for_humans(url)
    if isinstance(exc, aiohttp.InvalidURL) or (
        isinstance(exc, ValueError) and not isinstance(exc, aiohttp.ClientError)
    ):
        return e.InvalidRequestError(
            f"{method} {shown}: the request cannot be sent as given ({exc.__class__.__name__}:"
            " a header or url holds characters HTTP cannot carry)"
        )
    if isinstance(exc, aiohttp.ClientConnectorError):
        return e.ConnectError(
            f"cannot connect: {exc.__class__.__name__}{_os_detail(exc)}", method=method, url=shown
        )
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return e.RequestTimeoutError("timed out", method=method, url=shown)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return e.ConnectionLostError("the server closed the connection", method=method, url=shown)
    if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return e.ConnectionLostError(
            f"broken response: {exc.__class__.__name__}", method=method, url=shown
        )
    return e.ConnectionLostError(
        f"connection failed: {exc.__class__.__name__}{_os_detail(exc)}", method=method, url=shown
    )


def _os_detail(exc: BaseException) -> str:
    """``": Connection refused"``: an OS error's own text, which holds no header."""
    for item in (exc, getattr(exc, "os_error", None)):
        if isinstance(item, OSError) and item.strerror:
            return f": {item.strerror}"
    return ""
