"""Webhook deliveries: the emulator POSTs an event to the account's ``webhook_url`` when
one of its videos is created, becomes ready, fails encoding or is deleted (and only for
the events the account asked for in ``webhook_events``).

The payload and signature are the ones the client library documents (the platform
documents neither), written here a second time from that description, not imported::

    {"id": "<32 hex>", "type": "video.format.ready", "timestamp": <unix seconds>,
     "data": {"video_id": "x...", "owner_id": "x...", "status": "ready"}}

    X-Vidapi-Signature: t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>

(the header only when the account set a ``webhook_secret``). A delivery that gets no
2xx answer is tried again (``attempts`` in all, the wait doubling from
``retry_delay``) with the same event id; every attempt is logged in ``log``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import secrets
import time
from collections import deque
from typing import Any

import aiohttp
import attrs

from ._backend import Backend

__all__ = ["Deliveries"]

EVENT_NAMES = frozenset(
    "video.created video.deleted video.published video.format.processing "
    "video.format.ready video.format.error video.format.deleted".split()
)


@attrs.define
class Deliveries:
    """Sends the events; ``log`` keeps the last 1000 attempts."""

    backend: Backend
    attempts: int = 5
    retry_delay: float = 0.2
    timeout: float = 5.0
    log: deque[dict[str, Any]] = attrs.Factory(lambda: deque(maxlen=1000))
    _tasks: set[asyncio.Task[None]] = attrs.Factory(set)
    _session: aiohttp.ClientSession | None = None

    def emit(self, kind: str, video: dict[str, Any]) -> None:
        """Called by the backend (on the loop) when something happens to a video."""
        self._send(kind, video)
        if kind == "video.created" and video.get("mode") != "live" and self._wants_encoding(video):
            # Only for an account listening: otherwise no task outlives the request.
            self._spawn(self._watch_encoding(video["id"]))

    def _wants_encoding(self, video: dict[str, Any]) -> bool:
        hook = self.backend.store.get("webhook", video["owner"]) or {}
        wanted = {"video.format.ready", "video.format.error"}
        return bool(hook.get("url")) and bool(wanted & set(hook.get("events", ())))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch_encoding(self, video_id: str) -> None:
        """Once the video's encoding time has passed: ready, or failed."""
        video = self.backend.store.get("video", video_id)
        if video is None:
            return
        started = float(video.get("encoding_started", time.time()))
        await asyncio.sleep(max(0.0, started + self.backend.encoding_delay - time.time()))
        video = self.backend.store.get("video", video_id)
        if video is None:  # deleted meanwhile: its own event said so
            return
        failed = bool(video.get("encoding_fails"))
        self._send("video.format.error" if failed else "video.format.ready", video)

    def _send(self, kind: str, video: dict[str, Any]) -> None:
        hook = self.backend.store.get("webhook", video["owner"])
        if hook is None or not hook.get("url") or kind not in hook.get("events", ()):
            return
        status = {"video.format.ready": "ready", "video.format.error": "encoding_error"}
        event = {
            "id": secrets.token_hex(16),
            "type": kind,
            "timestamp": int(time.time()),
            "data": {
                "video_id": video["id"],
                "owner_id": video["owner"],
                "status": "deleted" if kind == "video.deleted" else status.get(kind, "processing"),
            },
        }
        self._spawn(self._deliver(hook["url"], event, hook.get("secret")))

    async def _deliver(self, url: str, event: dict[str, Any], secret: str | None) -> None:
        body = json.dumps(event).encode()
        for attempt in range(1, self.attempts + 1):
            headers = {"Content-Type": "application/json", "User-Agent": "vidapi-emulator"}
            if secret:
                stamp = int(time.time())
                mac = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256)
                headers["X-Vidapi-Signature"] = f"t={stamp},v1={mac.hexdigest()}"
            entry: dict[str, Any] = {
                "event": event["id"],
                "type": event["type"],
                "video_id": event["data"]["video_id"],
                "url": url,
                "attempt": attempt,
                "status": None,
                "error": None,
                "at": time.time(),
            }
            try:
                async with self._get_session().post(url, data=body, headers=headers) as resp:
                    await resp.read()
                    entry["status"] = resp.status
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                entry["error"] = type(exc).__name__
            self.log.append(entry)
            if entry["status"] is not None and 200 <= entry["status"] < 300:
                return
            if attempt < self.attempts:
                await asyncio.sleep(self.retry_delay * 2 ** (attempt - 1))

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self._session

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._session is not None:
            await self._session.close()
            self._session = None


def write_webhook(backend: Backend, owner: str, form: dict[str, str]) -> None:
    """``POST /me``'s webhook fields: ``webhook_url`` (empty removes the webhook),
    ``webhook_events`` (comma-separated names), ``webhook_secret`` (write-only)."""
    from ._backend import _invalid

    for name in form:
        if name not in ("webhook_url", "webhook_events", "webhook_secret"):
            raise _invalid(name, f"`{name[:40]}' is not a writable field")
    hook = backend.store.get("webhook", owner) or {"id": owner, "owner": owner, "events": []}
    if "webhook_url" in form:
        url = form["webhook_url"]
        if url and not url.startswith(("http://", "https://")):
            raise _invalid("webhook_url", "`webhook_url' must be an http(s) URL")
        hook["url"] = url or None
    if "webhook_events" in form:
        events = [e for e in form["webhook_events"].split(",") if e]
        unknown = [e for e in events if e not in EVENT_NAMES]
        if unknown:
            raise _invalid("webhook_events", f"unknown event `{unknown[0][:40]}'")
        hook["events"] = events
    if "webhook_secret" in form:
        hook["secret"] = form["webhook_secret"] or None
    if not hook.get("url"):
        backend.store.delete("webhook", owner)
        return
    backend.store.put("webhook", owner, hook)
