"""Incoming webhook events from the platform: ``parse_event`` (pure), an
``aiohttp.web`` handler factory, an ASGI app factory, and ``WebhookEvents``, a source for
``client.videos.wait_until_ready(video_id, events=source)``.

::

    events = WebhookEvents()
    app.router.add_post("/hooks/<unguessable>", aiohttp_handler(events, secret=SECRET))
    await client.account.set_webhook(f"{PUBLIC}/hooks/<unguessable>", events=["video.format.ready"],
                             secret=SECRET)
    video = await client.videos.wait_until_ready(video_id, events=events)  # polls as a fallback

The payload and the ``X-Vidapi-Signature`` scheme are this library's decision (the
platform documents neither); the bundled emulator sends exactly them. See
``vidapi_async._webhook_receiver`` for the format.
"""

from ._aio._webhook_handler import aiohttp_handler
from ._errors import WebhookError, WebhookSignatureError
from ._webhook_receiver import (
    EVENT_TYPES,
    FAILED_EVENTS,
    READY_EVENTS,
    SIGNATURE_HEADER,
    WebhookEvent,
    WebhookEvents,
    asgi_app,
    parse_event,
    sign,
)

__all__ = [
    "EVENT_TYPES",
    "FAILED_EVENTS",
    "READY_EVENTS",
    "SIGNATURE_HEADER",
    "WebhookError",
    "WebhookEvent",
    "WebhookEvents",
    "WebhookSignatureError",
    "aiohttp_handler",
    "asgi_app",
    "parse_event",
    "sign",
]
