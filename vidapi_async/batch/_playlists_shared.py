"""A shared queue's playlists: each name made once per queue however many workers race,
the queue's database deciding. The schema's ``playlists`` table holds one row per name
(its id); a worker that does not know a name reads that row, and only if there is none
takes the name's advisory lock (a transaction of its own), looks again, lists the
account's playlists (one made by hand, or by a worker that stopped before its row) and
creates the playlist if none has the name, then records its row. A worker so learns the
playlists others made as it needs them, not from a listing once per life. A playlist
deleted on the platform since its row was written (a 404 adding to it) loses its row,
under the same lock and only if the row still holds that id, and is found or made
again, once (``forget``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._client import Client
from ._playlists import Playlists

if TYPE_CHECKING:
    from ._postgres import PostgresJournal

__all__ = ["TABLE", "SharedPlaylists"]

T = TypeVar("T")

TABLE = "create table if not exists {s}.playlists (name text primary key, id text not null)"
"""The schema's table of the queue's playlists (``SharedBatch`` creates it)."""


class SharedPlaylists(Playlists):
    """``Playlists`` whose names are decided in the queue's database."""

    def __init__(self, client: Client, journal: PostgresJournal) -> None:
        super().__init__(client)
        self.journal = journal
        """The queue's journal: its schema holds the ``playlists`` table."""
        self._gone: set[tuple[str, str]] = set()
        # (name, id) pairs a 404 showed deleted on the platform: never kept nor handed
        # out again, whatever a row read before its delete says

    async def id_of(self, name: str) -> str:
        """The id of the queue's playlist ``name``, made once per queue."""
        if name in self._ids:
            return self._ids[name]
        q = self.journal.statement
        row = await self.journal.fetchone(
            q("select id from {s}.playlists where name = %s"), (name,)
        )
        if row is None or (name, str(row[0])) in self._gone:
            playlist_id = await self._decided(name)
        else:
            playlist_id = str(row[0])
        if (name, playlist_id) not in self._gone:  # a job may have forgotten it meanwhile
            self._ids[name] = playlist_id
        return playlist_id

    async def forget(self, name: str, playlist_id: str) -> None:
        """The queue's playlist ``name`` is no longer ``playlist_id`` (deleted on the
        platform): its row goes, under the name's advisory lock and only if it still
        holds that id (another worker may have made the playlist again meanwhile); the
        next ``id_of`` finds or makes it again, once per queue."""
        self._gone.add((name, playlist_id))
        if self._ids.get(name) == playlist_id:
            del self._ids[name]
        q = self.journal.statement

        async def gone(conn: Any) -> None:
            await conn.execute(
                q("delete from {s}.playlists where name = %s and id = %s"), (name, playlist_id)
            )

        await self._locked(name, gone)

    async def _decided(self, name: str) -> str:
        """Under the name's advisory lock, on a connection of its own (the journal's
        stays free for the jobs' writes while the platform answers): the row another
        worker wrote meanwhile, else the account's playlist of that name, else a new
        one; recorded."""
        q = self.journal.statement

        async def decide(conn: Any) -> str:
            found = await (
                await conn.execute(q("select id from {s}.playlists where name = %s"), (name,))
            ).fetchone()
            if found is not None and (name, str(found[0])) not in self._gone:
                return str(found[0])
            if found is not None:  # a 404 here showed it gone; its forget may not have run
                await conn.execute(
                    q("delete from {s}.playlists where name = %s and id = %s"),
                    (name, str(found[0])),
                )
            playlist_id = await self._of_account(name)
            await conn.execute(
                q("insert into {s}.playlists (name, id) values (%s, %s)"),
                (name, playlist_id),
            )
            return playlist_id

        return await self._locked(name, decide)

    async def _locked(self, name: str, work: Callable[[Any], Awaitable[T]]) -> T:
        """``work`` in a transaction of a connection of its own holding the name's
        advisory lock (through an outage, patiently)."""
        journal = self.journal

        async def once() -> T:
            conn = await journal.connect()
            try:
                async with conn.transaction():
                    await conn.execute(
                        "select pg_advisory_xact_lock(7317005, hashtext(%s))",
                        (f"{journal.schema}/{name}",),
                    )
                    return await work(conn)
            finally:
                await conn.close()

        import psycopg

        try:
            return await journal.outage.patiently(once)
        except psycopg.Error as exc:  # not an outage: the server refused the statement
            raise journal.refused(exc) from None

    async def _of_account(self, name: str) -> str:
        """The account's playlist ``name`` (listed now, not from a listing kept), or one
        created."""
        playlist_id: Any = None
        async for playlist in self.client.playlists.mine(fields=("id", "name")):
            if playlist.name == name and (name, playlist.id) not in self._gone:
                playlist_id = playlist.id
                break
        if playlist_id is None:
            playlist_id = (await self.client.playlists.create(name=name)).id
        return str(playlist_id)
