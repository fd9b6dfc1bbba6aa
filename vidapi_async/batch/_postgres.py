"""A journal in PostgreSQL (extra ``vidapi-async[postgres]``, psycopg 3): the same
stages as the SQLite journal, in a table any host can reach.

This is the journal only: a batch on one host with its progress in PostgreSQL. Several
hosts on one shared queue (procrastinate) build on it; see the README.

Fencing: ``claim`` gives each start of a job a token that only grows (``runs``, in the
job's row); every ``save`` takes effect only if the row still holds the record's token
and the write does not move the job to an earlier stage. A refused write raises
``JobLost``: another holder has the job.

The database may go away (a restart, a network cut): each statement then waits, with
backoff, for a new connection and runs again (the statements are idempotent for their
holder), saying so once at WARNING; ``give_up`` makes the waits end in ``JournalError``
instead (a stopping worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import JournalError, UsageError
from ._journal import (
    COLUMNS,
    SCHEMA_VERSION,
    JobLost,
    JobRecord,
    Stage,
    check_key,
    record_of_row,
    row_values,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresJournal", "connect_cause", "db_away"]

log = logging.getLogger("vidapi_async.batch")

T = TypeVar("T")

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

_CAUSES = (
    # refusals waiting does not mend (not in ``_WAITED``), said so that they can be mended
    ("pg_hba.conf", "refused by the server's pg_hba.conf"),
    ("does not support ssl", "the server does not support SSL (sslmode requires it)"),
    ("connect privilege", "no CONNECT privilege on the database"),
    ("password authentication failed", "authentication failed"),
    ("authentication failed", "authentication failed"),
    ("no password supplied", "authentication failed (no password given)"),
    ("connection refused", "connection refused"),
    ("server closed the connection", "the server hung up (is it PostgreSQL?)"),
    ("role", "no such user"),  # 'role "x" does not exist'
    ("database", "no such database"),  # 'database "x" does not exist'
    ("could not translate host name", "unknown host"),
    ("name or service not known", "unknown host"),
    ("timeout", "timed out"),
    ("timed out", "timed out"),
    ("the database system is starting up", "the server is starting up"),
    ("the database system is shutting down", "the server is shutting down"),
    ("the database system is not yet accepting connections", "the server is recovering"),
    ("the database system is in recovery mode", "the server is recovering"),
    ("too many clients", "too many connections"),
    ("remaining connection slots are reserved", "too many connections"),
)


_NO_CAUSE = "cannot connect"


def connect_cause(exc: BaseException) -> str:
    """Why a connection failed, in a few words (the server's message is not echoed: it
    can hold the user name and host, never shown beside a password)."""
    text = str(exc).lower()
    for needle, cause in _CAUSES:
        if needle in text and (needle not in ("role", "database") or "does not exist" in text):
            return cause
    return _NO_CAUSE


_AWAY_STATES = ("08", "57P", "53300")
"""SQLSTATEs of a lost or refused connection: class 08 (connection exception), a server
shutting down or starting up (57P01-57P03), too many connections."""


def db_away(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) says the database cannot be reached: a
    refused or broken connection, a server shutting down, a pool with no connection.
    A statement the server refuses (an index row too large, class 54; a disk full,
    class 53) is not: waiting would never end."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the extra is missing
        return False
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, StopGrace):
            return True
        if isinstance(exc, _NotAway):
            return False
        if isinstance(exc, psycopg.OperationalError) and (
            exc.sqlstate is None or exc.sqlstate.startswith(_AWAY_STATES)
        ):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


class Outage:
    """Whether the database is away, said once at WARNING when it goes and when it is
    back; shared by everything of one worker that talks to it."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.away: str | None = None
        self.give_up = asyncio.Event()

    def gone(self, exc: BaseException) -> None:
        if self.away is None:
            self.away = connect_cause(exc)
            log.warning(
                "the database %s is away (%s): nothing new starts; waiting for it",
                self.where,
                self.away,
            )

    def back(self) -> None:
        if self.away is not None:
            self.away = None
            log.warning("the database %s is back", self.where)

    def _stopped(self) -> JournalError:
        return JournalError(self.where, f"the database is away ({self.away})")

    async def patiently(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, again after a backoff for as long as the database is away (until
        ``give_up`` is set: then the ``JournalError`` 'the database is away').

        A first failure while the database is not known to be away is tried again at
        once before it is called an outage: a connection from before a restart fails
        once on its next use, and an attempt begun while the server was down can fail
        after another statement saw it back; neither is a new outage.

        A stop never waits for the database: once ``give_up`` is set, a call is not
        even tried while the database is known to be away, and a call under way (a
        pool waiting for a connection, a server stopping) is given ``STOP_GRACE``
        seconds, then called an outage."""
        delay = 0.2
        quiet_retry = True
        while True:
            if self.give_up.is_set() and self.away is not None:
                raise self._stopped()
            try:
                result = await self._attempt(call)
            except Exception as exc:
                if not db_away(exc):
                    raise
                if quiet_retry and self.away is None and not self.give_up.is_set():
                    quiet_retry = False
                    continue
                quiet_retry = False
                self.gone(exc)
                if self.give_up.is_set():
                    raise self._stopped() from None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.give_up.wait(), delay)
                delay = min(delay * 2, 3.0)
                continue
            self.back()
            return result

    async def _attempt(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``; cut short (a ``StopGrace`` error, taken for an outage) when the
        worker stops and it does not end within ``STOP_GRACE`` seconds after."""
        task = asyncio.ensure_future(call())
        task.add_done_callback(_retrieved)
        try:
            if not self.give_up.is_set():
                stop = asyncio.ensure_future(self.give_up.wait())
                try:
                    await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
            if not task.done():
                await asyncio.wait({task}, timeout=STOP_GRACE)
            if not task.done():
                task.cancel()
                raise StopGrace("timed out: no answer while stopping")
            return task.result()
        finally:
            task.cancel()  # a cancellation from outside: the call with it


STOP_GRACE = 2.0
"""Seconds a statement under way when a worker stops is given before the database is
taken for away (a healthy one answers at once)."""


class StopGrace(Exception):
    """A statement did not answer within ``STOP_GRACE`` of a stop."""


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # seen: never 'exception was never retrieved'


_WAITED = frozenset(
    {
        "connection refused",
        "timed out",
        "the server is starting up",
        "the server is shutting down",
        "the server is recovering",
        "too many connections",
    }
)
"""Why a connection failed, when a patient opener waits for the server: the server
away or full, never a refusal waiting does not mend (a ``pg_hba.conf`` ``reject``, SSL
required by one side only, no CONNECT privilege: ``cannot connect``)."""


class _NotAway(Exception):
    """A connection refused for a reason waiting does not mend (no such database...)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


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
        """The PostgreSQL schema holding the journal's tables."""
        self.where = _where(dsn)
        """The server and database, for messages (never the password)."""
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._lock = asyncio.Lock()
        self._select_one: Any = None
        self._select_all: Any = None
        self._upsert: Any = None
        self._claim: Any = None
        self.outage = Outage(self.where)
        """The server's reachability, said once when lost and once when back."""
        self._opened = False

    def __repr__(self) -> str:
        return f"PostgresJournal({self.where!r}, schema={self.schema!r})"

    def failure(self, message: str) -> JournalError:
        """The ``JournalError`` saying ``message`` about this journal (naming its
        database, never the password): for the shared queue's own refusals too."""
        return JournalError(self.where, message)

    def statement(self, text: str) -> Any:
        """``text`` as a statement with ``{s}`` the journal's schema, quoted as an
        identifier (the shared queue's tables live beside ``jobs``)."""
        from psycopg import sql

        return sql.SQL(text).format(s=sql.Identifier(self.schema))

    async def open(self, *, wait: bool = False) -> None:
        """Connect and check the journal (``JournalError`` if it cannot be used).
        ``wait``: while the server is away (refusing connections, timing out, starting
        up or shutting down), wait for it with the outage's backoff, saying so once at
        WARNING, as a worker that loses it later does; a wrong user, password or
        database is still refused at once."""
        if self._conn is not None:
            return  # open already (a batch given an open journal)
        try:
            import psycopg
        except ImportError:
            raise UsageError(
                "PostgresJournal needs psycopg: the postgres extra (pip install '.[postgres]' "
                "from a checkout, or the wheel with [postgres])"
            ) from None
        try:
            conn = await (self._connect_waiting() if wait else self.connect())
        except psycopg.Error as exc:
            cause = connect_cause(exc)
            said = cause if cause == _NO_CAUSE else f"{_NO_CAUSE}: {cause}"
            raise self.failure(said) from None
        q = self.statement
        try:
            # Created in one transaction holding the schema's DDL lock: "if not exists"
            # is not safe when two starts create a schema at once (UniqueViolation).
            async with conn.transaction():
                await self.lock_ddl(conn)
                await conn.execute(q("create schema if not exists {s}"))
                await conn.execute(
                    q("create table if not exists {s}.meta (name text primary key, value text)")
                )
                row = await (
                    await conn.execute(q("select value from {s}.meta where name = 'version'"))
                ).fetchone()
                if row is not None and int(row[0]) > SCHEMA_VERSION:
                    raise self.failure(
                        f"journal version {row[0]} is newer than this vidapi-async understands"
                    )
                await conn.execute(
                    q(
                        "create table if not exists {s}.jobs ("
                        "key text primary key, stage text not null, upload_url text, "
                        "progress_url text, file_url text, video_id text, "
                        "subtitles_done text not null, runs integer not null, error text, "
                        "updated timestamptz not null default now(), metadata text)"
                    )
                )
                # An older journal gains the columns added since (version 2 to 4), empty
                await conn.execute(
                    q(
                        "alter table {s}.jobs add column if not exists metadata text, "
                        "add column if not exists source text, "
                        "add column if not exists origin text, "
                        "add column if not exists account text"
                    )
                )
                await conn.execute(
                    q(
                        "insert into {s}.meta values ('version', %s) "
                        "on conflict (name) do update set value = excluded.value"
                    ),
                    (str(SCHEMA_VERSION),),
                )
            known = [str(stage) for stage in Stage]
            bad = await (
                await conn.execute(
                    q("select stage from {s}.jobs where not (stage = any(%s)) limit 1"), (known,)
                )
            ).fetchone()
            if bad is not None:
                raise self.failure(f"a job has the unknown stage {bad[0]!r}")
        except JournalError:
            await conn.close()
            raise
        except psycopg.Error as exc:
            await conn.close()
            raise self.failure(f"cannot be used ({type(exc).__name__}: {exc.sqlstate})") from None
        self._conn = conn
        self._opened = True
        self._prepare_statements()

    async def lock_ddl(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Take this schema's DDL lock (an advisory lock held until the transaction on
        ``conn`` ends): creators of one schema's tables take turns."""
        await conn.execute("select pg_advisory_xact_lock(7317003, hashtext(%s))", (self.schema,))

    async def _connect_waiting(self) -> psycopg.AsyncConnection[Any]:
        import psycopg

        async def attempt() -> psycopg.AsyncConnection[Any]:
            try:
                return await self.connect()
            except psycopg.OperationalError as exc:
                if connect_cause(exc) in _WAITED or (exc.sqlstate or "").startswith(
                    ("57P0", "53300")
                ):
                    raise  # the outage's: waited for
                raise _NotAway(exc) from exc

        try:
            return await self.outage.patiently(attempt)
        except _NotAway as exc:
            raise exc.error from None

    async def connect(self) -> psycopg.AsyncConnection[Any]:
        """A new connection of the caller's own (autocommit; the caller closes it), for
        a transaction of several statements outside the journal's lock."""
        import psycopg

        return await psycopg.AsyncConnection.connect(self._dsn, autocommit=True, connect_timeout=5)

    async def run(
        self, fn: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]], job: str | None = None
    ) -> T:
        """``fn(connection)`` on the journal's connection under its lock (a new
        connection after a lost one), waiting while the database is away (see
        ``Outage.patiently``). A statement the server refuses raises ``JournalError``
        naming ``job`` (its key), if given."""
        import psycopg

        if not self._opened:
            raise UsageError("the journal is not open: use it in 'async with BatchUploader'")

        async def once() -> T:
            async with self._lock:
                if self._conn is None or self._conn.closed:
                    self._conn = await self.connect()
                try:
                    return await fn(self._conn)
                except Exception as exc:
                    if db_away(exc):
                        conn, self._conn = self._conn, None
                        await conn.close()
                    raise

        try:
            return await self.outage.patiently(once)
        except psycopg.Error as exc:  # not an outage: the server refused the statement
            raise self.refused(exc, job) from None

    def refused(self, exc: BaseException, job: str | None = None) -> JournalError:
        """The ``JournalError`` for a statement the server refused: ``exc``, a psycopg
        error or one it caused (procrastinate's ``ConnectorException``), named by its
        class and SQLSTATE (the server's message is not echoed: it may quote a row's
        values), with the job's key if given."""
        import psycopg

        cause: BaseException | None = exc
        while cause is not None and not isinstance(cause, psycopg.Error):
            cause = cause.__cause__
        error = exc if cause is None else cause
        state = getattr(error, "sqlstate", None)
        said = f", SQLSTATE {state}" if state else ""
        what = "" if job is None else f"job {job[:40]}: "
        return self.failure(f"{what}the server refused a statement ({type(error).__name__}{said})")

    async def fetchone(self, query: Any, params: Any = None, *, job: str | None = None) -> Any:
        """One row of ``query`` (or ``None``), reconnecting as needed."""

        async def fn(conn: psycopg.AsyncConnection[Any]) -> Any:
            return await (await conn.execute(query, params)).fetchone()

        return await self.run(fn, job)

    async def fetchall(self, query: Any, params: Any = None) -> list[Any]:
        """Every row of ``query`` (reconnecting through an outage)."""

        async def fn(conn: psycopg.AsyncConnection[Any]) -> list[Any]:
            return await (await conn.execute(query, params)).fetchall()

        return await self.run(fn)

    async def execute(self, query: Any, params: Any = None) -> None:
        """Run ``query`` (reconnecting through an outage)."""

        async def fn(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(query, params)

        await self.run(fn)

    def _prepare_statements(self) -> None:
        from psycopg import sql

        cols = sql.SQL(", ").join(map(sql.Identifier, COLUMNS))
        parts = {
            "s": sql.Identifier(self.schema),
            "cols": cols,
            "marks": sql.SQL(", ").join(sql.Placeholder() * len(COLUMNS)),
            "updates": sql.SQL(", ").join(
                sql.SQL("{c} = excluded.{c}").format(c=sql.Identifier(c))
                for c in COLUMNS
                if c != "key"
            ),
        }
        self._select_one = sql.SQL("select {cols} from {s}.jobs where key = %s").format(**parts)
        self._select_all = sql.SQL("select {cols} from {s}.jobs order by updated").format(**parts)
        order = sql.Literal([str(stage) for stage in Stage])
        # Fenced: only the holder of the row's token writes, and never to an earlier stage.
        self._upsert = sql.SQL(
            "insert into {s}.jobs ({cols}, updated) values ({marks}, now()) "
            "on conflict (key) do update set {updates}, updated = now() "
            "where {s}.jobs.runs = excluded.runs and array_position({order}::text[], "
            "{s}.jobs.stage) <= array_position({order}::text[], excluded.stage) "
            "returning key"
        ).format(order=order, **parts)
        self._claim = sql.SQL(
            "insert into {s}.jobs (key, stage, subtitles_done, runs, updated) "
            "values (%s, 'pending', '[]', 1, now()) "
            "on conflict (key) do update set runs = {s}.jobs.runs + 1, updated = now() "
            "where {s}.jobs.stage <> 'done' returning {cols}"
        ).format(**parts)

    def _connected(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None:
            raise UsageError("the journal is not open: use it in 'async with BatchUploader'")
        return self._conn

    async def load(self, key: str) -> JobRecord | None:
        """The record of ``key``, or ``None`` when the journal has none."""
        row = await self.fetchone(self._select_one, (check_key(key),), job=key)
        return None if row is None else record_of_row(row, self.where)

    async def claim(self, key: str) -> JobRecord:
        """Start the job ``key``: its record with a new token (``runs`` one higher, in
        one statement), or as it is when done."""
        row = await self.fetchone(self._claim, (check_key(key),), job=key)
        if row is None:  # done: not claimed
            row = await self.fetchone(self._select_one, (key,), job=key)
            assert row is not None
        return record_of_row(row, self.where)

    async def save(self, record: JobRecord) -> None:
        """Write ``record`` if its ``runs`` is still the row's and its stage is not
        earlier than the row's; else raise ``JobLost``."""
        check_key(record.key)
        row = await self.fetchone(self._upsert, row_values(record), job=record.key)
        if row is None:
            raise JobLost(record.key)

    async def records(self) -> list[JobRecord]:
        """Every job, oldest update first."""
        return [record_of_row(row, self.where) for row in await self.fetchall(self._select_all)]

    async def read_records(self) -> list[JobRecord]:
        """Every job, read on a connection of its own without creating or migrating
        anything (``vidapi batch --dry-run``): none while the journal's table does not
        exist; a version 1 table is read as it is."""
        import psycopg
        from psycopg import sql

        try:
            conn = await self.connect()
        except psycopg.Error as exc:
            raise self.failure(f"{_NO_CAUSE}: {connect_cause(exc)}") from None
        try:
            found = await (
                await conn.execute(
                    "select column_name from information_schema.columns "
                    "where table_schema = %s and table_name = 'jobs'",
                    (self.schema,),
                )
            ).fetchall()
            present = {row[0] for row in found}
            if not present:
                return []
            cols = [c if c in present else None for c in COLUMNS]
            query = sql.SQL("select {cols} from {s}.jobs order by updated").format(
                cols=sql.SQL(", ").join(
                    sql.Identifier(c) if c is not None else sql.NULL for c in cols
                ),
                s=sql.Identifier(self.schema),
            )
            rows = await (await conn.execute(query)).fetchall()
        except psycopg.Error as exc:
            raise self.failure(f"cannot be read ({type(exc).__name__}: {exc.sqlstate})") from None
        finally:
            await conn.close()
        return [record_of_row(tuple(row), self.where) for row in rows]

    async def close(self) -> None:
        """Release the connection (idempotent)."""
        conn, self._conn = self._conn, None
        self._opened = False
        if conn is not None:
            await conn.close()
