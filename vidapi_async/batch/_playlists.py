"""A batch's playlists: each name's id found or created once per batch, and the jobs of
``BatchUploader.run`` adding their videos in the order of the jobs."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from .._client import Client
from .._errors import NotFoundError, UnsupportedOperationError

__all__ = ["Playlists"]


class Playlists:
    """The account's playlists as one batch sees them (listed once, created once each),
    and the turns that keep a batch's videos in its playlists in the order of its jobs:
    job ``seq`` adds its video once every job before it has passed that point (or
    ended). A job without a ``seq`` (a queue worker's) waits for no turn."""

    def __init__(self, client: Client) -> None:
        self.client = client
        """The client that lists, creates and fills the playlists."""
        self._ids: dict[str, str] = {}
        self._lock = asyncio.Lock()
        self._known: dict[str, str] | None = None
        self._turn = asyncio.Condition()
        self._passed: set[int] = set()
        self._next_turn = 0

    def new_run(self) -> None:
        """Turns start again at job 0 (a new ``run``)."""
        self._passed, self._next_turn = set(), 0

    async def pass_turn(self, seq: int) -> None:
        """Job ``seq`` has passed the point where it adds its video (or ended)."""
        async with self._turn:
            if seq < self._next_turn:
                return  # passed already
            self._passed.add(seq)
            while self._next_turn in self._passed:
                self._passed.discard(self._next_turn)
                self._next_turn += 1
            self._turn.notify_all()

    async def _wait_turn(self, seq: int | None) -> None:
        if seq is None:
            return
        async with self._turn:
            await self._turn.wait_for(lambda: self._next_turn >= seq)

    async def add(self, video_id: str, names: Iterable[str], seq: int | None) -> None:
        """Add ``video_id`` to the playlists ``names`` in job ``seq``'s turn, then pass
        the turn."""
        names = list(names)
        await self._wait_turn(seq if names else None)
        try:
            for name in names:
                await self._add_once_more(name, video_id)
        finally:
            if seq is not None:
                await self.pass_turn(seq)

    async def _add_once_more(self, name: str, video_id: str) -> None:
        """Add ``video_id`` to the playlist ``name``; a 404 (the playlist deleted on the
        platform since its id was learnt) forgets that id and adds to the playlist found
        or made again, once (a second 404 is the job's failure). The platform answers
        404 for a video it cannot find too: the playlist is forgotten only if it is gone
        itself (a deleted video is the job's failure, not a reason for a second playlist
        of the name)."""
        playlist = await self.id_of(name)
        try:
            await self.client.playlists.add_video(playlist, video_id)
        except NotFoundError:
            if not await self._is_gone(playlist):
                raise
            await self.forget(name, playlist)
            await self.client.playlists.add_video(await self.id_of(name), video_id)

    async def _is_gone(self, playlist_id: str) -> bool:
        """Whether the platform has no playlist ``playlist_id`` (a 404 reading it; a
        dialect that cannot read one: taken as gone, as the 404 said)."""
        try:
            await self.client.playlists.get(playlist_id, fields=("id",))
        except (NotFoundError, UnsupportedOperationError):
            return True
        return False

    async def forget(self, name: str, playlist_id: str) -> None:
        """The playlist ``name`` is no longer ``playlist_id`` (gone from the platform):
        its id is found or made again when next needed."""
        async with self._lock:
            if self._ids.get(name) == playlist_id:
                del self._ids[name]
            if self._known is not None and self._known.get(name) == playlist_id:
                del self._known[name]

    async def remove(self, video_id: str, name: str) -> None:
        """Take ``video_id`` out of the playlist ``name`` (not there: taken out already,
        by hand or by a run that stopped after)."""
        playlist = await self.id_of(name)
        with contextlib.suppress(NotFoundError):
            await self.client.playlists.remove_video(playlist, video_id)

    async def holds(self, name: str, video_id: str) -> bool:
        """Whether the account's playlist ``name`` holds ``video_id`` already (``False``
        where there is no such playlist, or the dialect cannot list one's videos)."""
        async with self._lock:
            known = await self._listed()
            playlist_id = self._ids.get(name) or known.get(name)
        if playlist_id is None:
            return False
        try:
            async for video in self.client.playlists.videos(playlist_id, fields=("id",)):
                if video.id == video_id:
                    return True
        except UnsupportedOperationError:
            return False
        return False

    async def _listed(self) -> dict[str, str]:
        """The account's playlists by name, listed once per batch (under the lock)."""
        if self._known is None:
            known: dict[str, str] = {}
            async for playlist in self.client.playlists.mine(fields=("id", "name")):
                if playlist.name is not None:
                    known.setdefault(playlist.name, playlist.id)
            self._known = known
        return self._known

    async def id_of(self, name: str) -> str:
        """The id of the account's playlist ``name``: one it has (listed once per
        batch), else one created, once per batch."""
        async with self._lock:
            if name in self._ids:
                return self._ids[name]
            known = await self._listed()
            playlist_id = known.get(name)
            if playlist_id is None:
                playlist_id = (await self.client.playlists.create(name=name)).id
                known[name] = playlist_id
            self._ids[name] = playlist_id
            return playlist_id
