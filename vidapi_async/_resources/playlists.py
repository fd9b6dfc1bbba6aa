"""``client.playlists``: create, read, change, delete and list playlists, and the
videos in them. Writes need scope ``manage_playlists``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from .. import _validate as check
from .._dialects.operations import Operation
from .._errors import InvalidArgumentError
from .._models import Playlist, Video
from .._observe import operation
from .._sentinel import NOT_GIVEN, NotGiven
from .fields import PLAYLIST_FIELDS, PLAYLIST_SCOPE, VIDEO_FIELDS
from .service import Service

__all__ = ["Playlists"]


def _id(value: object) -> str:
    return check.video_id(value.id if isinstance(value, Playlist) else value, "playlist_id")


class Playlists(Service):
    """The caller's playlists. Ids may be given as text or as the ``Playlist`` itself."""

    @operation("playlists.create")
    async def create(
        self, *, name: str, description: str | None = None, private: bool = False
    ) -> Playlist:
        """``POST /me/playlists``: a new playlist (private ones are the owner's to see).

        Retried only when it surely did not take effect, as every create."""
        values: dict[str, object] = {
            "name": check.text(name, "name", blank=False),
            "private": check.boolean(private, "private"),
        }
        if description is not None:
            values["description"] = check.text(description, "description")
        return await self._dialect.create_playlist(self._requester, values)

    @operation("playlists.get")
    async def get(
        self, playlist_id: str | Playlist, fields: Iterable[str] = PLAYLIST_FIELDS
    ) -> Playlist:
        """``GET /playlist/<id>``: a playlist (another's private one is a ``ForbiddenError``)."""
        return await self._dialect.get_playlist(self._requester, _id(playlist_id), fields)

    @operation("playlists.update")
    async def update(
        self,
        playlist_id: str | Playlist,
        *,
        name: str | NotGiven = NOT_GIVEN,
        description: str | NotGiven = NOT_GIVEN,
        private: bool | NotGiven = NOT_GIVEN,
    ) -> Playlist:
        """``POST /playlist/<id>``: change ``name``, ``description`` or ``private``
        (only what is given is sent)."""
        values: dict[str, object] = {}
        if not isinstance(name, NotGiven):
            values["name"] = check.text(name, "name", blank=False)
        if not isinstance(description, NotGiven):
            values["description"] = check.text(description, "description")
        if not isinstance(private, NotGiven):
            values["private"] = check.boolean(private, "private")
        if not values:
            raise InvalidArgumentError("fields", "give at least one field to write")
        return await self._dialect.update_playlist(self._requester, _id(playlist_id), values)

    @operation("playlists.delete")
    async def delete(self, playlist_id: str | Playlist) -> None:
        """``DELETE /playlist/<id>`` (the videos themselves stay)."""
        await self._dialect.delete_playlist(self._requester, _id(playlist_id))

    def mine(self, fields: Iterable[str] = PLAYLIST_FIELDS) -> AsyncIterator[Playlist]:
        """``GET /me/playlists``, page by page: the caller's playlists, oldest first."""
        self._dialect.refuse(Operation.PLAYLISTS_MINE)
        return self._list("/me/playlists", Playlist, fields)

    @operation("playlists.add_video")
    async def add_video(self, playlist_id: str | Playlist, video_id: str | Video) -> None:
        """``POST /playlist/<id>/videos/<video_id>``: append a video (one's own or a
        public one); adding one already there changes nothing, so it is retried.
        v2: ``POST /playlists/{id}/videos``."""
        vid = check.video_id(video_id)
        await self._dialect.add_playlist_video(self._requester, _id(playlist_id), vid)

    @operation("playlists.remove_video")
    async def remove_video(self, playlist_id: str | Playlist, video_id: str | Video) -> None:
        """``DELETE /playlist/<id>/videos/<video_id>``; one not in it: ``NotFoundError``."""
        self._dialect.refuse(Operation.PLAYLISTS_REMOVE_VIDEO)
        vid = check.video_id(video_id)
        path = f"/playlist/{_id(playlist_id)}/videos/{vid}"
        await self._requester.call(self._requester.api("DELETE", path, scope=PLAYLIST_SCOPE))

    def videos(
        self, playlist_id: str | Playlist, fields: Iterable[str] | None = None
    ) -> AsyncIterator[Video]:
        """``GET /playlist/<id>/videos``, page by page: its videos in order."""
        self._dialect.refuse(Operation.PLAYLISTS_VIDEOS)
        path = f"/playlist/{_id(playlist_id)}/videos"
        return self._list(path, Video, VIDEO_FIELDS if fields is None else fields)
