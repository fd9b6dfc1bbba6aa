"""A shared queue's worker: a procrastinate worker (``_queue``) running each job it
takes through a ``BatchUploader``'s pipeline, jobs of stalled workers taken over, the
queue's depth published, and a stop that never waits for the database (``SharedBatch``'s
docstring tells the rules)."""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

import attrs

from .. import _metrics
from .._client import Client
from .._errors import (
    AccountNotSetError,
    APIError,
    AuthenticationError,
    InsufficientScopeError,
    JournalError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    TransportError,
)
from .._observe import worker_log
from ._enqueue import TASK, cleared, job_of, origin_in
from ._jobs import BatchProgress, JobResult, JobStatus
from ._playlists_shared import SharedPlaylists
from ._quota import Quota
from ._runner import BatchUploader, for_queue, know_quota, pacing_of, running
from ._shared_quota import HAND_BACK_AFTER, SharedWindow, publish_quota, shared_pacing

if TYPE_CHECKING:
    from ._postgres import PostgresJournal
    from ._queue import App

__all__ = [
    "SpecMissing",
    "Worker",
    "attempts_counted",
    "pipeline_task",
    "requeued",
    "retry_stalled",
]

log = logging.getLogger("vidapi_async.worker")


class SharedBatch(Protocol):
    """What a worker uses of its ``_shared.SharedBatch`` (a protocol, so that this module
    does not import the one that imports it)."""

    journal: PostgresJournal
    queue: str

    async def quota_until(self, account: str | None = None) -> datetime.datetime | None: ...

    async def quota_hit(self, error: QuotaExceededError, account: str | None = None) -> None: ...


class Worker:
    """One ``SharedBatch.work``: its procrastinate worker, its runner, its stop."""

    def __init__(self, shared: SharedBatch, app: App, stopping: asyncio.Event) -> None:
        self.shared = shared
        """The shared batch (its journal, queue, quota and rate)."""
        self.app = app
        """Its procrastinate app (``_queue``)."""
        self.stopping = stopping
        """Set by ``SharedBatch.stop``."""
        self.refused: asyncio.Future[APIError] = asyncio.get_running_loop().create_future()
        """Set when the API refuses this worker's own credentials: it stops."""

    async def run(
        self,
        client: Client,
        concurrency: int,
        until_empty: bool,
        stalled_after: float,
        poll: float,
        progress: Callable[[BatchProgress], Any] | None = None,
        metrics_port: int | None = None,
        quota: Quota | None = None,
    ) -> None:
        """``SharedBatch.work`` once its arguments are checked."""
        from ._queue import connector_of, key_of, refused_by_server

        connector = connector_of(self.app)
        runner = for_queue(
            BatchUploader(
                client,
                concurrency=concurrency,
                journal=self.shared.journal,
                progress=progress,
                metrics_port=metrics_port,
            ),
            # A worker that made a video after losing its job waits this long for the
            # job to record one (the taker-over, after its own takeover delay).
            settle_for=4 * stalled_after,
            requeue=requeued,  # such a failure goes back to the queue: not "failed"
            pacing=None if quota is None else shared_pacing(quota, self.shared.journal),
            playlists=SharedPlaylists(client, self.shared.journal),  # once per queue
        )
        self.shared.journal.outage.give_up.clear()
        self.stopping.clear()
        async with runner:
            ended = await self._loop(
                {"worker": self, "runner": runner, "jobs": set()},
                concurrency,
                until_empty,
                stalled_after,
                poll,
                publish=metrics_port is not None,
            )
        if self.refused.done():
            # the credentials' fault, not the jobs': they are left in the queue
            raise self.refused.result()
        if connector.refused is not None:
            # a job's finish (or retry) refused: it stays held by this worker, which
            # stops (its heartbeat with it): another worker takes the job over
            job_id, error = connector.refused
            raise self.shared.journal.refused(error, await key_of(self.app, job_id)) from None
        if ended is not None:  # procrastinate's worker failed (a fetch refused...)
            if refused_by_server(ended):
                raise self.shared.journal.refused(ended) from None
            raise ended

    async def _loop(
        self,
        context: dict[str, Any],
        concurrency: int,
        until_empty: bool,
        stalled_after: float,
        poll: float,
        *,
        publish: bool,
    ) -> BaseException | None:
        """Run procrastinate's worker until a stop, a refusal, or (``until_empty``) an
        empty queue, taking stalled jobs over every ``poll``; the worker's own end, if
        it ended by itself."""
        from ._queue import connector_of, registration_lost, start_worker

        def start() -> asyncio.Task[None]:
            return start_worker(
                self.app,
                self.shared.queue,
                concurrency=concurrency,
                context=context,
                stalled_after=stalled_after,
                poll=poll,
            )

        worker = start()
        ended: BaseException | None = None  # the worker's own end, not asked for
        stopping = asyncio.ensure_future(self.stopping.wait())
        statement = asyncio.ensure_future(connector_of(self.app).refusal.wait())
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
                waits: list[asyncio.Future[Any]] = [worker, self.refused, stopping, statement]
                await asyncio.wait(
                    waits,
                    timeout=poll,
                    return_when="FIRST_COMPLETED",
                )
                if self.refused.done() or stopping.done() or statement.done():
                    break
                await retry_stalled(self.app, self.shared.queue, stalled_after)
                if publish:
                    await self._publish_depth()
                if until_empty and await self._empty():
                    break
        finally:
            stopping.cancel()
            statement.cancel()
            await self._stop(worker, context["jobs"])
        return ended

    async def _stop(self, worker: asyncio.Task[Any], jobs: set[asyncio.Task[Any]]) -> None:
        """The worker finishes or hands back its jobs; but a stop never waits for the
        database: from now on every wait for it gives up, and once it is seen away
        (before the stop, or at the next statement: a cut not noticed yet) nothing can be
        recorded, so the jobs in flight stop and are left to be taken over."""
        outage = self.shared.journal.outage
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

    async def _publish_depth(self) -> None:
        """The queue's jobs queued and running, as the gauge ``vidapi.queue.jobs`` of the
        metrics endpoint (refreshed at each turn of the worker's loop, every ``poll``)."""
        from ._queue import queue_counts

        if not _metrics.REGISTRY.on:
            return
        counts = await queue_counts(self.app, self.shared.queue)
        for state, n in zip(("queued", "running"), counts, strict=True):
            _metrics.REGISTRY.set("vidapi.queue.jobs", n, {"state": state})
        await publish_quota(self.shared.journal)

    async def _empty(self) -> bool:
        from ._queue import queue_counts

        return await queue_counts(self.app, self.shared.queue) == (0, 0)


async def retry_stalled(app: App, queue: str, stalled_after: float) -> None:
    """Hand the jobs of ``queue`` held by a worker without a heartbeat for
    ``stalled_after`` seconds to the queue again, each said at WARNING."""
    from ._queue import take_over

    for key in await take_over(app, TASK, queue, stalled_after):
        worker_log.warning(
            "job %s lost by a worker without a heartbeat for %gs: queued again",
            key,
            stalled_after,
        )


async def pipeline_task(context: Any, key: str) -> None:
    """One job from the queue, through the batch's pipeline."""
    worker: Worker = context.additional_context["worker"]
    runner: BatchUploader = context.additional_context["runner"]
    jobs: set[asyncio.Task[Any]] = context.additional_context["jobs"]
    me = asyncio.current_task()
    assert me is not None
    jobs.add(me)
    try:
        await _run_pipeline(worker, runner, context, key)
    finally:
        jobs.discard(me)


_LAST_TRY: contextvars.ContextVar[bool] = contextvars.ContextVar("vidapi_last_try", default=False)
"""The job being run is on its last try: a transient failure now fails it for good."""


async def _run_pipeline(worker: Worker, runner: BatchUploader, context: Any, key: str) -> None:
    shared = worker.shared
    while running(runner, key):  # noqa: ASYNC110
        # The queue gave back a job this worker still runs (its heartbeat came late,
        # after the database was away): this claim waits for that run to end, then
        # finds the job done, or resumes it.
        await asyncio.sleep(0.05)
    row = await shared.journal.fetchone(
        shared.journal.statement("select spec from {s}.specs where key = %s"), (key,)
    )
    if row is None:
        await _spec_missing(worker.shared, key)
    spec = json.loads(row[0])
    job = job_of(spec)
    if pacing_of(runner) is None:  # a paced worker waits for its account's window instead
        know_quota(runner, job.account, await shared.quota_until(job.account))
    from ._queue import MAX_ATTEMPTS, GivenBack, Transient

    await _hand_back_if_waiting(shared, runner, context, key, job.account)
    tried = await attempts_counted(worker.shared, context.job)
    _LAST_TRY.set(tried >= MAX_ATTEMPTS)  # this task's own context
    result: JobResult = await runner.run_one(attrs.evolve(job, key=key), origin=origin_in(spec))
    worker_log.info("job %s %s at stage %s", key, result.status.value, result.stage.value)
    if result.status is not JobStatus.FAILED:
        # LOST too: its queue job was ended when it was taken over, and the new one is
        # its new holder's (procrastinate refuses this one's finish: a race)
        if result.status is not JobStatus.LOST:
            await _clear_password(shared, key, row[0])
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
        await _count_handed_back(shared, context.job)
        if not worker.refused.done():
            worker.refused.set_result(error)
        raise GivenBack(f"{type(error).__name__}: {error}")
    if isinstance(error, QuotaExceededError):
        worker_log.warning("job %s: the account's quota is reached; kept for after its reset", key)
        await shared.quota_hit(error, job.account)
        return  # recorded; a re-run after the reset resumes it
    if _transient(error):
        worker_log.info("job %s: %s; the queue tries it again", key, type(error).__name__)
        # the queue retries it
        raise Transient(f"{type(error).__name__}: {error}", attempts=tried)


async def _hand_back_if_waiting(
    shared: SharedBatch, runner: BatchUploader, context: Any, key: str, account: str | None
) -> None:
    """A paced worker gives back a job whose account's window frees no place for more
    than ``HAND_BACK_AFTER`` seconds (for when it does; no attempt counted), so that it
    holds no job of a waiting account while other accounts' jobs wait."""
    from ._queue import GivenBack

    pacing = pacing_of(runner)
    if pacing is None:
        return
    window = pacing.window(account)
    if not isinstance(window, SharedWindow):
        return
    wait = await window.free_in()
    if wait <= HAND_BACK_AFTER:
        return
    worker_log.info("job %s: its account's quota frees a place in %.0f s; given back", key, wait)
    await _count_handed_back(shared, context.job)
    raise GivenBack("its account waits for its quota", wait=wait)


async def _count_handed_back(shared: SharedBatch, job: Any) -> None:
    """One more try of the queue job ``job`` that does not count against its attempts."""
    if job.id is not None:
        await shared.journal.execute(
            shared.journal.statement(
                "insert into {s}.handed_back values (%s, 1) "
                "on conflict (job) do update set n = {s}.handed_back.n + 1"
            ),
            (job.id,),
        )


async def _clear_password(shared: SharedBatch, key: str, spec: str) -> None:
    """A done job's video password out of its spec (``cleared``), unless an enqueue
    replaced the spec meanwhile (its own job then clears it once done)."""
    without = cleared(spec)
    if without is not None:
        await shared.journal.execute(
            shared.journal.statement("update {s}.specs set spec = %s where key = %s and spec = %s"),
            (without, key, spec),
        )


async def attempts_counted(shared: SharedBatch, job: Any) -> int:
    """The tries of the queue job ``job`` (procrastinate's count) that count against
    its attempts: those it was handed back for (table ``handed_back``) do not."""
    row = await shared.journal.fetchone(
        shared.journal.statement("select n from {s}.handed_back where job = %s"), (job.id,)
    )
    return int(job.attempts) - (0 if row is None else int(row[0]))


class SpecMissing(JournalError):
    """A queued job whose spec is not in the batch's schema: failed, never retried."""


async def _spec_missing(shared: SharedBatch, key: str) -> None:
    """Fail the job ``key`` whose spec is not in the schema (a queue given to two
    schemas, specs deleted by hand): recorded in the journal, logged, and raised so that
    the queue fails it (never counted done)."""
    why = f"its spec is not in schema {shared.journal.schema!r} (queue {shared.queue!r})"
    worker_log.error("job %s: %s; failed", key, why)
    await shared.journal.execute(
        shared.journal.statement(
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
    """A failure the queue tries again (the network, the server, a rate limit; an
    account's variable not set on this worker: another may have it)."""
    return isinstance(
        error, TransportError | ServerError | RateLimitedError | AccountNotSetError
    ) or (isinstance(error, APIError) and error.status is None)


def requeued(error: BaseException) -> bool:
    """Whether a job that failed with ``error`` goes back to the queue to be run again
    (its outcome ``requeued``, not ``failed``): refused credentials always, a transient
    failure unless it was the job's last try."""
    return _refused_credentials(error) or (_transient(error) and not _LAST_TRY.get())
