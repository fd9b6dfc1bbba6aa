"""A journal in PostgreSQL (extra ``vidapi-async[postgres]``, psycopg 3): the same
stages as the SQLite journal, in a table any host can reach.

This is the journal only: a batch on one host with its progress in PostgreSQL. Several
hosts on one shared queue (procrastinate) build on it; see the README.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import JournalError, UsageError
from ._journal import _COLUMNS, SCHEMA_VERSION, JobRecord, Stage, _record

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresJournal"]

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _where(dsn: str) -> str:
    """The DSN for messages: host, port and database, never a password."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:
        return "postgresql://(unparsable DSN)"
    host, port, db = parts.get("host", "localhost"), parts.get("port", "5432"), parts.get("dbname")
    return f"postgresql://{host}:{port}/{db or ''}"


class PostgresJournal:
    """Job progress in PostgreSQL: table ``jobs`` in ``schema`` (created if needed).

    Every ``save`` is one committed statement. ``open`` checks the server answers, the
    schema is a vidapi journal of a version this code knows and every stage is known,
    raising ``JournalError`` (naming the database, never the password) otherwise.
    """

    def __init__(self, dsn: str, *, schema: str = "vidapi") -> None:
        if not isinstance(dsn, str) or not dsn:
            raise UsageError("PostgresJournal needs a DSN: postgresql://USER@HOST:PORT/DB")
        if not _NAME.fullmatch(schema):
            raise UsageError("schema: lowercase letters, digits and _, at most 63")
        self._dsn = dsn
        self.schema = schema
        self.where = _where(dsn)
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._lock = asyncio.Lock()
        self._select_one: Any = None
        self._select_all: Any = None
        self._upsert: Any = None

    def __repr__(self) -> str:
        return f"PostgresJournal({self.where!r}, schema={self.schema!r})"

    def _fail(self, message: str) -> JournalError:
        return JournalError(self.where, message)

    def _q(self, text: str) -> Any:
        """A statement with ``{s}`` the schema, quoted as an identifier."""
        from psycopg import sql

        return sql.SQL(text).format(s=sql.Identifier(self.schema))

    async def open(self) -> None:
        if self._conn is not None:
            return  # open already (a batch given an open journal)
        try:
            import psycopg
        except ImportError:
            raise UsageError(
                "PostgresJournal needs psycopg: pip install 'vidapi-async[postgres]'"
            ) from None
        try:
            conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
        except psycopg.Error as exc:
            raise self._fail(f"cannot connect ({type(exc).__name__})") from None
        q = self._q
        try:
            await conn.execute(q("create schema if not exists {s}"))
            await conn.execute(
                q("create table if not exists {s}.meta (name text primary key, value text)")
            )
            row = await (
                await conn.execute(q("select value from {s}.meta where name = 'version'"))
            ).fetchone()
            if row is not None and int(row[0]) > SCHEMA_VERSION:
                raise self._fail(
                    f"journal version {row[0]} is newer than this vidapi-async understands"
                )
            await conn.execute(
                q(
                    "create table if not exists {s}.jobs ("
                    "key text primary key, stage text not null, upload_url text, "
                    "progress_url text, file_url text, video_id text, "
                    "subtitles_done text not null, runs integer not null, error text, "
                    "updated timestamptz not null default now())"
                )
            )
            await conn.execute(
                q("insert into {s}.meta values ('version', %s) on conflict do nothing"),
                (str(SCHEMA_VERSION),),
            )
            known = [str(stage) for stage in Stage]
            bad = await (
                await conn.execute(
                    q("select stage from {s}.jobs where not (stage = any(%s)) limit 1"), (known,)
                )
            ).fetchone()
            if bad is not None:
                raise self._fail(f"a job has the unknown stage {bad[0]!r}")
        except JournalError:
            await conn.close()
            raise
        except psycopg.Error as exc:
            await conn.close()
            raise self._fail(f"cannot be used ({type(exc).__name__}: {exc.sqlstate})") from None
        self._conn = conn
        self._prepare_statements()

    def _prepare_statements(self) -> None:
        from psycopg import sql

        cols = sql.SQL(", ").join(map(sql.Identifier, _COLUMNS))
        parts = {
            "s": sql.Identifier(self.schema),
            "cols": cols,
            "marks": sql.SQL(", ").join(sql.Placeholder() * len(_COLUMNS)),
            "updates": sql.SQL(", ").join(
                sql.SQL("{c} = excluded.{c}").format(c=sql.Identifier(c))
                for c in _COLUMNS
                if c != "key"
            ),
        }
        self._select_one = sql.SQL("select {cols} from {s}.jobs where key = %s").format(**parts)
        self._select_all = sql.SQL("select {cols} from {s}.jobs order by updated").format(**parts)
        self._upsert = sql.SQL(
            "insert into {s}.jobs ({cols}, updated) values ({marks}, now()) "
            "on conflict (key) do update set {updates}, updated = now()"
        ).format(**parts)

    def _connected(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None:
            raise UsageError("the journal is not open: use it in 'async with BatchUploader'")
        return self._conn

    async def load(self, key: str) -> JobRecord | None:
        async with self._lock:
            cur = await self._connected().execute(self._select_one, (key,))
            row = await cur.fetchone()
        return None if row is None else _record(row)

    async def save(self, record: JobRecord) -> None:
        values = attrs.asdict(record)
        values["stage"] = str(record.stage)
        values["subtitles_done"] = json.dumps(record.subtitles_done)
        async with self._lock:
            await self._connected().execute(self._upsert, tuple(values[c] for c in _COLUMNS))

    async def records(self) -> list[JobRecord]:
        """Every job, oldest update first."""
        async with self._lock:
            cur = await self._connected().execute(self._select_all)
            rows = await cur.fetchall()
        return [_record(row) for row in rows]

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
