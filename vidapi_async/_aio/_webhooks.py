"""The ``aiohttp.web`` handler for incoming webhook events (aiohttp stays in ``_aio``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from .. import _webhooks as hooks
from .._errors import WebhookError

__all__ = ["aiohttp_handler"]


def aiohttp_handler(
    callback: hooks.Callback, *, secret: str | None = None, tolerance: float = 300.0
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An ``aiohttp.web`` handler: ``app.router.add_post("/hooks", aiohttp_handler(cb))``.

    Each event is parsed (its signature checked with ``secret``), handed to
    ``callback`` (sync or async) and answered 204; a refused one 400 (401 for a
    signature), a body over 1 MiB 413, so the platform does not retry it for ever. An
    empty ``secret`` is an ``InvalidArgumentError``."""
    hooks.check_secret(secret)

    async def handler(request: web.Request) -> web.Response:
        if request.content_length is not None and request.content_length > hooks.MAX_BODY_BYTES:
            return web.Response(status=413)
        body = bytearray()
        async for piece in request.content.iter_chunked(64 * 1024):
            body += piece
            if len(body) > hooks.MAX_BODY_BYTES:
                return web.Response(status=413)
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
