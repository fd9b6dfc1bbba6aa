"""Where a batch remembers how far each job got, so that a re-run resumes it.

``Journal`` is the small interface; ``SQLiteJournal`` (the default, one file) and
``MemoryJournal`` (no persistence) implement it. Every ``save`` is committed before it
returns: a process killed at any instant (SIGKILL included) leaves each job at the last
stage it recorded, never half-written. ``SQLiteJournal`` commits the saves of one loop
turn together (group commit: one trip to its thread, one transaction), and each of them
returns once that transaction is committed, so a job's record is durable before the
step that depends on it runs (``creating`` before the create is sent). SQLite runs in WAL mode with
``synchronous=NORMAL``: committed transactions survive a crash of the process (a power
loss may lose the last ones; use ``synchronous="FULL"`` for that).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import errno
import functools
import json
import logging
import os
import queue
import sqlite3
import stat
import threading
import time
import unicodedata
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar, runtime_checkable

import attrs

from .._errors import InvalidArgumentError, JournalError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "MAX_KEY_LENGTH",
    "JobRecord",
    "Journal",
    "MemoryJournal",
    "SQLiteJournal",
    "Stage",
    "check_key",
]

T = TypeVar("T")
log = logging.getLogger("vidapi_async.batch")


class Stage(enum.StrEnum):
    """How far a job got, in order. A job resumes from the stage after its own."""

    PENDING = "pending"
    """Nothing done yet."""
    UPLOADING = "uploading"
    """A chunked upload started at ``upload_url``; it can be resumed there."""
    UPLOADED = "uploaded"
    """The file is on the platform at ``file_url``."""
    CREATING = "creating"
    """The create request is about to be, or was, sent: whether it took effect is
    checked (by the job's tag) before anything is sent again."""
    CREATED = "created"
    """The video exists: ``video_id``."""
    SUBTITLES = "subtitles"
    """Its subtitles are being attached (``subtitles_done`` says which are)."""
    PASSWORD = "password"  # noqa: S105 - a stage name, not a secret
    """Its password is being set."""
    LIVE = "live"
    """It is being made a live stream."""
    READY = "ready"
    """The platform has encoded it (only with ``BatchUploader(wait_ready=True)``)."""
    DONE = "done"
    """Every stage done."""

    @property
    def rank(self) -> int:
        """Its place in the order (``PENDING`` is 0): a record never moves back."""
        return RANKS[self]


RANKS: Final = {stage: i for i, stage in enumerate(Stage)}
"""Each stage's place in the order (``Stage.rank``; a table for hot loops)."""


MAX_KEY_LENGTH = 200
"""The longest job key, in characters, for every journal and the shared queue."""


def check_key(key: object) -> str:
    """A job key a journal can hold: a non-blank string of at most ``MAX_KEY_LENGTH``
    characters, none of them a control character (NUL, a newline...);
    ``InvalidArgumentError`` naming the problem (and the key's start only) otherwise."""
    if not isinstance(key, str) or not key.strip():
        raise InvalidArgumentError("key", "must be a non-empty string")
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidArgumentError(
            "key",
            f"{len(key)} characters, more than the {MAX_KEY_LENGTH} a journal holds "
            f"(it starts {key[:20]!r})",
        )
    if key.isascii() and key.isprintable():
        return key  # the usual key: no ASCII character outside these is refused
    bad = next((c for c in key if unicodedata.category(c) in _NOT_IN_KEYS), None)
    if bad is not None:
        raise InvalidArgumentError(
            "key", f"has the character {bad!r} (control, invisible or a line break): {key[:40]!r}"
        )
    return key


_NOT_IN_KEYS = frozenset({"Cc", "Cs", "Cf", "Zl", "Zp"})
"""Categories refused in a key: control characters, lone surrogates, format characters
(bidirectional overrides, zero-width) and line or paragraph separators (a key is shown
in logs and status: it must read as what it is)."""


class JobLost(Exception):
    """A fenced journal refused a write: another worker claimed the job since (its
    token, ``runs``, is higher). The job stops at once and records nothing more."""

    def __init__(self, key: str) -> None:
        super().__init__(f"lost job {key} to another worker")
        self.key = key


@attrs.define
class JobRecord:
    """One job's progress, as the journal keeps it."""

    key: str
    """The job's key."""
    stage: Stage = Stage.PENDING
    """The last stage reached."""
    upload_url: str | None = attrs.field(default=None, repr=False)
    """A chunked upload's address, while it can be resumed (hidden from repr: a seal)."""
    progress_url: str | None = None
    """That upload's progress address."""
    file_url: str | None = None
    """The uploaded file's address, once uploaded."""
    video_id: str | None = None
    """The video's id, once created."""
    subtitles_done: list[str] = attrs.Factory(list)
    """Languages attached so far."""
    runs: int = 0
    """How many times the job was started, this run included."""
    error: str | None = None
    """The last failure's message, or ``None``."""
    metadata: dict[str, Any] | None = attrs.field(default=None, repr=False)
    """The metadata its video holds, as last sent and acknowledged
    (``UploadJob.metadata()``: recorded with ``creating``, then after each update), so
    that a resume or a re-run sends only what changed; ``None`` for a job recorded
    before journals kept it. While an object's chunked upload can be resumed:
    ``{"source_etag": ETAG}``, its version."""
    source: str | None = attrs.field(default=None, repr=False)
    """The file the job's video was made from: a path, or a url without credentials or
    signature (``None``: recorded before journals kept it)."""
    origin: str | None = None
    """The manifest or feed whose job made the record (``BatchUploader.run(origin=)``),
    or ``None``."""
    account: str | None = None
    """The account whose video it is: the name of the variable holding its token (a
    job's ``account``), ``""`` for the client's own; ``None``: recorded before journals
    kept it."""


def row_values(record: JobRecord) -> tuple[object, ...]:
    """``record`` as a journal row's values, in ``COLUMNS``' order (read field by field:
    ``attrs.asdict`` and a dict in between cost a job's three rows about as much as
    their SQL, issue 43)."""
    done = record.subtitles_done
    return (
        record.key,
        str(record.stage),
        record.upload_url,
        record.progress_url,
        record.file_url,
        record.video_id,
        json.dumps(done) if done else "[]",
        record.runs,
        record.error,
        None if record.metadata is None else json.dumps(record.metadata),
        record.source,
        record.origin,
        record.account,
    )


@runtime_checkable
class Journal(Protocol):
    """What a batch needs of a store of job progress.

    A journal may also define ``async def open(self)``: a batch awaits it on entering
    its block, before any job starts, so that a journal it cannot use is refused then.
    """

    async def load(self, key: str) -> JobRecord | None:
        """The record of ``key``, or ``None`` when the journal has none."""
        ...

    async def save(self, record: JobRecord) -> None:
        """Durably record ``record`` before returning."""
        ...

    async def close(self) -> None:
        """Release what the journal holds (idempotent)."""
        ...


class MemoryJournal:
    """Keeps progress for the life of the object, in memory that does not grow with the
    number of jobs.

    Jobs under way are kept whole. A finished job is kept as its key, video id and run
    count only (about 0.2 KiB), and only the last ``keep_done`` of them: a job whose key
    comes again within that many finished jobs is skipped, as a done job is; one that
    comes back later is done again (a second video). For exactly-once over any number of
    jobs, or across runs, use ``SQLiteJournal``.
    """

    def __init__(self, keep_done: int = 100_000) -> None:
        if not isinstance(keep_done, int) or isinstance(keep_done, bool) or keep_done < 0:
            raise InvalidArgumentError("keep_done", "must be an int >= 0")
        self._records: dict[str, JobRecord] = {}
        self._done: OrderedDict[str, _Done] = OrderedDict()
        self._keep_done = keep_done

    async def load(self, key: str) -> JobRecord | None:
        """The record of ``key``, or ``None`` when the journal has none."""
        record = self._records.get(check_key(key))
        if record is not None:
            return attrs.evolve(record, subtitles_done=list(record.subtitles_done))
        done = self._done.get(key)
        return None if done is None else _done_record(key, done)

    async def save(self, record: JobRecord) -> None:
        """Durably record ``record`` before returning."""
        check_key(record.key)
        if record.stage is not Stage.DONE:
            self._done.pop(record.key, None)
            self._records[record.key] = attrs.evolve(
                record, subtitles_done=list(record.subtitles_done)
            )
            return
        self._records.pop(record.key, None)
        self._done[record.key] = (
            record.video_id, record.runs, record.metadata, record.source, record.origin,
            record.account,
        )  # fmt: skip
        self._done.move_to_end(record.key)
        while len(self._done) > self._keep_done:
            self._done.popitem(last=False)

    async def forget(self, key: str) -> None:
        """Drop a job's record (one recorded under a key the job no longer has)."""
        self._records.pop(key, None)
        self._done.pop(key, None)

    async def close(self) -> None:
        """Release what the journal holds (idempotent)."""
        self._records.clear()
        self._done.clear()

    def records(self) -> list[JobRecord]:
        """Jobs under way, then the finished ones still remembered (oldest first)."""
        done = [_done_record(key, kept) for key, kept in self._done.items()]
        return [*self._records.values(), *done]


_Done = tuple[str | None, int, dict[str, Any] | None, str | None, str | None, str | None]
"""What a ``MemoryJournal`` keeps of a done job: video id, runs, metadata, source, origin,
account."""


def _done_record(key: str, done: _Done) -> JobRecord:
    video_id, runs, metadata, source, origin, account = done
    return JobRecord(
        key, Stage.DONE, video_id=video_id, runs=runs, metadata=metadata, source=source,
        origin=origin, account=account,
    )  # fmt: skip


SCHEMA_VERSION = 4
"""Stored in SQLite's ``user_version``; a journal of a newer version is refused. Version 2
added ``metadata``, version 3 ``source`` and ``origin``, version 4 ``account``: an older
journal gains the columns (empty) when a batch opens it."""

_SCHEMA = """
create table if not exists jobs (
    key text primary key,
    stage text not null,
    upload_url text,
    progress_url text,
    file_url text,
    video_id text,
    subtitles_done text not null,
    runs integer not null,
    error text,
    updated real not null,
    metadata text,
    source text,
    origin text,
    account text
)
"""
COLUMNS = (
    "key", "stage", "upload_url", "progress_url", "file_url", "video_id",
    "subtitles_done", "runs", "error", "metadata", "source", "origin", "account",
)  # fmt: skip
_ADDED = ("metadata", "source", "origin", "account")
"""Columns added since version 1 (an older journal lacks them until migrated)."""
_MARKS = ", ".join("?" * (len(COLUMNS) + 1))
_UPSERT = f"insert or replace into jobs ({', '.join(COLUMNS)}, updated) values ({_MARKS})"  # noqa: S608


def _select(columns: set[str]) -> str:
    """The select of every column, ``null`` for those an unmigrated journal lacks."""
    return "select " + ", ".join(c if c in columns else "null" for c in COLUMNS) + " from jobs"  # noqa: S608 - our own names


_SELECT_ALL = _select(set(COLUMNS))
_QUOTA_TABLE = (
    "create table if not exists quota (account text primary key, videos integer not null, "
    "period real not null, ends text not null, updated real not null)"
)
"""A paced batch's windows (``save_quota``): each account's quota and the creates of its
last window, for ``vidapi status``."""
_QUOTA_UPSERT = "insert or replace into quota values (?, ?, ?, ?, ?)"


_KEYS_KEPT = 20_000
"""Up to this many keys, an ``SQLiteJournal`` keeps them in memory (about 3 MB), and a
new job's ``load`` costs no trip to its thread."""

_Op = tuple[str, object]
"""An operation of a trip to an SQLite journal's thread: ``load`` (a key), ``save`` (a
row's values) or ``forget`` (a key)."""


class SQLiteJournal:
    """A journal in one SQLite file. All database work runs on one worker thread, so
    the event loop never waits on the disk and the connection is never shared.

    ``open`` (awaited when a batch starts; ``load`` and ``save`` open it too) checks the
    file and takes an exclusive lock on it (``flock`` on ``PATH.lock``) that the
    operating system releases when the process ends, however it ends: a second live
    process is refused with ``JournalError``, and a re-run right after a kill starts at
    once. A file that is not a journal of this schema (corrupt, foreign, newer, an
    unknown stage), a directory or a path that cannot be written raise ``JournalError``
    there, before any job starts.
    """

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL") -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous is 'NORMAL' or 'FULL'")
        self.path = os.fspath(path)
        """The journal's file."""
        self._synchronous = synchronous
        self._thread = _Worker("vidapi-journal")
        self._db: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._ops: list[tuple[_Op, asyncio.Future[Any]]] = []
        """Operations for the next trip to the thread, each with its caller's future."""
        self._scheduled = False
        """A trip is asked for at the end of this loop turn."""
        self._in_flight: asyncio.Future[list[object]] | None = None
        """The trip under way."""
        self._keys = _KnownKeys()
        self._rows = _Rows()

    def __repr__(self) -> str:
        return f"SQLiteJournal({self.path!r})"

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._thread.submit(fn, *args)  # type: ignore[no-any-return]

    def _fail(self, message: str) -> JournalError:
        return JournalError(self.path, message)

    def _lock(self) -> None:
        if fcntl is None:  # pragma: no cover - not POSIX: no cross-process lock
            return
        try:
            fd = os.open(self._lock_path(), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._fail("its lock file is a symlink: refusing to use it") from None
            raise self._fail(f"cannot create its lock file: {exc.strerror}") from None
        try:
            _private(fd, self._fail, "its lock file")
        except JournalError:
            os.close(fd)
            raise
        # ``in_use`` (``vidapi status --watch``) holds a shared lock for an instant: a
        # refusal is tried again for a moment before it means another batch.
        for wait in (0.01, 0.02, 0.04, 0.08, 0.16, None):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if wait is None:
                    os.close(fd)
                    raise self._fail(
                        "another live process is using it; wait for it to finish or stop "
                        "it (one journal, one process: the lock is released when that "
                        "process ends)"
                    ) from None
                time.sleep(wait)  # on the journal's own thread, never the loop's
        self._lock_fd = fd

    def _lock_path(self) -> str:
        """The lock file beside the journal's real file: a symlink to the journal names
        the same lock (a hard link does not: a second name made so is not seen)."""
        return os.path.realpath(self.path) + ".lock"

    def in_use(self) -> bool:
        """Whether a batch holds this journal now (another process's or this one's),
        without waiting and without a side effect a batch could see."""
        if fcntl is None:  # pragma: no cover - not POSIX: no lock to look at
            return False
        try:
            fd = os.open(self._lock_path(), os.O_RDONLY)
        except OSError:
            return False  # no lock file: no batch ever held it
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)  # releases the look's shared lock at once
        return False

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        if os.path.isdir(self.path):
            raise self._fail("is a directory; give a file path such as batch.sqlite")
        self._check_file()
        self._lock()
        try:
            self._db = self._check(self._open_db())
        except BaseException:
            self._unlock()
            raise
        return self._db

    def _check_file(self) -> None:
        """Refuse a file that is not a SQLite database (nor empty) before anything is
        changed: its mode, a lock file beside it."""
        try:
            with open(self.path, "rb") as f:
                head = f.read(16)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self._fail(f"cannot open it: {exc.strerror}") from None
        if head and not b"SQLite format 3\0".startswith(head[:16]):
            raise self._fail("not a usable SQLite database: not a SQLite file")

    def _open_db(self) -> sqlite3.Connection:
        # The file is the user's alone (0600, whatever the umask), created so before
        # SQLite opens it: SQLite gives its -wal and -shm files the same mode.
        try:
            try:  # created here: ours alone from the start
                fd = os.open(self.path, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:  # there already (a symlink to a journal is followed)
                fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise self._fail(f"cannot open it: {exc.strerror}") from None
        try:
            _private(fd, self._fail, "it")
        finally:
            os.close(fd)
        real = os.path.realpath(self.path)
        for side in ("-wal", "-shm"):
            try:
                st = os.lstat(real + side)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode):
                raise self._fail(f"its {side} file is a symlink: refusing to use it")
            _owned(st, self._fail, f"its {side} file")
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._fail(f"cannot open it: {exc}") from None
        try:
            db.execute("pragma journal_mode=wal")
            db.execute(f"pragma synchronous={self._synchronous}")
        except sqlite3.Error as exc:
            db.close()
            raise self._fail(f"not a usable SQLite database: {exc}") from None
        return db

    def _check(self, db: sqlite3.Connection) -> sqlite3.Connection:
        """Create the schema in a new file; in an old one, check it is ours, of a
        version we read, with known stages; then prove the file can be written."""
        try:
            self._verify(db)
            db.execute("begin immediate")  # fails here, not after an upload, if read-only
            db.execute(_SCHEMA)
            columns = {r[1] for r in db.execute("pragma table_info(jobs)")}
            for column in _ADDED:  # an older journal, migrated in place
                if column not in columns:
                    db.execute(f"alter table jobs add column {column} text")
            db.execute(f"pragma user_version = {SCHEMA_VERSION}")
            db.execute("commit")
        except JournalError:
            db.close()
            raise
        except sqlite3.Error as exc:
            db.close()
            raise self._fail(f"cannot be used: {exc}") from None
        return db

    def _verify(self, db: sqlite3.Connection) -> bool:
        """Check, reading only, that ``db`` is a journal of a schema we read (or an
        empty database): ``JournalError`` naming what is wrong. True if it has jobs."""
        version = db.execute("pragma user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
        if version > SCHEMA_VERSION:
            raise self._fail(f"written by a newer vidapi-async (schema {version})")
        if tables and "jobs" not in tables:
            raise self._fail(f"not a vidapi journal (tables: {', '.join(sorted(tables))})")
        if "jobs" in tables:
            columns = {r[1] for r in db.execute("pragma table_info(jobs)")}
            missing = {*COLUMNS, "updated"} - columns - set(_ADDED)
            if missing:
                raise self._fail(
                    f"not a vidapi journal (its jobs table lacks {', '.join(sorted(missing))})"
                )
            known = {str(stage) for stage in Stage}
            for (stage,) in db.execute("select distinct stage from jobs"):
                if stage not in known:
                    raise self._fail(f"a job has the unknown stage {stage!r}")
        return "jobs" in tables

    def _load(self, db: sqlite3.Connection, key: str) -> JobRecord | None:
        row = db.execute(_SELECT_ALL + " where key = ?", (key,)).fetchone()
        return None if row is None else record_of_row(row, self.path)

    def _apply(self, ops: list[_Op]) -> list[object]:
        """One trip's operations, in order, the writes in one transaction committed
        before the trip returns (on the journal's thread). A failure undoes them all
        and is every operation's."""
        db = self._connect()
        writes = any(op[0] != "load" for op in ops)
        if writes:
            db.execute("begin immediate")
        try:
            out: list[object] = []
            i = 0
            while i < len(ops):
                kind, arg = ops[i]
                if kind == "save":  # with the saves right after it: one executemany
                    j = i + 1
                    while j < len(ops) and ops[j][0] == "save":
                        j += 1
                    rows = [(*op[1], time.time()) for op in ops[i:j]]  # type: ignore[misc]
                    db.executemany(_UPSERT, rows)
                    out += [None] * (j - i)
                    i = j
                    continue
                i += 1
                if kind == "load":
                    assert isinstance(arg, str)
                    out.append(self._load(db, arg))
                elif kind == "update":
                    assert isinstance(arg, tuple)
                    changed: tuple[int, ...] = arg[0]
                    values: tuple[object, ...] = arg[1]
                    updated = db.execute(
                        _update(changed), (*[values[c] for c in changed], time.time(), values[0])
                    )
                    if updated.rowcount == 0:  # (not there: cannot be, the lock held; safe)
                        db.execute(_UPSERT, (*values, time.time()))
                    out.append(None)
                elif kind == "quota":
                    assert isinstance(arg, tuple)
                    db.execute(_QUOTA_TABLE)
                    out.append(db.execute(_QUOTA_UPSERT, arg).rowcount)
                else:
                    out.append(db.execute("delete from jobs where key = ?", (arg,)).rowcount)
            if writes:
                db.execute("commit")
        except BaseException:
            if writes and db.in_transaction:
                db.execute("rollback")
            raise
        return out

    def _trip(self, kind: str, arg: object) -> asyncio.Future[Any]:
        """Queue an operation for the next trip to the journal's thread: one trip per
        loop turn at most (the operations of every task that ran in the turn; while a
        trip is under way, those queued meanwhile wait for it and go in the next)."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self._ops.append(((kind, arg), done))
        if not self._scheduled and self._in_flight is None:
            self._scheduled = True
            loop.call_soon(self._go)
        return done

    def _go(self) -> None:
        self._scheduled = False
        queued, self._ops = self._ops, []
        if not queued:
            return
        loop = asyncio.get_running_loop()
        ops, slots = self._rows.narrowed([op for op, _ in queued])
        trip = self._thread.submit(self._apply, ops)
        self._in_flight = trip

        def back(trip: asyncio.Future[list[object]]) -> None:
            self._in_flight = None
            failed = None if trip.cancelled() else trip.exception()
            if trip.cancelled() or failed is not None:
                self._keys.keys = None  # its writes undone (or not known): no shortcut
                self._rows.rows.clear()  # nor rows known as the file holds them
            for i, (_, done) in enumerate(queued):
                if done.done():
                    continue  # its caller was cancelled meanwhile
                if trip.cancelled():
                    done.cancel()
                elif failed is not None:
                    done.set_exception(failed)
                else:  # (a save skipped for a later one of its key: that one's commit)
                    slot = slots[i]
                    done.set_result(None if slot is None else trip.result()[slot])
            if self._ops and not self._scheduled:
                self._scheduled = True
                loop.call_soon(self._go)

        trip.add_done_callback(back)

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._unlock()

    async def open(self) -> None:
        """Check the journal and take its lock (``JournalError`` if it cannot be used);
        read the keys it holds, if there are not too many."""
        self._keys.moved = False
        self._rows.rows.clear()  # the file may have changed while its lock was not ours
        self._keys.opened(await self._run(lambda: _KnownKeys.read(self._connect())))

    async def load(self, key: str) -> JobRecord | None:
        """The record of ``key``, or ``None`` when the journal has none."""
        if self._keys.absent(check_key(key)):
            return None  # not in the file, nor in a save queued: no trip
        found = await self._trip("load", check_key(key))
        assert found is None or isinstance(found, JobRecord)
        return found

    async def save(self, record: JobRecord) -> None:
        """Durably record ``record`` before returning: committed, with the other
        saves of the same loop turn (group commit), before this returns."""
        check_key(record.key)
        values = row_values(record)  # its values as they are now
        self._keys.wrote(record.key, kept=True)
        await self._trip("save", values)

    def save_soon(self, record: JobRecord) -> None:
        """Queue ``record``'s write for the next trip, not waited for: a stage whose
        next step saves again, awaited, before anything depends on it (``uploaded``,
        then ``creating``: one trip, one transaction). A failure is logged."""
        check_key(record.key)
        values = row_values(record)
        self._keys.wrote(record.key, kept=True)
        self._trip("save", values).add_done_callback(functools.partial(_soon_done, record.key))

    async def forget(self, key: str) -> None:
        """Drop a job's record (one recorded under a key the job no longer has)."""
        self._keys.wrote(key, kept=False)
        await self._trip("forget", key)

    async def close(self) -> None:
        """Release what the journal holds (idempotent)."""
        try:
            while self._in_flight is not None or self._ops:  # (a caller that left early)
                if self._in_flight is not None:
                    await asyncio.wait([self._in_flight])
                else:
                    self._go()
            await self._run(self._close)
        finally:
            self._rows.rows.clear()  # the lock released: others may write the rows
            self._thread.shutdown()

    def records_sync(self) -> list[JobRecord]:
        """Every record (blocking; for tools and tests, not for the event loop). Reads
        without the lock, so a running batch can be watched; a journal whose schema is
        not written yet has no records. A file that is not a journal (or a directory, or
        none) raises ``JournalError`` naming it, as ``open`` does."""

        def read(db: sqlite3.Connection) -> list[JobRecord]:
            columns = {r[1] for r in db.execute("pragma table_info(jobs)")}
            rows = db.execute(_select(columns) + " order by updated").fetchall()
            return [record_of_row(row, self.path) for row in rows]

        return _read_only(self, read)

    def quota_sync(self) -> list[tuple[str, int, float, list[float]]]:
        """Each paced account's quota and the creates of its last window (``save_quota``;
        blocking, read as ``records_sync`` reads): its name (``""``: the client's own),
        videos, period, and when each create ended (seconds since the epoch)."""

        def read(db: sqlite3.Connection) -> list[tuple[str, int, float, list[float]]]:
            if db.execute("select 1 from sqlite_master where name = 'quota'").fetchone() is None:
                return []
            rows = db.execute("select account, videos, period, ends from quota order by account")
            return [
                (str(a), int(v), float(p), [float(t) for t in json.loads(e)]) for a, v, p, e in rows
            ]

        return _read_only(self, read)

    async def save_quota(self, account: str, videos: int, period: float, ends: list[float]) -> None:
        """Keep ``account``'s quota (``videos`` per ``period`` seconds) and when the
        creates of its window now ended (what ``vidapi status`` shows of a local paced
        batch)."""
        values = (account, videos, period, json.dumps(ends), time.time())
        await self._trip("quota", values)


def _read_only(journal: SQLiteJournal, read: Callable[[sqlite3.Connection], list[T]]) -> list[T]:
    """``read`` on ``journal`` opened read-only, without its lock (``[]`` when it has no
    schema yet); ``JournalError`` naming what is wrong."""
    if os.path.isdir(journal.path):
        raise journal._fail("is a directory; give the journal's file, such as batch.sqlite")
    if not os.path.isfile(journal.path):
        raise journal._fail("no such file")
    # A URI, so that read-only is asked for; the path escaped ('?', '#', '%' in it).
    uri = f"file:{urllib.parse.quote(os.path.abspath(journal.path))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise journal._fail(f"cannot open it: {exc}") from None
    try:
        return read(db) if journal._verify(db) else []
    except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
        raise journal._fail(f"not a usable SQLite database: {exc}") from None
    finally:
        db.close()


class _Worker:
    """The one thread an ``SQLiteJournal``'s work runs on, in order, each result handed
    back to the loop by one ``call_soon_threadsafe``: ``run_in_executor``'s futures, its
    ``Condition`` and semaphore were Python on both threads, most of a trip's cost
    (issue 43). Started on the first call; ``shutdown`` ends it once what is queued ran."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._calls: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()
        self._calls.put((loop, done, fn, args))
        return done

    def _serve(self) -> None:
        while (call := self._calls.get()) is not None:
            loop, done, fn, args = call
            try:
                outcome: tuple[bool, Any] = (True, fn(*args))
            except BaseException as exc:  # the caller's, on the loop
                outcome = (False, exc)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for it
                loop.call_soon_threadsafe(_settle, done, outcome)
            del call, done, outcome

    def shutdown(self) -> None:
        """Wait for what is queued, then end the thread (blocking; idempotent)."""
        if self._thread is not None:
            self._calls.put(None)
            self._thread.join()
            self._thread = None


def _settle(done: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if done.cancelled():
        return
    if outcome[0]:
        done.set_result(outcome[1])
    else:
        done.set_exception(outcome[1])


class _KnownKeys:
    """Every key an ``SQLiteJournal``'s file holds or a queued save adds (read by
    ``open``, kept up to date by ``save`` and ``forget``; its lock makes the process the
    only writer): a ``load`` of any other key is ``None`` without a trip (a new job's).
    ``keys`` is ``None`` when not known (not opened, more than ``_KEYS_KEPT``, a failed
    write)."""

    def __init__(self) -> None:
        self.keys: set[str] | None = None
        self.moved = False
        """A write was queued while ``open`` read the keys: what it read is not kept."""

    @staticmethod
    def read(db: sqlite3.Connection) -> set[str] | None:
        """The file's keys (on the journal's thread), ``None`` if there are too many."""
        (count,) = db.execute("select count(*) from jobs").fetchone()
        if count > _KEYS_KEPT:
            return None
        return {key for (key,) in db.execute("select key from jobs")}

    def opened(self, keys: set[str] | None) -> None:
        self.keys = None if self.moved else keys

    def absent(self, key: str) -> bool:
        return self.keys is not None and key not in self.keys

    def wrote(self, key: str, *, kept: bool) -> None:
        """A write of ``key`` queued now (on the loop): ``kept`` a save, else a forget."""
        self.moved = True
        if self.keys is None:
            return
        if not kept:
            self.keys.discard(key)
        elif len(self.keys) < _KEYS_KEPT:
            self.keys.add(key)
        else:
            self.keys = None


class _Rows:
    """The rows of the jobs under way as an ``SQLiteJournal``'s file holds them once the
    trips sent so far are committed (kept on the loop; a failed trip clears them), so
    that a trip writes less (issue 43): a save that a later save of the same key in the
    same trip overwrites is not sent (both are in one transaction: the later one is
    durable exactly when the earlier one would have been; never past a load or forget
    of that key), and a save of a row known here is an ``update`` of the columns that
    changed, not an ``insert or replace`` of all 14. A done job's row is not kept."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[object, ...]] = {}

    def narrowed(self, ops: list[_Op]) -> tuple[list[_Op], list[int | None]]:
        """A trip's operations as sent, and where each queued one's result is in what
        the trip returns (``None``: not sent, overwritten by a later save)."""
        later: set[str] = set()  # keys saved later in the trip, no load or forget between
        skip = [False] * len(ops)
        for i in range(len(ops) - 1, -1, -1):
            kind, arg = ops[i]
            if kind == "save":
                assert isinstance(arg, tuple)
                skip[i] = arg[0] in later
                later.add(str(arg[0]))
            elif kind in ("load", "forget"):
                later.discard(str(arg))
        sent: list[_Op] = []
        slots: list[int | None] = []
        rows = self.rows
        for i, op in enumerate(ops):
            if skip[i]:
                slots.append(None)
                continue
            kind, arg = op
            if kind == "save":
                assert isinstance(arg, tuple)
                key = arg[0]
                assert isinstance(key, str)
                was = rows.pop(key, None)
                if was is not None:
                    changed = tuple(c for c in range(1, len(arg)) if arg[c] != was[c])
                    op = ("update", (changed, arg))
                if arg[1] != "done":  # a done job's row is seldom written again
                    if len(rows) >= _KEYS_KEPT:
                        rows.clear()
                    rows[key] = arg
            elif kind == "forget":
                rows.pop(arg, None)  # type: ignore[call-overload]
            slots.append(len(sent))
            sent.append(op)
        return sent, slots


@functools.lru_cache(maxsize=64)
def _update(changed: tuple[int, ...]) -> str:
    """The ``update`` of a job's row that writes the columns ``changed`` (their indexes
    in ``COLUMNS``) and its time."""
    columns = "".join(f"{COLUMNS[c]} = ?, " for c in changed)
    return f"update jobs set {columns}updated = ? where key = ?"  # noqa: S608 - our own names


def _soon_done(key: str, written: asyncio.Future[Any]) -> None:
    """A ``save_soon`` write's end: its failure logged (and retrieved)."""
    if not written.cancelled() and (failed := written.exception()) is not None:
        log.warning("job %s: the journal did not record its stage: %s", key, failed)


def _private(fd: int, fail: Callable[[str], JournalError], name: str) -> None:
    """Make a file of ours readable and writable by its owner only (it may hold a
    chunked upload's address with its seal); refuse one another user owns or could
    have written (``_owned``)."""
    st = os.fstat(fd)
    _owned(st, fail, name)
    if stat.S_IMODE(st.st_mode) != 0o600:
        os.fchmod(fd, 0o600)


def _owned(st: os.stat_result, fail: Callable[[str], JournalError], name: str) -> None:
    """Refuse a journal's file another user owns, or group or others may write: it may
    have been prepared for this batch by someone else (in a shared folder)."""
    if st.st_uid != os.geteuid():
        raise fail(f"{name} belongs to another user (uid {st.st_uid}): refusing to use it")
    if st.st_mode & 0o022:
        raise fail(
            f"{name} is writable by others (mode {stat.S_IMODE(st.st_mode):o}): refusing to "
            "use it; make it 0600 if it is yours"
        )


def record_of_row(row: tuple[object, ...], where: str) -> JobRecord:
    """A journal row as a ``JobRecord``; a corrupt ``metadata`` (not a JSON object of
    the shape a batch writes) is a ``JournalError`` naming the job."""
    values: dict[str, Any] = dict(zip(COLUMNS, row, strict=True))
    values["stage"] = Stage(values["stage"])
    values["subtitles_done"] = json.loads(values["subtitles_done"])
    if values["metadata"] is not None:
        values["metadata"] = _metadata(values["metadata"], values["key"], where)
    return JobRecord(**values)


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _metadata(text: object, key: object, where: str) -> dict[str, Any]:
    """A done job's recorded metadata, checked: a JSON object whose ``playlists`` and
    ``added`` are lists of names, ``kept`` an object and ``thumbnail`` a string."""

    def corrupt(why: str) -> JournalError:
        return JournalError(where, f"job {key!s:.200}: its recorded metadata is corrupt ({why})")

    try:
        value = json.loads(str(text), parse_constant=_refuse_constant)
    except ValueError:
        raise corrupt("not JSON") from None
    if not isinstance(value, dict):
        raise corrupt(f"a JSON {type(value).__name__}, not an object")
    for name in ("playlists", "added"):
        names = value.get(name, [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise corrupt(f"{name} is not a list of names")
    if not isinstance(value.get("kept", {}), dict):
        raise corrupt("kept is not an object")
    if not isinstance(value.get("thumbnail", ""), str):
        raise corrupt("thumbnail is not a string")
    return value
