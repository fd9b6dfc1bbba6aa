"""The account's own calls, mixed into ``Client``: ``me()``, ``set_thumbnail()``.

Kept apart from the client's machinery (``_client``) so that the client file holds only
how requests are made; these only say which requests.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from . import _protocol as wire
from . import _validate as check
from ._convert import structure
from ._models import UploadedFile, User, Video

if TYPE_CHECKING:
    from ._sources import UploadSource

__all__ = ["USER_FIELDS", "AccountCalls"]

USER_FIELDS: Final = ("id", "username", "screenname", "fullname")


class AccountCalls:
    """``me`` and ``set_thumbnail``; ``Client`` provides the machinery."""

    base_url: str

    def _api(self, method: str, path: str, **kw: Any) -> wire.Request:
        raise NotImplementedError  # pragma: no cover - Client's

    async def _call(self, request: wire.Request) -> Mapping[str, Any]:
        raise NotImplementedError  # pragma: no cover - Client's

    async def upload_file(self, source: UploadSource | None = None) -> UploadedFile:
        raise NotImplementedError  # pragma: no cover - Client's

    async def me(self, fields: Iterable[str] = USER_FIELDS) -> User:
        """``GET /me``: the account the token belongs to."""
        names = ",".join(check.field_names(fields))
        request = self._api("GET", "/me", query=[("fields", names)])
        return structure(await self._call(request), User, what=request.what)

    async def set_thumbnail(
        self, video_id: str, source: str | os.PathLike[str] | UploadSource
    ) -> Video:
        """Give a video its thumbnail (``thumbnail_url`` written on the video).

        ``source`` is either an ``http(s)://`` address the platform fetches itself, or
        a local image in any form ``upload_file`` takes (a path, bytes, a file, chunks):
        it is uploaded first and its uploaded address written. A path that happens to
        start with ``http://`` is given as a ``pathlib.Path``.
        """
        vid = check.video_id(video_id)
        if isinstance(source, str) and source.lower().startswith(("http://", "https://")):
            url = check.http_url(source, "source")
        else:
            url = (await self.upload_file(source)).url
        request = self._api(
            "POST",
            f"/video/{vid}",
            query=[("fields", "id,thumbnail_url")],
            form=[("thumbnail_url", url)],
            scope="manage_videos",
        )
        return structure({"id": vid, **await self._call(request)}, Video, what=request.what)
