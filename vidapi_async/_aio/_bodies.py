"""Request bodies streamed from a file on disk.

A body is a *description* (path, region, the bytes around it) and is turned into bytes
only while aiohttp writes it, one chunk at a time, each read in a worker thread so the
event loop never waits on the disk. Nothing holds a consumed stream: writing the same
``FileBody`` again re-opens the file, so a retry sends the same bytes.

The size is known before a byte is read, so aiohttp sends an exact Content-Length and
never chunked transfer encoding (which nginx-style upload servers refuse). A file that
turns out shorter or longer than its size at the start raises ``FileChangedError``
instead of sending a body that disagrees with its Content-Length.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import IO

from aiohttp.abc import AbstractStreamWriter
from aiohttp.payload import Payload

from .._config import ProgressCallback
from .._errors import FileChangedError
from ._compat import count_sent, sendfile_transport

__all__ = ["FileBody", "SendBudget"]

WRITE_SLICE = 128 * 1024
"""Bytes handed to the connection at a time when the file is read, not sendfile'd."""


class SendBudget:
    """How many file bodies are being sent at once through one transport, and so
    whether reading ahead is worth its memory. Owned by a ``Transport``: two clients
    never share it, and nothing process-wide changes."""

    def __init__(self, max_read_ahead: int = 4) -> None:
        self.max_read_ahead = max_read_ahead
        """Read ahead only while at most this many bodies are being sent: a lone upload
        keeps its socket busy that way, while many concurrent uploads overlap each
        other's reads anyway, and each prefetched chunk is memory (64 uploads: +64)."""
        self.active = 0

    def worth_reading_ahead(self) -> bool:
        return self.active <= self.max_read_ahead


class _ReadAhead:
    """Reads of one open file in a worker thread, at most one ahead of the sender.

    ``close`` never waits: a read still in flight closes the file when it ends, so a
    cancelled upload cannot close a file under a thread that is reading it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, f: IO[bytes], budget: SendBudget) -> None:
        self._loop = loop
        self._f = f
        self._next: asyncio.Future[bytes] | None = None
        self._budget = budget
        budget.active += 1
        self._counted = True

    def worth_it(self) -> bool:
        return self._budget.worth_reading_ahead()

    def prefetch(self, size: int) -> None:
        self._next = self._loop.run_in_executor(None, self._f.read, size)

    async def take(self, size: int) -> bytes:
        pending, self._next = self._next, None
        return await (pending or self._loop.run_in_executor(None, self._f.read, size))

    def close(self) -> None:
        if self._counted:
            self._budget.active -= 1
            self._counted = False
        pending, self._next = self._next, None
        if pending is None or pending.done():
            if pending is not None and not pending.cancelled():
                pending.exception()  # retrieved: never "exception was never retrieved"
            self._f.close()
            return

        def close_after(fut: asyncio.Future[bytes]) -> None:
            if not fut.cancelled():
                fut.exception()
            self._f.close()

        pending.add_done_callback(close_after)


class FileBody(Payload):
    """``length`` bytes of ``path`` from ``offset``, between ``head`` and ``tail``.

    ``file_size`` is the whole file's size when the body was built; the file must still
    have it when read. ``progress`` is called after each chunk with the bytes of this
    body's region sent so far (plus ``progress_base``) and ``progress_total``.

    ``read_size`` bytes are read (or sendfile'd) at a time. ``sendfile``: send the file
    region with ``sendfile(2)`` on plain-TCP connections (else, and on TLS, chunks are
    read in a worker thread). ``budget`` is the transport's count of bodies in flight.
    """

    _autoclose = True  # nothing is held open between writes

    def __init__(
        self,
        path: str,
        *,
        file_size: int,
        offset: int = 0,
        length: int | None = None,
        head: bytes = b"",
        tail: bytes = b"",
        read_size: int = 1024 * 1024,
        content_type: str = "application/octet-stream",
        progress: ProgressCallback | None = None,
        progress_base: int = 0,
        progress_total: int | None = None,
        sendfile: bool = True,
        budget: SendBudget | None = None,
    ) -> None:
        super().__init__(path, content_type=content_type)
        self._path = path
        self._file_size = file_size
        self._offset = offset
        self._length = file_size - offset if length is None else length
        self._head = head
        self._tail = tail
        self._read_size = read_size
        self._use_sendfile = sendfile
        self._budget = budget or SendBudget()
        self._progress = progress
        self._progress_base = progress_base
        self._progress_total = file_size if progress_total is None else progress_total
        self._size = len(head) + self._length + len(tail)
        self.on_written: Callable[[], None] | None = None
        """Called once the last byte is handed to the connection (the transport starts
        the clock on the answer then)."""
        self.error: Exception | None = None
        """Set when the file changed under us (``FileChangedError``) or the progress
        callback raised: aiohttp wraps what ``write`` raises, so the caller looks here
        to raise the real reason."""

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        raise TypeError("a FileBody is streamed from disk, not decoded into memory")

    async def write(self, writer: AbstractStreamWriter) -> None:
        await self.write_with_length(writer, None)

    async def write_with_length(
        self, writer: AbstractStreamWriter, content_length: int | None
    ) -> None:
        loop = asyncio.get_running_loop()
        f: IO[bytes] = await loop.run_in_executor(None, self._open)
        reader = _ReadAhead(loop, f, self._budget)
        try:
            await writer.write(self._head)
            transport = sendfile_transport(writer) if self._use_sendfile else None
            sent = 0
            while sent < self._length:
                want = min(self._read_size, self._length - sent)
                if transport is not None:
                    try:
                        got = await self._sendfile(loop, transport, writer, f, sent, want)
                    except asyncio.SendfileNotAvailableError:
                        transport = None  # e.g. uvloop: read and write instead
                        continue
                else:
                    chunk = await reader.take(want)
                    got = len(chunk)
                    if got == want and sent + got < self._length and reader.worth_it():
                        # read the next chunk while this one goes out
                        reader.prefetch(min(self._read_size, self._length - sent - got))
                    # With many bodies in flight, in slices: the transport copies what
                    # the socket cannot take at once, so a whole chunk would sit in
                    # memory twice. A lone body writes whole chunks: fewer, faster calls.
                    step = max(1, got) if reader.worth_it() else WRITE_SLICE
                    view = memoryview(chunk)
                    for start in range(0, got, step):
                        await writer.write(view[start : start + step])
                if got < want:
                    self._fail(f"the file shrank: it ended after {self._offset + sent + got} bytes")
                sent += got
                if self._progress is not None:
                    try:
                        self._progress(self._progress_base + sent, self._progress_total)
                    except Exception as exc:
                        self.error = exc  # the caller's own error, not a network one
                        raise
            if self._offset + self._length == self._file_size:
                now = await loop.run_in_executor(None, os.fstat, f.fileno())
                if now.st_size != self._file_size:
                    self._fail(f"the file grew to {now.st_size} bytes while it was sent")
            await writer.write(self._tail)
            if self.on_written is not None:
                self.on_written()
        finally:
            reader.close()

    async def _sendfile(
        self,
        loop: asyncio.AbstractEventLoop,
        transport: asyncio.Transport,
        writer: AbstractStreamWriter,
        f: IO[bytes],
        sent: int,
        want: int,
    ) -> int:
        """The kernel copies file to socket: no read into Python, no executor hop."""
        got = await loop.sendfile(transport, f, self._offset + sent, want, fallback=False)
        count_sent(writer, got)
        f.seek(self._offset + sent + got)
        return got

    def _open(self) -> IO[bytes]:
        f = open(self._path, "rb")  # noqa: SIM115 - closed by write_with_length
        try:
            size = os.fstat(f.fileno()).st_size
            if size != self._file_size:
                self._fail(f"the file is now {size} bytes")
            f.seek(self._offset)
        except BaseException:
            f.close()
            raise
        return f

    def _fail(self, message: str) -> None:
        self.error = FileChangedError(self._path, self._file_size, message)
        raise self.error
