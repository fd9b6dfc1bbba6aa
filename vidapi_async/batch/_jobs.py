"""What a batch is made of: jobs, their subtitles, their results and the progress of
the whole. Plain values, checked when built."""

from __future__ import annotations

import asyncio
import enum
import functools
import hashlib
import hmac
import logging
import os
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, cast

import attrs

from .. import _validate as check
from .._errors import AccountError, InvalidArgumentError, VidapiError
from .._protocol import url_for_humans
from .._resources.video_metadata import MAX_TAGS, video_form
from .._s3 import S3Object, is_s3_url
from .._transfer.sources import SourcePolicy
from ._journal import Stage, check_key

log = logging.getLogger("vidapi_async.batch")

__all__ = [
    "MAX_JOB_TAGS",
    "BatchPlan",
    "BatchProgress",
    "JobResult",
    "JobStatus",
    "LeftOut",
    "SubtitleSpec",
    "UploadJob",
    "file_key",
    "missing_key",
]

MAX_JOB_TAGS = MAX_TAGS - 2
"""The most tags a batch job gives: its video also carries the batch's two bookkeeping
tags (``_adopt.own_tags``)."""

METADATA_FIELDS = (
    "description", "tags", "language", "private", "is_created_for_kids", "explicit",
    "publish_date", "expiry_date", "geoblocking",
)  # fmt: skip
"""``upload_video``'s metadata keywords a job takes besides title, channel and published
(same names, checked and encoded by the same ``video_form``)."""
CLEARED: Mapping[str, object] = {
    "description": "",
    "tags": (),
    "publish_date": None,
    "expiry_date": None,
    "geoblocking": None,
}
"""What an update sends for a field a manifest no longer gives (the others stay as set)."""


# The converters' parameter types are what a type checker takes for the constructor's
# (mypy's attrs plugin and pyright alike): ``UploadJob(path=Path(...), tags=[...])``.


def _opt_path(value: str | os.PathLike[str] | None) -> str | None:
    """A path-like as its ``str``; ``None`` kept."""
    return None if value is None else os.fspath(value)


def _opt_tuple(value: Sequence[str] | None) -> tuple[str, ...] | None:
    """Lists (not strings: refused by the check) as tuples, so a job stays hashable."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(value)
    return cast("tuple[str, ...] | None", value)  # None, or what the check refuses


def _playlists(value: Sequence[str]) -> tuple[str, ...]:
    names: object = _opt_tuple(value)
    if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
        raise InvalidArgumentError("playlists", "expected a sequence of playlist names")
    out: list[str] = []
    for name in names:
        name = name.strip()
        if not name or any(unicodedata.category(c) == "Cc" for c in name):
            raise InvalidArgumentError("playlists", f"not a playlist name: {name!r:.60}")
        if name not in out:
            out.append(name)
    return tuple(out)


@attrs.frozen
class SubtitleSpec:
    """A subtitle for a job: a local ``.srt`` ``path`` (uploaded first) or a ``url``."""

    language: str
    """The subtitle's language, an ISO 639 code."""
    path: str | None = attrs.field(default=None, converter=_opt_path)
    """A local SRT file, checked and uploaded first; or give ``url``."""
    url: str | None = None
    """An http(s) address the client fetches the file from (the source policy, the
    job's ``headers``) and uploads to the platform, as a video file goes."""

    def __attrs_post_init__(self) -> None:
        check.language(self.language)
        if (self.path is None) == (self.url is None):
            raise InvalidArgumentError("subtitles", "give exactly one of path or url")
        if self.url is not None:
            check.http_url(self.url, "subtitles.url")
        if self.path is not None and "\0" in self.path:
            raise InvalidArgumentError("subtitles.path", "has a NUL: no file has such a name")


_VARIABLE = re.compile(r"VIDAPI_[A-Z0-9][A-Z0-9_]{0,113}_TOKEN")
"""An ``account``'s variable: ``VIDAPI_``, a name (capitals, digits and ``_``), then
``_TOKEN`` (``VIDAPI_NEWS_TOKEN``): the prefix keeps a manifest from sending ``PATH``,
a cloud's or a CI's secret (``AWS_SESSION_TOKEN``, ``GITHUB_TOKEN``...) as a token."""
_A_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def check_variable(account: object) -> str:
    """``account``, the name of a variable holding an account's token; ``AccountError``
    otherwise, naming it only when it is a name (never echoing anything else)."""
    if isinstance(account, str) and _VARIABLE.fullmatch(account):
        return account
    said = f"{account} is not" if isinstance(account, str) and _A_NAME.fullmatch(account) else "not"
    raise AccountError(
        f"{said} the name of a variable holding an account's token: VIDAPI_<NAME>_TOKEN, "
        "capitals, digits and _ (e.g. VIDAPI_NEWS_TOKEN); nothing was read"
    )


def check_account(account: object, profile: object, playlists: tuple[str, ...]) -> None:
    """``UploadJob``'s ``account`` (an environment variable's name) and ``profile``."""
    if account is not None:
        check_variable(account)
    if profile is not None:
        check.plain_text(check.text(profile, "profile", blank=False), "profile")
    if (account is not None or profile is not None) and playlists:
        raise InvalidArgumentError(
            "playlists", "go with the client's own account (no account or profile) for now"
        )


def _subtitles(value: Iterable[SubtitleSpec]) -> tuple[SubtitleSpec, ...]:
    specs = tuple(value)
    for spec in specs:
        if not isinstance(spec, SubtitleSpec):
            raise InvalidArgumentError("subtitles", "expected SubtitleSpec items")
    return specs


def _opt_origin(value: str | None) -> str | None:
    return SourcePolicy(origin=value).origin  # an IP address, or InvalidArgumentError


@attrs.frozen(kw_only=True)
class UploadJob:
    """One file to upload and turn into a video. Checked when built."""

    path: str | None = attrs.field(default=None, converter=_opt_path)
    """A local file; or give ``url``."""
    title: str
    """The video's title."""
    channel: str
    """The video's category slug (``"news"``)."""
    url: str | None = attrs.field(default=None, repr=False)
    """An http(s) file streamed through to the platform (``Client.upload_from_url``)
    instead of a local ``path``, or an object of an S3-compatible store
    (``s3://bucket/key``, the ``s3`` extra). It may hold a signature: hidden from repr."""
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
    description: str | None = None
    """The description (at most 3,000 characters); ``None``: not sent."""
    tags: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    """The tags, in order (a list is taken too)."""
    language: str | None = None
    """The spoken language, an ISO 639-1 code."""
    private: bool | None = None
    """Whether the video is private."""
    is_created_for_kids: bool = False
    """Whether it is declared as made for children (always sent, as by ``upload_video``)."""
    explicit: bool | None = None
    """Whether it is explicit content."""
    publish_date: datetime | None = None
    """A scheduled publication (time-zone aware)."""
    expiry_date: datetime | None = None
    """When it stops being available (time-zone aware)."""
    geoblocking: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    """``("deny", "fr", "de")``: where it may be watched."""
    thumbnail: str | None = attrs.field(default=None, converter=_opt_path, repr=False)
    """A local image or an http(s) url, set on the video once it exists
    (``Client.set_thumbnail``). A url may hold a signature: hidden from repr."""
    playlists: tuple[str, ...] = attrs.field(default=(), converter=_playlists)
    """Playlist names: each is created once per batch if the account has none of that
    name, and the video is added to it (in the order of the jobs)."""
    account: str | None = None
    """The name of an environment variable holding the access token of the account
    that creates this job's video (a manifest's ``account``; read when the job runs,
    never stored nor shown): ``VIDAPI_<NAME>_TOKEN``, capitals, digits and ``_``
    (``AccountError`` otherwise); ``None``: the client's own. Each account has its own
    quota window (``BatchUploader(quota=)``)."""
    profile: str | None = None
    """API v2: the profile this job's video is created under (a manifest's
    ``profile``: one API key, several channels); ``None``: the client's."""
    key: str | None = None
    """Identifies the job across runs. Default: derived from the file's absolute path,
    size and modification time (stable while the file is unchanged; no need to read it),
    or from the url."""
    origin: str | None = attrs.field(default=None, converter=_opt_origin)
    """The IP address of the feed that named this job's sources (``vidapi batch URL``
    sets it): its video, thumbnail and subtitle urls are judged with it as the client's
    ``SourcePolicy.origin`` wherever the job runs, a shared queue's worker too (a feed
    fetched from a public address cannot name an internal one); ``"unknown"``: a feed
    fetched through a proxy from a name (the proxy resolved it), judged as public. ``None``:
    the client's policy alone."""

    @property
    def where(self) -> str:
        """The path (its control characters and bytes that were not UTF-8 escaped: one
        line of text), or the url without its query (which may hold a signature)."""
        if self.path is None and not is_s3_url(self.url):
            return url_for_humans(self.url or "")
        # a path, or an object's name (no query, no credentials: as it is)
        text = self.path if self.path is not None else self.url or ""
        if text.isascii() and text.isprintable():
            return text  # no control character (the usual path: no loop over it)
        return "".join(
            c.encode("unicode_escape", "backslashreplace").decode()
            if unicodedata.category(c) in ("Cc", "Cs")
            else c
            for c in text
        )

    def __attrs_post_init__(self) -> None:
        if (self.path is None) == (self.url is None):
            raise InvalidArgumentError("path", "give exactly one of path= and url=")
        if self.url is not None:
            if is_s3_url(self.url):  # an object of an S3-compatible store
                S3Object.from_url(self.url, "url")
            else:
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
        if not (self.title.isascii() and self.title.isprintable()) and any(
            unicodedata.category(c) == "Cc" for c in self.title
        ):
            raise InvalidArgumentError("title", "has a control character (a NUL, a newline...)")
        check.channel(self.channel)
        check.password(self.password)
        if self.key is not None:
            check_key(self.key)
        check_account(self.account, self.profile, self.playlists)
        for name in ("published", "live"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgumentError(name, "expected True or False")
        video_form(self.metadata_arguments())  # the client's own check of every field
        if self.tags is not None and len(self.tags) > MAX_JOB_TAGS:
            raise InvalidArgumentError(
                "tags",
                f"{len(self.tags)} tags; at most {MAX_JOB_TAGS} in a batch job (its video "
                "also carries the batch's two bookkeeping tags: its key's and its origin's)",
            )
        if self.thumbnail is not None and self.thumbnail.lower().startswith(("http:", "https:")):
            check.http_url(self.thumbnail, "thumbnail")

    def metadata_arguments(self) -> dict[str, Any]:
        """The metadata given, as ``create_video``'s keyword arguments (title, channel,
        published, and each other field that is not ``None``)."""
        given: dict[str, Any] = {
            "title": self.title,
            "channel": self.channel,
            "published": self.published,
        }
        for name in METADATA_FIELDS:
            value = getattr(self, name)
            if value is not None:
                given[name] = list(value) if isinstance(value, tuple) else value
        return given

    def metadata(self) -> dict[str, Any]:
        """What a journal keeps of a done job to see what changed on a re-run: each
        field as the platform's form writes it, the thumbnail (a url without
        credentials or signature), the playlists, and under ``kept`` what a re-run
        does not change (whether a password is given, never the password: a journal
        records a digest of it, ``kept_metadata``; live; the
        subtitles' languages)."""
        out: dict[str, Any] = dict(video_form(self.metadata_arguments()))
        if self.thumbnail is not None:
            out["thumbnail"] = (
                source_identity(self.thumbnail)
                if self.thumbnail.lower().startswith(("http:", "https:"))
                else os.path.abspath(self.thumbnail)
            )
        out["playlists"] = list(self.playlists)
        out["kept"] = {
            "protected": self.password is not None,  # kept_metadata: a digest of it
            "live": self.live,
            "subtitles": sorted(spec.language for spec in self.subtitles),
        }
        return out


DIGEST_ROUNDS: Final = 20_000
"""PBKDF2-SHA256 rounds of a kept password's digest (the journal's, a queue spec's)."""


def password_digest(password: str, salt: bytes | None = None) -> str:
    """What is kept of a video password, never the password: ``pbkdf2-sha256$ROUNDS$
    SALT$DIGEST`` (a fresh random salt, or ``salt``)."""
    salt = os.urandom(16) if salt is None else salt
    done = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, DIGEST_ROUNDS)
    return f"pbkdf2-sha256${DIGEST_ROUNDS}${salt.hex()}${done.hex()}"


@functools.lru_cache(maxsize=256)
def same_password(digest: str, password: str) -> bool:
    """Whether ``password`` is the one ``digest`` (``password_digest``'s) was made of;
    ``False`` for text that is no digest of ours. Cached: a batch compares one
    password with one digest once (20,000 rounds are milliseconds)."""
    try:
        name, rounds, salt, _ = digest.split("$")
        if name != "pbkdf2-sha256" or int(rounds) != DIGEST_ROUNDS:
            return False
        return hmac.compare_digest(password_digest(password, bytes.fromhex(salt)), digest)
    except ValueError:
        return False


@functools.lru_cache(maxsize=256)
def _kept_digest(password: str) -> str:
    return password_digest(password)


def kept_metadata(job: UploadJob) -> dict[str, Any]:
    """``job.metadata()`` as a journal records it: whether a password is given becomes
    a digest of it (one per password per process), so that a re-run can tell another
    password from the same one (``same_kept_password``)."""
    metadata = job.metadata()
    if job.password is not None:
        metadata["kept"]["protected"] = _kept_digest(job.password)
    return metadata


async def password_digests(job: UploadJob, record_metadata: object = None) -> None:
    """Off the event loop, the digests a job's password needs (20,000 rounds each):
    its own (``kept_metadata``) and its comparison with a record's (``metadata_now``);
    cached, so that those calls then cost nothing on the loop."""
    if job.password is None:
        return
    kept = record_metadata.get("kept") if isinstance(record_metadata, Mapping) else None
    mark = kept.get("protected") if isinstance(kept, Mapping) else None
    await asyncio.to_thread(_kept_digest, job.password)
    if isinstance(mark, str):
        await asyncio.to_thread(same_password, mark, job.password)


def same_kept_password(mark: object, password: str | None) -> bool:
    """Whether ``password`` is the one a record's ``kept.protected`` says: ``False``
    (none), ``True`` (a record that kept only that one was given: any password is that
    one) or a digest."""
    if password is None or mark is False:
        return password is None and mark is False
    return mark is True or (isinstance(mark, str) and same_password(mark, password))


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


def job_source(job: UploadJob) -> str:
    """The source a journal records for ``job``: its absolute path (a name's bytes
    that are not UTF-8 as ``\\xNN``: a journal holds text), or its url without
    credentials or signature (``source_identity``)."""
    if job.url is not None:
        return source_identity(job.url)
    assert job.path is not None
    path = os.path.abspath(job.path)
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def shown_source(source: str) -> str:
    """A recorded source as a message names it: a url without its query."""
    return url_for_humans(source) if source.startswith(("http:", "https:")) else source


def url_key(url: str) -> str:
    """The default key of a url job: a digest of ``source_identity(url)``, so that no
    key or tag holds (a digest of) a credential or signature; a re-run skips the job
    once done, whatever signature its url carries then. An object's ``s3://`` name: a
    digest of the whole name (its ``#`` and ``?X-Amz-...`` are the key's own text)."""
    if is_s3_url(url):
        text = f"s3\0{url}".encode("utf-8", "surrogateescape")
        return hashlib.sha256(text).hexdigest()[:24]
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
    """Already done in an earlier run (per the journal), with the same metadata."""
    UPDATED = "updated"
    """Done in an earlier run; its metadata changed since, and was updated on the video
    (the file was not sent again)."""
    ADOPTED = "adopted"
    """Not in the journal, but its video was on the platform already (found by the
    job's tag, of this account, with the job's title): adopted in this run, with no
    upload and no create (the fields that differed sent as one update)."""
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
    moved: str | None = None
    """A done job whose source is not the one the journal recorded, given again by the
    same manifest or feed (the old platform moved its files): the recorded source (a
    url without its query). The job stays done (skipped, or updated if only its
    metadata changed): its file is not sent again."""
    failed_at: str | None = None
    """A failed job's step when its stage does not say it: ``"thumbnail"`` or
    ``"subtitles"`` (fetching, carrying or sending that file; a thumbnail or subtitle
    url is fetched before the video is created). ``None``: ``stage`` says it."""

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
    updated: int = 0
    """Jobs done in an earlier run whose metadata this run updated."""
    adopted: int = 0
    """Jobs whose video the platform held already (``JobStatus.ADOPTED``)."""
    quota: Mapping[str, tuple[int, int, float]] = attrs.field(factory=dict)
    """Accounts waiting for their quota's window now (a paced batch): the account's
    name (its variable's, ``""``: the client's own) -> (places used, places in the
    window, when the next frees in seconds since the epoch)."""

    @property
    def rate(self) -> float:
        """Bytes per second since the batch started."""
        return self.bytes_sent / self.elapsed if self.elapsed > 0 else 0.0


@attrs.frozen
class BatchPlan:
    """What a batch would do (``BatchUploader.plan``): the keys of its jobs, by what
    would become of them."""

    create: tuple[str, ...]
    """Jobs not done yet: uploaded and created (or resumed)."""
    update: tuple[str, ...]
    """Jobs done whose metadata changed: one update each, no upload."""
    skip: tuple[str, ...]
    """Jobs done with the same metadata: nothing sent."""
    adopt: tuple[str, ...] = ()
    """Jobs the journal does not know whose video the platform holds (found by the
    job's tag, one listing of the account's videos): adopted, no upload, no create."""
    refuse: tuple[str, ...] = ()
    """Jobs the run would fail, naming why: a done key of another manifest or feed with
    another source, a video the platform holds for the key that another manifest or
    feed made (its origin tag), a done row whose ``account`` changed since, or a job to
    create one of whose urls the run would still fetch (video, thumbnail, subtitle)
    the source policy refuses
    (``deny``/``allow``, its feed's origin rule: judged, nothing connected), or one
    whose file or subtitle file is missing, or whose channel is no category."""
    refused_sources: Mapping[str, str] = attrs.field(factory=dict)
    """For each job in ``refuse`` because of its sources (the source policy, a file
    missing, a channel that is no category), the refusal's message."""


@attrs.frozen
class LeftOut:
    """A manifest row or feed item that gives no job, or what a source holds that a
    migration does not use (``jobs_from_source(left_out=...)``, the command line's
    output and report)."""

    where: str
    """The file and line (``feed.xml line 12 (guid)``); the file alone for ``ignored``."""
    status: str
    """``"failed"``: a value that cannot be used (the row's or item's reason);
    ``"skipped"``: an item with no video file (players, images or audio only...);
    ``"ignored"``: elements or columns the migration does not use, named once."""
    reason: str
    """Why (``"no video file: players only"``, ``"publish_date: 'May 3' is not an ISO
    8601 date"``)."""
    argument: str = attrs.field(default="source", repr=False, eq=False)
    """The argument an ``InvalidArgumentError`` raised for it names (the column)."""
    key: str | None = attrs.field(default=None, eq=False)
    """The key its job would have had, where the row or item says it (its ``key`` cell,
    its guid): the report's key column, so that a row made bad keeps its line in the
    key -> video map."""

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def _identity(job: UploadJob) -> tuple[str, str]:
    """What makes two rows one job (the key given, else the file or the url), and how
    a message names it (a url without its query, which may hold a signature)."""
    if job.key is not None:
        return f"key\0{job.key}", f"key {job.key!r}"
    if job.path is not None:
        real = os.path.realpath(job.path)
        return f"file\0{real}", f"file {real}"
    url = job.url or ""
    return f"url\0{url_key(url)}", f"url {url if is_s3_url(url) else url_for_humans(url)}"


def once_each(
    path: str, jobs: Iterable[tuple[int, UploadJob | LeftOut]], *, twice_fails: bool = False
) -> Iterator[UploadJob | LeftOut]:
    """The ``(line, job)`` pairs' jobs (and what was left out, as it comes); one that is
    another line's job again (the same key, or the same file or url without a key)
    raises ``InvalidArgumentError`` naming both lines (which one is meant? the whole
    source is refused); with ``twice_fails`` (a feed, read once as it runs), the later
    one is left out as failed. Keeps a short digest per job, not the job."""
    seen: dict[bytes, int] = {}  # a digest of each job's identity -> its line
    for line, job in jobs:
        if isinstance(job, LeftOut):
            yield job
            continue
        identity, shown = _identity(job)
        digest = hashlib.blake2b(
            identity.encode("utf-8", "surrogateescape"), digest_size=12
        ).digest()
        first = seen.setdefault(digest, line)
        if first != line and twice_fails:
            yield LeftOut(
                f"{path} line {line}",
                "failed",
                f"the same job as line {first} ({shown}): left out",
                argument="key",
                key=job.key,
            )
            continue
        if first != line:
            raise InvalidArgumentError(
                "key",
                f"{path} line {first} and line {line}: the same job twice "
                f"({shown}); one spec per job: remove a row, or give "
                "each its own key",
            )
        yield job


def only_jobs(
    entries: Iterable[UploadJob | LeftOut], left_out: Callable[[LeftOut], object] | None
) -> Iterator[UploadJob]:
    """The jobs of ``entries``; each ``LeftOut`` handed to ``left_out``, or without
    one: a failed row or item raises ``InvalidArgumentError`` (naming its file, line
    and reason), a skipped item or what is ignored is logged (INFO)."""
    for entry in entries:
        if not isinstance(entry, LeftOut):
            yield entry
        elif left_out is not None:
            left_out(entry)
        elif entry.status == "failed":
            raise InvalidArgumentError(entry.argument, str(entry))
        else:
            log.info("%s %s", entry.status, entry)
