"""``client.uploads``: an upload address, a file or any source sent single-shot or
chunked, a remote URL streamed through, an upload's progress. The settings these read
(``read_size``, ``range_size``, ...) are the client's, held in one ``UploadSettings``
that the client and this namespace share."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .. import _protocol as wire
from .. import _validate as check
from .._alias import deprecated
from .._config import ProgressCallback
from .._convert import structure
from .._errors import FileChangedError, InvalidArgumentError, UsageError
from .._models import UploadedFile, UploadProgress, UploadSession
from .._observe import SOURCE_SIZE, describe, operation, upload_log
from .._requester import Requester
from .._resources.service import Service
from .._retry import retrying
from .._s3 import S3Object, s3_source, upload_object
from .digest import HashSink, compare_hash
from .files import LocalFile, inspect_file
from .sending import UploadPlan, send_chunked, send_single_shot
from .sources import (
    DEFAULT_NAME,
    AsyncIterStream,
    SourcePolicy,
    Stream,
    UploadSource,
    open_source,
    spool_async,
)

if TYPE_CHECKING:
    from .._dialects.dialect import Dialect

__all__ = ["UploadSettings", "Uploads"]


class UploadSettings:
    """The client's upload settings (``Client.read_size`` and the others read and write
    these): one object the client and ``client.uploads`` share."""

    __slots__ = ("chunked_threshold", "max_source_size", "range_size", "read_size", "source_policy")

    def __init__(
        self,
        *,
        read_size: int,
        range_size: int,
        chunked_threshold: int | None,
        source_policy: SourcePolicy,
        max_source_size: int,
    ) -> None:
        self.read_size = read_size
        self.range_size = range_size
        self.chunked_threshold = chunked_threshold
        self.source_policy = source_policy
        self.max_source_size = max_source_size


class Uploads(Service):
    """Uploads: an address (``get_session``), a file or any source (``file``), a remote
    file streamed through (``from_url``), an upload's progress (``get_progress``).
    Sizes and limits default to the client's (``Client.read_size``, ...)."""

    def __init__(self, requester: Requester, dialect: Dialect, settings: UploadSettings) -> None:
        super().__init__(requester, dialect)
        self._settings = settings

    @operation("get_upload_session")
    async def get_session(self) -> UploadSession:
        """``GET /file/upload`` (v2: ``POST /files/upload_sessions``): a one-time
        address to upload one file to."""
        return await self._dialect.upload_session(self._requester)

    @operation("get_upload_progress")
    async def get_progress(self, upload: UploadSession | str) -> UploadProgress:
        """``GET progress_url``: the state of an upload (no token is sent there)."""
        url = upload.progress_url if isinstance(upload, UploadSession) else upload
        url = self._requester.server_url(url, "progress_url")
        request = wire.Request("GET", url, authenticated=False, exact_url=True)
        return structure(
            await self._requester.call(request), UploadProgress, what="GET progress_url"
        )

    @operation("upload_file")
    async def file(
        self,
        source: UploadSource | S3Object | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        size: int | None = None,
        upload_session: UploadSession | None = None,
        progress: ProgressCallback | None = None,
        read_size: int | None = None,
        range_size: int | None = None,
        filename: str | None = None,
        chunked: bool | None = None,
        workers: int = 4,
        resume: bool = False,
        chunk_size: int | None = None,
        verify_hash: bool = False,
    ) -> UploadedFile:
        """Stream a file (or any source) to an upload address and return the server's
        descriptor.

        ``source`` is a path (``path=`` also works), ``bytes``/``bytearray``/
        ``memoryview``, a binary file object (seekable or not), an async iterable of
        ``bytes``, or an object of an S3-compatible store (``S3Object``, or the text
        ``s3://bucket/key``; the ``s3`` extra). ``size`` is how many bytes it holds:
        needed to stream a non-seekable one straight through; without it the source is
        first copied to a temporary file (memory: one piece), as it is when it goes
        chunked. A source that yields
        more or fewer bytes than ``size`` raises ``FileChangedError`` and the server
        never completes it. A failed attempt re-reads a seekable source; a one-pass
        source that failed part-way raises ``NotRewindableError`` rather than retrying.
        A source without a name is sent as ``upload`` unless ``filename`` says.

        Asks for an address first unless ``upload_session`` is given. ``filename`` is the
        name the server sees (default: the file's own name; any Unicode is fine).
        ``read_size`` (default ``Client.read_size``, 1 MiB) is how much is read from
        disk at a time, in either mode.

        The mode: ``chunked=None`` (default) sends files of ``Client.chunked_threshold``
        bytes or more (64 MiB) through the chunked protocol, smaller ones single-shot;
        ``chunked=True`` or ``False`` forces one.

        Single-shot: one multipart POST (part ``file``) with an exact
        Content-Length. ``progress(sent, total)`` counts bytes handed to the connection.
        A failed attempt is retried per ``Client.retry`` with the body re-read from the
        file and a fresh upload address, as the platform documents.

        ``chunked=True``: the platform's chunked protocol, ``workers`` ranges in flight
        at once, each ``range_size`` bytes (default ``Client.range_size``, 4 MiB), each
        retried alone; ``progress`` counts bytes the server has acknowledged.
        ``resume=True`` (with the ``upload_session`` of an interrupted upload) first
        asks the server which ranges it holds and sends only the rest.

        ``verify_hash=True``: the upload thread computes the SHA-1 of the bytes as it
        sends them (no second read of the file) and compares it with the descriptor's
        ``hash``; a difference warns (``HashMismatchWarning``), never fails, since the
        platform does not name its algorithm. A verified upload goes single-shot
        (chunked ranges go out in parallel, out of order): with ``chunked=True`` it is
        an ``InvalidArgumentError``.

        ``chunk_size`` is deprecated: it meant ``read_size`` in single-shot mode and
        ``range_size`` in chunked mode, and still does.
        """
        self._requester.check_open()
        source, options = _file_options(
            source,
            path=path,
            upload_session=upload_session,
            progress=progress,
            read_size=read_size,
            range_size=range_size,
            filename=filename,
            chunked=chunked,
            workers=workers,
            resume=resume,
            chunk_size=chunk_size,
            verify_hash=verify_hash,
        )
        return await self._send_source(source, size, options)

    async def _send_source(
        self, source: UploadSource | S3Object, size: int | None, options: dict[str, Any]
    ) -> UploadedFile:
        """``file`` once its arguments are checked: a path read as it is, any other
        source opened (spooled to a temporary file where it must be)."""
        obj = s3_source(source)
        if obj is not None:  # an object of an S3-compatible store (the s3 extra)
            if size is not None:
                raise InvalidArgumentError("size", "an object's size is read from the store")
            return await upload_object(self, obj, options)  # type: ignore[no-any-return]
        if isinstance(source, str | os.PathLike):
            if size is not None:
                raise InvalidArgumentError("size", "a file's size is read from the file")
            local = await asyncio.to_thread(inspect_file, source)
            describe(self._requester, SOURCE_SIZE, local.size)
            return await self._send_file(local, **options)
        opened = await open_source(source, size, asyncio.get_running_loop())
        options["filename"] = options["filename"] or opened.name
        describe(self._requester, SOURCE_SIZE, opened.size)  # counted, when spooled
        if opened.spooled is not None:  # its size was not known: a temporary file
            try:
                return await self._send_file(opened.spooled, **options)
            finally:
                await asyncio.to_thread(_unlink, opened.spooled.path)
        assert opened.stream is not None
        chunked = options["chunked"]
        if chunked or (chunked is None and self.chunks(opened.size)):
            # The chunked protocol sends ranges in parallel: from a file.
            path_, spooled = await spool_async(opened.stream)
            try:
                _check_spooled(opened.name, opened.size, spooled)
                return await self._send_file(LocalFile(path_, opened.size), **options)
            finally:
                await asyncio.to_thread(_unlink, path_)
        options["chunked"] = False
        return await self._send_file(
            LocalFile(opened.name, opened.size), stream=opened.stream, **options
        )

    @operation("upload_from_url")
    async def from_url(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        filename: str | None = None,
        upload_session: UploadSession | None = None,
        progress: ProgressCallback | None = None,
        read_size: int | None = None,
        max_source_size: int | None = None,
    ) -> UploadedFile:
        """Stream a remote http(s) file through to an upload address, without a disk.

        The source's body goes straight into the upload, ``read_size`` bytes at a time
        (memory stays flat whatever its size); its Content-Length is the upload's.
        ``headers`` (a source's credentials) go to the source only; the API's token is
        never sent there. A source that gives no Content-Length is first copied to a
        temporary file. A failed attempt asks the source again, from its first byte.
        ``filename`` defaults to the last segment of the url's path.

        Every request to the source (each redirect's included) is checked against
        ``Client.source_policy`` on the address it connects to; the source is read
        within ``Timeouts.source_idle`` and ``source_total``, and at most
        ``max_source_size`` bytes (default ``Client.max_source_size``). A refusal or a
        limit reached is a ``SourceError``; nothing is sent to the platform then (or,
        streaming, the upload is abandoned unfinished).
        """
        self._requester.check_open()
        source = check.http_url(url, "url")
        given = _source_headers(headers)
        check.callback(progress, "progress")
        name = filename or wire.url_file_name(source) or DEFAULT_NAME
        piece = (
            self._settings.read_size
            if read_size is None
            else check.positive_int(read_size, "read_size")
        )
        cap = self._settings.max_source_size
        if max_source_size is not None:
            cap = check.positive_int(max_source_size, "max_source_size")
        relay = _Relay(source, given, name, piece, cap, progress, asyncio.get_running_loop())

        async def attempt(n: int) -> UploadedFile:
            return await self._relay(relay, upload_session if n == 1 else None)

        return await retrying(
            self._requester.retry, attempt, idempotent=True, what=f"upload of {name}"
        )

    async def _relay(self, relay: _Relay, upload_session: UploadSession | None) -> UploadedFile:
        """One attempt of ``from_url``: the source asked from its first byte, its body
        streamed into the upload (or, of an unknown size, spooled first)."""
        async with self._requester.transport.download(
            relay.source,
            relay.headers,
            self._requester.timeouts,
            relay.piece,
            policy=self._settings.source_policy,
            max_size=relay.cap,
        ) as (length, chunks, _):
            stream = AsyncIterStream(chunks, relay.name, relay.loop)
            if length is None:  # unknown size: the chunked protocol needs it
                spooled, size = await spool_async(stream)
                try:
                    return await self._send_file(
                        LocalFile(spooled, size),
                        filename=relay.name,
                        progress=relay.progress,
                        read_size=relay.piece,
                        chunked=None,
                    )
                finally:
                    await asyncio.to_thread(_unlink, spooled)
            session = upload_session or await self.get_session()
            plan = UploadPlan(
                local=LocalFile(relay.name, length),
                filename=relay.name,
                read_size=relay.piece,
                range_size=self._settings.range_size,
                workers=1,
                progress=relay.progress,
                stream=stream,
            )
            target = self._requester.server_url(session.upload_url, "upload_url")
            data = await send_single_shot(
                self._requester.transport, self._requester.timeouts, target, plan
            )
            return structure(data, UploadedFile, what="upload response", status=200)

    def chunks(self, size: int) -> bool:
        """Whether a file of ``size`` bytes goes chunked when no mode is asked for."""
        threshold = self._settings.chunked_threshold
        return threshold is not None and size >= threshold

    async def _send_file(
        self,
        local: LocalFile,
        *,
        upload_session: UploadSession | None = None,
        progress: ProgressCallback | None = None,
        read_size: int | None = None,
        range_size: int | None = None,
        filename: str | None = None,
        chunked: bool | None = False,
        workers: int = 1,
        resume: bool = False,
        stream: Stream | None = None,
        digest: HashSink | None = None,
        parts: Callable[[int, int], Awaitable[Stream]] | None = None,
    ) -> UploadedFile:
        """``upload_file`` for a file already checked (the batch checks it once), or
        for a stream of ``local.size`` bytes named ``local.path``; with ``digest``, the
        bytes sent are hashed and compared with the descriptor's ``hash``."""
        self._requester.check_open()
        if chunked is None:
            chunked = self.chunks(local.size)
        reads = self._settings.read_size if read_size is None else read_size
        ranges = self._settings.range_size if range_size is None else range_size
        check.positive_int(reads, "read_size")
        check.positive_int(ranges, "range_size")
        check.positive_int(workers, "workers")
        plan = UploadPlan(
            local=local,
            filename=filename or os.path.basename(local.path),
            read_size=reads,
            range_size=ranges,
            workers=workers,
            progress=progress,
            stream=stream,
            digest=digest,
            ranges=parts,
        )
        started = time.perf_counter()
        upload_log.info(
            "upload of %s started: %s, %d bytes",
            plan.filename,
            f"chunked, {workers} worker(s)" if chunked else "single request",
            local.size,
        )
        if chunked:
            session = upload_session or await self.get_session()
            url = self._requester.server_url(session.upload_url, "upload_url")
            data = await send_chunked(
                self._requester.transport,
                self._requester.timeouts,
                url,
                plan,
                policy=self._requester.retry,
                resume=resume,
            )
            _log_end(plan.filename, local.size, started)
            return structure(data, UploadedFile, what="upload response", status=200)

        async def attempt(n: int) -> UploadedFile:
            session = upload_session if n == 1 and upload_session else None
            session = session or await self.get_session()
            url = self._requester.server_url(session.upload_url, "upload_url")
            data = await send_single_shot(
                self._requester.transport, self._requester.timeouts, url, plan
            )
            return structure(data, UploadedFile, what="upload response", status=200)

        uploaded = await retrying(
            self._requester.retry, attempt, idempotent=True, what=f"upload of {plan.filename}"
        )
        if digest is not None:
            compare_hash(uploaded, digest, plan.filename)
        _log_end(plan.filename, local.size, started)
        return uploaded


def _log_end(name: str, size: int, started: float) -> None:
    seconds = time.perf_counter() - started
    rate = size / seconds / 1e6 if seconds > 0 else 0.0
    upload_log.info("upload of %s done: %d bytes in %.2fs (%.1f MB/s)", name, size, seconds, rate)


def _check_spooled(name: str, expected: int, got: int) -> None:
    if got != expected:
        raise FileChangedError(name, expected, f"the source held {got} bytes")


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


@attrs.frozen
class _Relay:
    """What every attempt of ``from_url`` reads: the source (its headers), the name,
    the piece read at a time, the size limit, the progress callback, the loop."""

    source: str
    headers: Mapping[str, str]
    name: str
    piece: int
    cap: int
    progress: ProgressCallback | None
    loop: asyncio.AbstractEventLoop


def _source_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``from_url``'s ``headers`` (the source's credentials), checked."""
    if headers is not None and not isinstance(headers, Mapping):
        raise InvalidArgumentError("headers", "expected a mapping of strings")
    given = dict(headers or {})
    for key, value in given.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgumentError("headers", "keys and values must be strings")
    return given


def _file_options(
    source: UploadSource | S3Object | None,
    *,
    path: str | os.PathLike[str] | None,
    upload_session: UploadSession | None,
    progress: ProgressCallback | None,
    read_size: int | None,
    range_size: int | None,
    filename: str | None,
    chunked: bool | None,
    workers: int,
    resume: bool,
    chunk_size: int | None,
    verify_hash: bool,
) -> tuple[UploadSource | S3Object, dict[str, Any]]:
    """``Uploads.file``'s arguments checked, before anything is read or sent: the
    source, and the options of ``_send_file`` (the mode settled where the arguments
    decide it)."""
    if upload_session is not None and not isinstance(upload_session, UploadSession):
        raise InvalidArgumentError("upload_session", "expected an UploadSession")
    check.callback(progress, "progress")
    if chunk_size is not None:
        deprecated("upload_file(chunk_size=)", "read_size= or range_size=")
        if chunked:
            range_size = range_size or chunk_size
        else:
            read_size = read_size or chunk_size
    if filename is not None and (not isinstance(filename, str) or not filename.strip()):
        raise InvalidArgumentError("filename", "must be a non-empty string")
    if resume and (upload_session is None or chunked is False):
        raise InvalidArgumentError(
            "resume", "needs chunked=True and the upload_session of the upload to resume"
        )
    if resume:
        chunked = True
    if not isinstance(verify_hash, bool):
        raise InvalidArgumentError("verify_hash", "expected True or False")
    if verify_hash and chunked:
        raise InvalidArgumentError(
            "verify_hash", "goes with single-shot uploads: chunked ranges go out in parallel"
        )
    if verify_hash:
        chunked = False
    if path is not None:
        if source is not None:
            raise UsageError("give the source once: positionally or as path=")
        source = path
    if source is None:
        raise UsageError("upload_file needs a source: a path, bytes, a file or chunks")
    options: dict[str, Any] = {
        "upload_session": upload_session,
        "progress": progress,
        "read_size": read_size,
        "range_size": range_size,
        "filename": filename,
        "chunked": chunked,
        "workers": workers,
        "resume": resume,
        "digest": HashSink() if verify_hash else None,
    }
    return source, options
