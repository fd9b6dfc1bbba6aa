"""What a worker does with a video or subtitle it made after losing its job (fenced
journals: ``BatchUploader``'s docstring). The journal is the truth: once the job records
its own, ours is deleted unless it is that one; only the creator deletes, and never
something the journal holds."""

from __future__ import annotations

import asyncio
import logging
import time

from .._client import Client
from .._errors import VidapiError
from .._models import Subtitle
from ._journal import JobRecord, Journal, Stage

__all__ = ["Duplicates"]

log = logging.getLogger("vidapi_async.batch")


class Duplicates:
    """Deletes what this worker made for a job it lost, once the job settles."""

    def __init__(self, client: Client, journal: Journal, settle_for: float) -> None:
        self.client = client
        """The client that deletes."""
        self.journal = journal
        """The journal read for the job's own video or subtitles."""
        self.settle_for = settle_for
        """Seconds to wait for the job to record its video (or subtitles) before
        deciding (a shared queue: 4 × ``stalled_after``)."""

    async def settled(self, key: str, stage: Stage) -> JobRecord | None:
        """The job's record once it reaches ``stage`` (written by the worker that took
        the job over), polled for at most ``settle_for`` seconds; ``None`` if it did not."""
        deadline = time.monotonic() + self.settle_for
        while True:
            record = await self.journal.load(key)
            if record is not None and record.stage.rank >= stage.rank:
                return record
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(min(0.5, max(0.05, self.settle_for / 20)))

    async def drop_video(self, key: str, video_id: str) -> None:
        """This worker created ``video_id`` after losing the job. Once the job records
        its video, ours is deleted unless it is that one (the worker that took over
        found it by its tag and adopted it)."""
        try:
            record = await self.settled(key, Stage.CREATED)
        except asyncio.CancelledError:
            log.warning(
                "possible duplicate video %s for job %s: stopped before knowing", video_id, key
            )
            raise
        if record is None:
            log.warning(
                "possible duplicate video %s for job %s: the job records no video after %gs; kept",
                video_id,
                key,
                self.settle_for,
            )
        elif record.video_id != video_id:
            try:
                await self.client.videos.delete(video_id)
            except VidapiError as exc:
                log.warning(
                    "possible duplicate video %s for job %s: cannot delete it (%s)",
                    video_id,
                    key,
                    type(exc).__name__,
                )
            else:
                log.warning(
                    "job %s: deleted its duplicate video %s (the job's video is %s)",
                    key,
                    video_id,
                    record.video_id,
                )

    async def drop_subtitle(self, mine: JobRecord, track: Subtitle) -> None:
        """This worker sent the subtitle ``track`` after losing the job. Once the job's
        subtitles are done, ours is deleted if the video has another track in its
        language (the one the worker that took over sent); kept if it is the only one
        (adopted by that worker's listing)."""
        assert mine.video_id is not None
        try:
            record = await self.settled(mine.key, Stage.SUBTITLES)
        except asyncio.CancelledError:
            log.warning(
                "possible duplicate subtitle %s for job %s: stopped before knowing",
                track.id,
                mine.key,
            )
            raise
        others = []
        if record is not None:
            others = [
                sub.id
                for sub in await self.client.subtitles.list(mine.video_id)
                if sub.language == track.language and sub.id != track.id
            ]
        if record is None or not others or track.id is None:
            if record is None:
                log.warning(
                    "possible duplicate subtitle %s for job %s: the job's subtitles are "
                    "not done after %gs; kept",
                    track.id,
                    mine.key,
                    self.settle_for,
                )
            return
        try:
            await self.client.subtitles.delete(track.id)
        except VidapiError as exc:
            log.warning(
                "possible duplicate subtitle %s for job %s: cannot delete it (%s)",
                track.id,
                mine.key,
                type(exc).__name__,
            )
        else:
            log.warning(
                "job %s: deleted its duplicate subtitle %s (%s)", mine.key, track.id, track.language
            )
