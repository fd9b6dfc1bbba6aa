"""Adoption: the platform is the source of truth. A job its journal does not know (a
lost journal, a new machine) may have its video on the platform already, tagged with the
job's bookkeeping tag (``vidapi-<key>``). Before such a job uploads, the batch looks its
tag up in one listing of the account's videos (made once per batch, when the first job
needs it; never a request per job) and adopts the video: no upload, no create.

A video is the job's only if it passes every check (``belongs``): its last tag in the
reserved prefixes (``vidapi-``, ``vidapih-``) is the job's (the create appends it last,
and updates keep it there, so a user tag that looks like another job's is never the
last), it belongs to the account doing the batch, and its title is the job's. A video
that carries the tag but fails a check is not adopted (said at WARNING), and the job
makes its own.

The listing may lag (a search index): what the batch itself made since it was taken is
in its journal, which every job reads first; adoption only looks at jobs the journal
does not know past ``uploading``.
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
from .._errors import UsageError, VidapiError
from .._models import Video
from ._jobs import METADATA_FIELDS, UploadJob

__all__ = [
    "RESERVED_PREFIXES",
    "Adoption",
    "Held",
    "belongs",
    "bookkeeping",
    "differences",
    "earlier_tag",
    "key_tags",
    "tag",
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
    """A video's bookkeeping tag: the last of its tags in the reserved prefixes."""
    found = None
    for name in tags or ():
        if name.startswith(RESERVED_PREFIXES):
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
    return Held(video.id, video.title, video.owner, video.mode == "live", metadata)


def belongs(held: Held, tags: Iterable[str], job: UploadJob, me: str | None) -> str | None:
    """Why ``held`` (found under one of ``tags``) is not the job's video, or ``None``
    when it is: the account's, with the job's title."""
    if me is not None and held.owner is not None and held.owner != me:
        return f"it belongs to account {held.owner}, not this one"
    if held.title is not None and held.title.strip() != job.title.strip():
        return f"its title is {held.title!r:.80}, not the job's {job.title!r:.80}"
    return None


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

    async def find(self, key_tags: Iterable[str], job: UploadJob, key: str) -> Held | None:
        """The video the platform holds for the job (its bookkeeping tag among
        ``key_tags``, in its account), passing every check; ``None`` if there is none."""
        index = await self.index(job)
        tags = list(key_tags)
        for name in tags:
            for held in index.get(name, ()):
                why = await self.refused(held, tags, job)
                if why is None:
                    return held
                log.warning(
                    "job %s: video %s carries its tag %s but is not adopted: %s",
                    key,
                    held.video_id,
                    name,
                    why,
                )
        return None

    async def refused(self, held: Held, tags: Iterable[str], job: UploadJob) -> str | None:
        """Why ``held`` is not the job's video (``belongs``), or ``None``."""
        return belongs(held, tags, job, await self.me(job))


_TAG_SAFE = re.compile(r"[A-Za-z0-9_-]{1,80}")


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
