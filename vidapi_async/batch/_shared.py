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
import datetime
import json
import logging
import os
import re
from collections.abc import AsyncIterable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .._client import Client
from .._errors import (
    MissingExtraError,
    QuotaExceededError,
    UsageError,
)
from .._internals import internals
from .._protocol import url_for_humans
from ._enqueue import TASK, Enqueued, Enqueuer
from ._jobs import (
    BatchProgress,
    UploadJob,
)
from ._playlists_shared import TABLE as PLAYLISTS_TABLE
from ._postgres import PostgresJournal, connect_cause
from ._quota import MAX_PERIOD, Quota, account_key, quota_of
from ._report import Links, ReportWriter
from ._shared_quota import accounts_status
from ._worker import SpecMissing, Worker, pipeline_task

if TYPE_CHECKING:
    from ._queue import App

__all__ = ["Enqueued", "QueueStatus", "SharedBatch", "SharedRate", "SpecMissing", "batch_exists"]

_QUEUE = re.compile(r"[A-Za-z0-9_.-]{1,40}")
"""A queue's name: procrastinate's notify channel for a queue is the name after a prefix
of 23 characters, and PostgreSQL's channel names end at 63 bytes."""

log = logging.getLogger("vidapi_async.worker")


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
    accounts: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    """Workers paced (``--quota``): per account (its variable's name; ``""``: the
    workers' own token) its ``quota``, the places ``used`` in its window, when the
    ``next_free`` one frees, its jobs ``left`` and a ``finish_estimate`` (ISO 8601
    times, the database's clock; the estimate counts creates, not uploads)."""

    def as_dict(self) -> dict[str, Any]:
        """The counts as a plain dict (what ``vidapi status --json`` prints)."""
        out: dict[str, Any] = {
            "queued": self.queued,
            "running": self.running,
            "done": self.done,
            "failed": self.failed,
            "stages": dict(self.stages),
        }
        if self.accounts:
            out["accounts"] = {name: dict(values) for name, values in self.accounts.items()}
        return out


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
        self._app: App | None = None
        self._enqueue: Enqueuer | None = None

    async def __aenter__(self) -> SharedBatch:
        needs_the_extra()
        await self.journal.open(wait=self._wait)
        journal = self.journal
        q = journal.statement

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
                await conn.execute(q(PLAYLISTS_TABLE))  # one row per playlist name
                # a queue job's tries that were no fault of its own (its worker's
                # credentials refused): not counted against its attempts
                await conn.execute(
                    q(
                        "create table if not exists {s}.handed_back "
                        "(job bigint primary key, n integer not null)"
                    )
                )

        try:
            await journal.run(tables)
        except BaseException:
            await journal.close()
            raise
        from ._queue import apply_schema, new_app, open_app

        app = new_app(
            self._dsn,
            journal.outage,
            task=pipeline_task,
            task_name=TASK,
            queue=self.queue,
            never=(SpecMissing,),
        )
        await open_app(app)
        self._app = app
        self._enqueue = Enqueuer(app, journal, self.queue)

        async def schema(conn: Any) -> None:
            # procrastinate's tables, once per database (an advisory lock: two hosts
            # starting at once do not both create them)
            await conn.execute("select pg_advisory_lock(7317001)")
            try:
                await apply_schema(app)
            finally:
                await conn.execute("select pg_advisory_unlock(7317001)")

        try:
            await journal.run(schema)
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        app, self._app = self._app, None
        self._enqueue = None
        if app is not None:
            from ._queue import close_app

            await close_app(app)
        await self.journal.close()

    def _ready(self) -> App:
        if self._app is None:
            raise UsageError("use the SharedBatch as 'async with SharedBatch(dsn)'")
        return self._app

    def _enqueuer(self) -> Enqueuer:
        self._ready()
        assert self._enqueue is not None
        return self._enqueue

    # --- enqueue -------------------------------------------------------------------------

    async def enqueue(
        self,
        jobs: Iterable[UploadJob] | AsyncIterable[UploadJob],
        *,
        batch_size: int = 2000,
        origin: str | None = None,
    ) -> Enqueued:
        """Add the jobs, ``batch_size`` at a time: per batch, in one transaction, the
        jobs not done, queued or running already are deferred (the queue's queueing
        lock tells those waiting) and their specs kept; time linear in the number of
        jobs, memory flat. ``origin`` names the manifest or feed they come from, as
        ``BatchUploader.run(origin=)`` does (``vidapi batch --enqueue-only`` gives it):
        kept in each spec, so that a worker tags their videos with it and adopts as a
        local batch of that manifest does; ``None``: jobs of no origin (they adopt only
        a video of no origin, by its title)."""
        return await self._enqueuer().enqueue(jobs, batch_size=batch_size, origin=origin)

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
        quota: Quota | str | None = None,
    ) -> None:
        """Run jobs from the queue until cancelled, or (``until_empty``) until none is
        queued and none is held by a worker with a fresh heartbeat. ``metrics_port``:
        serve the metrics at ``http://127.0.0.1:PORT/metrics`` meanwhile. ``quota``:
        this worker's creates paced to the account's quota (``BatchUploader(quota=)``;
        the window is this worker's own: give each worker its share).
        ``max_requests_per_second``: a rate shared by every worker that gives one (the
        client's requests wait for slots handed out by PostgreSQL). ``progress`` sees
        this worker's own jobs (``BatchProgress``), as ``BatchUploader``'s does. The
        API refusing the client's credentials ends it in that ``AuthenticationError`` or
        ``InsufficientScopeError``, the job left in the queue."""
        self._ready()
        paced = quota_of(quota)
        rate = (
            None if max_requests_per_second is None else self.shared_rate(max_requests_per_second)
        )
        worker = Worker(self, self._ready(), self._stopping)
        with internals(client).paced(rate):  # for this work only: the client's own after
            await worker.run(
                client,
                concurrency,
                until_empty,
                stalled_after,
                poll,
                progress,
                metrics_port,
                paced,
            )

    @property
    def stopped(self) -> bool:
        """Whether ``stop`` was called since the last ``work`` began."""
        return self._stopping.is_set()

    def stop(self) -> None:
        """Ask a running ``work`` to stop, as cancelling it does (a signal handler's
        call): it stops taking jobs, and from now on never waits for the database."""
        self._stopping.set()
        self.journal.outage.give_up.set()

    # --- quota, shared -------------------------------------------------------------------

    async def quota_until(self, account: str | None = None) -> datetime.datetime | None:
        """Until when the quota of the account of the variable ``account`` (``None``:
        the client's own) is reached, as an unpaced worker's refusal said; ``None``:
        not reached."""
        row = await self.journal.fetchone(
            self.journal.statement("select until from {s}.flags where name = %s and until > now()"),
            (_quota_flag(account),),
        )
        return None if row is None else row[0]

    async def quota_hit(self, error: QuotaExceededError, account: str | None = None) -> None:
        """Keep the refusal ``error`` of the account of ``account``'s quota (its flag,
        until it resets): unpaced workers start no create of that account before then."""
        wait = error.retry_after if error.retry_after is not None else 3600.0
        await self.journal.execute(
            self.journal.statement(
                "insert into {s}.flags values (%s, now() + %s * interval '1 second') "
                "on conflict (name) do update "
                "set until = greatest({s}.flags.until, excluded.until)"
            ),
            (_quota_flag(account), min(wait, MAX_PERIOD)),
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
                self.journal.statement(
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
            self.journal.statement(
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
            accounts=await accounts_status(self.journal),
        )


def _quota_flag(account: str | None) -> str:
    """The ``flags`` row of the quota of the account of the variable ``account``: keyed
    as its window is (``account_key``: a digest, never a token); ``quota`` for the
    client's own account (the name the queue's earlier workers used)."""
    key = account_key(account)
    return "quota" if key is None else f"quota:{key}"


def needs_the_extra() -> None:
    """``MissingExtraError`` naming the ``postgres`` extra when its packages (psycopg,
    procrastinate) are not installed."""
    try:
        import psycopg  # noqa: F401

        from . import _queue  # noqa: F401 - procrastinate, the queue's
    except ImportError:
        raise MissingExtraError(
            "postgres", "a shared queue (a PostgreSQL journal) and its workers"
        ) from None


async def batch_exists(dsn: str, *, schema: str = "vidapi") -> bool:
    """Whether ``dsn``'s database holds a shared batch in ``schema`` (its journal and
    the queue's tables), reading only: ``vidapi status`` creates nothing."""
    needs_the_extra()
    import psycopg

    journal = PostgresJournal(dsn, schema=schema)
    try:
        conn = await journal.connect()
    except psycopg.Error as exc:
        raise journal.failure(f"cannot connect: {connect_cause(exc)}") from None
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
            journal.statement(
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
