"""Objects of an S3-compatible store as upload sources (the ``s3`` extra: aiobotocore).

``S3Object("bucket", "key")`` (or the text ``s3://bucket/key``) is a source for
``upload_file``/``upload_video``, a manifest's ``url`` and, as a prefix, a batch's
source. The credentials, region and endpoint come from the standard AWS chain
(environment, shared config and credentials files, ``AWS_PROFILE``, container and
instance metadata), ``AWS_ENDPOINT_URL`` included (MinIO, Ceph, R2, moto; plain http
where that endpoint is http).

The object is read once per attempt, streamed: a HEAD learns its size and ETag, then
``GET`` with ``If-Match: ETAG`` (and ``Range`` for each range of a chunked upload, read
in parallel) feeds the upload; an object replaced meanwhile fails its next GET with 412
and the upload stops with ``FileChangedError``, never a mixed file. No credential or
signature reaches a message, a log line or a key: messages name the object only, and
the SDK's own debug logging (which prints signed headers) is kept at INFO unless the
application set its level.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import posixpath
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import attrs

from ._errors import (
    FileChangedError,
    InvalidArgumentError,
    MissingExtraError,
    SourceError,
)
from ._transfer.sources import AsyncIterStream

__all__ = [
    "ObjectInfo",
    "ObjectStream",
    "S3Object",
    "is_s3_url",
    "list_prefix",
    "object_info",
    "s3_client",
    "s3_source",
    "upload_object",
    "video_verdict",
]

SCHEME: Final = "s3://"

VIDEO_SUFFIXES: Final = frozenset(
    {
        ".mp4", ".m4v", ".mov", ".qt", ".mkv", ".webm", ".avi", ".wmv", ".asf", ".flv",
        ".mpg", ".mpeg", ".mpe", ".m2v", ".ts", ".mts", ".m2ts", ".3gp", ".3g2", ".ogv",
        ".mxf", ".dv", ".vob", ".f4v", ".divx", ".rm", ".rmvb", ".mod", ".tod", ".m2t",
        ".hevc", ".h264", ".h265", ".y4m", ".insv", ".lrv",
    }
)  # fmt: skip
"""Extensions taken as video without asking the store."""
VIDEO_TYPES: Final = frozenset(
    {"application/mp4", "application/mxf", "application/x-matroska", "application/vnd.rn-realmedia"}
)
"""Content-Types taken as video besides ``video/*``."""


def is_s3_url(value: object) -> bool:
    """Whether ``value`` is text naming an object as ``s3://bucket/key``."""
    return isinstance(value, str) and value[:5].lower() == SCHEME


@attrs.frozen
class S3Object:
    """An object of an S3-compatible store, as an upload source: ``bucket`` and ``key``
    as the store names them (the key is not percent-decoded). ``str()`` is its
    ``s3://bucket/key`` name, the name a batch keys its job by.

    ``etag`` pins one version of the object: an upload of another version (the object
    replaced meanwhile) raises ``FileChangedError`` before a byte is sent. Resuming a
    chunked upload (``resume=True``) needs it: the ETag of the version its first ranges
    came from (``head_object``'s ``ETag``), so that the ranges still missing come from
    that version, never from another."""

    bucket: str
    """The bucket's name."""
    key: str
    """The object's key (any text, ``/`` included)."""
    etag: str | None = attrs.field(default=None, kw_only=True)
    """The version to send (its ETag, as a HEAD gives it); ``None``: the current one."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.bucket, str) or not self.bucket or "/" in self.bucket:
            raise InvalidArgumentError("bucket", "expected a bucket's name (no '/')")
        if not isinstance(self.key, str) or not self.key or self.key.endswith("/"):
            raise InvalidArgumentError("key", "expected an object's key (not a folder's)")
        if any(ord(c) < 32 or ord(c) == 127 for c in self.bucket + self.key):
            raise InvalidArgumentError("key", "has a control character (a NUL, a newline...)")
        if self.etag is not None and (not isinstance(self.etag, str) or not self.etag.strip()):
            raise InvalidArgumentError("etag", "expected an object's ETag (a HEAD's 'ETag')")

    @classmethod
    def from_url(cls, url: str, argument: str = "source") -> S3Object:
        """``s3://bucket/key`` as an ``S3Object`` (``InvalidArgumentError`` otherwise)."""
        if not is_s3_url(url):
            raise InvalidArgumentError(argument, "expected an s3://BUCKET/KEY name")
        bucket, _, key = url[len(SCHEME) :].partition("/")
        if not bucket or not key or key.endswith("/"):
            raise InvalidArgumentError(argument, "expected s3://BUCKET/KEY, a key after the bucket")
        return cls(bucket, key)

    @property
    def url(self) -> str:
        """``s3://bucket/key``."""
        return f"{SCHEME}{self.bucket}/{self.key}"

    @property
    def name(self) -> str:
        """The key's last segment: the file name the upload server sees by default."""
        return posixpath.basename(self.key)

    def __str__(self) -> str:
        return self.url


def s3_source(value: object) -> S3Object | None:
    """``value`` as an object when it names one (``S3Object`` or ``s3://`` text)."""
    if isinstance(value, S3Object):
        return value
    if is_s3_url(value):
        assert isinstance(value, str)
        return S3Object.from_url(value)
    return None


@attrs.frozen
class ObjectInfo:
    """What a HEAD says of an object."""

    size: int
    etag: str
    content_type: str | None


# --- the SDK ----------------------------------------------------------------------------

_SESSION: Any = None
_SESSION_LOCK = threading.Lock()
_SDK_LOGGERS = ("botocore", "aiobotocore")


def _quiet_sdk_logs() -> None:
    """The SDK logs signed request headers (``Authorization``, the access key and the
    signature) at DEBUG: its loggers stay at INFO unless the application set them."""
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.INFO)


def _new_session() -> Any:
    """The process's SDK session, its data files read here (blocking: in a thread)."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None:
            try:
                from aiobotocore.session import (  # type: ignore[import-untyped, unused-ignore]
                    get_session,
                )
            except ImportError:
                raise MissingExtraError("s3", "s3:// sources") from None
            _quiet_sdk_logs()
            session = get_session()
            # the service's model and the endpoint rules: files, read once off the loop
            loader = session.get_component("data_loader")
            loader.load_service_model("s3", "service-2")
            loader.load_service_model("s3", "endpoint-rule-set-1")
            loader.load_data("partitions")
            session.get_scoped_config()
            _SESSION = session
        return _SESSION


@contextlib.asynccontextmanager
async def s3_client() -> AsyncIterator[Any]:
    """An S3 client from the standard chain (``AWS_ENDPOINT_URL`` included); closed on
    exit. ``MissingExtraError`` without the ``s3`` extra."""
    try:  # an unknown AWS_PROFILE, a config or credentials file that does not parse
        session = _SESSION if _SESSION is not None else await asyncio.to_thread(_new_session)
    except MissingExtraError:
        raise
    except _client_errors() as exc:
        raise _no_client(exc) from None
    from botocore.config import Config  # type: ignore[import-untyped, unused-ignore]

    config = Config(retries={"max_attempts": 3, "mode": "standard"})
    try:
        made = session.create_client("s3", config=config)
        client = await made.__aenter__()
    except _client_errors() as exc:  # a bad region or AWS_ENDPOINT_URL, an unknown profile
        raise _no_client(exc) from None
    try:
        yield client
    finally:
        await made.__aexit__(None, None, None)


def _no_client(exc: BaseException) -> SourceError:
    """The configuration's error, by its type only (the SDK's message may hold a path
    or a url with credentials in it)."""
    return SourceError(
        f"no S3 client could be made from the AWS configuration ({type(exc).__name__})",
        status=None,
    )


def _sdk_errors() -> tuple[type[BaseException], ...]:
    from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
        BotoCoreError,
        ClientError,
    )

    return (ClientError, BotoCoreError)


def _client_errors() -> tuple[type[BaseException], ...]:
    return (*_sdk_errors(), ValueError)


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return status if isinstance(status, int) else None
    return None


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code") or "")
    return ""


_DENIED = "access denied: check the credentials in use (AWS_PROFILE, AWS_ACCESS_KEY_ID)"
_REGION = "the bucket is in another region: set AWS_DEFAULT_REGION to it"
_HINTS = {
    "404": "no such object in the bucket, or no such bucket",
    "NoSuchKey": "no such object in the bucket",
    "NotFound": "no such object in the bucket, or no such bucket",
    "NoSuchBucket": "no such bucket",
    "403": _DENIED,
    "AccessDenied": _DENIED,
    "InvalidAccessKeyId": "the store does not know this access key: check AWS_ACCESS_KEY_ID "
    "or AWS_PROFILE",
    "SignatureDoesNotMatch": "the store refused the signature: check AWS_SECRET_ACCESS_KEY "
    "or AWS_PROFILE",
    "PermanentRedirect": _REGION,
    "AuthorizationHeaderMalformed": _REGION,
    "NoCredentialsError": "no AWS credentials were found: set AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE",
    "EndpointConnectionError": "could not connect to the S3 endpoint: check "
    "AWS_ENDPOINT_URL (or the region) and the network",
    "ConnectTimeoutError": "the S3 endpoint did not answer in time: check AWS_ENDPOINT_URL "
    "and the network",
}
"""What to say of a store's error code (or the SDK's error class), in words: the SDK's
own message is never shown."""


def _failure(name: str, what: str, exc: BaseException) -> SourceError:
    """A ``SourceError`` naming the object, the store's error code and what it means:
    the SDK's own message is left out (an endpoint error may echo a url with credentials
    in it)."""
    status = _status(exc)
    code = _code(exc) or type(exc).__name__
    where = f" (HTTP {status})" if status else ""
    hint = _HINTS.get(code)
    said = f": {hint}" if hint else ""
    return SourceError(f"{name}: {what} failed: {code}{where}{said}", status=status)


async def object_info(client: Any, obj: S3Object) -> ObjectInfo:
    """HEAD the object: its size, ETag and Content-Type (``SourceError`` if missing)."""
    try:
        head = await client.head_object(Bucket=obj.bucket, Key=obj.key)
    except _sdk_errors() as exc:
        raise _failure(obj.url, "HEAD", exc) from None
    return ObjectInfo(
        size=int(head["ContentLength"]),
        etag=str(head["ETag"]),
        content_type=head.get("ContentType"),
    )


def _changed(obj: S3Object, info: ObjectInfo) -> FileChangedError:
    return FileChangedError(
        obj.url,
        info.size,
        f"the object changed during the upload (it no longer has the ETag {info.etag})",
    )


# --- a prefix as a batch's source -----------------------------------------------------


def _suffix(key: str) -> str:
    """The key's extension, lower case: its last segment's text from its last dot (a
    name that is an extension only, ``.mp4``, has one), ``""`` without one."""
    _, dot, ext = posixpath.basename(key).rpartition(".")
    return f".{ext.lower()}" if dot and ext else ""


def video_verdict(key: str, content_type: str | None) -> str | None:
    """``None`` when the object is a video, else why not. A video extension is enough;
    without one the Content-Type decides (``video/*`` or a video container type; not
    given: the type the system's table gives the extension)."""
    suffix = _suffix(key)
    if suffix in VIDEO_SUFFIXES:
        return None
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if not kind and suffix:  # not asked: the type the extension has
        kind = (mimetypes.guess_type(key)[0] or "").lower()
    if kind.startswith("video/") or kind in VIDEO_TYPES:
        return None
    what = f"a {suffix} file" if suffix else "no extension"
    return f"not a video ({what}, Content-Type {kind or 'unknown'})"


def _asks(key: str) -> bool:
    """Whether a key that is not a video by its extension is worth a HEAD: it has no
    extension, or one the system's table of media types does not know (``.jpg``,
    ``.txt``: not asked)."""
    return not _suffix(key) or mimetypes.guess_type(key)[0] is None


async def list_prefix(
    bucket: str, prefix: str, skipped: Callable[[str, str], None]
) -> AsyncIterator[S3Object]:
    """Every video object under ``prefix`` (nested keys too), in the store's order
    (by key); each other object is passed to ``skipped(name, why)``. A key with a video
    extension is a video; one without, or with an extension of no known media type, is
    asked for its Content-Type (a HEAD); the others are not videos."""
    from ._transfer.sending import load_mime_types

    await load_mime_types()  # the system's table, read off the loop once
    async with s3_client() as client:
        paginator = client.get_paginator("list_objects_v2")
        try:
            async for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
                for item in page.get("Contents", ()):
                    key = str(item["Key"])
                    name = f"{SCHEME}{bucket}/{key}"
                    if key.endswith("/"):
                        skipped(name, "a folder marker")
                        continue
                    if not int(item.get("Size", 0)):
                        skipped(name, "empty")
                        continue
                    try:
                        obj = S3Object(bucket, key)
                    except InvalidArgumentError as exc:
                        skipped(name.encode("unicode_escape").decode(), exc.message)
                        continue
                    why = video_verdict(key, None)
                    if why is not None and _asks(key):
                        why = video_verdict(key, (await object_info(client, obj)).content_type)
                    if why is None:
                        yield obj
                    else:
                        skipped(name, why)
        except _sdk_errors() as exc:
            raise _failure(f"{SCHEME}{bucket}/{prefix}", "listing", exc) from None


# --- the object as a stream -----------------------------------------------------------


class _Body:
    """The chunks of one GET's body (an async iterator that is not a generator: nothing
    to finalise)."""

    def __init__(self, obj: S3Object, body: Any, piece: int) -> None:
        self._obj = obj
        self._body = body
        self._piece = piece

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._body.read(self._piece)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the SDK's and aiohttp's, whichever it raises
            raise SourceError(
                f"{self._obj.url}: reading the object failed ({type(exc).__name__})", status=None
            ) from None
        if not chunk:
            raise StopAsyncIteration
        return bytes(chunk)

    def close(self) -> None:
        self._body.close()


class ObjectStream:
    """``length`` bytes of an object from ``first``, for the upload pump (its thread).
    Each attempt (a ``rewind``) is one new ``GET`` with ``If-Match`` (and ``Range`` when
    not the whole object), made on the loop; ``close`` on the loop when done."""

    def __init__(
        self,
        client: Any,
        obj: S3Object,
        info: ObjectInfo,
        first: int,
        length: int,
        piece: int,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.name = obj.name
        self._client = client
        self._obj = obj
        self._info = info
        self._first = first
        self._length = length
        self._piece = piece
        self._loop = loop
        self._body: _Body | None = None
        self._reader: AsyncIterStream | None = None
        self._stopped = False
        self._taken = False

    async def _open(self) -> _Body:
        obj, info = self._obj, self._info
        kwargs: dict[str, Any] = {"Bucket": obj.bucket, "Key": obj.key, "IfMatch": info.etag}
        if self._first or self._length != info.size:
            kwargs["Range"] = f"bytes={self._first}-{self._first + self._length - 1}"
        try:
            answer = await self._client.get_object(**kwargs)
        except _sdk_errors() as exc:
            if _status(exc) == 412 or _code(exc) == "PreconditionFailed":
                raise _changed(obj, info) from None
            raise _failure(obj.url, "GET", exc) from None
        body = _Body(obj, answer["Body"], self._piece)
        if self._stopped:  # cancelled meanwhile: nobody will read it
            body.close()
            raise ConnectionAbortedError("the upload was cancelled")
        self._body = body
        return body

    async def open(self) -> ObjectStream:
        """On the loop, before the request that carries these bytes starts: the GET is
        answered first, so the upload host never waits on the store for the first
        byte (it cuts a body that stalls)."""
        if self._reader is None:
            body = await self._open()
            self._reader = AsyncIterStream(body, self.name, self._loop)
        return self

    def _release(self) -> None:
        """From the pump's thread: the body in hand is closed on the loop."""
        body, self._body, self._reader = self._body, None, None
        self._taken = False
        if body is not None:
            self._loop.call_soon_threadsafe(body.close)

    def rewind(self) -> None:
        if self._taken:  # a new attempt: a new GET (one opened ahead and unread is kept)
            self._release()

    def abort(self) -> None:
        self._stopped = True
        reader = self._reader
        if reader is not None:
            reader.abort()

    def readinto(self, view: memoryview) -> int:
        if self._stopped:
            raise ConnectionAbortedError("the upload was cancelled")
        if self._reader is None:
            body = asyncio.run_coroutine_threadsafe(self._open(), self._loop).result()
            self._reader = AsyncIterStream(body, self.name, self._loop)
        got = self._reader.readinto(view)
        self._taken = self._taken or got > 0
        return got

    def close(self) -> None:
        """On the loop, once the upload is over: the last body is let go."""
        body, self._body, self._reader = self._body, None, None
        if body is not None:
            body.close()


async def upload_object(uploads: Any, obj: S3Object, options: dict[str, Any]) -> Any:
    """``Uploads.file`` for an object: a HEAD for its size and ETag, then single-shot
    from one streamed GET or chunked from a GET per range (``workers`` at once)."""
    from ._transfer.files import LocalFile

    if options.get("resume") and obj.etag is None:
        raise InvalidArgumentError(
            "resume",
            "resuming an object's upload needs S3Object(bucket, key, etag=...): the ETag of "
            "the version its first ranges came from (never a mixed file)",
        )
    loop = asyncio.get_running_loop()
    async with s3_client() as client:
        info = await object_info(client, obj)
        if obj.etag is not None and info.etag != obj.etag:
            raise FileChangedError(
                obj.url,
                info.size,
                f"the object is no longer the version {obj.etag} (its ETag is {info.etag})",
            )
        if info.size < 1:
            raise InvalidArgumentError("source", f"{obj.url} is empty: nothing to upload")
        cap = uploads._settings.max_source_size  # (its default: the platform's ceiling)
        if info.size > cap:
            raise SourceError(
                f"{obj.url}: the object holds {info.size} bytes, more than the {cap} "
                "allowed (max_source_size)",
                status=None,
            )
        piece = options.get("read_size") or uploads._settings.read_size
        chunked = options.get("chunked")
        if chunked is None:
            chunked = uploads.chunks(info.size)
        options = {**options, "chunked": chunked, "filename": options.get("filename") or obj.name}
        local = LocalFile(obj.url, info.size)
        streams: list[ObjectStream] = []

        async def part(first: int, length: int) -> ObjectStream:
            stream = ObjectStream(client, obj, info, first, length, piece, loop)
            streams.append(stream)
            return await stream.open()

        try:
            if chunked:
                return await uploads._send_file(local, parts=part, **options)
            whole = await part(0, info.size)
            return await uploads._send_file(local, stream=whole, **options)
        finally:
            for stream in streams:
                stream.close()
