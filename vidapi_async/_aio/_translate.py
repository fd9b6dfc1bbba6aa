"""The one place that translates aiohttp's (and asyncio's) exceptions into ours."""

from __future__ import annotations

import asyncio

import aiohttp

from .. import _errors as e
from .._protocol import url_for_humans

__all__ = ["translate"]


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
    if isinstance(exc, aiohttp.ClientHttpProxyError) and exc.status == 407:
        return e.AuthenticationError(
            f"{method} {shown}: the proxy wants credentials it was not given or refused "
            "them (HTTP 407); give them in the proxy address (http://user:password@host:port)",
            status=407,
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
