"""The platform's chunked upload: raw byte ranges POSTed to the upload address, in
parallel, each retried alone, resumed from the ranges the server says it holds.

Protocol (``platform-facts.md``): each POST carries ``Content-Range: bytes F-L/TOTAL``;
while bytes are missing the server answers 202 (or 416) with ``Range: a-b,c-d/TOTAL``,
the ranges it holds; the POST that completes the file gets 200 and the descriptor.
To learn what a server holds without sending data (after a dropped connection, or in a
new process), we POST an empty body with ``Content-Range: bytes */TOTAL``: the server
answers as above (our decision where the platform says nothing; the emulator agrees).

Each worker sends its own contiguous region, ``chunk_size`` bytes a request, streamed
from disk like every body here: memory stays within ``workers x chunk_size`` at most.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from . import _sansio as wire
from ._errors import UnexpectedResponseError
from ._http import RawResponse
from ._multipart import FileBody, ProgressCallback, attachment_disposition
from ._retry import RetryPolicy, retrying

__all__ = ["Held", "chunked_upload", "regions"]

log = logging.getLogger("vidapi_async")

Send = Callable[[dict[str, str], "FileBody | bytes", "FileBody | None"], Awaitable[RawResponse]]
"""``send(headers, body, body_error)``: one POST to the upload address."""


class Held:
    """The byte ranges the server acknowledged (inclusive), merged."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.ranges: list[tuple[int, int]] = []

    def update(self, ranges: list[tuple[int, int]]) -> None:
        self.ranges = wire.merge_ranges([*self.ranges, *ranges])

    def covers(self, first: int, last: int) -> bool:
        return any(a <= first and last <= b for a, b in self.ranges)

    @property
    def count(self) -> int:
        return sum(b - a + 1 for a, b in self.ranges)


def regions(total: int, workers: int, chunk_size: int) -> list[tuple[int, int]]:
    """``workers`` contiguous ``[start, end)`` regions, each a whole number of chunks
    (the last takes the rest)."""
    chunks = math.ceil(total / chunk_size)
    per = math.ceil(chunks / max(1, workers))
    out = []
    for start_chunk in range(0, chunks, per):
        start = start_chunk * chunk_size
        out.append((start, min(total, (start_chunk + per) * chunk_size)))
    return out


async def chunked_upload(
    send: Send,
    *,
    path: str,
    size: int,
    filename: str,
    workers: int,
    chunk_size: int,
    policy: RetryPolicy,
    progress: ProgressCallback | None,
    resume: bool,
) -> Mapping[str, Any]:
    """Send the file in ranges; return the descriptor JSON of the completing answer."""
    held = Held(size)
    result: list[Mapping[str, Any]] = []
    disposition = attachment_disposition(filename)

    def absorb(resp: RawResponse) -> None:
        if resp.status == 200:
            result.append(wire.decode_upload_response(resp.status, resp.body))
            held.update([(0, size - 1)])
        elif resp.status in (202, 416) and "Range" in resp.headers:
            ranges, _ = wire.parse_held_ranges(resp.headers["Range"])
            held.update(ranges)
        else:
            wire.decode_upload_response(resp.status, resp.body)  # raises the server's error
            raise UnexpectedResponseError(
                f"the upload server answered {resp.status} without a Range", status=resp.status
            )
        if progress is not None:
            progress(held.count, size)

    async def ask() -> None:
        absorb(await send({"Content-Range": f"bytes */{size}"}, b"", None))

    async def send_chunk(first: int, length: int, attempt: int) -> None:
        if attempt > 1 or result:
            await ask()  # the lost answer may hide a chunk that did arrive
            if result or held.covers(first, first + length - 1):
                return
        body = FileBody(path, file_size=size, offset=first, length=length)
        headers = {
            "Content-Type": "application/octet-stream",
            "Content-Disposition": disposition,
            "Content-Range": f"bytes {first}-{first + length - 1}/{size}",
        }
        absorb(await send(headers, body, body))

    async def worker(start: int, end: int) -> None:
        pos = start
        while pos < end and not result:
            length = min(chunk_size, end - pos)
            if not held.covers(pos, pos + length - 1):
                await retrying(
                    policy,
                    functools.partial(send_chunk, pos, length),
                    idempotent=True,
                    what=f"upload range {pos}-{pos + length - 1}",
                )
            pos += length

    if resume:
        await retrying(policy, lambda _: ask(), idempotent=True, what="ask held ranges")
    if not result:
        try:
            async with asyncio.TaskGroup() as group:
                for start, end in regions(size, workers, chunk_size):
                    group.create_task(worker(start, end))
        except BaseExceptionGroup as group_error:
            # One range failed for good: the others were cancelled. Raise that failure
            # itself, not the group (callers catch VidapiError).
            raise _first_error(group_error) from None
    if not result:
        # every range was acknowledged with 202 but none completed: ask once more
        await retrying(policy, lambda _: ask(), idempotent=True, what="ask held ranges")
    if not result:
        raise UnexpectedResponseError(
            f"the upload server holds {held.count} of {size} bytes after every range was sent",
            status=None,
        )
    return result[0]


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first
