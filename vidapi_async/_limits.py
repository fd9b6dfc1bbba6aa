"""Client-wide limits: a request rate shared by every request, and a bandwidth shared
by every upload. Both pace (they wait); neither refuses."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Protocol

__all__ = ["Bandwidth", "Pacer", "RequestRate"]


class Pacer(Protocol):
    """Anything that makes a request wait for its slot (``RequestRate``, or one shared
    by many processes)."""

    async def wait(self) -> None: ...


class RequestRate:
    """At most ``per_second`` requests start per second, evenly spaced, whichever task
    sends them (on the loop)."""

    def __init__(self, per_second: float) -> None:
        self.per_second = per_second
        self._interval = 1.0 / per_second
        self._next = 0.0

    async def wait(self) -> None:
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)


class Bandwidth:
    """At most ``per_second`` bytes per second across every upload of a client. Upload
    threads call ``take`` before sending a piece; it sleeps there (never on the loop),
    and wakes early when ``stop`` is set (a cancelled upload)."""

    def __init__(self, per_second: int) -> None:
        self.per_second = per_second
        self._next = 0.0
        self._lock = threading.Lock()

    @property
    def piece(self) -> int:
        """The largest piece worth sending at once: a twentieth of a second's worth."""
        return max(16 * 1024, self.per_second // 20)

    def take(self, n: int, stop: threading.Event) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + n / self.per_second
        if start > now:
            stop.wait(start - now)
