"""The live-stream operations of ``Client``: a video with ``mode=live``."""

from __future__ import annotations

import logging

from ._convert import structure
from ._errors import InvalidArgumentError
from ._fields import LIVE_FIELDS
from ._models import Video
from ._observe import VIDEO_ID, describe, operation
from ._video_metadata import video_form
from ._videos import VideoCalls

__all__ = ["LiveCalls"]

log = logging.getLogger("vidapi_async")


class LiveCalls(VideoCalls):
    """Live operations of ``Client`` (mixed in; the machinery is ``Client``'s)."""

    @operation("create_live_stream")
    async def create_live_stream(
        self,
        *,
        title: str,
        channel: str,
        published: bool = True,
        is_created_for_kids: bool = False,
        start_time: int | None = None,
        end_time: int | None = None,
    ) -> Video:
        """Create a live stream: a video with ``mode=live``. Needs scope manage_videos.

        ``start_time``/``end_time`` (UNIX timestamps) schedule it. The result carries
        the live fields, ``live_publish_url`` (the ingest address) among them.
        """
        form = video_form(locals())
        form.append(("mode", "live"))
        for name, value in (("start_time", start_time), ("end_time", end_time)):
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise InvalidArgumentError(name, "expected a UNIX timestamp (int)")
                form.append((name, str(value)))
        request = self._create_request(form, fields=LIVE_FIELDS, scope="manage_videos")
        video = structure(await self._call(request), Video, what=request.what)
        describe(self, VIDEO_ID, video.id)
        return video

    @operation("make_live")
    async def make_live(self, video_id: str | Video) -> Video:
        """Turn an existing video into a live stream (``mode=live``)."""
        return await self._post_video(video_id, [("mode", "live")], LIVE_FIELDS, "manage_videos")

    @operation("get_live_stream")
    async def get_live_stream(self, video_id: str | Video) -> Video:
        """A live stream's live fields (on air, ingest address, recording state, ...)."""
        return await self._get_video(video_id, LIVE_FIELDS, "manage_videos")
