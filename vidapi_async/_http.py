"""The aiohttp layer: one session, one ``send``, and the one place that translates
aiohttp's exceptions into ours.

Everything above this module speaks ``(status, headers, body)``; nothing above it
imports aiohttp (``_multipart``'s body class aside).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import aiohttp
import attrs
from aiohttp.payload import Payload

from . import _errors as e
from ._sansio import url_for_humans

__all__ = ["RawResponse", "Timeouts", "Transport"]

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""API responses are small JSON; anything bigger is refused rather than buffered."""


@attrs.frozen
class Timeouts:
    """Timeouts in seconds (``None``: no limit).

    API calls are small and get a total limit. Uploads get none: a 20 GB file takes as
    long as it takes; they are bounded instead by ``connect`` and by ``upload_read``, the
    wait for the server's answer once the body is sent (its processing time).
    """

    connect: float | None = 30.0
    """Establishing a connection, for every request."""
    api_total: float | None = 120.0
    """A whole API call, from sending to the last byte of the answer."""
    api_read: float | None = 60.0
    """Silence between bytes of an API answer."""
    upload_read: float | None = 600.0
    """Waiting for the upload server's answer after the last byte is sent."""

    def for_api(self) -> aiohttp.ClientTimeout:
        return aiohttp.ClientTimeout(
            total=self.api_total, sock_connect=self.connect, sock_read=self.api_read
        )

    def for_upload(self) -> aiohttp.ClientTimeout:
        return aiohttp.ClientTimeout(
            total=None, sock_connect=self.connect, sock_read=self.upload_read
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

    def __init__(self, session: aiohttp.ClientSession | None, *, limit: int = 100) -> None:
        self._session = session
        self._owns_session = session is None
        self._limit = limit

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            # Created lazily: ClientSession() needs a running loop.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit),
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
    ) -> RawResponse:
        """Send one request and read the whole (small) answer.

        Redirects are not followed: the API does not redirect, and following one could
        carry a request somewhere the caller did not choose. ``body_error`` is a
        ``FileBody`` whose own failure (the file changed, the progress callback raised)
        outranks the transport error that aiohttp reports for it.
        """
        session = self._get_session()
        try:
            async with session.request(
                method,
                url,
                headers=dict(headers),
                data=data,
                timeout=timeout,
                allow_redirects=False,
            ) as resp:
                body = await resp.content.read(MAX_RESPONSE_BYTES + 1)
                if len(body) > MAX_RESPONSE_BYTES:
                    raise e.UnexpectedResponseError(
                        f"{method} {url_for_humans(url)}: response larger than "
                        f"{MAX_RESPONSE_BYTES} bytes",
                        status=resp.status,
                    )
                return RawResponse(resp.status, dict(resp.headers), body)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            own = getattr(body_error, "error", None)
            if isinstance(own, Exception):  # the file changed, or a progress callback raised
                raise own from exc
            raise translate(exc, method, url) from exc


def translate(exc: BaseException, method: str, url: str) -> e.TransportError:
    """aiohttp's (and asyncio's) exception, as ours. The url is shown without its query."""
    shown = url_for_humans(url)
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.InvalidURL):
        return e.ConnectError(f"cannot connect: {exc.__class__.__name__}", method=method, url=shown)
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return e.RequestTimeoutError("timed out", method=method, url=shown)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return e.ConnectionLostError("the server closed the connection", method=method, url=shown)
    if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return e.ConnectionLostError(
            f"broken response: {exc.__class__.__name__}", method=method, url=shown
        )
    return e.ConnectionLostError(
        f"connection failed: {exc.__class__.__name__}", method=method, url=shown
    )
