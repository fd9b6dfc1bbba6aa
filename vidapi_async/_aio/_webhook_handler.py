"""The ``aiohttp.web`` handler for incoming webhook events (aiohttp stays in ``_aio``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from aiohttp import web

from .. import _webhook_receiver as hooks
from .._errors import WebhookError

__all__ = ["aiohttp_handler"]


def aiohttp_handler(
    callback: hooks.Callback,
    *,
    secret: str | None = None,
    tolerance: float = hooks.TOLERANCE,
    body_timeout: float = hooks.BODY_TIMEOUT,
    max_concurrent_bodies: int = hooks.MAX_CONCURRENT_BODIES,
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An ``aiohttp.web`` handler: ``app.router.add_post("/hooks", aiohttp_handler(cb))``.

    Each event is parsed (its signature checked with ``secret``), handed to
    ``callback`` (sync or async) and answered 204; a refused one 400 (401 for a
    signature), a body over 1 MiB 413, so the platform does not retry it for ever; a
    body that does not decode (its ``Content-Encoding``) 400; a body not whole within
    ``body_timeout`` seconds 408; one past ``max_concurrent_bodies`` being read at once
    503 (with ``Retry-After``). A client that hangs up mid-body is let go without a
    word in the log. An empty ``secret`` is an ``InvalidArgumentError``, and so is a
    ``tolerance`` or ``body_timeout`` that is not a number above 0 or a
    ``max_concurrent_bodies`` that is not a whole number above 0."""
    tolerance, body_timeout, most = hooks.check_handler_options(
        secret, tolerance, body_timeout, max_concurrent_bodies
    )
    reading = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal reading
        if request.content_length is not None and request.content_length > hooks.MAX_BODY_BYTES:
            return web.Response(status=413)
        if reading >= most:
            status, text, headers = hooks.BUSY
            return web.Response(
                status=status,
                body=text,
                content_type="application/json",
                headers={**headers, "Connection": "close"},
            )
        reading += 1
        try:
            body = await _read(request, body_timeout)
        finally:
            reading -= 1
        if isinstance(body, web.Response):
            return body
        try:
            event = hooks.parse_event(body, request.headers, secret=secret, tolerance=tolerance)
        except WebhookError as exc:
            status, text = hooks.answer_for(exc)
            return web.Response(status=status, body=text, content_type="application/json")
        await hooks.deliver(callback, event)
        return web.Response(status=204)

    return handler


async def _read(request: web.Request, body_timeout: float) -> bytes | web.Response:
    """The whole body, or the answer to a body that is not one."""
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
    except web.RequestPayloadError:  # a Content-Encoding the body does not decode as
        answer = web.Response(
            status=400,
            body=b'{"error": "the body does not decode as its Content-Encoding says"}',
            content_type="application/json",
        )
        # sent, then the connection closed: else aiohttp reads on for the rest of
        # the body after the handler, fails again, and logs a traceback at ERROR
        await answer.prepare(request)
        await answer.write_eof()
        request.protocol.force_close()
        return answer
    except ConnectionResetError:  # the client hung up: nobody to answer, nothing to log
        request.protocol.force_close()
        return web.Response(status=400, headers={"Connection": "close"})
    return bytes(body)
