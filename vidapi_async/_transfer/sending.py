"""The two ways a file reaches the upload server, driven over the aiohttp layer:

- ``send_single_shot``: one multipart POST (part ``file``) streamed from disk, with an
  exact Content-Length;
- ``send_chunked``: the platform's chunked protocol (``_protocol.ChunkedUpload`` decides,
  this module sends), ``workers`` regions in parallel, each range retried alone, a
  resumed upload first asking what the server holds.

Both go through ``Transport.upload``: a worker thread sends each request on a blocking
socket (the loop stays free), the upload address byte for byte as the server returned
it, and gives the server ``upload_read`` seconds for its whole answer once the body is
sent.
"""

from __future__ import annotations

import asyncio
import functools
import mimetypes
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import attrs

from .. import _protocol as wire
from .._aio import Connection, FileRegion, Transport
from .._config import ProgressCallback, Timeouts
from .._retry import RetryPolicy, retrying
from .digest import HashSink
from .files import LocalFile
from .sources import Stream

__all__ = ["UploadPlan", "load_mime_types", "send_chunked", "send_single_shot"]

_MIME_LOCK = threading.Lock()
_MIME_LOADED = False


@attrs.frozen(kw_only=True)
class UploadPlan:
    """What to send and how: the checked file, the name the server sees, the sizes."""

    local: LocalFile
    filename: str
    read_size: int
    range_size: int
    workers: int
    progress: ProgressCallback | None = None
    stream: Stream | None = None
    """A source read through instead of ``local.path`` (single-shot only)."""
    digest: HashSink | None = None
    """Fed with the bytes sent (single-shot only: ranges go out in parallel)."""
    ranges: Callable[[int, int], Awaitable[Stream]] | None = None
    """A source read by ranges instead of ``local.path`` (chunked only): ``(first,
    length)`` gives a stream of those bytes, ready before the request starts, let go
    by its ``close`` once sent."""


async def send_single_shot(
    transport: Transport, timeouts: Timeouts, url: str, plan: UploadPlan
) -> Mapping[str, Any]:
    """One multipart POST; the descriptor JSON, or the server's error raised."""
    await load_mime_types()  # the part's Content-Type is guessed from the file's name
    boundary = wire.new_boundary()
    head, tail = wire.multipart_envelope(boundary, "file", plan.filename)
    region = FileRegion(
        path=plan.local.path,
        file_size=plan.local.size,
        length=plan.local.size,
        head=head,
        tail=tail,
        stream=plan.stream,
        digest=plan.digest,
    )
    resp = await transport.upload(
        url,
        {"Content-Type": f"multipart/form-data; boundary={boundary}"},
        region,
        timeouts,
        read_size=plan.read_size,
        progress=plan.progress,
    )
    return wire.decode_upload_response(resp.status, resp.body, wire.query_values(url))


async def load_mime_types() -> None:
    """Read the system's table of media types (``mimetypes``, a file on disk) once,
    in a worker thread: ``guess_type`` would read it on the loop the first time."""
    if not _MIME_LOADED:
        await asyncio.to_thread(_load_mime_types)


def _load_mime_types() -> None:
    global _MIME_LOADED
    with _MIME_LOCK:  # several first uploads at once: one reads it
        if not _MIME_LOADED:
            # ``mimetypes.inited`` turns true as the reading starts: not a sign it ended
            mimetypes.guess_type("x.mp4")
            _MIME_LOADED = True


async def send_chunked(
    transport: Transport,
    timeouts: Timeouts,
    url: str,
    plan: UploadPlan,
    *,
    policy: RetryPolicy,
    resume: bool,
) -> Mapping[str, Any]:
    """The file in ranges, ``plan.workers`` regions at once; the completing answer's
    descriptor. ``progress`` counts bytes the server acknowledged."""
    local = plan.local
    state = wire.ChunkedUpload(
        local.size,
        plan.filename,
        range_size=plan.range_size,
        workers=plan.workers,
        secrets=wire.query_values(url),
    )

    async def exchange(request: wire.ChunkRequest, connection: Connection | None = None) -> None:
        stream = None
        if plan.ranges is not None and request.length:
            stream = await plan.ranges(request.first, request.length)
        region = FileRegion(
            path=local.path,
            file_size=local.size,
            offset=request.first,
            length=request.length,
            stream=stream,
        )
        try:
            resp = await transport.upload(
                url,
                request.headers,
                region,
                timeouts,
                read_size=plan.read_size,
                connection=connection,
            )
        finally:
            getattr(stream, "close", _nothing)()
        state.absorb(resp.status, resp.headers, resp.body)
        if plan.progress is not None:
            plan.progress(state.acknowledged, local.size)

    async def ask(_: int = 1) -> None:
        await exchange(state.ask())

    async def send_range(first: int, length: int, kept: Connection, attempt: int) -> None:
        if state.ask_first(attempt):
            await exchange(state.ask(), kept)
            if not state.still_needed(first, length):
                return
        await exchange(state.send(first, length), kept)

    async def worker(start: int, end: int) -> None:
        kept = Connection()  # one connection per worker, reused range after range
        try:
            for first, length in state.pending(start, end):
                await retrying(
                    policy,
                    functools.partial(send_range, first, length, kept),
                    idempotent=True,
                    what=f"upload range {first}-{first + length - 1}",
                )
        finally:
            kept.close()

    if resume:
        await retrying(policy, ask, idempotent=True, what="ask held ranges")
    if not state.done:
        await _run_regions(state, worker)
    if not state.done:
        # every range was acknowledged with 202 but none completed: ask once more
        await retrying(policy, ask, idempotent=True, what="ask held ranges")
    return state.descriptor


async def _run_regions(
    state: wire.ChunkedUpload, worker: Callable[[int, int], Coroutine[Any, Any, None]]
) -> None:
    """One ``worker`` per region of ``state``, all at once."""
    try:
        async with asyncio.TaskGroup() as group:
            for start, end in state.regions():
                group.create_task(worker(start, end))
    except BaseExceptionGroup as group_error:
        # One range failed for good: the others were cancelled. Raise that failure
        # itself, not the group (callers catch VidapiError).
        raise _first_error(group_error) from None


def _nothing() -> None:
    pass


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first
