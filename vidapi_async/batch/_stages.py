"""A job's pipeline as a table of stages: each ``Step`` names the stage it brings a job
to, the step that does it, and what it records; ``run_steps`` runs, in order, every step
whose stage the job's record has not reached. A re-run resumes where its record stands.

A new step goes into ``STEPS`` where it belongs (an "adopt" step before the upload, a
"wait for the quota" step before the create): a step that records nothing is a check,
run again on every resume until the job passes its stage.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from .. import _validate as check
from .._errors import (
    FileError,
    InvalidArgumentError,
    UsageError,
)
from .._internals import internals
from .._models import Subtitle
from .._resources.video_metadata import own_tag
from ._adopt import (
    differences,
    earlier_tag,
    own_tags,
    tag,
)
from ._create_step import CreateStep
from ._journal import RANKS, JobLost, Stage
from ._pipeline_state import JobRun
from ._updates import changed_fields, keep_tag, kept_on_platform, with_added

__all__ = [
    "CHECKS",
    "NOT_HELD",
    "STEPS",
    "JobRun",
    "Pipeline",
    "Step",
    "earlier_tag",
    "run_steps",
    "tag",
]


log = logging.getLogger("vidapi_async.batch")


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
    ranks = RANKS
    for step in STEPS if steps is None else steps:
        if ranks[run.record.stage] < ranks[step.stage]:
            await step.run(pipeline, run)


NOT_HELD = (
    "no video on the platform carries its tag (made from its manifest or feed, or with its "
    "title): not adopted, and an adopt-only batch uploads nothing; run without it to upload it"
)
"""Why an adopt-only batch fails a job (and its plan refuses it)."""


class Pipeline(CreateStep):
    """The steps of one batch's jobs, and what they share: the client, the journal,
    the upload settings, the addresses fetched ahead, the playlists, the quota."""

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
        offered = self.machinery.check_offered
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

    async def judge_carried(self, run: JobRun) -> None:
        """Its thumbnail's and subtitles' urls judged by the source policy (and the
        feed that named them) before anything is fetched or sent: a refused one fails
        the job now, not after its video was published without it."""
        job = run.job
        if job.thumbnail is not None:
            with run.at("thumbnail"):
                await internals(self.client).judge(job.thumbnail)
        for spec in job.subtitles:
            if spec.url is not None:
                with run.at("subtitles"):
                    await internals(self.client).judge(spec.url)

    async def carry(self, run: JobRun) -> None:
        """Its thumbnail and subtitle files named by url fetched and carried to the
        platform's upload host before its video file is sent and its video created: one
        that cannot be had (a 404, a refusal) fails the job at it, with no video made.
        Kept for this run (``JobRun.carried``); a later run carries them again."""
        job = run.job
        carry = self.machinery.carry
        if job.thumbnail is not None and job.thumbnail not in run.carried:
            with run.at("thumbnail"):
                run.carried[job.thumbnail] = await carry(job.thumbnail, job.headers)
        for spec in job.subtitles:
            if spec.url is not None and spec.url not in run.carried:
                with run.at("subtitles"):
                    run.carried[spec.url] = await carry(spec.url, job.headers)

    async def _carried(self, run: JobRun, source: str) -> str:
        """``source`` as carried before the create, or (a run that resumed after it,
        or adopted its video) carried now."""
        carried = run.carried.get(source)
        if carried is None:
            carried = await internals(self.client).carry(source, run.job.headers)
        return carried

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

    # --- adopt -------------------------------------------------------------------------

    async def adopt(self, run: JobRun) -> None:
        """A job whose create the journal knows was never sent (at ``pending``, or left at
        ``uploading``/``uploaded`` by a run that stopped): the video the platform holds under
        its tag (one listing per batch, ``_adopt``), if one passes every check, is
        adopted: no upload, no create; the fields the job gives that differ on it are
        sent as one update (the bookkeeping tags kept). One made from another manifest
        or feed fails the job (``_adopt.refusal``), nothing sent."""
        record = run.record
        # its own tag only: an earlier release's tag (a digest) is a key another job may
        # have (a job whose key is that digest), looked for only after a crash at creating
        held = await self.adoption.find(run.job, record.key, record.origin)
        if held is None:
            if self.adopt_only:
                raise UsageError(NOT_HELD)
            return
        run.adopted = held
        if self.adopt_only:  # its metadata as unknown: a later run sends one update of it
            await self.advance(record, Stage.DONE, video_id=held.video_id, metadata=None)
            return
        job = run.job
        given = job.metadata_arguments()
        fields = {name: given[name] for name in differences(held, job) if name in given}
        if fields:
            mine = own_tags(record.key, record.origin)
            with own_tag(*mine):  # the batch's own tags, not a user's
                await self.client.update_video(held.video_id, **keep_tag(fields, mine))
        log.info(
            "job %s: adopted video %s, which the platform holds for it", record.key, held.video_id
        )
        stage, done_now = self._made(run)
        await self.advance(record, stage, video_id=held.video_id, **done_now)

    # --- create ------------------------------------------------------------------------

    def _made(
        self, run: JobRun, sent: dict[str, Any] | None = None
    ) -> tuple[Stage, dict[str, Any]]:
        """The stage a job reaches once its video exists, and what it records then:
        with nothing to do after (no subtitles, not live, no thumbnail, no playlist, no
        wait for the encoding), done with its metadata at once (one record, not one per
        empty stage). ``sent``: the metadata its create sent (``kept_metadata``, recorded
        with ``creating``), which is that metadata when there is no playlist: a copy of
        it, not a second reading of the job."""
        job = run.job
        nothing_after = (
            not job.subtitles
            and not job.live
            and self.ready_timeout is None
            and job.thumbnail is None
            and not job.playlists
        )
        if nothing_after:
            return Stage.DONE, {"metadata": with_added(job) if sent is None else dict(sent)}
        return Stage.CREATED, {}

    async def create(self, run: JobRun) -> None:
        """The job's one video: found by its tag if a create may have been sent before
        (a crash at ``creating``, or a job taken over), else created."""
        record = run.record
        video = await self._made_before(run)
        if video is not None:  # made by an earlier create: with the metadata it sent
            record.video_id = video.id
            created, done_now = self._made(run)
            if created is Stage.DONE:
                await self._send_changes(run)
            await self.advance(record, created, video_id=video.id, **done_now)
            return
        self.quota_stop(run)
        video = await self._create(run)
        created, done_now = self._made(run, record.metadata)  # as its create sent it
        try:
            await self.advance(record, created, video_id=video.id, **done_now)
        except JobLost:  # made while another worker held the job
            await self.duplicates.drop_video(record.key, video.id)
            raise

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
            with run.at("subtitles"):
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
        carried = await self._carried(run, url)
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
            with run.at("thumbnail"):
                thumbnail = await self._carried(run, job.thumbnail)
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
            mine = own_tags(run.record.key, run.record.origin)
            mine = await kept_on_platform(self.client, run.video_id, fields, mine)
            with own_tag(*mine):  # the batch's own tags, kept in the tags an update sets
                await self.client.update_video(run.video_id, **keep_tag(fields, mine))


STEPS: tuple[Step, ...] = (
    Step(Stage.SUBTITLES, Pipeline.check_subtitle_files, "nothing (a check)"),
    Step(Stage.UPLOADED, Pipeline.check_file, "nothing (a check)"),
    Step(Stage.CREATED, Pipeline.check_offered, "nothing (a check)"),
    Step(Stage.CREATED, Pipeline.judge_carried, "nothing (its carried urls judged)"),
    # every job whose create was never sent (pending, uploading, uploaded): a journal
    # left before its create while another journal made the video must not make another
    Step(Stage.CREATING, Pipeline.adopt, "created (or done) with the video the platform holds"),
    Step(Stage.CREATED, Pipeline.wait_for_quota, "nothing (a wait for the account's quota)"),
    Step(Stage.CREATED, Pipeline.carry, "nothing (its carried files, held for this run)"),
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
