"""Upload addresses fetched ahead, so that a pipeline's next upload need not wait for one.

A pipeline is three requests in a row: the upload address, the upload, the create. When
a job's upload is done, the batch asks for an address for a job still waiting in the
queue, while this job's create is under way: on a link with 20 ms per request that takes
one request off each pipeline's path. Never more addresses are fetched than jobs wait,
and never more at once than ``room``, the connections of the client's API pool that no
pipeline can need (a request waiting for a pooled connection has its timeout running);
an address unused for ``max_age`` seconds is dropped (an address is single-use and the
platform lets it expire); a failed fetch is dropped too, and the job asks for its own.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable

from .._errors import VidapiError
from .._models import UploadSession

__all__ = ["Spares"]


class Spares:
    def __init__(
        self,
        fetch: Callable[[], Awaitable[UploadSession]],
        *,
        max_age: float = 60.0,
        room: int | None = None,
    ) -> None:
        self._fetch = fetch
        self._max_age = max_age
        self._room = room
        """At most this many fetches under way at once (``None``: no bound)."""
        self._ahead: collections.deque[asyncio.Task[tuple[float, UploadSession] | None]] = (
            collections.deque()
        )
        """Fetches ahead, ready or under way, oldest first; a taker claims one by popping
        it, so a job never fetches its own while a spare meant for it is coming."""

    async def take(self) -> UploadSession:
        """A spare address (waiting for one under way) if a fresh one comes, else one
        fetched now."""
        while self._ahead:
            got = await self._ahead.popleft()  # ours alone now
            if got is not None and time.monotonic() - got[0] < self._max_age:
                return got[1]
        return await self._fetch()

    def ahead(self, waiting: int) -> None:
        """Fetch one more address if fewer are ready or coming than jobs ``waiting``."""
        kept: collections.deque[asyncio.Task[tuple[float, UploadSession] | None]]
        kept, under_way = collections.deque(), 0
        for task in self._ahead:  # (one loop, no generators: once a job, issue 43)
            if not task.done():
                under_way += 1
            elif _failed(task):
                continue
            kept.append(task)
        self._ahead = kept
        if len(kept) >= waiting:
            return
        if self._room is not None and under_way >= self._room:
            return
        self._ahead.append(asyncio.create_task(self._one(), name="vidapi-batch-address"))

    async def _one(self) -> tuple[float, UploadSession] | None:
        try:
            session = await self._fetch()
        except VidapiError:
            return None  # only ahead of time: the job will ask for its own
        return time.monotonic(), session

    async def close(self) -> None:
        """Stop the fetches under way and forget the spares."""
        tasks = list(self._ahead)
        self._ahead.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _failed(task: asyncio.Task[tuple[float, UploadSession] | None]) -> bool:
    return task.done() and (
        task.cancelled() or task.exception() is not None or task.result() is None
    )
