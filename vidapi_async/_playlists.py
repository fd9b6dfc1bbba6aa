"""``client.playlists``: create, read, change, delete and list playlists, and the
videos in them. Writes need scope ``manage_playlists``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Final

from . import _validate as check
from ._convert import structure
from ._errors import InvalidArgumentError
from ._fields import VIDEO_FIELDS
from ._models import Playlist, Video
from ._observe import operation
from ._protocol import _v2 as v2
from ._sentinel import NOT_GIVEN, NotGiven
from ._service import Service, form_of

__all__ = ["PLAYLIST_FIELDS", "Playlists"]

PLAYLIST_FIELDS: Final = ("id", "name", "description", "private", "owner", "videos_total")
_SCOPE: Final = "manage_playlists"


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
        if self._requester.v2:
            profile_id = await self._requester.profile_id()
            request = v2.create_playlist(
                self._requester.base_url, profile_id, name, description=description, private=private
            )
            return self._playlist(await self._requester.call(request), request.what)
        return await self._send(
            "POST",
            "/me/playlists",
            Playlist,
            fields=PLAYLIST_FIELDS,
            form=form_of(values, "playlist"),
            idempotent=False,
            scope=_SCOPE,
        )

    @operation("playlists.get")
    async def get(
        self, playlist_id: str | Playlist, fields: Iterable[str] = PLAYLIST_FIELDS
    ) -> Playlist:
        """``GET /playlist/<id>``: a playlist (another's private one is a ``ForbiddenError``)."""
        pid = _id(playlist_id)
        if self._requester.v2:
            request = v2.playlist_request(self._requester.base_url, "GET", pid)
            return self._playlist(await self._requester.call(request), request.what)
        return await self._send("GET", f"/playlist/{pid}", Playlist, fields=fields)

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
        pid = _id(playlist_id)
        if self._requester.v2:  # PATCH answers 204: the playlist is read after
            request = v2.playlist_request(
                self._requester.base_url,
                "PATCH",
                pid,
                name=None if isinstance(name, NotGiven) else name,
                description=None if isinstance(description, NotGiven) else description,
                private=None if isinstance(private, NotGiven) else private,
            )
            await self._requester.call(request)
            return await self.get(pid)
        return await self._send(
            "POST",
            f"/playlist/{pid}",
            Playlist,
            fields=PLAYLIST_FIELDS,
            form=form_of(values, "fields"),
            scope=_SCOPE,
        )

    @operation("playlists.delete")
    async def delete(self, playlist_id: str | Playlist) -> None:
        """``DELETE /playlist/<id>`` (the videos themselves stay)."""
        pid = _id(playlist_id)
        if self._requester.v2:
            request = v2.playlist_request(self._requester.base_url, "DELETE", pid)
        else:
            request = self._requester.api("DELETE", f"/playlist/{pid}", scope=_SCOPE)
        await self._requester.call(request)

    def mine(self, fields: Iterable[str] = PLAYLIST_FIELDS) -> AsyncIterator[Playlist]:
        """``GET /me/playlists``, page by page: the caller's playlists, oldest first."""
        self._requester.refuse("playlists.mine")
        return self._list("/me/playlists", Playlist, fields)

    @operation("playlists.add_video")
    async def add_video(self, playlist_id: str | Playlist, video_id: str | Video) -> None:
        """``POST /playlist/<id>/videos/<video_id>``: append a video (one's own or a
        public one); adding one already there changes nothing, so it is retried.
        v2: ``POST /playlists/{id}/videos``."""
        if self._requester.v2:
            request = v2.add_playlist_video(
                self._requester.base_url, _id(playlist_id), check.video_id(video_id)
            )
            await self._requester.call(request)
            return
        await self._video_call("POST", playlist_id, video_id)

    @operation("playlists.remove_video")
    async def remove_video(self, playlist_id: str | Playlist, video_id: str | Video) -> None:
        """``DELETE /playlist/<id>/videos/<video_id>``; one not in it: ``NotFoundError``."""
        self._requester.refuse("playlists.remove_video")
        await self._video_call("DELETE", playlist_id, video_id)

    async def _video_call(
        self, method: str, playlist_id: str | Playlist, video_id: str | Video
    ) -> None:
        vid = check.video_id(video_id)
        path = f"/playlist/{_id(playlist_id)}/videos/{vid}"
        form: list[tuple[str, str]] | None = [] if method == "POST" else None
        await self._requester.call(self._requester.api(method, path, form=form, scope=_SCOPE))

    def videos(
        self, playlist_id: str | Playlist, fields: Iterable[str] | None = None
    ) -> AsyncIterator[Video]:
        """``GET /playlist/<id>/videos``, page by page: its videos in order."""
        self._requester.refuse("playlists.videos")
        path = f"/playlist/{_id(playlist_id)}/videos"
        return self._list(path, Video, VIDEO_FIELDS if fields is None else fields)

    @staticmethod
    def _playlist(data: Mapping[str, Any], what: str) -> Playlist:
        return structure(v2.playlist_from(data), Playlist, what=what)
