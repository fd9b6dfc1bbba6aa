"""The create step's requests (``CreateStep``, a base of ``Pipeline``): the video an
earlier create made, found by the job's tag; the create, sent again once after an
upload again if the platform lost the uploaded file; in a paced batch, a create the
platform refuses for the quota waited for and sent again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

import attrs

from .._errors import (
    BadRequestError,
    QuotaExceededError,
)
from .._models import Video
from .._resources.video_metadata import own_tag
from .._transfer.files import inspect_file
from ._adopt import (
    belongs,
    bookkeeping,
    held_of,
    key_tags,
    origin_tag,
    tag,
)
from ._jobs import kept_metadata, password_digests
from ._journal import Stage
from ._pipeline_state import JobRun
from ._upload_step import UploadStep

__all__ = ["CreateStep"]

log = logging.getLogger("vidapi_async.batch")


class CreateStep(UploadStep):
    """``Pipeline.create``'s requests."""

    async def _made_before(self, run: JobRun) -> Video | None:
        """The video a create sent before the last run stopped (or by a worker that
        held the job before) made, found by the job's tag: one whose key tag is the
        job's, of this account, of the job's origin or with the title its create sent
        (``_adopt.belongs``)."""
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
                why = belongs(held_of(video), as_sent, me, record.origin)
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
            await password_digests(job)
            await self.advance(record, Stage.CREATING, metadata=kept_metadata(job))
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
                given = job.metadata_arguments()
                origin = origin_tag(record.origin)  # before the key's, which is last
                if origin is not None:
                    given["tags"] = [*given.get("tags", ()), origin]
                with own_tag(origin):  # the batch's own tag, not a user's
                    return await self.client.create_video(
                        url=record.file_url,
                        **given,
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


def _bad_param(exc: BadRequestError) -> str | None:
    """The parameter a 400 names (``error.error_data.param``), if any."""
    error = exc.body.get("error")
    data = error.get("error_data") if isinstance(error, Mapping) else None
    param = data.get("param") if isinstance(data, Mapping) else None
    return param if isinstance(param, str) else None
