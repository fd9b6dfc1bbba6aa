"""One batch, many machines: the jobs on a procrastinate queue in PostgreSQL, the stages
in a ``PostgresJournal`` beside it (extra ``vidapi-async[postgres]``).

- ``enqueue`` stores each job's spec in the journal's schema (table ``specs``) and defers
  a task whose only argument is the job's key (procrastinate logs task arguments; a spec
  may hold a video password). A job already done, queued or running is not added again.
- ``work`` runs a procrastinate worker: one job key at a time across every worker (the
  task's ``lock`` is the key), each through the same pipeline as ``BatchUploader`` (the
  journal's stages, the tag check before a create is sent again). Jobs held by a worker
  whose heartbeat is older than ``stalled_after`` seconds are handed to the queue again.
  A failure for good (bad file, 4xx) is recorded and not retried; a transient one is
  retried by the queue (``max_attempts``).
- The account's quota is shared: the first refusal any worker sees is kept in the table
  ``flags`` until it resets, and no worker starts an upload or a create before then.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import AsyncIterable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from .._client import Client
from .._errors import (
    APIError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    TransportError,
    UsageError,
)
from .._observe import worker_log
from ._jobs import (
    BatchProgress,
    JobResult,
    JobStatus,
    SubtitleSpec,
    UploadJob,
    file_key,
    url_key,
)
from ._postgres import PostgresJournal
from ._runner import BatchUploader, _each

if TYPE_CHECKING:
    import procrastinate

__all__ = ["SharedBatch", "SharedRate"]

TASK = "vidapi.pipeline"


class _Transient(Exception):
    """Raised in the task so that the queue retries the job later."""


def _spec(job: UploadJob) -> dict[str, Any]:
    if job.headers:
        raise UsageError(
            f"{job.where}: a URL job's headers (its source's credentials) are not stored "
            "in the shared queue; run it with a local journal, or give the source an "
            "address that needs no headers"
        )
    return {
        "path": job.path,
        "url": job.url,
        "title": job.title,
        "channel": job.channel,
        "published": job.published,
        "password": job.password,
        "live": job.live,
        "key": job.key,
        "subtitles": [
            {"language": s.language, "path": s.path, "url": s.url} for s in job.subtitles
        ],
    }


def _job(spec: dict[str, Any]) -> UploadJob:
    subs = [SubtitleSpec(s["language"], path=s["path"], url=s["url"]) for s in spec["subtitles"]]
    return UploadJob(**{**spec, "subtitles": subs})


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
    """Paths that could not be read on the enqueuing host (not added)."""


class SharedBatch:
    """``async with SharedBatch(dsn) as shared``: ``enqueue``, ``work``, ``status``."""

    def __init__(self, dsn: str, *, schema: str = "vidapi", queue: str = "vidapi") -> None:
        self.journal = PostgresJournal(dsn, schema=schema)
        self.queue = queue
        self._dsn = dsn
        self._app: procrastinate.App | None = None

    async def __aenter__(self) -> SharedBatch:
        try:
            import procrastinate
        except ImportError:
            raise UsageError(
                "the shared queue needs procrastinate: pip install 'vidapi-async[postgres]'"
            ) from None
        await self.journal.open()
        conn = self.journal._connected()
        q = self.journal._q
        await conn.execute(
            q("create table if not exists {s}.specs (key text primary key, spec text not null)")
        )
        await conn.execute(
            q(
                "create table if not exists {s}.flags "
                "(name text primary key, until timestamptz not null)"
            )
        )
        app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=self._dsn))
        app.task(
            name=TASK,
            queue=self.queue,
            pass_context=True,
            retry=procrastinate.RetryStrategy(max_attempts=5, wait=2),
        )(_pipeline_task)
        await app.open_async()
        self._app = app
        async with self.journal._lock:
            # procrastinate's tables, once per database (an advisory lock: two hosts
            # starting at once do not both create them)
            await conn.execute("select pg_advisory_lock(7317001)")
            try:
                row = await (
                    await conn.execute("select to_regclass('procrastinate_jobs')")
                ).fetchone()
                if row is None or row[0] is None:
                    await app.schema_manager.apply_schema_async()
            finally:
                await conn.execute("select pg_advisory_unlock(7317001)")
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

    async def enqueue(self, jobs: Iterable[UploadJob] | AsyncIterable[UploadJob]) -> Enqueued:
        app = self._ready()
        conn = self.journal._connected()
        q = self.journal._q
        added = already = 0
        unreadable: list[str] = []
        task = app.tasks[TASK]
        async for job in _each(jobs):
            try:
                key = await asyncio.to_thread(_key_of, job)
            except OSError:
                unreadable.append(job.where)
                continue
            # One round trip: keep the spec, and learn whether the job is done already
            # or queued or running (then nothing is added).
            async with self.journal._lock:
                row = await (
                    await conn.execute(
                        q(
                            "with kept as (insert into {s}.specs values (%s, %s) "
                            "on conflict (key) do update set spec = excluded.spec) "
                            "select exists(select 1 from {s}.jobs where key = %s "
                            "and stage = 'done') or exists(select 1 from procrastinate_jobs "
                            "where lock = %s and status in ('todo', 'doing'))"
                        ),
                        (key, json.dumps(_spec(job)), key, key),
                    )
                ).fetchone()
            if row is not None and row[0]:  # done, queued or running already
                already += 1
                continue
            try:
                await task.configure(lock=key, queueing_lock=key).defer_async(key=key)
            except Exception as exc:
                if type(exc).__name__ != "AlreadyEnqueued":
                    raise
                already += 1
            else:
                added += 1
        return Enqueued(added, already, unreadable)

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
        this worker's own jobs (``BatchProgress``), as ``BatchUploader``'s does."""
        self._ready()
        transport, kept = client._transport, client._transport._rate
        if max_requests_per_second is not None:  # for this work only: the client's own after
            transport._rate = self.shared_rate(max_requests_per_second)
        try:
            await self._work(
                client, concurrency, until_empty, stalled_after, poll, progress, metrics_port
            )
        finally:
            transport._rate = kept

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
        app = self._ready()
        runner = BatchUploader(
            client,
            concurrency=concurrency,
            journal=self.journal,
            progress=progress,
            metrics_port=metrics_port,
        )
        async with runner:
            context = {"shared": self, "runner": runner}
            worker = asyncio.create_task(
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
                ),
                name="vidapi-worker",
            )
            try:
                while not worker.done():
                    await asyncio.wait([worker], timeout=poll)
                    await self._retry_stalled(stalled_after)
                    if until_empty and await self._empty():
                        break
            finally:
                worker.cancel()
                await asyncio.gather(worker, return_exceptions=True)

    async def _retry_stalled(self, stalled_after: float) -> None:
        app = self._ready()
        stalled = await app.job_manager.get_stalled_jobs(
            queue=self.queue, seconds_since_heartbeat=stalled_after
        )
        now = datetime.datetime.now(datetime.UTC)
        for job in stalled:
            assert job.id is not None
            worker_log.warning(
                "queue job %s lost by a worker without a heartbeat for %gs: queued again",
                job.id,
                stalled_after,
            )
            await app.job_manager.retry_job_by_id_async(job.id, retry_at=now)

    async def _empty(self) -> bool:
        conn = self.journal._connected()
        async with self.journal._lock:
            row = await (
                await conn.execute(
                    "select count(*) from procrastinate_jobs where queue_name = %s "
                    "and status in ('todo', 'doing')",
                    (self.queue,),
                )
            ).fetchone()
        return row is not None and row[0] == 0

    # --- quota, shared -------------------------------------------------------------------

    async def quota_until(self) -> datetime.datetime | None:
        conn = self.journal._connected()
        async with self.journal._lock:
            row = await (
                await conn.execute(
                    self.journal._q(
                        "select until from {s}.flags where name = 'quota' and until > now()"
                    )
                )
            ).fetchone()
        return None if row is None else row[0]

    async def quota_hit(self, error: QuotaExceededError) -> None:
        wait = error.retry_after if error.retry_after is not None else 3600.0
        conn = self.journal._connected()
        async with self.journal._lock:
            await conn.execute(
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

    async def status(self) -> dict[str, Any]:
        """Jobs ``queued``, ``running``, ``done``, ``failed``, and counts per ``stages``."""
        conn = self.journal._connected()
        async with self.journal._lock:
            queue = dict(
                await (
                    await conn.execute(
                        "select status::text, count(*) from procrastinate_jobs "
                        "where queue_name = %s group by status",
                        (self.queue,),
                    )
                ).fetchall()
            )
            stages = dict(
                await (
                    await conn.execute(
                        self.journal._q("select stage, count(*) from {s}.jobs group by stage")
                    )
                ).fetchall()
            )
            failed = await (
                await conn.execute(
                    self.journal._q(
                        "select count(*) from {s}.jobs where error is not null and stage <> 'done'"
                    )
                )
            ).fetchone()
        return {
            "queued": int(queue.get("todo", 0)),
            "running": int(queue.get("doing", 0)),
            "done": int(stages.get("done", 0)),
            "failed": int(failed[0] if failed else 0),
            "stages": {str(k): int(v) for k, v in stages.items()},
        }


async def _pipeline_task(context: Any, key: str) -> None:
    """One job from the queue, through the batch's pipeline."""
    shared: SharedBatch = context.additional_context["shared"]
    runner: BatchUploader = context.additional_context["runner"]
    conn = shared.journal._connected()
    async with shared.journal._lock:
        row = await (
            await conn.execute(
                shared.journal._q("select spec from {s}.specs where key = %s"), (key,)
            )
        ).fetchone()
    if row is None:
        return  # enqueued by a run whose spec is gone: nothing to do
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
    result: JobResult = await runner.run_one(attrs.evolve(job, key=key))
    worker_log.info("job %s %s at stage %s", key, result.status.value, result.stage.value)
    if result.status is not JobStatus.FAILED:
        return
    error = result.error
    if isinstance(error, QuotaExceededError):
        worker_log.warning("job %s: the account's quota is reached; kept for after its reset", key)
        await shared.quota_hit(error)
        return  # recorded; a re-run after the reset resumes it
    if isinstance(error, TransportError | ServerError | RateLimitedError) or (
        isinstance(error, APIError) and error.status is None
    ):
        worker_log.info("job %s: %s; the queue tries it again", key, type(error).__name__)
        raise _Transient(f"{type(error).__name__}: {error}")  # the queue retries it


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
        async with journal._lock:
            row = await (
                await journal._connected().execute(
                    journal._q(
                        "insert into {s}.flags values ('rate', now() + %s * interval '1 second') "
                        "on conflict (name) do update set until = "
                        "greatest({s}.flags.until, now()) + %s * interval '1 second' "
                        "returning extract(epoch from until - now()) - %s"
                    ),
                    (step, step, step),
                )
            ).fetchone()
        delay = float(row[0]) if row is not None else 0.0
        if delay > 0:
            await asyncio.sleep(delay)
