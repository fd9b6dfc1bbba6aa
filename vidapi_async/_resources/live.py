"""``client.live``: live streams, videos with ``mode=live`` (scope ``manage_videos``);
in API v2, its livestream resource (scopes ``live.manage``, ``live.read``)."""

from __future__ import annotations

import logging

from .._dialects.operations import Operation
from .._errors import InvalidArgumentError
from .._models import Video
from .._observe import operation
from .service import Service
from .video_metadata import VideoMetadata

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
        metadata = VideoMetadata.checked(
            title=title,
            channel=channel,
            published=published,
            is_created_for_kids=is_created_for_kids,
        )
        times = []
        for name, value in (("start_time", start_time), ("end_time", end_time)):
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise InvalidArgumentError(name, "expected a UNIX timestamp (int)")
                times.append((name, value))
        return await self._dialect.create_live_stream(self._requester, metadata, times)

    @operation("make_live")
    async def convert(self, video_id: str | Video) -> Video:
        """Turn an existing video into a live stream (``mode=live``)."""
        self._dialect.refuse(Operation.MAKE_LIVE)
        return await self._dialect.make_live(self._requester, video_id)

    @operation("get_live_stream")
    async def get(self, video_id: str | Video) -> Video:
        """A live stream's live fields (on air, ingest address, recording state, ...).

        In API v2: the livestream read at ``GET /livestreams/{id}`` (scope
        ``live.read``; the path is UNCONFIRMED)."""
        return await self._dialect.get_live_stream(self._requester, video_id)
