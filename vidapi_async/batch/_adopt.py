"""Adoption: the platform is the source of truth. A job its journal does not know (a
lost journal, a new machine) may have its video on the platform already, tagged with the
job's bookkeeping tags: ``vidapi-<key>`` (its key, ``tag``) and, for a job of a known
manifest or feed (``BatchUploader.run(origin=)``), ``vidapih-origin-<digest>`` (where
it came from, ``origin_tag``). Before such a job uploads, the batch looks its key tag
up in one listing of the account's videos (made once per batch, when the first job
needs it; never a request per job) and adopts the video: no upload, no create.

A video is the job's only if it passes every check (``belongs``): its last key tag in
the reserved prefixes (``vidapi-``, ``vidapih-``) is the job's (the create appends it
last, and updates keep it there, so a user tag that looks like another job's is never
the last), it belongs to the account doing the batch, and it came from the job's
manifest or feed: its origin tag is the job's (then whatever its title: a title edited
since is sent as an update). A video made from another manifest or feed (another origin
tag) is never the job's: the job is refused (``refusal``), naming the key, the video
and both; so is a video carrying any origin tag for a job of no origin (run without
``origin=``: it cannot prove the same source). Where the video has no origin (an
earlier release's, a job's of no origin), its title must be the job's, as before. A video
that carries the tag but fails a check is not adopted (said at WARNING), and the job
makes its own.

The listing may lag (a search index): what the batch itself made since it was taken is
in its journal, which every job reads first; adoption only looks at jobs whose create the
journal knows was never sent (``pending``, ``uploading``, ``uploaded``: a journal left
after an upload while another journal made the video adopts it, never a second one).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .._client import Client
from .._errors import InvalidArgumentError, UsageError, VidapiError
from .._models import Video
from ._jobs import METADATA_FIELDS, UploadJob, job_source, shown_source

__all__ = [
    "ORIGIN_PREFIX",
    "RESERVED_PREFIXES",
    "Adoption",
    "Held",
    "belongs",
    "bookkeeping",
    "differences",
    "earlier_tag",
    "key_tags",
    "one_key_advice",
    "origin_tag",
    "own_tags",
    "refusal",
    "tag",
    "tags_of",
]

log = logging.getLogger("vidapi_async.batch")

RESERVED_PREFIXES = ("vidapi-", "vidapih-")
"""The prefixes of the batch's bookkeeping tags (``_stages.tag``)."""

LISTED = (
    "id", "title", "owner", "tags", "mode", "channel", "published", *METADATA_FIELDS,
)  # fmt: skip
"""The fields the adoption listing asks for: the checks, and what is compared."""

_COMPARED_OUT = frozenset({"thumbnail", "playlists", "kept", "added"})
"""What a job's metadata holds that the platform's listing cannot tell."""


def bookkeeping(tags: Iterable[str] | None) -> str | None:
    """A video's key tag: the last of its tags in the reserved prefixes that is not
    an origin tag."""
    found = None
    for name in tags or ():
        if name.startswith(RESERVED_PREFIXES) and not name.startswith(ORIGIN_PREFIX):
            found = name
    return found


def origin_of(tags: Iterable[str] | None) -> str | None:
    """A video's origin tag (the last one), or ``None``: made by an earlier release, or
    by a job of no origin."""
    found = None
    for name in tags or ():
        if name.startswith(ORIGIN_PREFIX):
            found = name
    return found


def user_tags(tags: Iterable[str] | None) -> list[str]:
    """A video's tags without the batch's bookkeeping ones."""
    return [name for name in tags or () if not name.startswith(RESERVED_PREFIXES)]


@attrs.frozen
class Held:
    """A video the platform holds under a bookkeeping tag, as the listing showed it."""

    video_id: str
    title: str | None
    owner: str | None
    live: bool
    metadata: Mapping[str, Any] | None
    """Its metadata in ``UploadJob.metadata()``'s form (the description as a digest),
    or ``None`` where it could not be read so."""
    origin: str | None = None
    """Its origin tag (``origin_tag``), or ``None``."""


def _digest(text: object) -> str:
    return "sha256:" + hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()


def comparable(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata in ``UploadJob.metadata()``'s form as the listing compares it: what the
    platform cannot tell left out, the description as a digest (the index stays small)."""
    out = {k: v for k, v in metadata.items() if k not in _COMPARED_OUT}
    if "description" in out:
        out["description"] = _digest(out["description"])
    return out


def held_of(video: Video) -> Held:
    """A listed video as the index keeps it."""
    from .._resources.video_metadata import video_form

    given: dict[str, Any] = {}
    for name in ("title", "channel", "published", *METADATA_FIELDS):
        value = getattr(video, name, None)
        if value is not None:
            given[name] = value
    if "tags" in given:
        given["tags"] = user_tags(given["tags"])
    metadata: dict[str, Any] | None
    try:
        metadata = comparable(dict(video_form(given)))
    except (UsageError, TypeError, ValueError):  # a value the form cannot write: unknown
        metadata = None
    live = video.mode == "live"
    return Held(video.id, video.title, video.owner, live, metadata, origin_of(video.tags))


def belongs(held: Held, job: UploadJob, me: str | None, origin: str | None) -> str | None:
    """Why ``held`` (found under the job's key tag) is not the job's video, or ``None``
    when it is: the account's, and made from the job's ``origin`` (its manifest or
    feed: then whatever its title), or, where the video has no origin, with the job's
    title. ``foreign`` tells a video of another origin (any, for a job of none)."""
    if me is not None and held.owner is not None and held.owner != me:
        return f"it belongs to account {held.owner}, not this one"
    if held.origin is not None and held.origin in tags_of(origin):
        return None  # the job's own video: a title edited since is an update
    if foreign(held, origin):
        return f"it was made from another manifest or feed (its tag {held.origin})"
    if held.title is not None and held.title.strip() != job.title.strip():
        return f"its title is {held.title!r:.80}, not the job's {job.title!r:.80}"
    return None


def foreign(held: Held, origin: str | None) -> bool:
    """Whether ``held`` was made from another manifest or feed than ``origin``: it
    carries an origin tag that is not one of the job's (``tags_of``: the job's, and the
    form an earlier release gave it); a job of no origin (a shared queue's of an
    earlier release) cannot prove it is the same source: never its video."""
    if held.origin is None:
        return False
    mine = tags_of(origin)
    return not mine or held.origin not in mine


def refusal(key: str, held: Held, job: UploadJob, origin: str | None) -> InvalidArgumentError:
    """Why a job whose key tag is on a video made from another manifest or feed is
    refused (one key is one video): the key, the video, and both sides named."""
    return InvalidArgumentError(
        "key",
        f"key {key!r}: video {held.video_id} on the platform carries its tag but was "
        f"made from another manifest or feed (its tag {held.origin}; this one's "
        f"{origin_tag(origin) or 'none: a job of no manifest or feed'}); this job "
        f"gives it {shown_source(job_source(job))} ({origin}): {one_key_advice(None)}",
    )


def one_key_advice(made_from: str | None) -> str:
    """What a job refused for a key of another manifest or feed can do (the journal's
    refusal and the adoption's say the same): ``made_from``, the origin that made the
    video where known."""
    where = "" if made_from is None else f" ({made_from})"
    return (
        "one key is one video; if this is the same manifest or feed, moved or copied, run "
        f"it from the manifest or feed that made the video, at the same path or address{where}; "
        "else give this job its own key (that makes a second video, a duplicate if it is "
        "the same file)"
    )


def differences(held: Held, job: UploadJob) -> list[str]:
    """The fields the job gives whose value differs on the platform (all of them when
    the platform's could not be read)."""
    new = comparable(job.metadata())
    old = held.metadata or {}
    return sorted(name for name in new if held.metadata is None or old.get(name) != new[name])


def _who(job: UploadJob | None) -> tuple[str | None, str | None]:
    """The account (and API v2 profile) a job's requests act for: ``(None, None)``,
    the client's own."""
    return (None, None) if job is None else (job.account, job.profile)


class Adoption:
    """One batch's look at the platform, per account the batch acts for (a row's
    ``account``/``profile``; the client's own by default): that account's videos by
    bookkeeping tag, listed once when its first job needs them, and its id. Each is
    read under the job's own token (``_accounts.acting_for`` is in force)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        """The client that lists."""
        self._lock = asyncio.Lock()
        self._index: dict[tuple[str | None, str | None], dict[str, list[Held]]] = {}
        self._me: dict[tuple[str | None, str | None], str | None] = {}

    def new_run(self) -> None:
        """A new ``run`` lists again."""
        self._index = {}

    async def me(self, job: UploadJob | None = None) -> str | None:
        """The id of the account the job acts for (``None``: the dialect cannot say)."""
        who = _who(job)
        if who not in self._me:
            try:
                self._me[who] = (await self.client.account.me(fields=("id",))).id
            except (UsageError, VidapiError) as exc:
                log.debug("the account's id is unknown (%s): owners not compared", exc)
                self._me[who] = None
        return self._me[who]

    async def index(self, job: UploadJob | None = None) -> dict[str, list[Held]]:
        """The videos of the job's account carrying a bookkeeping tag, by that tag,
        oldest first: one listing per account per batch."""
        who = _who(job)
        async with self._lock:
            if who not in self._index:
                index: dict[str, list[Held]] = {}
                async for video in self.client.videos.mine(fields=LISTED):
                    name = bookkeeping(video.tags)
                    if name is not None:
                        index.setdefault(name, []).append(held_of(video))
                self._index[who] = index
                log.debug("adoption: %d videos carry a bookkeeping tag", len(index))
            return self._index[who]

    async def find(self, job: UploadJob, key: str, origin: str | None) -> Held | None:
        """The video the platform holds for the job (its key tag, in its account),
        passing every check: one made from its ``origin``, else the first with its
        title (where either has no origin); ``None`` if there is none; the job's
        ``refusal`` (``InvalidArgumentError``) when the only one is another manifest's
        or feed's."""
        name = tag(key)  # its own tag only: an earlier release's (a digest) may be a key
        other: Held | None = None
        by_title: Held | None = None
        for held in (await self.index(job)).get(name, ()):
            why = belongs(held, job, await self.me(job), origin)
            if why is None and held.origin is not None and held.origin in tags_of(origin):
                return held  # made from its origin: before one found by its title
            if why is None:
                by_title = by_title or held
            elif foreign(held, origin):
                other = other or held
            else:
                log.warning(
                    "job %s: video %s carries its tag %s but is not adopted: %s",
                    key,
                    held.video_id,
                    name,
                    why,
                )
        if by_title is None and other is not None:
            raise refusal(key, other, job, origin)
        return by_title


_TAG_SAFE = re.compile(r"[A-Za-z0-9_-]{1,80}")


def own_tags(key: str, origin: str | None) -> list[str]:
    """The bookkeeping tags a job's video carries, in their order (the key's last)."""
    mine = origin_tag(origin)
    return [tag(key)] if mine is None else [mine, tag(key)]


def tag(key: str) -> str:
    """The tag that marks the video a job created: ``vidapi-`` and the key itself when
    it is ASCII letters, digits, '-' and '_' (80 at most), else ``vidapih-`` and a hash
    of the key (a prefix no key's own tag has)."""
    if _TAG_SAFE.fullmatch(key):
        return f"vidapi-{key}"
    return f"vidapih-{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def earlier_tag(key: str) -> str | None:
    """The tag earlier releases gave a key that is hashed (``vidapi-`` and the hash):
    a job they left at ``creating`` looks its video up by it too."""
    if _TAG_SAFE.fullmatch(key):
        return None
    return f"vidapi-{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def key_tags(key: str) -> list[str]:
    """Every tag a video the job made may carry (``tag``, then ``earlier_tag``)."""
    earlier = earlier_tag(key)
    return [tag(key)] if earlier is None else [tag(key), earlier]


ORIGIN_PREFIX = "vidapih-origin-"
"""The prefix of a video's origin tag (``origin_tag``): inside the reserved ``vidapih-``,
and never a key's tag (those are ``vidapih-`` and 32 hexadecimal digits)."""


def tags_of(origin: str | None) -> tuple[str, ...]:
    """The origin tags a video made from ``origin`` carries: its own (none for a job of
    no origin)."""
    found = origin_tag(origin)
    return () if found is None else (found,)


def origin_tag(origin: str | None) -> str | None:
    """The tag that marks which manifest or feed made a video (``BatchUploader.run(
    origin=)``): ``vidapih-origin-`` and a digest of the origin (its path or address is
    not shown); ``None`` for jobs of no origin."""
    if origin is None:
        return None
    text = f"origin\0{origin}".encode("utf-8", "surrogatepass")  # a path's undecodable bytes
    return ORIGIN_PREFIX + hashlib.sha256(text).hexdigest()[:20]
