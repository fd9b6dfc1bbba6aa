"""A job's pipeline as a table of stages: each ``Step`` names the stage it brings a job
to, the step that does it, and what it records; ``run_steps`` runs, in order, every step
whose stage the job's record has not reached. A re-run resumes where its record stands.

A new step goes into ``STEPS`` where it belongs (an "adopt" step before the upload, a
"wait for the quota" step before the create): a step that records nothing is a check,
run again on every resume until the job passes its stage.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from .. import _validate as check
from .._client import Client
from .._errors import (
    BadRequestError,
    FileError,
    InvalidArgumentError,
    QuotaExceededError,
    UsageError,
    VidapiError,
)
from .._internals import internals
from .._models import Subtitle, UploadSession, Video
from .._resources.video_metadata import own_tag
from .._s3 import is_s3_url
from .._transfer.files import LocalFile, inspect_file
from ._adopt import (
    Adoption,
    Held,
    belongs,
    bookkeeping,
    differences,
    earlier_tag,
    held_of,
    key_tags,
    tag,
)
from ._bucket import object_send, object_version
from ._duplicates import Duplicates
from ._jobs import UploadJob
from ._journal import JobLost, JobRecord, Journal, Stage
from ._playlists import Playlists
from ._progress import Tally
from ._quota import Pacing, QuotaStop, Slot
from ._spares import Spares
from ._updates import changed_fields, keep_tag, with_added

__all__ = ["CHECKS", "STEPS", "JobRun", "Pipeline", "Step", "earlier_tag", "run_steps", "tag"]


log = logging.getLogger("vidapi_async.batch")

SOURCE_VERSION = "source_etag"
"""Where a record of an object's chunked upload in flight keeps the object's ETag (its
``metadata``, which a job has once done only): a resume needs the same version."""


@attrs.define
class JobRun:
    """One job on its way through the steps: the job, its record (written as it goes)
    and what its disk checks found."""

    job: UploadJob
    record: JobRecord
    local: LocalFile | FileError | None = None
    """Its file checked (``None``: a url job), or why it cannot be sent."""
    subtitles: dict[str, LocalFile] | UsageError = attrs.Factory(dict)
    """Its subtitle files checked, by language, or the first broken one."""
    seq: int | None = None
    """Its place in ``BatchUploader.run`` (playlists get videos in this order)."""
    slot: Slot | None = None
    """Its place in its account's quota window (a paced batch), once taken."""
    adopted: Held | None = None
    """The video the platform held for it, adopted in this run (no upload, no create)."""

    @property
    def video_id(self) -> str:
        """The job's video (a step after the create)."""
        assert self.record.video_id is not None
        return self.record.video_id


@attrs.frozen
class Step:
    """One row of the table: while a job's record is before ``stage``, ``run`` runs."""

    stage: Stage
    """The stage the step brings the job to."""
    run: Callable[[Pipeline, JobRun], Awaitable[None]]
    """The step (a ``Pipeline`` method)."""
    records: str
    """What it records in the journal."""


async def run_steps(pipeline: Pipeline, run: JobRun, steps: Sequence[Step] | None = None) -> None:
    """Each step of ``steps`` (``STEPS``), in order, whose stage ``run``'s record has
    not reached (a step may move it further: to ``done`` at once, skipping the rest)."""
    for step in STEPS if steps is None else steps:
        if run.record.stage.rank < step.stage.rank:
            await step.run(pipeline, run)


class Pipeline:
    """The steps of one batch's jobs, and what they share: the client, the journal,
    the upload settings, the addresses fetched ahead, the playlists, the quota."""

    def __init__(
        self,
        client: Client,
        journal: Journal,
        *,
        uploads: Mapping[str, Any],
        spares: Spares,
        playlists: Playlists,
        tally: Tally,
        quota: QuotaStop,
        duplicates: Duplicates,
        waiting: Callable[[], int],
        ready_timeout: float | None,
        pacing: Pacing | None = None,
        adoption: Adoption | None = None,
    ) -> None:
        self.client = client
        self.journal = journal
        self.uploads = dict(uploads)
        """``chunked``, ``workers``, ``read_size`` and ``range_size``, as the batch says."""
        self.spares = spares
        self.playlists = playlists
        self.tally = tally
        self.quota = quota
        self.duplicates = duplicates
        self.adoption = Adoption(client) if adoption is None else adoption
        """The platform's videos by bookkeeping tag, listed once per run."""
        self.adopt_only = False
        """Jobs are adopted or fail: nothing is uploaded, created or updated, and an
        adopted job is recorded done at once (``BatchUploader(adopt_only=True)``)."""
        self.waiting = waiting
        """How many queued jobs no pipeline has taken yet (addresses fetched ahead)."""
        self.ready_timeout = ready_timeout
        """``None``: jobs do not wait for their video's encoding; else how long."""
        self.pacing = pacing
        """Each account's quota window (``BatchUploader(quota=)``), or ``None``: the
        first refusal stops the batch (``quota``)."""
        self.fenced = hasattr(journal, "claim")
        """A fenced journal (PostgreSQL): a write just before each create and send."""
        self._channels: dict[str, InvalidArgumentError | None] = {}

    async def advance(self, record: JobRecord, stage: Stage, **changes: Any) -> None:
        """Record ``stage`` (and ``changes``) for the job, its last error cleared."""
        for name, value in changes.items():
            setattr(record, name, value)
        record.stage = stage
        record.error = None
        await self.journal.save(record)

    # --- checks: every input before the first byte is sent ------------------------------

    async def check_subtitle_files(self, run: JobRun) -> None:
        """A broken or missing subtitle file fails the job here, not after its video
        exists."""
        if isinstance(run.subtitles, UsageError):
            raise run.subtitles

    async def check_file(self, run: JobRun) -> None:
        """A file that cannot be sent fails the job before anything is asked for."""
        if isinstance(run.local, FileError):
            raise run.local

    async def check_offered(self, run: JobRun) -> None:
        """Before any address is asked for: an unknown channel, or what the client's API
        dialect does not offer (v2: subtitle files, live, thumbnails, playlists by
        name), is refused with no side effect on the platform."""
        job = run.job
        offered = internals(self.client).check_offered
        if job.subtitles:
            offered("upload_subtitle")
        if job.live:
            offered("make_live")
        if job.thumbnail is not None:
            offered("set_thumbnail")
        if job.playlists:  # found by name (listed), created, filled
            for operation in ("playlists.mine", "playlists.create", "playlists.add_video"):
                offered(operation)
        await self._check_channel(job.channel)

    async def _check_channel(self, channel: str) -> None:
        """``upload_video``'s check of a channel against the platform's categories,
        once per distinct channel in a batch (its verdict kept)."""
        if channel not in self._channels:
            try:
                await internals(self.client).check_category(channel)
                self._channels[channel] = None
            except InvalidArgumentError as exc:
                self._channels[channel] = exc
        refused = self._channels[channel]
        if refused is not None:
            raise InvalidArgumentError("channel", refused.message)

    # --- the quota ---------------------------------------------------------------------

    async def wait_for_quota(self, run: JobRun) -> None:
        """A paced batch: the job takes a place in its account's window before its
        upload (waiting, in turn, until there is one), so that no upload runs ahead of
        the quota; its create is counted in the window from when it ends."""
        if self.pacing is not None and run.slot is None:
            run.slot = await self.pacing.window(run.job.account).take()

    async def give_back(self, run: JobRun) -> None:
        """The job ended: a place it took and never sent a create with is free again."""
        if self.pacing is not None and run.slot is not None:
            await self.pacing.window(run.job.account).give_back(run.slot)
            run.slot = None

    # --- upload ------------------------------------------------------------------------

    async def upload(self, run: JobRun, *, again: bool = False) -> None:
        """Send the job's file (or have the platform fetch its url); ``again``: after
        the platform lost it, from ``creating`` (a record never moves back)."""
        if not again:
            self.quota.check()
        job, record, local = run.job, run.record, run.local
        assert not isinstance(local, FileError)
        etag: str | None = None  # an object's: the version sent
        if local is None and job.url is not None and is_s3_url(job.url):
            local, etag = await object_version(job.url)  # sent as a file is, by object_send
        watch = self.tally.watch(record.key, job.where, None if local is None else local.size)
        if local is None:
            assert job.url is not None
            uploaded = await self.client.uploads.from_url(
                job.url,
                headers=job.headers,
                upload_session=await self._address(run),
                progress=watch,
                read_size=self.uploads["read_size"],
            )
        else:
            uploaded = await self._send(run, local, watch, again=again, etag=etag)
            if uploaded is None:
                return  # resumed, and recorded
        self.tally.files.pop(record.key, None)  # off the list of uploads in flight
        if not _acts(run):  # (the next job's may be another account's: none fetched for it)
            self.spares.ahead(self.waiting())  # the next job's address, during this create
        await self.advance(
            record,
            record.stage if again else Stage.UPLOADED,
            file_url=uploaded.url,
            upload_url=None,
            metadata=None,  # (an object's version, kept while its upload could resume)
        )

    async def _address(self, run: JobRun) -> UploadSession:
        """An upload address for the job: a spare fetched ahead for the client's own
        account, one asked for now by a job of another account (its token's)."""
        if _acts(run):
            return await self.client.get_upload_session()
        return await self.spares.take()

    async def _send(
        self,
        run: JobRun,
        local: LocalFile,
        watch: Callable[[int, int], None] | None,
        *,
        again: bool,
        etag: str | None = None,
    ) -> Any:
        """Send a file (checked already: the client does not check it again), chunked
        as the batch says; a chunked upload's address is recorded first, and one
        recorded by an earlier run is resumed (``None``: resumed and recorded). An
        object's (``etag``: the version a HEAD saw) is recorded with its version, and
        resumed only if the object is that version still."""
        record = run.record
        kwargs: dict[str, Any] = {
            "progress": watch,
            "read_size": self.uploads["read_size"],
            "range_size": self.uploads["range_size"],
            "filename": None,
            "upload_session": None,
            "resume": False,
            "chunked": False,
            "workers": self.uploads["workers"],
        }
        chunked = self.uploads["chunked"]
        if chunked if chunked is not None else self.client.uploads.chunks(local.size):
            kwargs["chunked"] = True
            if not again and await self._resumed(record, local, kwargs, run.job, etag):
                return None
            session = await self._address(run)
            await self.advance(
                record,
                record.stage if again else Stage.UPLOADING,
                upload_url=session.upload_url,
                progress_url=session.progress_url,
                **({} if etag is None else {"metadata": {SOURCE_VERSION: etag}}),
            )
            kwargs["upload_session"] = session
        else:
            kwargs["upload_session"] = await self._address(run)
        return await object_send(self.client, run.job, local, kwargs, etag)

    async def _resumed(
        self,
        record: JobRecord,
        local: LocalFile,
        kwargs: dict[str, Any],
        job: UploadJob,
        etag: str | None,
    ) -> bool:
        """Resume the chunked upload an earlier run recorded, if any, if its address
        still takes it and, for an object, if the object is still the version recorded
        with it (else its missing ranges would come from another version): recorded
        ``uploaded`` then."""
        if not (record.stage is Stage.UPLOADING and record.upload_url and record.progress_url):
            return False
        if etag is not None and (record.metadata or {}).get(SOURCE_VERSION) != etag:
            log.info(
                "job %s: its object changed since its upload started; starting over", record.key
            )
            return False
        session = UploadSession(record.upload_url, record.progress_url)
        try:
            uploaded = await object_send(
                self.client,
                job,
                local,
                {**kwargs, "upload_session": session, "resume": True},
                etag,
            )
        except VidapiError as exc:  # the old address is gone or refused
            log.info(
                "job %s: cannot resume its upload (%s); starting over",
                record.key,
                type(exc).__name__,
            )
            return False
        await self.advance(
            record, Stage.UPLOADED, file_url=uploaded.url, upload_url=None, metadata=None
        )
        return True

    # --- adopt -------------------------------------------------------------------------

    async def adopt(self, run: JobRun) -> None:
        """A job the journal knows nothing sent for: the video the platform holds under
        its tag (one listing per batch, ``_adopt``), if one passes every check, is
        adopted: no upload, no create; the fields the job gives that differ on it are
        sent as one update (the bookkeeping tag kept)."""
        record = run.record
        # its own tag only: an earlier release's tag (a digest) is a key another job may
        # have (a job whose key is that digest), looked for only after a crash at creating
        held = await self.adoption.find([tag(record.key)], run.job, record.key)
        if held is None:
            if self.adopt_only:
                raise UsageError(
                    "no video on the platform carries its tag (with its title): not adopted, "
                    "and an adopt-only batch uploads nothing; run without it to upload it"
                )
            return
        run.adopted = held
        if self.adopt_only:  # its metadata as unknown: a later run sends one update of it
            await self.advance(record, Stage.DONE, video_id=held.video_id, metadata=None)
            return
        job = run.job
        given = job.metadata_arguments()
        fields = {name: given[name] for name in differences(held, job) if name in given}
        if fields:
            with own_tag(tag(record.key)):  # the batch's own tag, not a user's
                await self.client.update_video(held.video_id, **keep_tag(fields, tag(record.key)))
        log.info(
            "job %s: adopted video %s, which the platform holds for it", record.key, held.video_id
        )
        stage, done_now = self._made(run)
        await self.advance(record, stage, video_id=held.video_id, **done_now)

    # --- create ------------------------------------------------------------------------

    def _made(self, run: JobRun) -> tuple[Stage, dict[str, Any]]:
        """The stage a job reaches once its video exists, and what it records then:
        with nothing to do after (no subtitles, not live, no thumbnail, no playlist, no
        wait for the encoding), done with its metadata at once (one record, not one per
        empty stage)."""
        job = run.job
        nothing_after = (
            not job.subtitles
            and not job.live
            and self.ready_timeout is None
            and job.thumbnail is None
            and not job.playlists
        )
        if nothing_after:
            return Stage.DONE, {"metadata": with_added(job)}
        return Stage.CREATED, {}

    async def create(self, run: JobRun) -> None:
        """The job's one video: found by its tag if a create may have been sent before
        (a crash at ``creating``, or a job taken over), else created."""
        record = run.record
        created, done_now = self._made(run)
        video = await self._made_before(run)
        if video is not None:  # made by an earlier create: with the metadata it sent
            record.video_id = video.id
            if created is Stage.DONE:
                await self._send_changes(run)
            await self.advance(record, created, video_id=video.id, **done_now)
            return
        self.quota.check()
        video = await self._create(run)
        try:
            await self.advance(record, created, video_id=video.id, **done_now)
        except JobLost:  # made while another worker held the job
            await self.duplicates.drop_video(record.key, video.id)
            raise

    async def _made_before(self, run: JobRun) -> Video | None:
        """The video a create sent before the last run stopped (or by a worker that
        held the job before) made, found by the job's tag: one whose bookkeeping tag is
        the job's, of this account, with the job's title (``_adopt.belongs``)."""
        record = run.record
        if not (record.stage is Stage.CREATING or (record.runs > 1 and self.fenced)):
            return None
        await self.advance(record, Stage.CREATING)  # fenced: still ours?
        tags = key_tags(record.key)
        me = await self.adoption.me(run.job)
        # compared with what the create sent (recorded with 'creating'), not with the
        # job as the manifest has it now: a title edited since then is sent as an update
        sent = (record.metadata or {}).get("title")
        as_sent = attrs.evolve(run.job, title=sent) if isinstance(sent, str) else run.job
        for name in tags:
            for found in await self.client.videos.find_by_tag(name):
                video = found
                if video.tags is None:  # not in the dialect's listing: read
                    video = await self.client.videos.get(
                        found.id, fields=("id", "title", "owner", "tags")
                    )
                if bookkeeping(video.tags) not in tags:
                    continue  # carries the tag, but another job's is its last
                why = belongs(held_of(video), tags, as_sent, me)
                if why is None:
                    return video
                log.warning(
                    "job %s: video %s carries its tag but is not adopted: %s",
                    record.key,
                    video.id,
                    why,
                )
        return None

    async def _create(self, run: JobRun) -> Video:
        """Create the video from the uploaded file; if the platform no longer knows the
        file (an upload from an earlier run that has expired), upload it again, once."""
        job, record = run.job, run.record
        for again in (False, True):
            # what the create sends, recorded before it is sent: the video holds it
            # once made (adopted after a crash, or resumed after a failure)
            await self.advance(record, Stage.CREATING, metadata=job.metadata())
            assert record.file_url is not None
            try:
                return await self._paced_create(run)
            except BadRequestError as exc:
                if again or _bad_param(exc) != "url":
                    raise
                log.info("job %s: the uploaded file is gone; uploading it again", record.key)
                local = None
                if job.path is not None:
                    local = await asyncio.to_thread(inspect_file, job.path)
                # recorded at 'creating' still: a record never moves to an earlier stage
                await self.upload(attrs.evolve(run, local=local), again=True)
        raise AssertionError("unreachable")

    async def _paced_create(self, run: JobRun) -> Video:
        """The create request; in a paced batch, one the platform refuses for the quota
        (its clock, or creates made elsewhere, differ from the window) waits as the
        refusal says and is sent again: never a failure."""
        job, record = run.job, run.record
        while True:
            slot = run.slot
            if slot is not None:
                slot.sent = True
            try:
                assert record.file_url is not None
                return await self.client.create_video(
                    url=record.file_url,
                    **job.metadata_arguments(),
                    dedupe_tag=tag(record.key),
                    password=job.password,
                )
            except QuotaExceededError as exc:
                if slot is None or self.pacing is None:
                    raise
                window = self.pacing.window(job.account)
                await window.refused(slot, exc)
                run.slot = await window.take()
                await self.advance(record, Stage.CREATING)  # fenced: still ours, just before
            finally:
                if slot is not None and slot.sent and self.pacing is not None:
                    await self.pacing.window(job.account).ended(slot)  # counted from now

    # --- after the create --------------------------------------------------------------

    async def subtitles(self, run: JobRun) -> None:
        """Each subtitle not recorded yet, sent then recorded (by language); on a
        re-run, those an earlier run sent and died before recording are listed first."""
        job, record = run.job, run.record
        if job.subtitles and (record.runs > 1 or run.adopted is not None):
            present = {
                sub.language
                for sub in await self.client.subtitles.list(run.video_id)
                if sub.language is not None
            }
            record.subtitles_done = sorted(set(record.subtitles_done) | present)
        for spec in job.subtitles:
            if spec.language in record.subtitles_done:
                continue
            if self.fenced:
                await self.advance(record, Stage.CREATED)  # still ours, just before
            track = await self._send_subtitle(run, spec.language, spec.path, spec.url)
            record.subtitles_done.append(check.language(spec.language))
            try:
                await self.advance(record, Stage.CREATED)
            except JobLost:  # sent while another worker held the job
                await self.duplicates.drop_subtitle(record, track)
                raise
        await self.advance(record, Stage.SUBTITLES)

    async def _send_subtitle(
        self, run: JobRun, language: str, path: object, url: str | None
    ) -> Subtitle:
        if path is not None:
            assert isinstance(run.subtitles, dict)
            return await internals(self.client).attach_subtitle(
                run.video_id,
                run.subtitles[language],
                language=check.language(language),
                dedupe=True,
            )
        assert url is not None
        carried = await internals(self.client).carry(url, run.job.headers)
        return await self.client.create_subtitle(
            run.video_id, language=language, url=carried, dedupe=True
        )

    async def password(self, run: JobRun) -> None:
        """The password travelled with the create: the video was never public."""
        await self.advance(run.record, Stage.PASSWORD)

    async def live(self, run: JobRun) -> None:
        """A live job's video made a live stream."""
        if run.job.live and not (run.adopted is not None and run.adopted.live):
            await self.client.live.convert(run.video_id)
        await self.advance(run.record, Stage.LIVE)

    async def finish(self, run: JobRun) -> None:
        """The thumbnail and the playlists (both idempotent: set again, added again
        after a crash changes nothing, so no stage of their own), then the wait for the
        encoding (``wait_ready``)."""
        job = run.job
        if job.thumbnail is not None:
            thumbnail = await internals(self.client).carry(job.thumbnail, job.headers)
            await self.client.set_thumbnail(run.video_id, thumbnail)
        await self.playlists.add(run.video_id, job.playlists, run.seq)
        if self.ready_timeout is not None and not job.live:
            await self.client.videos.wait_until_ready(run.video_id, timeout=self.ready_timeout)
        await self.advance(run.record, Stage.READY)

    async def done(self, run: JobRun) -> None:
        """The job done, with the metadata its video holds (a re-run compares): what
        the job's metadata changed since its create (a resume after the manifest was
        edited) sent first."""
        await self._send_changes(run)
        await self.advance(run.record, Stage.DONE, metadata=with_added(run.job))

    async def _send_changes(self, run: JobRun) -> None:
        """One update of what differs between the metadata the job's video holds (as
        the record says: what its create sent; unknown in a record of an earlier
        release, so all of it) and the job's now."""
        sent = run.record.metadata or {}
        fields = changed_fields(run.job, sent, run.job.metadata())
        if fields:
            mine = tag(run.record.key)
            with own_tag(mine):  # the batch's own tag, kept in the tags an update sets
                await self.client.update_video(run.video_id, **keep_tag(fields, mine))


STEPS: tuple[Step, ...] = (
    Step(Stage.SUBTITLES, Pipeline.check_subtitle_files, "nothing (a check)"),
    Step(Stage.UPLOADED, Pipeline.check_file, "nothing (a check)"),
    Step(Stage.CREATED, Pipeline.check_offered, "nothing (a check)"),
    Step(Stage.UPLOADING, Pipeline.adopt, "created (or done) with the video the platform holds"),
    Step(Stage.CREATED, Pipeline.wait_for_quota, "nothing (a wait for the account's quota)"),
    Step(Stage.UPLOADED, Pipeline.upload, "uploading (a chunked upload's address), uploaded"),
    Step(Stage.CREATED, Pipeline.create, "creating, then created (or done) with the video id"),
    Step(Stage.SUBTITLES, Pipeline.subtitles, "each language sent, then subtitles"),
    Step(Stage.PASSWORD, Pipeline.password, "password"),
    Step(Stage.LIVE, Pipeline.live, "live"),
    Step(Stage.READY, Pipeline.finish, "ready"),
    Step(Stage.DONE, Pipeline.done, "done, with the job's metadata"),
)
"""A job's pipeline, in order."""
CHECKS = tuple(step for step in STEPS if step.records == "nothing (a check)")
"""The steps that check a job's inputs, recording nothing."""


def _acts(run: JobRun) -> bool:
    """Whether the job acts for an account or profile of its own."""
    return run.job.account is not None or run.job.profile is not None


def _bad_param(exc: BadRequestError) -> str | None:
    """The parameter a 400 names (``error.error_data.param``), if any."""
    error = exc.body.get("error")
    data = error.get("error_data") if isinstance(error, Mapping) else None
    param = data.get("param") if isinstance(data, Mapping) else None
    return param if isinstance(param, str) else None
