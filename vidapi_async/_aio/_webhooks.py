"""The ``aiohttp.web`` handler for incoming webhook events (aiohttp stays in ``_aio``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from aiohttp import web

from .. import _webhooks as hooks
from .._errors import WebhookError
from .._validate import positive_number

__all__ = ["aiohttp_handler"]


def aiohttp_handler(
    callback: hooks.Callback,
    *,
    secret: str | None = None,
    tolerance: float = 300.0,
    body_timeout: float = hooks.BODY_TIMEOUT,
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An ``aiohttp.web`` handler: ``app.router.add_post("/hooks", aiohttp_handler(cb))``.

    Each event is parsed (its signature checked with ``secret``), handed to
    ``callback`` (sync or async) and answered 204; a refused one 400 (401 for a
    signature), a body over 1 MiB 413, so the platform does not retry it for ever; a
    body not whole within ``body_timeout`` seconds 408. An empty ``secret`` is an
    ``InvalidArgumentError``, and so is a ``body_timeout`` that is not a number above 0."""
    hooks.check_secret(secret)
    body_timeout = positive_number(body_timeout, "body_timeout")

    async def handler(request: web.Request) -> web.Response:
        if request.content_length is not None and request.content_length > hooks.MAX_BODY_BYTES:
            return web.Response(status=413)
        body = bytearray()
        try:
            async with asyncio.timeout(body_timeout):  # a body that stops short
                async for piece in request.content.iter_chunked(64 * 1024):
                    body += piece
                    if len(body) > hooks.MAX_BODY_BYTES:
                        return web.Response(status=413)
        except TimeoutError:
            return web.Response(
                status=408,
                body=hooks.late_body(body_timeout),
                content_type="application/json",
                headers={"Connection": "close"},
            )
        try:
            event = hooks.parse_event(
                bytes(body), request.headers, secret=secret, tolerance=tolerance
            )
        except WebhookError as exc:
            status, text = hooks.answer_for(exc)
            return web.Response(status=status, body=text, content_type="application/json")
        await hooks.deliver(callback, event)
        return web.Response(status=204)

    return handler
