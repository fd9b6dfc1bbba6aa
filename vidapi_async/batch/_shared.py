"""One batch, many machines: the jobs on a procrastinate queue in PostgreSQL, the stages
in a ``PostgresJournal`` beside it (extra ``vidapi-async[postgres]``).

- ``enqueue`` stores each job's spec in the journal's schema (table ``specs``) and defers
  a task whose only argument is the job's key (procrastinate logs task arguments; a spec
  may hold a video password). A job already done, queued or running is not added again.
  Jobs go in batches: two statements per few thousand jobs, enqueuers of one queue
  taking turns per batch (an advisory lock), so that one spec per key is decided.
- ``work`` runs a procrastinate worker: one job key at a time across every worker (the
  task's ``lock`` is ``QUEUE/KEY``), each through the same pipeline as ``BatchUploader`` (the
  journal's stages, the tag check before a create is sent again). Jobs held by a worker
  whose heartbeat is older than ``stalled_after`` seconds are handed to the queue again
  (a new job; the old one ended ``aborted``). procrastinate is used through its public
  interface only (``_queue``).
  A failure for good (bad file, 4xx) is recorded and not retried; a transient one is
  retried by the queue (``max_attempts``). The worker's own credentials refused (401,
  ``OAuthError``, 403 insufficient scope): no job's fault; the job goes back to the queue
  (no attempt counted) and ``work`` stops, raising that error.
- The account's quota is shared: the first refusal any worker sees is kept in the table
  ``flags`` until it resets, and no worker starts an upload or a create before then.
- Fencing: each start of a job claims it in the journal (a token that only grows); a
  worker paused past ``stalled_after`` whose job was taken over has its next journal
  write refused, stops that job, records nothing and logs "lost job KEY to another
  worker". Two workers taking over one stalled job, a job that finished meanwhile: normal
  races, logged at debug.
- Creates are fenced on our side (the platform has none): a fenced write just before
  each create and subtitle send, and a worker whose create lands after it lost the job
  deletes what it made unless the journal records it (``BatchUploader``'s docstring;
  it waits up to 4 × ``stalled_after`` for the job to record one).
- The database may go away: every statement of a worker (journal, queue, rate, quota)
  waits for it with backoff and runs again; meanwhile nothing new starts, and a job is
  never failed for it. A worker stopped while it is away stops at once.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import json
import logging
import os
import re
from collections.abc import AsyncIterable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeGuard

import attrs

from .. import _metrics
from .._client import Client
from .._errors import (
    APIError,
    AuthenticationError,
    FileError,
    InsufficientScopeError,
    JournalError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    TransportError,
    UsageError,
)
from .._internals import internals
from .._observe import worker_log
from .._protocol import url_for_humans
from .._transfer.files import inspect_file
from ._jobs import (
    METADATA_FIELDS,
    BatchProgress,
    JobResult,
    JobStatus,
    SubtitleSpec,
    UploadJob,
    file_key,
    missing_key,
    url_key,
)
from ._postgres import PostgresJournal, connect_cause, db_away
from ._report import Links, ReportWriter
from ._runner import BatchUploader, _each

if TYPE_CHECKING:
    import procrastinate

__all__ = ["QueueStatus", "SharedBatch", "SharedRate"]

TASK = "vidapi.pipeline"

_QUEUE = re.compile(r"[A-Za-z0-9_.-]{1,40}")
"""A queue's name: procrastinate's notify channel for a queue is the name after a prefix
of 23 characters, and PostgreSQL's channel names end at 63 bytes."""

log = logging.getLogger("vidapi_async.worker")


def _spec(job: UploadJob) -> dict[str, Any]:
    if job.headers:
        raise UsageError(
            f"{job.where}: a URL job's headers (its source's credentials) are not stored "
            "in the shared queue; run it with a local journal, or give the source an "
            "address that needs no headers"
        )
    # Where the files are, not where they are from the enqueuing shell: a worker may
    # start in another folder (every host mounts the files at the same path).
    return {
        "path": None if job.path is None else os.path.abspath(job.path),
        "url": job.url,
        "title": job.title,
        "channel": job.channel,
        "published": job.published,
        "password": job.password,
        "live": job.live,
        "key": job.key,
        **{
            name: value.isoformat() if isinstance(value, datetime.datetime) else value
            for name in METADATA_FIELDS
            if (value := getattr(job, name)) is not None
        },
        "thumbnail": job.thumbnail,
        "playlists": list(job.playlists),
        "subtitles": [
            {
                "language": s.language,
                "path": None if s.path is None else os.path.abspath(s.path),
                "url": s.url,
            }
            for s in job.subtitles
        ],
    }


def _lock(queue: str, key: str) -> str:
    """The procrastinate lock (and queueing lock) of ``key`` on ``queue``: prefixed with
    the queue's name on every queue (procrastinate's locks span every queue; a queue's
    name holds no ``/``, so two queues' locks never overlap). Releases up to 0.1.0 gave
    the queue ``vidapi`` the bare key: such jobs still run (a worker reads the key from
    the job's arguments; a takeover keeps the job's lock), and one whose bare key is
    another queue's lock is named when that lock is refused (``_check_lock_holder``)."""
    return f"{queue}/{key}"


def _job(spec: dict[str, Any]) -> UploadJob:
    subs = [SubtitleSpec(s["language"], path=s["path"], url=s["url"]) for s in spec["subtitles"]]
    dates = {
        name: datetime.datetime.fromisoformat(spec[name])
        for name in ("publish_date", "expiry_date")
        if isinstance(spec.get(name), str)
    }
    return UploadJob(**{**spec, **dates, "subtitles": subs})


_UPDATABLE: Final = frozenset(
    {"title", "channel", "published", *METADATA_FIELDS, "thumbnail", "playlists"}
)
"""What of a done job's spec an update applies to its video; a change to anything else
(its file, password, live, subtitles) is refused (``Enqueued.changed``)."""


def _metadata_only(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two specs of one job differ in what an update applies only."""
    names = ({*old, *new} - _UPDATABLE) | {"subtitles", "path", "url", "password", "live"}
    return all(old.get(n) == new.get(n) for n in names)


def _keyed(jobs: list[UploadJob]) -> list[tuple[UploadJob, str | None, str | None, str]]:
    """Each job with its key (``None`` when its file cannot be read, with the journal's
    error text for it, as a worker would record it) and, for a job keyed by its file,
    the key its failure is recorded under while the file is missing (``missing_key``),
    as a batch on a SQLite journal does (blocking: one trip to a thread per batch)."""
    out: list[tuple[UploadJob, str | None, str | None, str]] = []
    for job in jobs:
        missing = None
        if job.path is not None and job.key is None:
            missing = missing_key(job.path)
        try:
            out.append((job, _key_of(job), missing, ""))
        except OSError:
            assert job.path is not None  # only a file's key reads the disk
            why: FileError = FileError(job.where, "cannot read it")
            try:
                inspect_file(job.path)
            except FileError as exc:
                why = exc
            out.append((job, None, missing, f"{type(why).__name__}: {why}"))
    return out


def _key_of(job: UploadJob) -> str:
    if job.key is not None:
        return job.key
    if job.url is not None:
        return url_key(job.url)
    assert job.path is not None
    return file_key(job.path)


@attrs.frozen
class Enqueued:
    added: int
    already: int
    """Done, queued or running already: not added again."""
    unreadable: list[str]
    """Paths that could not be read on the enqueuing host: not added, and recorded failed
    in the journal (``status`` counts them) until a later ``enqueue`` finds the file."""
    changed: list[str] = attrs.field(factory=list)
    """Keys of jobs queued or running already (by an earlier enqueue, another host's at
    the same moment, or earlier in this one), or done with a change an update cannot
    apply (their file, password, live, subtitles), whose spec here differs: they keep
    the spec they were enqueued with (the change is not applied)."""
    updating: list[str] = attrs.field(factory=list)
    """Keys of jobs done whose metadata here differs (title, description, tags,
    thumbnail, playlists...): their update is queued (the file is not sent again)."""


@attrs.frozen
class QueueStatus:
    """A shared queue's jobs, from a read of the queue then one of the journal
    (``SharedBatch.status``). A job the journal records done counts as done whatever
    the queue says; a job the queue failed counts as failed."""

    queued: int
    """Jobs waiting in the queue for a worker (not done per the journal)."""
    running: int
    """Jobs a worker holds now."""
    done: int
    """Jobs done, per the journal."""
    failed: int
    """Jobs failed for good: failed in the queue (a 4xx, its attempts spent), or with
    an error recorded in the journal and neither queued nor running (a file missing
    when it was enqueued)."""
    stages: Mapping[str, int]
    """Jobs per journal stage (``done``, ``uploading``...): the journal's records."""

    def as_dict(self) -> dict[str, Any]:
        """The counts as a plain dict (what ``vidapi status --json`` prints)."""
        return {
            "queued": self.queued,
            "running": self.running,
            "done": self.done,
            "failed": self.failed,
            "stages": dict(self.stages),
        }


class SharedBatch:
    """``async with SharedBatch(dsn) as shared``: ``enqueue``, ``work``, ``status``."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "vidapi",
        queue: str | None = None,
        wait_for_database: bool = False,
    ) -> None:
        """``queue``: the procrastinate queue's name; by default the schema's (the
        queue tables are the database's, shared by every schema: each schema its own
        queue; the defaults, schema and queue ``vidapi``, are those of earlier
        releases). ``wait_for_database``: entering waits while the server is away
        (refusing connections, starting up, shutting down) with the backoff of a
        worker that loses it later, instead of raising ``JournalError``
        (``vidapi worker``)."""
        self.journal = PostgresJournal(dsn, schema=schema)
        self._wait = wait_for_database
        self._stopping = asyncio.Event()
        self.queue = schema if queue is None else queue
        if not _QUEUE.fullmatch(self.queue):
            said = "queue" if queue is not None else f"the queue (schema {schema!r})"
            raise UsageError(
                f"{said}: letters, digits, '_', '.' and '-', at most 40 (procrastinate's "
                "notify channel); give a longer schema a shorter queue="
            )
        """The procrastinate queue's name (by default the schema's)."""
        self._dsn = dsn
        self._app: procrastinate.App | None = None
        self._legacy_gone = False
        """No job of release 0.1.0 waited at this enqueue's last look (none is queued
        any more: not looked for again)."""
        self._refused: asyncio.Future[APIError] | None = None
        """Set when the API refuses this worker's own credentials: it stops."""

    async def __aenter__(self) -> SharedBatch:
        try:
            import procrastinate
        except ImportError:
            raise UsageError(
                "the shared queue needs procrastinate: the postgres extra "
                "(pip install '.[postgres]' from a checkout, or the wheel with [postgres])"
            ) from None
        await self.journal.open(wait=self._wait)
        journal = self.journal
        q = journal._q

        async def tables(conn: Any) -> None:
            # under the schema's DDL lock: two starts at once do not both create them
            async with conn.transaction():
                await journal.lock_ddl(conn)
                await conn.execute(
                    q(
                        "create table if not exists {s}.specs "
                        "(key text primary key, spec text not null)"
                    )
                )
                await conn.execute(
                    q(
                        "create table if not exists {s}.flags "
                        "(name text primary key, until timestamptz not null)"
                    )
                )
                # a queue job's tries that were no fault of its own (its worker's
                # credentials refused): not counted against its attempts
                await conn.execute(
                    q(
                        "create table if not exists {s}.handed_back "
                        "(job bigint primary key, n integer not null)"
                    )
                )

        try:
            await journal._run(tables)
        except BaseException:
            await journal.close()
            raise
        from ._queue import PatientConnector, Retry, apply_schema

        # (procrastinate's pool checks a connection before handing it out: one lost to a
        # restart is replaced)
        connector = PatientConnector(
            outage=journal.outage,
            conninfo=self._dsn,
            timeout=5.0,
            kwargs={"connect_timeout": 5},
        )
        app = procrastinate.App(connector=connector)
        app.task(
            name=TASK,
            queue=self.queue,
            pass_context=True,
            retry=Retry(never=(SpecMissing,)),
        )(_pipeline_task)
        await app.open_async()
        self._app = app

        async def schema(conn: Any) -> None:
            # procrastinate's tables, once per database (an advisory lock: two hosts
            # starting at once do not both create them)
            await conn.execute("select pg_advisory_lock(7317001)")
            try:
                await apply_schema(app)
            finally:
                await conn.execute("select pg_advisory_unlock(7317001)")

        try:
            await journal._run(schema)
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        app, self._app = self._app, None
        if app is not None:
            await app.close_async()
        await self.journal.close()

    def _ready(self) -> procrastinate.App:
        if self._app is None:
            raise UsageError("use the SharedBatch as 'async with SharedBatch(dsn)'")
        return self._app

    # --- enqueue -------------------------------------------------------------------------

    async def enqueue(
        self,
        jobs: Iterable[UploadJob] | AsyncIterable[UploadJob],
        *,
        batch_size: int = 2000,
    ) -> Enqueued:
        """Add the jobs, ``batch_size`` at a time: per batch, in one transaction, the
        jobs not done, queued or running already are deferred (the queue's queueing
        lock tells those waiting) and their specs kept; time linear in the number of
        jobs, memory flat."""
        self._ready()
        added = already = 0
        unreadable: list[str] = []
        changed: list[str] = []
        updating: list[str] = []
        chunk: list[UploadJob] = []

        async def flush() -> None:
            nonlocal added, already
            keyed = await asyncio.to_thread(_keyed, chunk)
            chunk.clear()
            specs: dict[str, str] = {}
            failed: dict[str, str] = {}  # missing key: why (recorded failed, not enqueued)
            found: list[str] = []  # missing keys of files that are there now: forgotten
            for job, key, missing, why in keyed:
                if key is None:
                    unreadable.append(job.where)
                    if missing is not None:
                        failed[missing] = why
                    continue
                if missing is not None:
                    found.append(missing)
                spec = json.dumps(_spec(job))
                if key not in specs:
                    specs[key] = spec
                    continue
                already += 1  # the same job twice in this batch: the first spec is kept
                if spec != specs[key] and key not in changed:
                    changed.append(key)
            await self._record_missing(failed, found)
            if specs:
                new, differ, updates = await self._enqueue_locked(specs)
                added += new - len(updates)
                already += len(specs) - new + len(updates)
                changed.extend(k for k in differ if k not in changed)
                updating.extend(updates)

        async for job in _each(jobs):
            chunk.append(job)
            if len(chunk) >= batch_size:
                await flush()
        if chunk:
            await flush()
        return Enqueued(added, already, unreadable, changed, updating)

    async def _enqueue_locked(self, specs: dict[str, str]) -> tuple[int, list[str], list[str]]:
        """``_enqueue_batch`` in one transaction holding this queue's enqueue lock, on
        the lock's own connection: two hosts enqueuing one key agree on one spec (the
        first one's; the second sees the job queued and is told its spec differs). A
        connection lost meanwhile (a restart) undoes the transaction, and the step is
        done again from taking the lock; the lock is the server's, released with the
        transaction or with a process that dies."""
        import psycopg

        journal = self.journal

        async def once() -> tuple[int, list[str], list[str]]:
            conn = await journal._connect()
            try:
                async with conn.transaction():
                    lock = (f"{journal.schema}/{self.queue}",)
                    cursor = await conn.execute(
                        "select pg_try_advisory_xact_lock(7317002, hashtext(%s))", lock
                    )
                    row = await cursor.fetchone()
                    if not (row and row[0]):
                        log.warning(
                            "enqueue: waiting for another enqueuer of queue %s (schema %s) "
                            "to finish its batch",
                            self.queue,
                            journal.schema,
                        )
                        await conn.execute(
                            "select pg_advisory_xact_lock(7317002, hashtext(%s))", lock
                        )
                    return await self._enqueue_batch(specs, conn)
            finally:
                await conn.close()

        try:
            return await journal.outage.patiently(once)
        except psycopg.Error as exc:  # not an outage: the server refused a statement
            raise journal.refused(exc) from None
        except _DeferRefused as exc:  # inside procrastinate's insert of a job
            raise journal.refused(exc.error, exc.key) from None

    async def _record_missing(self, failed: dict[str, str], found: list[str]) -> None:
        """Jobs whose file is missing: failed in the journal (``status`` counts them, a
        run that finds the file does them); those whose file is there now: their
        failure forgotten. One statement each, only when there is something to write."""
        q = self.journal._q
        if failed:
            await self.journal.execute(
                q(
                    "insert into {s}.jobs (key, stage, subtitles_done, runs, error, updated) "
                    "select k, 'pending', '[]', 0, e, now() "
                    "from unnest(%s::text[], %s::text[]) f(k, e) "
                    "on conflict (key) do update set error = excluded.error, updated = now() "
                    "where {s}.jobs.stage <> 'done'"
                ),
                (list(failed), list(failed.values())),
            )
        if found:
            await self.journal.execute(
                q("delete from {s}.jobs where key = any(%s::text[]) and stage <> 'done'"),
                (found,),
            )

    async def _enqueue_batch(
        self, specs: dict[str, str], conn: Any
    ) -> tuple[int, list[str], list[str]]:
        """Defer the jobs among ``specs`` not done, waiting or running already, and the
        done ones whose metadata only changed (their update), and keep the specs of
        those deferred; how many were deferred, the keys of those already there whose
        new spec differs and is not applied (theirs is kept: a job never runs with a
        spec changed under it), and the keys of the updates. Run under the enqueue
        lock: one spec per key.

        Which keys wait is told by the queue itself, in time linear in the batch: a
        key's job is deferred under its queueing lock (one waiting job per lock), and
        the keys refused are those waiting (``_defer``). The running ones are read
        first (procrastinate's listing of the queue's running jobs, short), and again
        after deferring: a job started meanwhile (or finished: the journal says done)
        undoes the deferring, which is done again on what is true then."""
        while True:
            told = await self._try_batch(specs, conn)
            if told is not None:
                return told

    async def _try_batch(
        self, specs: dict[str, str], conn: Any
    ) -> tuple[int, list[str], list[str]] | None:
        """``_enqueue_batch`` once: ``None`` when a job of the batch started or
        finished while it deferred (nothing of it kept)."""
        from procrastinate.jobs import Status  # documented

        from ._queue import key_states, legacy_waiting, new_job, queue_counts

        app = self._ready()
        keys = list(specs)
        q = self.journal._q
        cursor = await conn.execute(
            q(
                "select n.k, s.spec, "
                "exists(select 1 from {s}.jobs where key = n.k and stage = 'done') "
                "from unnest(%s::text[]) n(k) left join {s}.specs s on s.key = n.k"
            ),
            (keys,),
        )
        facts = await cursor.fetchall()
        stored_of = {key: stored for key, stored, _ in facts if stored is not None}
        done = {key for key, _, is_done in facts if is_done}
        running = set(await key_states(app, self.queue, keys, only=Status.DOING))
        legacy: dict[str, str] = {}  # waiting jobs of release 0.1.0: lock -> key
        if not self._legacy_gone:
            legacy = await legacy_waiting(app)
            self._legacy_gone = not legacy
        if self.queue == "vidapi":  # 0.1.0's jobs are this queue's
            running |= {key for key in legacy.values() if key in specs}
        # compared here, not as jsonb: a path that is not UTF-8 is a lone surrogate's
        # escape in its spec, which jsonb refuses
        differ: list[str] = []
        keep_old: list[str] = []  # there, with no spec kept: this one is kept
        candidates: list[str] = []  # deferred unless waiting
        for key in keys:
            stored = stored_of.get(key)
            if key not in running and key not in done:
                candidates.append(key)
            elif stored is None:
                keep_old.append(key)
            elif (old := json.loads(stored)) != (new := json.loads(specs[key])):
                if key not in running and _metadata_only(old, new):
                    candidates.append(key)  # an update, unless one waits
                else:
                    differ.append(key)
        jobs = {key: new_job(TASK, self.queue, _lock(self.queue, key), key) for key in candidates}
        # likely waiting (a spec kept, not done): together, then one at a time; the
        # others together, halves apart when refused. Many likely waiting on a short
        # queue: its waiting jobs listed instead (cheaper than a statement per key).
        alone = [key for key in candidates if key in stored_of and key not in done]
        together = [key for key in candidates if key not in stored_of or key in done]
        listed: set[str] = set()
        if alone and (await queue_counts(app, self.queue))[0] < _LISTING_PER_KEY * len(alone):
            listed = set(await key_states(app, self.queue, alone, only=Status.TODO))
            together += [key for key in alone if key not in listed]
            alone = []

        try:
            async with conn.transaction():  # a savepoint: undone if a job moved meanwhile
                refused = listed | await self._defer(conn, together, jobs)
                refused |= await self._defer(conn, alone, jobs, halves=False)
                deferred = [key for key in candidates if key not in refused]
                if deferred:
                    started = await key_states(app, self.queue, deferred, only=Status.DOING)
                    finished = await conn.execute(
                        q(
                            "select key from {s}.jobs "
                            "where key = any(%s::text[]) and stage = 'done'"
                        ),
                        ([key for key in deferred if key not in done],),
                    )
                    if started or await finished.fetchall():
                        raise _Moved
        except _Moved:
            log.debug("enqueue: a job of the batch started or finished meanwhile; again")
            return None
        updates: list[str] = []
        for key in candidates:
            stored = stored_of.get(key)
            if key not in refused:
                if key in done:
                    updates.append(key)
                continue
            if _lock(self.queue, key) in legacy:
                await self._check_lock_holder(key)
            if stored is None:
                keep_old.append(key)
            elif json.loads(stored) != json.loads(specs[key]):
                differ.append(key)  # waiting: its spec is kept
        await conn.execute(
            q(
                "insert into {s}.specs select * from unnest(%s::text[], %s::text[]) "
                "on conflict (key) do update set spec = excluded.spec"
            ),
            (deferred, [specs[k] for k in deferred]),
        )
        if keep_old:
            await conn.execute(
                q(
                    "insert into {s}.specs select * from unnest(%s::text[], %s::text[]) "
                    "on conflict do nothing"
                ),
                (keep_old, [specs[k] for k in keep_old]),
            )
        differ.sort()
        return len(deferred), differ, updates

    async def _defer(
        self, conn: Any, keys: list[str], jobs: dict[str, Any], *, halves: bool = True
    ) -> set[str]:
        """Defer the jobs of ``keys`` in one statement, in a savepoint; refused by a
        queueing lock (a job of the key waits), halves deferred apart (``halves``, else
        each key alone: keys likely waiting), down to the keys refused alone: those
        keys. A job the server refuses otherwise is named (``_DeferRefused``)."""
        from procrastinate.exceptions import AlreadyEnqueued, ConnectorException  # documented

        if not keys:
            return set()
        try:
            async with conn.transaction():
                await self._ready().job_manager.batch_defer_jobs_async(
                    [jobs[key] for key in keys], connection=conn
                )
            return set()
        except AlreadyEnqueued:
            if len(keys) == 1:
                return set(keys)
        except ConnectorException as exc:
            if db_away(exc):
                raise
            if len(keys) == 1:
                raise _DeferRefused(keys[0], exc) from exc
        parts = [keys[: len(keys) // 2], keys[len(keys) // 2 :]] if halves else [[k] for k in keys]
        refused: set[str] = set()
        for part in parts:
            refused |= await self._defer(conn, part, jobs)
        return refused

    async def _check_lock_holder(self, key: str) -> None:
        """The queueing lock of ``key`` refused: fine if a job of this queue for this key
        holds it (queued meanwhile), else a job of another queue does (queued by a
        release that gave the queue ``vidapi`` bare keys): ``JournalError`` naming it."""
        lock = _lock(self.queue, key)
        holders = await self._ready().job_manager.list_jobs_async(queueing_lock=lock, status="todo")
        if any(j.queue == self.queue and j.task_kwargs.get("key") == key for j in holders):
            return
        raise self.journal._fail(
            f"job {key[:40]}: its queue lock {lock[:60]!r} is held by another queue's "
            "job (one queued on queue 'vidapi' by a release up to 0.1.0, under that "
            "key); run that queue until it is empty, then enqueue again"
        )

    # --- work ----------------------------------------------------------------------------

    async def work(
        self,
        client: Client,
        *,
        concurrency: int = 8,
        until_empty: bool = False,
        stalled_after: float = 60.0,
        poll: float = 1.0,
        max_requests_per_second: float | None = None,
        progress: Callable[[BatchProgress], Any] | None = None,
        metrics_port: int | None = None,
    ) -> None:
        """Run jobs from the queue until cancelled, or (``until_empty``) until none is
        queued and none is held by a worker with a fresh heartbeat. ``metrics_port``:
        serve the metrics at ``http://127.0.0.1:PORT/metrics`` meanwhile.
        ``max_requests_per_second``: a rate shared by every worker that gives one (the
        client's requests wait for slots handed out by PostgreSQL). ``progress`` sees
        this worker's own jobs (``BatchProgress``), as ``BatchUploader``'s does. The
        API refusing the client's credentials ends it in that ``AuthenticationError`` or
        ``InsufficientScopeError``, the job left in the queue."""
        self._ready()
        rate = (
            None if max_requests_per_second is None else self.shared_rate(max_requests_per_second)
        )
        with internals(client).paced(rate):  # for this work only: the client's own after
            await self._work(
                client, concurrency, until_empty, stalled_after, poll, progress, metrics_port
            )

    async def _work(
        self,
        client: Client,
        concurrency: int,
        until_empty: bool,
        stalled_after: float,
        poll: float,
        progress: Callable[[BatchProgress], Any] | None = None,
        metrics_port: int | None = None,
    ) -> None:
        from ._queue import PatientConnector, key_of, registration_lost

        app = self._ready()
        connector = app.connector
        assert isinstance(connector, PatientConnector)
        runner = BatchUploader(
            client,
            concurrency=concurrency,
            journal=self.journal,
            progress=progress,
            metrics_port=metrics_port,
        )
        # A worker that made a video after losing its job waits this long for the job
        # to record one (the taker-over, after its own takeover delay) before deciding.
        runner._settle_for = 4 * stalled_after
        runner._requeue = requeued  # such a failure goes back to the queue: not "failed"
        outage = self.journal.outage
        outage.give_up.clear()
        self._stopping.clear()
        stopping = asyncio.ensure_future(self._stopping.wait())
        self._refused = refused = asyncio.get_running_loop().create_future()
        async with runner:
            jobs: set[asyncio.Task[Any]] = set()
            context = {"shared": self, "runner": runner, "jobs": jobs}

            def start() -> asyncio.Task[None]:
                return asyncio.create_task(
                    app.run_worker_async(
                        queues=[self.queue],
                        concurrency=concurrency,
                        wait=True,
                        additional_context=context,
                        install_signal_handlers=False,
                        update_heartbeat_interval=max(0.5, stalled_after / 6),
                        stalled_worker_timeout=stalled_after,
                        fetch_job_polling_interval=poll,
                        shutdown_graceful_timeout=30,
                        listen_notify=False,  # polls: a LISTEN lost to a restart ends a worker
                    ),
                    name="vidapi-worker",
                )

            worker = start()
            ended: BaseException | None = None  # the worker's own end, not asked for
            statement = asyncio.ensure_future(connector.refusal.wait())
            try:
                while True:
                    if worker.done():
                        if not registration_lost(worker):
                            if not worker.cancelled():
                                ended = worker.exception()
                            break
                        # paused past stalled_after while another worker started (and
                        # pruned it): its jobs are taken over; it registers again
                        log.debug("this worker's registration was pruned; registered again")
                        worker = start()
                    await asyncio.wait(
                        [worker, refused, stopping, statement],
                        timeout=poll,
                        return_when="FIRST_COMPLETED",
                    )
                    if refused.done() or stopping.done() or statement.done():
                        break
                    await self._retry_stalled(stalled_after)
                    if metrics_port is not None:
                        await self._publish_depth()
                    if until_empty and await self._empty():
                        break
            finally:
                stopping.cancel()
                statement.cancel()
                await self._stop(worker, jobs)
        if refused.done():
            # the credentials' fault, not the jobs': they are left in the queue
            raise refused.result()
        if connector.refused is not None:
            # a job's finish (or retry) refused: it stays held by this worker, which
            # stops (its heartbeat with it): another worker takes the job over
            job_id, error = connector.refused
            raise self.journal.refused(error, await key_of(app, job_id)) from None
        if ended is not None:  # procrastinate's worker failed (a fetch refused...)
            from procrastinate.exceptions import ConnectorException  # documented

            if isinstance(ended, ConnectorException):
                raise self.journal.refused(ended) from None
            raise ended

    @property
    def stopped(self) -> bool:
        """Whether ``stop`` was called since the last ``work`` began."""
        return self._stopping.is_set()

    def stop(self) -> None:
        """Ask a running ``work`` to stop, as cancelling it does (a signal handler's
        call): it stops taking jobs, and from now on never waits for the database."""
        self._stopping.set()
        self.journal.outage.give_up.set()

    async def _stop(self, worker: asyncio.Task[Any], jobs: set[asyncio.Task[Any]]) -> None:
        """The worker finishes or hands back its jobs; but a stop never waits for the
        database: from now on every wait for it gives up, and once it is seen away
        (before the stop, or at the next statement: a cut not noticed yet) nothing can be
        recorded, so the jobs in flight stop and are left to be taken over."""
        outage = self.journal.outage
        outage.give_up.set()
        worker.cancel()
        try:
            while not worker.done():
                if outage.away is not None:
                    for job in jobs:
                        job.cancel()
                await asyncio.wait([worker], timeout=0.2)
        finally:  # a second signal: at once
            if not worker.done():
                for job in jobs:
                    job.cancel()
                worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)

    async def _retry_stalled(self, stalled_after: float) -> None:
        from ._queue import take_over

        for key in await take_over(self._ready(), TASK, self.queue, stalled_after):
            worker_log.warning(
                "job %s lost by a worker without a heartbeat for %gs: queued again",
                key,
                stalled_after,
            )

    async def _publish_depth(self) -> None:
        """The queue's jobs queued and running, as the gauge ``vidapi.queue.jobs`` of the
        metrics endpoint (refreshed at each turn of the worker's loop, every ``poll``)."""
        from ._queue import queue_counts

        if not _metrics.REGISTRY.on:
            return
        counts = await queue_counts(self._ready(), self.queue)
        for state, n in zip(("queued", "running"), counts, strict=True):
            _metrics.REGISTRY.set("vidapi.queue.jobs", n, {"state": state})

    async def _empty(self) -> bool:
        from ._queue import queue_counts

        return await queue_counts(self._ready(), self.queue) == (0, 0)

    # --- quota, shared -------------------------------------------------------------------

    async def quota_until(self) -> datetime.datetime | None:
        row = await self.journal.fetchone(
            self.journal._q("select until from {s}.flags where name = 'quota' and until > now()")
        )
        return None if row is None else row[0]

    async def quota_hit(self, error: QuotaExceededError) -> None:
        wait = error.retry_after if error.retry_after is not None else 3600.0
        await self.journal.execute(
            self.journal._q(
                "insert into {s}.flags values ('quota', now() + %s * interval '1 second') "
                "on conflict (name) do update "
                "set until = greatest({s}.flags.until, excluded.until)"
            ),
            (wait,),
        )

    # --- a request rate shared by every worker ---------------------------------------------

    def shared_rate(self, per_second: float) -> SharedRate:
        """A limiter whose slots are handed out by PostgreSQL: every worker's client
        that uses it starts at most ``per_second`` requests per second in all."""
        return SharedRate(self, per_second)

    # --- status --------------------------------------------------------------------------

    async def write_report(self, path: str | os.PathLike[str], client: Client | None = None) -> int:
        """Write the queue's mapping report to ``path`` (``.csv`` or ``.jsonl``): one row
        per job enqueued (key, source, status, video id, page and embed addresses when
        a ``client`` is given, error), in key order; how many rows."""
        from ._queue import key_states

        states = await key_states(self._ready(), self.queue)
        writer = ReportWriter(path)
        await writer.open()
        addresses = Links(client)
        rows = 0
        try:
            for key, spec, stage, video_id, error in await self.journal.fetchall(
                self.journal._q(
                    "select s.key, s.spec, j.stage, j.video_id, j.error "
                    "from {s}.specs s left join {s}.jobs j on j.key = s.key order by s.key"
                )
            ):
                queued = states.get(key)
                job = json.loads(spec)
                source = job.get("path") or url_for_humans(job.get("url") or "")
                if stage == "done":
                    status = "done"
                elif queued in ("todo", "doing"):
                    status = "queued" if queued == "todo" else "running"
                else:
                    status = "failed" if error else (stage or "pending")
                private = bool(job.get("private"))
                page, embed = await addresses.of(video_id, key, private=private)
                await writer.write(
                    {
                        "key": key,
                        "source": source,
                        "status": status,
                        "video_id": video_id,
                        "url": page,
                        "embed_url": embed,
                        "error": error if status == "failed" else None,
                    }
                )
                rows += 1
        finally:
            await writer.close()
        return rows

    async def status(self) -> QueueStatus:
        """Jobs queued, running, done, failed, and counts per stage (``QueueStatus``):
        a read of the queue then one of the journal (a job failed in the queue counts
        as failed, a job whose journal says done counts as done)."""
        from ._queue import key_states

        states = await key_states(self._ready(), self.queue)
        row = await self.journal.fetchone(
            self.journal._q(
                "with q as (select * from unnest(%s::text[], %s::text[]) q(key, status)), "
                "a as (select q.status, j.stage, j.error from q full join {s}.jobs j "
                "on q.key = j.key), "
                "c as (select "
                "count(*) filter (where stage is not distinct from 'done') as done, "
                "count(*) filter (where stage is distinct from 'done' and "
                "status in ('todo', 'doing') is not true and "
                "(status = 'failed' or error is not null)) as failed, "
                "count(*) filter (where stage is distinct from 'done' and status = 'todo') "
                "as queued, "
                "count(*) filter (where stage is distinct from 'done' and status = 'doing') "
                "as running from a) "
                "select c.queued, c.running, c.done, c.failed, "
                "(select coalesce(json_object_agg(stage, n), '{{}}') from "
                "(select stage, count(*) as n from {s}.jobs group by stage) st) from c"
            ),
            (list(states), list(states.values())),
        )
        assert row is not None
        queued, running, done, failed, stages = row
        if isinstance(stages, str):
            stages = json.loads(stages)
        return QueueStatus(
            queued=int(queued),
            running=int(running),
            done=int(done),
            failed=int(failed),
            stages={str(k): int(v) for k, v in stages.items()},
        )


async def batch_exists(dsn: str, *, schema: str = "vidapi") -> bool:
    """Whether ``dsn``'s database holds a shared batch in ``schema`` (its journal and
    the queue's tables), reading only: ``vidapi status`` creates nothing."""
    import psycopg

    journal = PostgresJournal(dsn, schema=schema)
    try:
        conn = await journal._connect()
    except psycopg.Error as exc:
        raise journal._fail(f"cannot connect: {connect_cause(exc)}") from None
    try:
        row = await (
            await conn.execute(
                "select to_regclass(%s) is not null and to_regclass(%s) is not null",
                (f'"{schema}".jobs', f'"{schema}".specs'),
            )
        ).fetchone()
    finally:
        await conn.close()
    if not (row and row[0]):
        return False
    from ._queue import queue_tables_exist

    return await queue_tables_exist(dsn)


async def _pipeline_task(context: Any, key: str) -> None:
    """One job from the queue, through the batch's pipeline."""
    shared: SharedBatch = context.additional_context["shared"]
    runner: BatchUploader = context.additional_context["runner"]
    jobs: set[asyncio.Task[Any]] = context.additional_context["jobs"]
    me = asyncio.current_task()
    assert me is not None
    jobs.add(me)
    try:
        await _run_pipeline(shared, runner, context, key)
    finally:
        jobs.discard(me)


_LAST_TRY: contextvars.ContextVar[bool] = contextvars.ContextVar("vidapi_last_try", default=False)
"""The job being run is on its last try: a transient failure now fails it for good."""


async def _run_pipeline(shared: SharedBatch, runner: BatchUploader, context: Any, key: str) -> None:
    while key in runner._in_flight:  # noqa: ASYNC110
        # The queue gave back a job this worker still runs (its heartbeat came late,
        # after the database was away): this claim waits for that run to end, then
        # finds the job done, or resumes it.
        await asyncio.sleep(0.05)
    row = await shared.journal.fetchone(
        shared.journal._q("select spec from {s}.specs where key = %s"), (key,)
    )
    if row is None:
        await _spec_missing(shared, key)
    job = _job(json.loads(row[0]))
    until = await shared.quota_until()
    if until is not None and runner._quota is None:
        runner._quota = QuotaExceededError(
            f"the account's quota was reached; it resets at {until:%Y-%m-%d %H:%M %Z}",
            status=403,
            retry_after=max(0.0, (until - datetime.datetime.now(datetime.UTC)).total_seconds()),
        )
    elif until is None:
        runner._quota = None
    from ._queue import MAX_ATTEMPTS, GivenBack, Transient

    tried = await _attempts_counted(shared, context.job)
    _LAST_TRY.set(tried >= MAX_ATTEMPTS)  # this task's own context
    result: JobResult = await runner.run_one(attrs.evolve(job, key=key))
    worker_log.info("job %s %s at stage %s", key, result.status.value, result.stage.value)
    if result.status is not JobStatus.FAILED:
        # LOST too: its queue job was ended when it was taken over, and the new one is
        # its new holder's (procrastinate refuses this one's finish: a race)
        return
    error = result.error
    if _refused_credentials(error):
        # this worker's own credentials, no fault of the job's: it stops taking jobs
        # and the job goes back to the queue for a worker that may run it
        worker_log.warning(
            "job %s: the API refused this worker's credentials (%s); it stops taking "
            "jobs, and the job is left in the queue",
            key,
            type(error).__name__,
        )
        if context.job.id is not None:
            await shared.journal.execute(
                shared.journal._q(
                    "insert into {s}.handed_back values (%s, 1) "
                    "on conflict (job) do update set n = {s}.handed_back.n + 1"
                ),
                (context.job.id,),
            )
        if shared._refused is not None and not shared._refused.done():
            shared._refused.set_result(error)
        raise GivenBack(f"{type(error).__name__}: {error}")
    if isinstance(error, QuotaExceededError):
        worker_log.warning("job %s: the account's quota is reached; kept for after its reset", key)
        await shared.quota_hit(error)
        return  # recorded; a re-run after the reset resumes it
    if _transient(error):
        worker_log.info("job %s: %s; the queue tries it again", key, type(error).__name__)
        # the queue retries it
        raise Transient(f"{type(error).__name__}: {error}", attempts=tried)


async def _attempts_counted(shared: SharedBatch, job: Any) -> int:
    """The tries of the queue job ``job`` (procrastinate's count) that count against
    its attempts: those it was handed back for (table ``handed_back``) do not."""
    row = await shared.journal.fetchone(
        shared.journal._q("select n from {s}.handed_back where job = %s"), (job.id,)
    )
    return int(job.attempts) - (0 if row is None else int(row[0]))


_LISTING_PER_KEY: Final = 20
"""An enqueue lists the queue's waiting jobs rather than defer its likely-waiting keys
one at a time while the queue holds fewer than this many per such key: a statement
per key costs about as much as 20 listed jobs (``benchmarks/reenqueue_scale.py``), so
either way a batch costs at most this many listed jobs per key (linear)."""


class _Moved(Exception):
    """A job of an enqueue's batch started or finished while it was deferred: the
    batch's savepoint is undone, and the batch worked out again."""


class _DeferRefused(Exception):
    """procrastinate's insert of the job ``key`` refused by the server (a check an
    administrator added...): the enqueue's transaction is undone, and it raises
    ``JournalError`` naming the key and the SQLSTATE."""

    def __init__(self, key: str, error: BaseException) -> None:
        super().__init__(key)
        self.key = key
        self.error = error


class SpecMissing(JournalError):
    """A queued job whose spec is not in the batch's schema: failed, never retried."""


async def _spec_missing(shared: SharedBatch, key: str) -> None:
    """Fail the job ``key`` whose spec is not in the schema (a queue given to two
    schemas, specs deleted by hand): recorded in the journal, logged, and raised so that
    the queue fails it (never counted done)."""
    why = f"its spec is not in schema {shared.journal.schema!r} (queue {shared.queue!r})"
    worker_log.error("job %s: %s; failed", key, why)
    await shared.journal.execute(
        shared.journal._q(
            "insert into {s}.jobs (key, stage, subtitles_done, runs, error, updated) "
            "values (%s, 'pending', '[]', 0, %s, now()) "
            "on conflict (key) do update set error = excluded.error, updated = now() "
            "where {s}.jobs.stage <> 'done'"
        ),
        (key, f"SpecMissing: {why}"),
    )
    raise SpecMissing(shared.journal.where, f"job {key[:40]}: {why}")


def _refused_credentials(
    error: BaseException | None,
) -> TypeGuard[AuthenticationError | InsufficientScopeError]:
    """The API refused this worker's own credentials: no fault of the job's."""
    return isinstance(error, AuthenticationError | InsufficientScopeError)


def _transient(error: BaseException | None) -> bool:
    """A failure the queue tries again (the network, the server, a rate limit)."""
    return isinstance(error, TransportError | ServerError | RateLimitedError) or (
        isinstance(error, APIError) and error.status is None
    )


def requeued(error: BaseException) -> bool:
    """Whether a job that failed with ``error`` goes back to the queue to be run again
    (its outcome ``requeued``, not ``failed``): refused credentials always, a transient
    failure unless it was the job's last try."""
    return _refused_credentials(error) or (_transient(error) and not _LAST_TRY.get())


class SharedRate:
    """``RequestRate`` across processes: the next free slot lives in the ``flags`` table
    (row ``rate``); each request takes one in a single statement, then waits for it."""

    def __init__(self, shared: SharedBatch, per_second: float) -> None:
        if not per_second > 0:
            raise UsageError("per_second must be above 0")
        self._shared = shared
        self.per_second = per_second

    async def wait(self) -> None:
        journal = self._shared.journal
        step = 1.0 / self.per_second
        row = await journal.fetchone(
            journal._q(
                "insert into {s}.flags values ('rate', now() + %s * interval '1 second') "
                "on conflict (name) do update set until = "
                "greatest({s}.flags.until, now()) + %s * interval '1 second' "
                "returning extract(epoch from until - now()) - %s"
            ),
            (step, step, step),
        )
        delay = float(row[0]) if row is not None else 0.0
        if delay > 0:
            await asyncio.sleep(delay)
