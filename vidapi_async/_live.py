"""``client.live``: live streams, videos with ``mode=live`` (scope ``manage_videos``);
in API v2, its livestream resource (scopes ``live.manage``, ``live.read``)."""

from __future__ import annotations

import logging

from . import _validate as check
from ._convert import structure
from ._errors import InvalidArgumentError
from ._fields import LIVE_FIELDS
from ._models import Video
from ._observe import VIDEO_ID, describe, operation
from ._protocol import _v2 as v2
from ._service import Service
from ._video_metadata import video_form
from ._videos import create_request, post_video, read_video

__all__ = ["LiveStreams"]

log = logging.getLogger("vidapi_async")


class LiveStreams(Service):
    """Live streams: a new one (``create``), a video turned live (``convert``), a live
    stream's live fields (``get``). Everything here needs scope ``manage_videos``."""

    @operation("create_live_stream")
    async def create(
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

        In API v2: ``POST /profiles/{profile_id}/livestreams`` (scope ``live.manage``),
        read back as the same ``Video``: ``mode`` ``"live"``, ``id`` the livestream's.
        """
        form = video_form(locals())
        times = []
        for name, value in (("start_time", start_time), ("end_time", end_time)):
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise InvalidArgumentError(name, "expected a UNIX timestamp (int)")
                times.append((name, value))
        if self._requester.v2:
            given: dict[str, object] = {**dict(form), **dict(times)}
            given.update(published=published, is_created_for_kids=is_created_for_kids)
            profile_id = await self._requester.profile_id()
            request = v2.create_livestream(self._requester.base_url, profile_id, given)
            data = v2.livestream_from(await self._requester.call(request))
            video = structure(data, Video, what=request.what)
            describe(self._requester, VIDEO_ID, video.id)
            return video
        form.append(("mode", "live"))
        form += [(name, str(value)) for name, value in times]
        request = create_request(self._requester, form, fields=LIVE_FIELDS, scope="manage_videos")
        video = structure(await self._requester.call(request), Video, what=request.what)
        describe(self._requester, VIDEO_ID, video.id)
        return video

    @operation("make_live")
    async def convert(self, video_id: str | Video) -> Video:
        """Turn an existing video into a live stream (``mode=live``)."""
        self._requester.refuse("make_live")
        return await post_video(
            self._requester, video_id, [("mode", "live")], LIVE_FIELDS, "manage_videos"
        )

    @operation("get_live_stream")
    async def get(self, video_id: str | Video) -> Video:
        """A live stream's live fields (on air, ingest address, recording state, ...).

        In API v2: the livestream read at ``GET /livestreams/{id}`` (scope
        ``live.read``; the path is UNCONFIRMED)."""
        if self._requester.v2:
            vid = check.video_id(video_id)
            describe(self._requester, VIDEO_ID, vid)
            request = v2.get_livestream(self._requester.base_url, vid)
            data = v2.livestream_from(await self._requester.call(request))
            return structure({"id": vid, **data}, Video, what=request.what)
        return await read_video(self._requester, video_id, LIVE_FIELDS, "manage_videos")
