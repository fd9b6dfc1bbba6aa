"""What a batch is made of: jobs, their subtitles, their results and the progress of
the whole. Plain values, checked when built."""

from __future__ import annotations

import enum
import hashlib
import os
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Mapping

import attrs

from .. import _validate as check
from .._errors import InvalidArgumentError, VidapiError
from .._protocol import url_for_humans
from ._journal import Stage, check_key

__all__ = [
    "BatchProgress",
    "JobResult",
    "JobStatus",
    "SubtitleSpec",
    "UploadJob",
    "file_key",
    "missing_key",
]


@attrs.frozen
class SubtitleSpec:
    """A subtitle for a job: a local ``.srt`` ``path`` (uploaded first) or a ``url``."""

    language: str
    """The subtitle's language, an ISO 639 code."""
    path: str | None = attrs.field(default=None, converter=attrs.converters.optional(os.fspath))
    """A local SRT file, checked and uploaded first; or give ``url``."""
    url: str | None = None
    """An http(s) address the platform fetches the file from."""

    def __attrs_post_init__(self) -> None:
        check.language(self.language)
        if (self.path is None) == (self.url is None):
            raise InvalidArgumentError("subtitles", "give exactly one of path or url")
        if self.url is not None:
            check.http_url(self.url, "subtitles.url")
        if self.path is not None and "\0" in self.path:
            raise InvalidArgumentError("subtitles.path", "has a NUL: no file has such a name")


def _subtitles(value: Iterable[SubtitleSpec]) -> tuple[SubtitleSpec, ...]:
    specs = tuple(value)
    for spec in specs:
        if not isinstance(spec, SubtitleSpec):
            raise InvalidArgumentError("subtitles", "expected SubtitleSpec items")
    return specs


@attrs.frozen(kw_only=True)
class UploadJob:
    """One file to upload and turn into a video. Checked when built."""

    path: str | None = attrs.field(default=None, converter=attrs.converters.optional(os.fspath))
    """A local file; or give ``url``."""
    title: str
    """The video's title."""
    channel: str
    """The video's category slug (``"news"``)."""
    url: str | None = attrs.field(default=None, repr=False)
    """An http(s) file streamed through to the platform (``Client.upload_from_url``)
    instead of a local ``path``. It may hold a signature: hidden from repr."""
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False, hash=False)
    """Headers sent to the ``url``'s source only (its credentials): hidden from repr."""
    published: bool = True
    """Whether the video is published."""
    subtitles: tuple[SubtitleSpec, ...] = attrs.field(default=(), converter=_subtitles)
    """Subtitles attached once the video exists."""
    password: str | None = attrs.field(default=None, repr=False)
    """A password protecting the video from its creation (hidden from repr)."""
    live: bool = False
    """Turn the new video into a live stream (``mode=live``) once created."""
    key: str | None = None
    """Identifies the job across runs. Default: derived from the file's absolute path,
    size and modification time (stable while the file is unchanged; no need to read it),
    or from the url."""

    @property
    def where(self) -> str:
        """The path (its control characters and bytes that were not UTF-8 escaped: one
        line of text), or the url without its query (which may hold a signature)."""
        if self.path is None:
            return url_for_humans(self.url or "")
        return "".join(
            c.encode("unicode_escape", "backslashreplace").decode()
            if unicodedata.category(c) in ("Cc", "Cs")
            else c
            for c in self.path
        )

    def __attrs_post_init__(self) -> None:
        if (self.path is None) == (self.url is None):
            raise InvalidArgumentError("path", "give exactly one of path= and url=")
        if self.url is not None:
            check.http_url(self.url, "url")
        if self.path is not None and "\0" in self.path:
            raise InvalidArgumentError("path", "has a NUL: no file has such a name")
        if not isinstance(self.headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items()
        ):
            raise InvalidArgumentError("headers", "expected a mapping of strings")
        for name, value in self.headers.items():
            check.plain_text(name + value, "headers")
        if self.headers and self.url is None:
            raise InvalidArgumentError("headers", "go with url= (they are the source's)")
        check.title(self.title)
        if any(unicodedata.category(c) == "Cc" for c in self.title):
            raise InvalidArgumentError("title", "has a control character (a NUL, a newline...)")
        check.channel(self.channel)
        check.password(self.password)
        if self.key is not None:
            check_key(self.key)
        for name in ("published", "live"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgumentError(name, "expected True or False")


_CREDENTIAL_PREFIXES = ("x-amz-", "x-goog-")
"""S3's and GCS's signed-url parameters: credentials whatever else the url holds."""
_CREDENTIAL_NAMES = frozenset({"hdnts"})
"""Akamai's edge token: a credential whatever else the url holds."""
_SIGNED_FAMILIES = (
    (
        "sig",  # Azure SAS
        frozenset(
            {
                "sig", "se", "sp", "sv", "st", "spr", "srt", "ss", "sr", "skoid", "sktid",
                "skt", "ske", "sks", "skv", "sip", "si",
            }
        ),
    ),
    (
        "signature",  # CloudFront, and S3/GCS V2 signing
        frozenset(
            {"signature", "expires", "key-pair-id", "policy", "awsaccesskeyid", "googleaccessid"}
        ),
    ),
)  # fmt: skip
"""A family's signature parameter, and the names it signs with (lower case): dropped
only from a url that holds the signature (``st``, ``Expires`` are a url's own names
otherwise)."""


def source_identity(url: str) -> str:
    """The url a job's default key is made from: without ``user:password@``, without a
    fragment, without credentials in its query (``X-Amz-*``, ``X-Goog-*``, ``hdnts``),
    and without a signing family's parameters where the url holds that family's
    signature (Azure SAS's with ``sig``, CloudFront's and V2 signing's with
    ``Signature``); names compared in any case, ``;`` a separator as ``&``. The other
    parameters are kept as written, in order. Two urls differing only in credentials
    or signature are the same source; two unsigned urls differing in ``st=`` are not."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    pieces = re.split(r"([&;])", parts.query)
    params = [(pieces[i - 1] if i else "", pieces[i]) for i in range(0, len(pieces), 2)]
    names = [urllib.parse.unquote_plus(p.partition("=")[0]).lower() for _, p in params]
    signed = {n for (_, p), n in zip(params, names, strict=True) if p.partition("=")[2]}
    dropped = set(_CREDENTIAL_NAMES)
    for signature, family in _SIGNED_FAMILIES:
        if signature in signed:
            dropped |= family
    kept = "".join(
        sep + p
        for (sep, p), n in zip(params, names, strict=True)
        if p and n not in dropped and not n.startswith(_CREDENTIAL_PREFIXES)
    )
    return urllib.parse.urlunsplit(
        (parts.scheme.lower(), host.lower(), parts.path, kept.lstrip("&;"), "")
    )


def url_key(url: str) -> str:
    """The default key of a url job: a digest of ``source_identity(url)``, so that no
    key or tag holds (a digest of) a credential or signature; a re-run skips the job
    once done, whatever signature its url carries then."""
    return hashlib.sha256(f"url2\0{source_identity(url)}".encode()).hexdigest()[:24]


def legacy_url_key(url: str) -> str:
    """The default key of a url job up to 0.1.0: a digest of the whole url (credentials
    and signature included). Only looked up, to resume a journal written then."""
    return hashlib.sha256(f"url\0{url}".encode()).hexdigest()[:24]


def file_key(path: str) -> str:
    """The default job key (blocking: stats the file)."""
    real = os.path.realpath(path)
    st = os.stat(real)
    # the name's own bytes: a name that is not UTF-8 is surrogate-escaped (its key too)
    text = f"{real}\0{st.st_size}\0{st.st_mtime_ns}"
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:24]


def missing_key(path: str) -> str:
    """The key under which a job whose file is missing records its failure (blocking:
    resolves the path); once the file is there, the job has its ``file_key`` and this
    record is forgotten."""
    real = os.path.realpath(path)
    return hashlib.sha256(f"missing\0{real}".encode("utf-8", "surrogateescape")).hexdigest()[:24]


class JobStatus(enum.StrEnum):
    """What became of a job (``JobResult.status``)."""

    DONE = "done"
    """Every stage done in this run."""
    SKIPPED = "skipped"
    """Already done in an earlier run (per the journal)."""
    FAILED = "failed"
    """Stopped by an error (``JobResult.error``); a re-run resumes it."""
    LOST = "lost"
    """Another worker of a shared queue took the job over (this one was paused past
    its lease); this one stopped it and recorded nothing."""


@attrs.frozen
class JobResult:
    """What became of one job."""

    job: UploadJob
    """The job as given."""
    key: str
    """Its key in the journal."""
    status: JobStatus
    """Done, skipped, failed or lost."""
    video_id: str | None
    """The video created, once there is one."""
    stage: Stage
    """The last stage reached."""
    error: VidapiError | None = None
    """Why it failed; ``error.attempts`` is the attempts of the failing request."""
    runs: int = 1
    """How many times the job was started, over every run of the journal."""

    @property
    def ok(self) -> bool:
        """Whether it did not fail (done, skipped or lost to another worker)."""
        return self.status is not JobStatus.FAILED


@attrs.frozen
class BatchProgress:
    """The batch so far, handed to the progress callback."""

    started: int
    """Jobs started so far."""
    done: int
    """Jobs done in this run."""
    skipped: int
    """Jobs already done in an earlier run."""
    failed: int
    """Jobs that failed."""
    bytes_sent: int
    """Bytes handed to the network (chunked: acknowledged), retries included."""
    bytes_total: int
    """Sizes of the files started so far."""
    elapsed: float
    """Seconds since the batch started."""
    files: Mapping[str, tuple[str, int, int]]
    """Uploads in flight: key -> (path, bytes sent, size)."""

    @property
    def rate(self) -> float:
        """Bytes per second since the batch started."""
        return self.bytes_sent / self.elapsed if self.elapsed > 0 else 0.0
