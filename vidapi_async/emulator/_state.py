"""The emulator's store: tokens, uploads, files, videos and subtitles as JSON documents
in SQLite, indexed by kind, owner, parent (a subtitle's video) and tag.

It knows nothing of HTTP nor of the platform's rules (those are ``_backend``'s): it
keeps documents and finds them without scanning every record. In-process emulators use
an in-memory database; a standalone server with ``--data-dir`` keeps ``state.sqlite``
there and so survives a restart.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["State", "new_id"]

SCHEMA_VERSION = 2

_SCHEMA = """
create table if not exists objects (
    kind text not null,
    id text not null,
    data text not null,
    created real not null,
    owner text,
    parent text,
    primary key (kind, id)
);
create index if not exists objects_owner on objects (kind, owner, created);
create index if not exists objects_parent on objects (kind, parent, created);
create table if not exists tags (
    video text not null,
    owner text not null,
    tag text not null,
    primary key (video, tag)
);
create index if not exists tags_owner on tags (owner, tag);
create table if not exists meta (key text primary key, value text not null);
"""


def new_id() -> str:
    """A platform-shaped id: 'x' and lowercase letters and digits."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "x" + "".join(secrets.choice(alphabet) for _ in range(6))


class State:
    """All emulator state. ``path=None`` keeps it in memory."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._db = sqlite3.connect(path or ":memory:", isolation_level=None)
        if path:
            # Handlers call in here on the event loop: WAL without an fsync per write keeps
            # each call short, and still survives a crash of the server process.
            self._db.execute("pragma journal_mode=wal")
            self._db.execute("pragma synchronous=NORMAL")
        self._migrate()
        self._db.executescript(_SCHEMA)
        self._db.execute("insert or replace into meta values ('schema', ?)", (str(SCHEMA_VERSION),))

    def _migrate(self) -> None:
        """A data dir from before the indexes: add the columns and fill them in."""
        columns = {r[1] for r in self._db.execute("pragma table_info(objects)")}
        if columns and "owner" not in columns:
            self._db.execute("alter table objects add column owner text")
            self._db.execute("alter table objects add column parent text")
            self._db.execute(
                "update objects set owner = json_extract(data, '$.owner'), "
                "parent = json_extract(data, '$.video')"
            )

    def close(self) -> None:
        self._db.close()

    def meta(self, key: str, default: str) -> str:
        """A setting kept with the state (written with ``default`` the first time)."""
        row = self._db.execute("select value from meta where key = ?", (key,)).fetchone()
        if row is not None:
            return str(row[0])
        self._db.execute("insert into meta values (?, ?)", (key, default))
        return default

    # --- documents -------------------------------------------------------------------------

    def put(self, kind: str, id: str, data: dict[str, Any]) -> dict[str, Any]:
        owner, parent = data.get("owner"), data.get("video")
        self._db.execute(
            "insert into objects (kind, id, data, created, owner, parent) "
            "values (?, ?, ?, ?, ?, ?) on conflict (kind, id) do update "
            "set data = excluded.data, owner = excluded.owner, parent = excluded.parent",
            (kind, id, json.dumps(data), time.time(), owner, parent),
        )
        if kind == "video":
            self._db.execute("delete from tags where video = ?", (id,))
            self._db.executemany(
                "insert or ignore into tags values (?, ?, ?)",
                [(id, owner, tag) for tag in data.get("tags") or ()],
            )
        return data

    def get(self, kind: str, id: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "select data from objects where kind = ? and id = ?", (kind, id)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def delete(self, kind: str, id: str) -> bool:
        cur = self._db.execute("delete from objects where kind = ? and id = ?", (kind, id))
        if kind == "video":
            self._db.execute("delete from tags where video = ?", (id,))
        return cur.rowcount > 0

    def _select(self, where: str, args: tuple[Any, ...]) -> Iterator[dict[str, Any]]:
        rows = self._db.execute(
            # S608: ``where`` is one of this class's fixed clauses, never a caller's text.
            f"select data from objects where {where} order by created, rowid",  # noqa: S608
            args,
        ).fetchall()
        for (data,) in rows:
            yield dict(json.loads(data))

    def all(self, kind: str) -> Iterator[dict[str, Any]]:
        return self._select("kind = ?", (kind,))

    def owned(self, kind: str, owner: str) -> Iterator[dict[str, Any]]:
        """``kind`` documents of ``owner``, oldest first (by the owner index)."""
        return self._select("kind = ? and owner = ?", (kind, owner))

    def children(self, kind: str, parent: str) -> Iterator[dict[str, Any]]:
        """``kind`` documents whose ``video`` is ``parent`` (a video's subtitles)."""
        return self._select("kind = ? and parent = ?", (kind, parent))

    def tagged(self, owner: str, tags: Iterable[str]) -> Iterator[dict[str, Any]]:
        """``owner``'s videos carrying every tag in ``tags`` (by the tag index)."""
        wanted = sorted(set(tags))
        if not wanted:
            return self.owned("video", owner)
        marks = ",".join("?" * len(wanted))
        return self._select(
            "kind = 'video' and id in (select video from tags where owner = ? and tag in "  # noqa: S608
            f"({marks}) group by video having count(*) = ?)",
            (owner, *wanted, len(wanted)),
        )

    def count(self, kind: str, owner: str | None = None, since: float | None = None) -> int:
        sql = "select count(*) from objects where kind = ?"
        args: list[Any] = [kind]
        if owner is not None:
            sql, args = sql + " and owner = ?", [*args, owner]
        if since is not None:
            sql, args = sql + " and created >= ?", [*args, since]
        row = self._db.execute(sql, args).fetchone()
        return int(row[0])

    def oldest(self, kind: str, owner: str, since: float) -> float | None:
        """When the oldest ``kind`` of ``owner`` created since ``since`` was created."""
        row = self._db.execute(
            "select min(created) from objects where kind = ? and owner = ? and created >= ?",
            (kind, owner, since),
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def reset(self) -> None:
        """Forget every object; accounts and tokens configured at start are re-added."""
        self._db.execute("delete from objects")
        self._db.execute("delete from tags")
