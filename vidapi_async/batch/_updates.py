"""A done job run again: its metadata compared with the one recorded, and what changed
sent as one update (the file is never sent again)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from .._client import Client
from .._errors import NotFoundError, VidapiError
from .._internals import internals
from .._resources.video_metadata import own_tag
from ._accounts import account_refused
from ._adopt import ORIGIN_PREFIX, RESERVED_PREFIXES, origin_of, own_tags
from ._jobs import (
    CLEARED,
    JobResult,
    JobStatus,
    UploadJob,
    kept_metadata,
    password_digests,
    same_kept_password,
    shown_source,
)
from ._journal import JobLost, JobRecord, Journal
from ._playlists import Playlists
from ._progress import Tally

__all__ = [
    "changed",
    "changed_fields",
    "done_before",
    "keep_tag",
    "kept_on_platform",
    "metadata_now",
    "update_video",
    "with_added",
]

log = logging.getLogger("vidapi_async.batch")


def metadata_now(job: UploadJob, record: JobRecord, *, quiet: bool = False) -> dict[str, Any]:
    """The metadata of a done job now, to compare with its record: what a re-run does
    not change (a password given, live, the subtitles) is kept as recorded, and a
    change there is said at WARNING (not applied, never silently)."""
    new = job.metadata()
    old = record.metadata
    if old is not None and isinstance(old.get("kept"), Mapping):
        mark = old["kept"].get("protected")
        if same_kept_password(mark, job.password):  # the digest recorded: compared
            new["kept"]["protected"] = mark
    if old is not None and isinstance(old.get("kept"), Mapping) and old["kept"] != new["kept"]:
        if not quiet:
            names = sorted(n for n in new["kept"] if old["kept"].get(n) != new["kept"][n])
            log.warning(
                "job %s is done: a re-run does not change its %s (not applied; change the "
                "video with the client, or give the job a new key for a new video)",
                record.key,
                ", ".join("password" if n == "protected" else n for n in names),
            )
        new["kept"] = old["kept"]
    return new


def with_added(job: UploadJob) -> dict[str, Any]:
    """The metadata a job's first run records: the video is new, so every playlist it
    is in, the batch put it in (``added``: the ones a re-run may take it out of)."""
    metadata = kept_metadata(job)
    if job.playlists:
        metadata["added"] = list(job.playlists)
    return metadata


def keep_tag(fields: dict[str, Any], bookkeeping: Sequence[str]) -> dict[str, Any]:
    """``update_video``'s ``fields`` with the job's ``bookkeeping`` tags (``own_tags``:
    its origin's, then its key's) kept last in the tags they set (an update replaces
    every tag: without them, the video could no longer be found as the job's)."""
    if bookkeeping and "tags" in fields:
        mine = [t for t in fields["tags"] if not t.startswith(RESERVED_PREFIXES)]
        fields["tags"] = [*mine, *bookkeeping]
    return fields


async def kept_on_platform(
    client: Client, video_id: str, fields: Mapping[str, Any], bookkeeping: Sequence[str]
) -> list[str]:
    """``bookkeeping`` (``own_tags``), with the origin tag the video carries before it
    when the job has none to give (a record of no origin: an earlier release's, a job
    of no origin): an update of its tags never removes an origin tag from the platform.
    Read only when the update sets tags."""
    if "tags" not in fields or any(t.startswith(ORIGIN_PREFIX) for t in bookkeeping):
        return list(bookkeeping)
    video = await client.videos.get(video_id, fields=("id", "tags"))
    carried = origin_of(video.tags)
    return list(bookkeeping) if carried is None else [carried, *bookkeeping]


def gone(exc: NotFoundError, video_id: str) -> NotFoundError:
    """The 404 of an update of a done job's video (the same error, its status and body
    kept) saying what it means (the video was deleted on the platform since) and how
    to make it again."""
    said = exc
    said.message = (
        f"{exc.message}: the job's video {video_id} is gone from the platform (deleted "
        "since?), and the journal holds the job done with it. To make it again, run the "
        "job with a new journal (the other jobs adopt their videos; this one is uploaded "
        "anew), or give its row a new key"
    )
    said.args = (str(said),)
    return said


def changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether a done job's recorded metadata (``None``: recorded before journals kept
    it, so unknown) differs from its metadata now (``added`` is the batch's own)."""
    if old is None:
        return True
    return {k: v for k, v in old.items() if k != "added"} != {
        k: v for k, v in new.items() if k != "added"
    }


def changed_fields(
    job: UploadJob, old: Mapping[str, Any], new: Mapping[str, Any]
) -> dict[str, Any]:
    """``update_video``'s keyword arguments that bring a video holding ``old`` to
    ``new`` (``UploadJob.metadata()``'s fields; thumbnail, playlists and ``kept``
    aside): each changed field as the job gives it, or cleared if it gives none."""
    given = job.metadata_arguments()
    fields: dict[str, Any] = {}
    for name in {*old, *new} - {"thumbnail", "playlists", "kept", "added"}:
        if old.get(name) == new.get(name):
            continue
        if name in given:
            fields[name] = given[name]
        elif name in CLEARED:
            fields[name] = CLEARED[name]
    return fields


async def update_video(
    client: Client,
    playlists: Playlists,
    job: UploadJob,
    video_id: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    seq: int | None,
    bookkeeping: Sequence[str] = (),
) -> dict[str, Any]:
    """Send what differs between ``old`` and ``new`` (``UploadJob.metadata()``): one
    ``update_video`` with the changed fields only, the thumbnail if it changed, the
    video added to the playlists new to it and taken out of those the batch put it in
    that the job no longer names; the job's ``bookkeeping`` tags kept in the tags sent
    (``keep_tag``). The metadata to record."""
    fields = changed_fields(job, old, new)
    thumbnail = None  # a new one carried first: one that cannot be had sends nothing
    if job.thumbnail is not None and old.get("thumbnail") != new.get("thumbnail"):
        thumbnail = await internals(client).carry(job.thumbnail, job.headers)
    if fields:
        try:
            bookkeeping = await kept_on_platform(client, video_id, fields, bookkeeping)
            with own_tag(*bookkeeping):  # the batch's own tags, not a user's
                await client.update_video(video_id, **keep_tag(fields, bookkeeping))
        except NotFoundError as exc:
            raise gone(exc, video_id) from None
    if thumbnail is not None:
        await client.set_thumbnail(video_id, thumbnail)
    named = list(old.get("playlists") or ())
    # The playlists the batch put the video in (a journal written before it kept
    # them: all it named); one the video was in already is the user's, left alone.
    ours = list(old["added"]) if isinstance(old.get("added"), list) else named
    joined = [
        name
        for name in job.playlists
        if name not in named and not await playlists.holds(name, video_id)
    ]
    await playlists.add(video_id, joined, seq)
    for name in ours:
        if name not in job.playlists:
            await playlists.remove(video_id, name)
    added = [name for name in job.playlists if name in ours or name in joined]
    return {**new, "added": added} if added or new["playlists"] else dict(new)


async def done_before(
    client: Client,
    journal: Journal,
    playlists: Playlists,
    tally: Tally,
    job: UploadJob,
    record: JobRecord,
    seq: int | None,
    *,
    moved: str | None = None,
) -> JobResult:
    """A job the journal says is done: skipped if its metadata is as recorded, else
    one update of what changed (the file is never sent again); counted in ``tally``.
    ``moved``: the source the journal recorded, when the job's (in ``record`` now)
    moved: said, and recorded."""
    if moved is not None:
        log.warning(
            "job %s: its source moved from %s to %s; kept done (the file is not sent again)",
            record.key,
            moved,
            shown_source(record.source or ""),
        )

    def result(status: JobStatus, error: VidapiError | None = None) -> JobResult:
        if status is not JobStatus.LOST:
            tally.count(status.value)
        said = moved if status in (JobStatus.SKIPPED, JobStatus.UPDATED) else None
        return JobResult(
            job, record.key, status, record.video_id, record.stage, error, record.runs, said
        )

    await password_digests(job, record.metadata)
    new = metadata_now(job, record)
    unchanged = not changed(record.metadata, new)
    try:
        if not unchanged:
            assert record.video_id is not None
            old = record.metadata or {}
            record.metadata = await update_video(
                client,
                playlists,
                job,
                record.video_id,
                old,
                new,
                seq,
                own_tags(record.key, record.origin),
            )
        if moved is not None or not unchanged:
            await journal.save(record)
    except VidapiError as raised:
        exc = account_refused(job, raised)  # an account's token refused: its alone
        log.warning("job %s: its update failed: %s", record.key, exc)
        return result(JobStatus.FAILED, exc)
    except JobLost:
        return result(JobStatus.LOST)
    return result(JobStatus.SKIPPED if unchanged else JobStatus.UPDATED)
