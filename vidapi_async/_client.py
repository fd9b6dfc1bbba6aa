"""``Client``: every operation of the API, as coroutines returning typed models."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import ssl as ssl_module
import urllib.request
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from . import _protocol as wire
from . import _validate as check
from ._account import AccountCalls
from ._aio import Transport, api_timeout
from ._auth import StaticToken, TokenProvider
from ._config import (
    DEFAULT_CHUNKED_THRESHOLD,
    DEFAULT_RANGE_SIZE,
    DEFAULT_READ_SIZE,
    ProgressCallback,
    Timeouts,
)
from ._convert import structure
from ._digest import HashSink, compare_hash
from ._errors import (
    ClientClosedError,
    EncodingError,
    FileChangedError,
    InsufficientScopeError,
    InvalidArgumentError,
    InvalidTokenError,
    ReadyTimeoutError,
    UsageError,
)
from ._fields import LIVE_FIELDS, SUBTITLE_FIELDS, VIDEO_FIELDS
from ._files import LocalFile, check_srt_file, inspect_file
from ._limits import Bandwidth, RequestRate
from ._models import AccessToken, Subtitle, UploadedFile, UploadProgress, UploadSession, Video
from ._players import Players
from ._playlists import Playlists
from ._raw import RawCalls, iter_pages
from ._retry import RetryPolicy, create_checked, retrying
from ._sources import DEFAULT_NAME, AsyncIterStream, Stream, UploadSource, open_source, spool
from ._uploads import UploadPlan, send_chunked, send_single_shot
from ._webhooks import WebhookEvents

if TYPE_CHECKING:
    import aiohttp

__all__ = ["DEFAULT_BASE_URL", "Client"]

log = logging.getLogger("vidapi_async")

DEFAULT_BASE_URL: Final = "https://api.dailymotion.com"
LARGE_ANSWER_BYTES: Final = 256 * 1024
"""Answers larger than this are decoded in a worker thread (16 MiB of JSON: 0.2 s)."""
_UNSET: Final = object()
"""Not given (where ``None`` would mean something)."""


class Client(RawCalls, AccountCalls):
    """An asyncio client of the platform's API.

    Give it a token (``access_token="..."``) or a provider (``auth=OAuth....``), and
    optionally your own ``aiohttp.ClientSession``, which is then used and never closed.
    ``ssl`` (an ``ssl.SSLContext``) is the trust for every connection the client's own
    session makes, API and uploads alike; with ``session=``, that session's connector
    decides (``aiohttp.TCPConnector(ssl=context)``).
    Use it as ``async with Client(...) as client:`` or call ``await client.close()``.
    A closed client cannot be reopened.

    The bearer token is sent only to ``base_url``'s origin (scheme, host and port); the
    upload server is authorised by the seal in its address and never sees it.
    """

    def __init__(
        self,
        access_token: str | None = None,
        *,
        auth: TokenProvider | None = None,
        scopes: Iterable[str] | None = None,
        base_url: str = DEFAULT_BASE_URL,
        session: aiohttp.ClientSession | None = None,
        timeouts: Timeouts | None = None,
        read_size: int = DEFAULT_READ_SIZE,
        range_size: int = DEFAULT_RANGE_SIZE,
        connection_limit: int | object = _UNSET,
        retry: RetryPolicy | None = None,
        ssl: ssl_module.SSLContext | None = None,
        sendfile: bool = True,
        proxy: str | None = None,
        trust_env: bool = True,
        chunked_threshold: int | None = DEFAULT_CHUNKED_THRESHOLD,
        max_requests_per_second: float | None = None,
        max_bandwidth: int | None = None,
        chunk_size: int | object = _UNSET,
    ) -> None:
        if (access_token is None) == (auth is None):
            raise UsageError("give exactly one of access_token= or auth=")
        if auth is None:
            auth = StaticToken(access_token or "", scopes)
        elif scopes is not None:
            raise UsageError("scopes= goes with access_token=; a provider knows its scopes")
        if not isinstance(auth, TokenProvider):
            raise InvalidArgumentError("auth", "expected a TokenProvider such as OAuth(...)")
        self.base_url = check.base_url(base_url)
        self._auth = auth
        if ssl is not None and not isinstance(ssl, ssl_module.SSLContext):
            raise InvalidArgumentError("ssl", "expected an ssl.SSLContext")
        if ssl is not None and session is not None:
            raise UsageError(
                "ssl= goes with the client's own session; with session=, give the trust to "
                "that session's connector: aiohttp.TCPConnector(ssl=context)"
            )
        if connection_limit is not _UNSET and session is not None:
            raise UsageError(
                "connection_limit= goes with the client's own session; with session=, "
                "the limit is that session's connector's (aiohttp.TCPConnector(limit=N))"
            )
        limit = 100 if connection_limit is _UNSET else connection_limit
        self._transport = Transport(
            session,
            limit=check.positive_int(limit, "connection_limit"),
            ssl=ssl,
            sendfile=_bool("sendfile", sendfile),
            proxies=_proxies(proxy, _bool("trust_env", trust_env), session),
            rate=None
            if max_requests_per_second is None
            else RequestRate(
                check.positive_number(max_requests_per_second, "max_requests_per_second")
            ),
            bandwidth=None
            if max_bandwidth is None
            else Bandwidth(check.positive_int(max_bandwidth, "max_bandwidth")),
        )
        self.timeouts = timeouts or Timeouts()
        if chunk_size is not _UNSET:
            _deprecated("Client(chunk_size=)", "read_size=")
            read_size = check.positive_int(chunk_size, "chunk_size")
        self.read_size = check.positive_int(read_size, "read_size")
        self.chunked_threshold = (
            None
            if chunked_threshold is None
            else check.positive_int(chunked_threshold, "chunked_threshold")
        )
        """Files of at least this many bytes go through the chunked protocol (resumable)
        unless ``upload_file(chunked=...)`` says otherwise; ``None``: never by size."""
        """Bytes read from disk (or sendfile'd) at a time while a file is sent."""
        self.range_size = check.positive_int(range_size, "range_size")
        """Bytes per request of the chunked protocol."""
        self.retry = RetryPolicy() if retry is None else retry
        """How failed requests are retried (``NO_RETRY`` to never retry)."""
        self._closed = False
        self._token: AccessToken | None = None
        self._origin = wire.origin(self.base_url)
        self._https = self._origin[0] == "https"

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Client {self.base_url} {state}>"

    async def __aenter__(self) -> Client:
        self._check_open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the session if this client created it. Idempotent."""
        self._closed = True
        await self._transport.close()

    @property
    def closed(self) -> bool:
        return self._closed

    @functools.cached_property
    def playlists(self) -> Playlists:
        """Playlists: ``create``, ``get``, ``update``, ``delete``, ``mine``, ``videos``,
        ``add_video``, ``remove_video`` (scope ``manage_playlists``)."""
        return Playlists(self)

    @functools.cached_property
    def players(self) -> Players:
        """Players (Player IDs of the embeds): ``create``, ``get``, ``update``,
        ``delete``, ``mine`` (scope ``manage_players``)."""
        return Players(self)

    @property
    def chunk_size(self) -> int:
        """Deprecated: ``read_size``."""
        _deprecated("Client.chunk_size", "Client.read_size")
        return self.read_size

    @property
    def connection_limit(self) -> int | None:
        """How many connections the session may open at once (``None``: no limit)."""
        return self._transport.limit

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("this Client is closed; create a new one")

    @property
    def token_url(self) -> str:
        url = getattr(self._auth, "token_url", None)
        return url if isinstance(url, str) else f"{self.base_url}/oauth/token"

    # --- the request cycle --------------------------------------------------------------

    async def _post_token_form(
        self, url: str, fields: tuple[tuple[str, str], ...]
    ) -> Mapping[str, Any]:
        request = wire.Request("POST", url, form=fields, authenticated=False, idempotent=False)
        resp = await self._transport.send(
            "POST",
            url,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            data=request.encoded_form(),
            timeout=api_timeout(self.timeouts),
        )
        # A token endpoint may echo the form: every credential in it is masked.
        secrets = [v for k, v in fields if k in wire.SECRET_FORM_FIELDS]
        return wire.decode_oauth_response(
            request, resp.status, resp.headers, resp.body, secrets=secrets
        )

    async def access_token(self) -> AccessToken:
        """The token in use (fetched or refreshed if needed). Its repr hides the token."""
        self._check_open()
        self._token = await self._auth.get_token(self._post_token_form, self.token_url)
        return self._token

    def _check_scope(self, request: wire.Request, token: AccessToken) -> None:
        if request.scope and token.scopes is not None and request.scope not in token.scopes:
            raise InsufficientScopeError(
                f"{request.what} needs scope {request.scope!r}; the token has "
                f"{', '.join(sorted(token.scopes)) or 'none'} (checked before sending)",
                scope=request.scope,
                status=None,
            )

    async def _call(self, request: wire.Request) -> Mapping[str, Any]:
        """Send an API request, retried as ``self.retry`` and ``request.idempotent`` allow."""
        self._check_open()
        return await retrying(
            self.retry,
            lambda _: self._call_once(request),
            idempotent=request.idempotent,
            what=request.what,
        )

    async def _call_once(self, request: wire.Request) -> Mapping[str, Any]:
        """Send an API request with the token and decode the answer; on a 401
        invalid_token from a provider that can get a new token, try once more."""
        self._check_open()
        for attempt in (1, 2):
            token = await self.access_token()
            self._check_scope(request, token)
            headers = request.headers(token.token, self._origin)
            body = request.encoded_form()
            log.debug("%s", request.what)
            resp = await self._transport.send(
                request.method,
                request.url,
                headers=headers,
                data=body,
                timeout=api_timeout(self.timeouts),
                exact_url=request.exact_url,
            )
            decode = functools.partial(
                wire.decode_api_response,
                request,
                resp.status,
                resp.headers,
                resp.body,
                secrets=(token.token, *self._form_secrets(request)),
            )
            try:
                if len(resp.body) > LARGE_ANSWER_BYTES:
                    # Decoding megabytes of JSON takes a loop-blocking while: not here.
                    return await asyncio.to_thread(decode)
                return decode()
            except InvalidTokenError:
                if attempt == 2 or not self._auth.invalidate(token):
                    raise
                log.info("%s: token refused as invalid; fetching a new one", request.what)
        raise AssertionError("unreachable")

    @staticmethod
    def _form_secrets(request: wire.Request) -> Iterable[str]:
        return (v for k, v in request.form or () if k in wire.SECRET_FORM_FIELDS)

    def _server_url(self, url: object, name: str) -> str:
        """An address the server handed out, checked before anything is sent to it."""
        return check.server_url(url, name, https_only=self._https)

    def _api(self, method: str, path: str, **kw: Any) -> wire.Request:
        return wire.api_request(self.base_url, method, path, **kw)

    # --- uploads ------------------------------------------------------------------------

    async def get_upload_session(self) -> UploadSession:
        """``GET /file/upload``: a one-time address to upload one file to."""
        request = self._api("GET", "/file/upload")
        return structure(await self._call(request), UploadSession, what=request.what)

    async def get_upload_progress(self, upload: UploadSession | str) -> UploadProgress:
        """``GET progress_url``: the state of an upload (no token is sent there)."""
        url = upload.progress_url if isinstance(upload, UploadSession) else upload
        url = self._server_url(url, "progress_url")
        request = wire.Request("GET", url, authenticated=False, exact_url=True)
        return structure(await self._call(request), UploadProgress, what="GET progress_url")

    async def upload_file(
        self,
        source: UploadSource | None = None,
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
        ``memoryview``, a binary file object (seekable or not), or an async iterable of
        ``bytes``. ``size`` is how many bytes it holds: needed to stream a non-seekable
        one straight through; without it the source is first copied to a temporary
        file (memory: one piece), as it is when it goes chunked. A source that yields
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
        A failed attempt is retried per ``self.retry`` with the body re-read from the
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
        self._check_open()
        if upload_session is not None and not isinstance(upload_session, UploadSession):
            raise InvalidArgumentError("upload_session", "expected an UploadSession")
        if chunk_size is not None:
            _deprecated("upload_file(chunk_size=)", "read_size= or range_size=")
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
        if isinstance(source, str | os.PathLike):
            if size is not None:
                raise InvalidArgumentError("size", "a file's size is read from the file")
            local = await asyncio.to_thread(inspect_file, source)
            return await self._send_file(local, **options)
        opened = await open_source(source, size, asyncio.get_running_loop())
        options["filename"] = filename or opened.name
        if opened.spooled is not None:  # its size was not known: a temporary file
            try:
                return await self._send_file(opened.spooled, **options)
            finally:
                await asyncio.to_thread(_unlink, opened.spooled.path)
        assert opened.stream is not None
        if chunked or (chunked is None and self.chunks(opened.size)):
            # The chunked protocol sends ranges in parallel: from a file.
            path_, spooled = await asyncio.to_thread(spool, opened.stream)
            try:
                _check_spooled(opened.name, opened.size, spooled)
                return await self._send_file(LocalFile(path_, opened.size), **options)
            finally:
                await asyncio.to_thread(_unlink, path_)
        options["chunked"] = False
        return await self._send_file(
            LocalFile(opened.name, opened.size), stream=opened.stream, **options
        )

    async def upload_from_url(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        filename: str | None = None,
        upload_session: UploadSession | None = None,
        progress: ProgressCallback | None = None,
        read_size: int | None = None,
    ) -> UploadedFile:
        """Stream a remote http(s) file through to an upload address, without a disk.

        The source's body goes straight into the upload, ``read_size`` bytes at a time
        (memory stays flat whatever its size); its Content-Length is the upload's.
        ``headers`` (a source's credentials) go to the source only; the API's token is
        never sent there. A source that gives no Content-Length is first copied to a
        temporary file. A failed attempt asks the source again, from its first byte.
        ``filename`` defaults to the last segment of the url's path.
        """
        self._check_open()
        source = check.http_url(url, "url")
        if headers is not None and not isinstance(headers, Mapping):
            raise InvalidArgumentError("headers", "expected a mapping of strings")
        given = dict(headers or {})
        for key, value in given.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InvalidArgumentError("headers", "keys and values must be strings")
        name = filename or wire.url_file_name(source) or DEFAULT_NAME
        piece = self.read_size if read_size is None else check.positive_int(read_size, "read_size")
        loop = asyncio.get_running_loop()

        async def attempt(n: int) -> UploadedFile:
            async with self._transport.download(source, given, self.timeouts, piece) as (
                length,
                chunks,
            ):
                stream = AsyncIterStream(chunks, name, loop)
                if length is None:  # unknown size: the chunked protocol needs it
                    spooled, size = await asyncio.to_thread(spool, stream)
                    try:
                        return await self._send_file(
                            LocalFile(spooled, size),
                            filename=name,
                            progress=progress,
                            read_size=piece,
                            chunked=None,
                        )
                    finally:
                        await asyncio.to_thread(_unlink, spooled)
                session = upload_session if n == 1 and upload_session else None
                session = session or await self.get_upload_session()
                plan = UploadPlan(
                    local=LocalFile(name, length),
                    filename=name,
                    read_size=piece,
                    range_size=self.range_size,
                    workers=1,
                    progress=progress,
                    stream=stream,
                )
                target = self._server_url(session.upload_url, "upload_url")
                data = await send_single_shot(self._transport, self.timeouts, target, plan)
                return structure(data, UploadedFile, what="upload response", status=200)

        return await retrying(self.retry, attempt, idempotent=True, what=f"upload of {name}")

    def chunks(self, size: int) -> bool:
        """Whether a file of ``size`` bytes goes chunked when no mode is asked for."""
        return self.chunked_threshold is not None and size >= self.chunked_threshold

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
    ) -> UploadedFile:
        """``upload_file`` for a file already checked (the batch checks it once), or
        for a stream of ``local.size`` bytes named ``local.path``; with ``digest``, the
        bytes sent are hashed and compared with the descriptor's ``hash``."""
        self._check_open()
        if chunked is None:
            chunked = self.chunks(local.size)
        reads = self.read_size if read_size is None else read_size
        ranges = self.range_size if range_size is None else range_size
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
        )
        log.debug("upload of %s (%d bytes) started", local.path, local.size)
        if chunked:
            session = upload_session or await self.get_upload_session()
            url = self._server_url(session.upload_url, "upload_url")
            data = await send_chunked(
                self._transport, self.timeouts, url, plan, policy=self.retry, resume=resume
            )
            return structure(data, UploadedFile, what="upload response", status=200)

        async def attempt(n: int) -> UploadedFile:
            session = upload_session if n == 1 and upload_session else None
            session = session or await self.get_upload_session()
            url = self._server_url(session.upload_url, "upload_url")
            data = await send_single_shot(self._transport, self.timeouts, url, plan)
            return structure(data, UploadedFile, what="upload response", status=200)

        uploaded = await retrying(
            self.retry, attempt, idempotent=True, what=f"upload of {plan.filename}"
        )
        if digest is not None:
            compare_hash(uploaded, digest, plan.filename)
        return uploaded

    # --- videos -------------------------------------------------------------------------

    async def create_video(
        self,
        *,
        url: str,
        title: str,
        channel: str,
        published: bool = True,
        is_created_for_kids: bool = False,
        extra: Mapping[str, str] | None = None,
        dedupe_tag: str | None = None,
        password: str | None = None,
    ) -> Video:
        """``POST /me/videos``: create a video from an uploaded file's ``url``.

        ``is_created_for_kids`` is always sent: the live platform requires it.
        ``extra`` adds form fields as given (already encoded as the platform wants).
        ``password`` travels in the create itself, so the video is protected from the
        moment it exists (never public first, then protected).

        A create is retried only when it surely did not take effect (no connection, or
        a 429). With ``dedupe_tag`` (letters, digits, '-' and '_'), the video is tagged
        with it, and after a failure that leaves the outcome unknown (a timeout, a lost
        connection, a 5xx) the client looks for a video with that tag before trying
        again: it adopts the one it finds, so a video is never created twice.
        """
        if dedupe_tag is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", dedupe_tag):
            raise InvalidArgumentError("dedupe_tag", "letters, digits, '-' and '_' only")
        form = dict(extra or {})
        if password is not None:
            form["password"] = check.password(password) or ""
        if dedupe_tag is not None:
            tags = [t for t in form.get("tags", "").split(",") if t]
            form["tags"] = ",".join([*tags, dedupe_tag])
        request = self._create_request(
            url=check.http_url(url, "url"),
            title=title,
            channel=channel,
            published=published,
            is_created_for_kids=is_created_for_kids,
            extra=form,
        )
        if dedupe_tag is None:
            return structure(await self._call(request), Video, what=request.what)

        async def create() -> Video:
            return structure(await self._call_once(request), Video, what=request.what)

        async def find() -> Video | None:
            found = await self.find_videos_by_tag(dedupe_tag)
            return found[0] if found else None

        return await create_checked(self.retry, create, find, what=request.what)

    async def delete_video(self, video_id: str) -> None:
        """``DELETE /video/<id>``. Deleting a video that is already gone raises
        ``NotFoundError``."""
        request = self._api("DELETE", f"/video/{check.video_id(video_id)}", scope="manage_videos")
        await self._call(request)

    async def iter_videos(
        self, fields: Iterable[str] | str = VIDEO_FIELDS, *, page_size: int = 100
    ) -> AsyncIterator[Video]:
        """The caller's videos (``GET /me/videos``), oldest first, fetched a page at a
        time as the iteration goes (the platform's ``total`` is approximate: this pages
        on ``has_more``)."""
        names = ",".join(check.field_names(fields))
        if not 1 <= check.positive_int(page_size, "page_size") <= 100:
            raise InvalidArgumentError("page_size", "the platform pages by 1 to 100")

        def page_request(page: int) -> wire.Request:
            query = [("fields", names), ("sort", "old"), ("page", str(page))]
            return self._api("GET", "/me/videos", query=[*query, ("limit", str(page_size))])

        # The shared page loop: an empty page ends it; a repeated page is an error.
        async for request, item in iter_pages(self._call, page_request):
            yield structure(item, Video, what=request.what)

    async def find_videos_by_tag(self, tag: str) -> list[Video]:
        """``GET /me/videos?tags=<tag>``: the caller's videos carrying ``tag``, oldest
        first (at most 100)."""
        if not isinstance(tag, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", tag):
            raise InvalidArgumentError("tag", "letters, digits, '-' and '_' only")
        request = self._api(
            "GET",
            "/me/videos",
            query=[
                ("tags", tag),
                ("fields", ",".join(VIDEO_FIELDS)),
                ("sort", "old"),
                ("limit", "100"),
            ],
        )
        data = await self._call(request)
        items = data.get("list")
        return [
            structure(item, Video, what=request.what)
            for item in (items if isinstance(items, list) else [])
        ]

    def _create_request(
        self,
        *,
        title: str,
        channel: str,
        published: bool,
        is_created_for_kids: bool,
        url: str | None = None,
        extra: Mapping[str, str] | None = None,
        fields: Sequence[str] = VIDEO_FIELDS,
        scope: str | None = None,
    ) -> wire.Request:
        form: list[tuple[str, str]] = [] if url is None else [("url", url)]
        form += [
            ("title", check.title(title)),
            ("channel", check.channel(channel)),
            ("published", wire.form_value(_bool("published", published))),
            (
                "is_created_for_kids",
                wire.form_value(_bool("is_created_for_kids", is_created_for_kids)),
            ),
        ]
        for key, value in (extra or {}).items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InvalidArgumentError("extra", "keys and values must be strings")
            form.append((key, value))
        return self._api(
            "POST",
            "/me/videos",
            query=[("fields", ",".join(fields))],
            form=form,
            scope=scope,
            idempotent=False,
        )

    async def upload_video(
        self,
        path: str | os.PathLike[str],
        *,
        title: str,
        channel: str,
        published: bool = True,
        is_created_for_kids: bool = False,
        progress: ProgressCallback | None = None,
        chunked: bool = False,
        workers: int = 4,
    ) -> Video:
        """The three steps: get an upload address, stream the file, create the video.

        The arguments are checked before anything is sent or read. ``chunked`` and
        ``workers`` as for ``upload_file``.
        """
        check.title(title)
        check.channel(channel)
        uploaded = await self.upload_file(path, progress=progress, chunked=chunked, workers=workers)
        return await self.create_video(
            url=uploaded.url,
            title=title,
            channel=channel,
            published=published,
            is_created_for_kids=is_created_for_kids,
        )

    async def get_video(self, video_id: str, fields: Iterable[str] | str = VIDEO_FIELDS) -> Video:
        """``GET /video/<id>?fields=...``: the named fields of a video."""
        return await self._get_video(video_id, fields)

    async def _get_video(
        self, video_id: str, fields: Iterable[str] | str, scope: str | None = None
    ) -> Video:
        names = check.field_names(fields)
        request = self._api(
            "GET",
            f"/video/{check.video_id(video_id)}",
            query=[("fields", ",".join(names))],
            scope=scope,
        )
        return structure({"id": video_id, **await self._call(request)}, Video, what=request.what)

    async def wait_until_ready(
        self,
        video_id: str,
        *,
        timeout: float = 3600.0,
        poll: float = 2.0,
        max_poll: float = 30.0,
        progress: Callable[[Video], None] | None = None,
        events: WebhookEvents | None = None,
    ) -> Video:
        """Poll the video until the platform says it is playable, and return it.

        The first look is after ``poll`` seconds, then the wait grows by half each time up
        to ``max_poll``. ``progress(video)`` sees every look (``status``,
        ``encoding_progress``). A failure status (``encoding_error``, ``rejected``,
        ``deleted``) raises ``EncodingError``; no playable video within ``timeout``
        seconds raises ``ReadyTimeoutError``, which is also a ``TimeoutError``.

        ``events`` (a ``vidapi_async.webhooks.WebhookEvents`` fed by a webhook handler):
        an event about this video makes the next look happen at once instead of at the
        next poll; polling goes on as the fallback (a lost event costs one interval).
        """
        check.video_id(video_id)
        for name, value in (("timeout", timeout), ("poll", poll), ("max_poll", max_poll)):
            check.positive_number(value, name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        delay, last = poll, None
        with contextlib.ExitStack() as stack:
            wake = None if events is None else stack.enter_context(events.watch(video_id))
            while (left := deadline - loop.time()) > 0:
                await _pause(wake, min(delay, left))
                last = await self.get_video(video_id)
                if progress is not None:
                    progress(last)
                if last.is_ready:
                    return last
                if last.encoding_failed:
                    raise EncodingError(video_id, last.status)
                delay = min(delay * 1.5, max_poll)
        raise ReadyTimeoutError(
            video_id,
            None if last is None else last.status,
            None if last is None else last.encoding_progress,
            timeout,
        )

    async def update_video(
        self, video_id: str, fields: Mapping[str, str], *, returning: Iterable[str] = VIDEO_FIELDS
    ) -> Video:
        """``POST /video/<id>``: write fields given as form text (``{"title": "new"}``)."""
        form = []
        for key, value in fields.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InvalidArgumentError("fields", "keys and values must be strings")
            if key == "password":
                raise InvalidArgumentError("fields", "use set_password() for the password")
            form.append((key, value))
        if not form:
            raise InvalidArgumentError("fields", "give at least one field to write")
        return await self._post_video(video_id, form, returning)

    async def _post_video(
        self,
        video_id: str,
        form: list[tuple[str, str]],
        returning: Iterable[str],
        scope: str | None = None,
    ) -> Video:
        request = self._api(
            "POST",
            f"/video/{check.video_id(video_id)}",
            query=[("fields", ",".join(check.field_names(returning)))],
            form=form,
            scope=scope,
        )
        return structure({"id": video_id, **await self._call(request)}, Video, what=request.what)

    async def set_password(self, video_id: str, password: str | None) -> Video:
        """Protect a video with ``password``, or make it public again with ``None``.

        ``None`` travels as an empty ``password=`` field: a form has no NULL, and the
        platform treats the empty value as removal. The password never appears in a
        log line, repr or error message. Returns the video with ``password_protected``.
        """
        value = check.password(password)
        return await self._post_video(
            video_id, [("password", value or "")], ("id", "password_protected")
        )

    # --- subtitles ----------------------------------------------------------------------

    async def create_subtitle(
        self,
        video_id: str,
        *,
        language: str,
        url: str,
        format: str = "SRT",
        dedupe: bool = False,
    ) -> Subtitle:
        """``POST /video/<id>/subtitles`` from a subtitle file already online at ``url``.

        A create is retried only when it surely did not take effect. With ``dedupe``,
        after a failure whose outcome is unknown the video's subtitles are listed first
        and one in the same language is adopted instead of creating a second.
        """
        lang = check.language(language)
        request = self._api(
            "POST",
            f"/video/{check.video_id(video_id)}/subtitles",
            query=[("fields", ",".join(SUBTITLE_FIELDS))],
            form=[
                ("language", lang),
                ("url", check.http_url(url, "url")),
                ("format", check.subtitle_format(format)),
            ],
            idempotent=False,
        )
        if not dedupe:
            return structure(await self._call(request), Subtitle, what=request.what)

        async def create() -> Subtitle:
            return structure(await self._call_once(request), Subtitle, what=request.what)

        async def find() -> Subtitle | None:
            return next(
                (s for s in await self.list_subtitles(video_id) if s.language == lang), None
            )

        return await create_checked(self.retry, create, find, what=request.what)

    async def upload_subtitle(
        self,
        video_id: str,
        path: str | os.PathLike[str],
        *,
        language: str,
        dedupe: bool = False,
    ) -> Subtitle:
        """Check a local ``.srt`` file, upload it, and attach it to the video.

        The file must parse as SRT first; ``SubtitleFileError`` names the broken cue.
        ``dedupe`` as for ``create_subtitle``.
        """
        check.video_id(video_id)
        lang = check.language(language)
        local = await asyncio.to_thread(check_srt_file, path)
        return await self._attach_subtitle(video_id, local, language=lang, dedupe=dedupe)

    async def _attach_subtitle(
        self, video_id: str, local: LocalFile, *, language: str, dedupe: bool
    ) -> Subtitle:
        """Upload a subtitle file already checked (``check_srt_file``) and attach it."""
        uploaded = await self._send_file(local)
        return await self.create_subtitle(
            video_id, language=language, url=uploaded.url, dedupe=dedupe
        )

    async def list_subtitles(self, video_id: str) -> list[Subtitle]:
        """``GET /video/<id>/subtitles``: the video's subtitles (first 100)."""
        request = self._api(
            "GET",
            f"/video/{check.video_id(video_id)}/subtitles",
            query=[("fields", ",".join(SUBTITLE_FIELDS)), ("limit", "100")],
        )
        data = await self._call(request)
        items = data.get("list")
        if not isinstance(items, list):
            items = []
        return [structure(item, Subtitle, what=request.what) for item in items]

    # --- live ---------------------------------------------------------------------------

    async def create_live_stream(
        self,
        *,
        title: str,
        channel: str,
        published: bool = True,
        is_created_for_kids: bool = False,
        start_time: int | None = None,
        end_time: int | None = None,
    ) -> Video:
        """Create a live stream: a video with ``mode=live``. Needs scope manage_videos.

        ``start_time``/``end_time`` (UNIX timestamps) schedule it. The result carries
        the live fields, ``live_publish_url`` (the ingest address) among them.
        """
        extra = {"mode": "live"}
        for name, value in (("start_time", start_time), ("end_time", end_time)):
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise InvalidArgumentError(name, "expected a UNIX timestamp (int)")
                extra[name] = str(value)
        request = self._create_request(
            title=title,
            channel=channel,
            published=published,
            is_created_for_kids=is_created_for_kids,
            extra=extra,
            fields=LIVE_FIELDS,
            scope="manage_videos",
        )
        return structure(await self._call(request), Video, what=request.what)

    async def make_live(self, video_id: str) -> Video:
        """Turn an existing video into a live stream (``mode=live``)."""
        return await self._post_video(video_id, [("mode", "live")], LIVE_FIELDS, "manage_videos")

    async def get_live_stream(self, video_id: str) -> Video:
        """A live stream's live fields (on air, ingest address, recording state, ...)."""
        return await self._get_video(video_id, LIVE_FIELDS, "manage_videos")


async def _pause(wake: asyncio.Event | None, seconds: float) -> None:
    """Sleep ``seconds``, or less when ``wake`` is set (then cleared for the next time)."""
    if wake is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), seconds)
    wake.clear()


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


def _check_spooled(name: str, expected: int, got: int) -> None:
    if got != expected:
        raise FileChangedError(name, expected, f"the source held {got} bytes")


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _proxies(
    proxy: str | None, trust_env: bool, session: aiohttp.ClientSession | None
) -> dict[str, str]:
    """The own session's proxies: ``proxy=`` for every request, else (``trust_env``)
    ``HTTPS_PROXY``, ``HTTP_PROXY`` and ``NO_PROXY`` read once from the environment."""
    if proxy is not None:
        if session is not None:
            raise UsageError(
                "proxy= goes with the client's own session; with session=, uploads use the "
                "environment's proxy when that session has trust_env=True"
            )
        if not isinstance(proxy, str):
            raise InvalidArgumentError("proxy", "expected an http://host:port string")
        try:
            wire.Proxy.parse(proxy)
        except ValueError:
            raise InvalidArgumentError("proxy", "expected an http://host:port address") from None
        return {"http": proxy, "https": proxy}
    return urllib.request.getproxies_environment() if trust_env else {}


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(name, f"expected True or False, got {value!r}")
    return value
