"""Upload addresses fetched ahead, so that a pipeline's next upload need not wait for one.

A pipeline is three requests in a row: the upload address, the upload, the create. When
a job's upload is done, the batch asks for an address for a job still waiting in the
queue, while this job's create is under way: on a link with 20 ms per request that takes
one request off each pipeline's path. Never more addresses are fetched than jobs wait;
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
        self, fetch: Callable[[], Awaitable[UploadSession]], *, max_age: float = 60.0
    ) -> None:
        self._fetch = fetch
        self._max_age = max_age
        self._ready: collections.deque[tuple[float, UploadSession]] = collections.deque()
        self._fetching: set[asyncio.Task[None]] = set()

    async def take(self) -> UploadSession:
        """A spare address if one is fresh, else one fetched now."""
        now = time.monotonic()
        while self._ready:
            fetched, session = self._ready.popleft()
            if now - fetched < self._max_age:
                return session
        return await self._fetch()

    def ahead(self, waiting: int) -> None:
        """Fetch one more address if fewer are ready or coming than jobs ``waiting``."""
        if len(self._ready) + len(self._fetching) >= waiting:
            return
        task = asyncio.create_task(self._one(), name="vidapi-batch-address")
        self._fetching.add(task)
        task.add_done_callback(self._fetching.discard)

    async def _one(self) -> None:
        try:
            session = await self._fetch()
        except VidapiError:
            return  # only ahead of time: the job will ask for its own
        self._ready.append((time.monotonic(), session))

    async def close(self) -> None:
        """Stop the fetches under way and forget the spares."""
        tasks = list(self._fetching)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._ready.clear()
