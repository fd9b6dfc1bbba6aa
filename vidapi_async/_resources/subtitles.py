"""``client.subtitles``: create (from a URL or a local .srt), list and delete a video's
subtitles."""

from __future__ import annotations

import asyncio
import builtins
import logging
import os
from typing import TYPE_CHECKING

from .. import _validate as check
from .._convert import structure
from .._dialects.operations import Operation
from .._models import Subtitle, Video
from .._observe import VIDEO_ID, describe, operation
from .._requester import Requester
from .._retry import create_checked
from .._transfer.files import LocalFile, check_srt_file
from .._transfer.uploads import Uploads
from .fields import SUBTITLE_FIELDS
from .service import Service

if TYPE_CHECKING:
    from .._dialects.dialect import Dialect

__all__ = ["Subtitles"]

log = logging.getLogger("vidapi_async")


class Subtitles(Service):
    """A video's subtitles (scope ``manage_subtitles`` for writes, when the token's
    scopes are known)."""

    def __init__(self, requester: Requester, dialect: Dialect, uploads: Uploads) -> None:
        super().__init__(requester, dialect)
        self._uploads = uploads

    @operation("create_subtitle")
    async def create(
        self,
        video_id: str | Video,
        *,
        language: str,
        url: str,
        format: str = "SRT",
        dedupe: bool = False,
    ) -> Subtitle:
        """``POST /video/<id>/subtitles`` from a subtitle file already online at ``url``.

        A create is retried only when it surely did not take effect. With ``dedupe``,
        after a failure whose outcome is unknown the video's subtitles are listed first
        and one in the same language is adopted instead of creating a second.
        """
        self._dialect.refuse(Operation.CREATE_SUBTITLE)
        lang = check.language(language)
        video_id = check.video_id(video_id)
        describe(self._requester, VIDEO_ID, video_id)
        request = self._requester.api(
            "POST",
            f"/video/{video_id}/subtitles",
            query=[("fields", ",".join(SUBTITLE_FIELDS))],
            form=[
                ("language", lang),
                ("url", check.http_url(url, "url")),
                ("format", check.subtitle_format(format)),
            ],
            idempotent=False,
        )
        if not dedupe:
            return structure(await self._requester.call(request), Subtitle, what=request.what)

        async def create() -> Subtitle:
            return structure(await self._requester.call_once(request), Subtitle, what=request.what)

        async def find() -> Subtitle | None:
            return next((s for s in await self.list(video_id) if s.language == lang), None)

        return await create_checked(self._requester.retry, create, find, what=request.what)

    @operation("upload_subtitle")
    async def upload(
        self,
        video_id: str | Video,
        path: str | os.PathLike[str],
        *,
        language: str,
        dedupe: bool = False,
    ) -> Subtitle:
        """Check a local ``.srt`` file, upload it, and attach it to the video.

        The file must parse as SRT first; ``SubtitleFileError`` names the broken cue.
        ``dedupe`` as for ``create``.
        """
        self._dialect.refuse(Operation.UPLOAD_SUBTITLE)
        video_id = check.video_id(video_id)
        describe(self._requester, VIDEO_ID, video_id)
        lang = check.language(language)
        local = await asyncio.to_thread(check_srt_file, path)
        return await self._attach_subtitle(video_id, local, language=lang, dedupe=dedupe)

    async def _attach_subtitle(
        self, video_id: str | Video, local: LocalFile, *, language: str, dedupe: bool
    ) -> Subtitle:
        """Upload a subtitle file already checked (``check_srt_file``) and attach it."""
        uploaded = await self._uploads._send_file(local)
        return await self.create(video_id, language=language, url=uploaded.url, dedupe=dedupe)

    @operation("delete_subtitle")
    async def delete(self, subtitle_id: str) -> None:
        """``DELETE /subtitle/<id>``: remove one subtitle track."""
        self._dialect.refuse(Operation.DELETE_SUBTITLE)
        request = self._requester.api(
            "DELETE",
            f"/subtitle/{check.video_id(subtitle_id, 'subtitle_id')}",
            scope="manage_subtitles",
        )
        await self._requester.call(request)

    @operation("list_subtitles")
    async def list(self, video_id: str | Video) -> builtins.list[Subtitle]:
        """``GET /video/<id>/subtitles``: the video's subtitles (first 100)."""
        self._dialect.refuse(Operation.LIST_SUBTITLES)
        video_id = check.video_id(video_id)
        describe(self._requester, VIDEO_ID, video_id)
        request = self._requester.api(
            "GET",
            f"/video/{video_id}/subtitles",
            query=[("fields", ",".join(SUBTITLE_FIELDS)), ("limit", "100")],
        )
        data = await self._requester.call(request)
        items = data.get("list")
        if not isinstance(items, list):
            items = []
        return [structure(item, Subtitle, what=request.what) for item in items]
