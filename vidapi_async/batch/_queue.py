"""The shared queue's only contact with procrastinate, through its public interface.

What the queue uses of procrastinate, and nothing else (``tests/unit/test_queue_public.py``
fails on any other import, and on SQL naming procrastinate's tables anywhere in the
package):

- exported (``procrastinate.__all__``): ``App`` (``task``, ``open_async``,
  ``close_async``, ``run_worker_async``, ``job_manager``), ``PsycopgConnector`` (whose
  ``execute_query_async``/``_one_async``/``_all_async`` ``PatientConnector`` makes
  patient), ``BaseRetryStrategy`` and ``RetryDecision``;
- documented in its API reference: the ``JobManager`` methods reached through
  ``app.job_manager`` (``batch_defer_jobs_async``, ``get_stalled_jobs``, ``finish_job``,
  ``list_jobs_async``, ``list_queues_async``, ``check_connection_async``;
  ``register_worker``/``fetch_job`` in tests), ``procrastinate.jobs.Job`` and ``Status``,
  ``procrastinate.exceptions`` (``AlreadyEnqueued``, ``ConnectorException``) and
  ``procrastinate.testing.InMemoryConnector`` (the everyday lane's tests);
- one touch outside the reference: ``app.schema_manager.apply_schema_async()``, to create
  procrastinate's tables (``apply_schema``, pinned by a test).

The guarantees are ours: fencing in the journal (a token per start of a job), outages
waited through in ``PatientConnector``, a stalled job taken over as a new job (the old one
ended ``aborted``, so its first holder can neither finish nor requeue the new holder's
job), attempts a job did not use up (handed back for a worker's credentials) kept in the
journal's schema (table ``handed_back``) and read by ``Retry``.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Iterable
from typing import Any, Final

import procrastinate
from procrastinate import exceptions as queue_errors
from procrastinate.jobs import Job, Status

from .._errors import JournalError
from ._postgres import Outage

__all__ = [
    "MAX_ATTEMPTS",
    "RETRY_WAIT",
    "App",
    "DeferRefused",
    "GivenBack",
    "PatientConnector",
    "Retry",
    "Transient",
    "apply_schema",
    "close_app",
    "connector_of",
    "defer_jobs",
    "key_of",
    "key_states",
    "legacy_waiting",
    "lock_held_by",
    "new_app",
    "new_job",
    "queue_counts",
    "queue_tables_exist",
    "refused_by_server",
    "registration_lost",
    "running_keys",
    "start_worker",
    "take_over",
    "waiting_keys",
]

App = procrastinate.App
"""A procrastinate app: what the shared batch holds, used only through this module."""

log = logging.getLogger("vidapi_async.worker")

MAX_ATTEMPTS: Final = 5
"""Times the queue runs a job again after a transient failure, before failing it."""
RETRY_WAIT: Final = 2
"""Seconds the queue waits before running such a job again."""


def _refused_by_procrastinate(exc: BaseException) -> bool:
    """A statement refused by one of procrastinate's job functions (SQLSTATE P0001,
    PL/pgSQL ``RAISE``: the job is not in the state the call expects, because another
    worker took it over or finished it), read from the exception's class."""
    import psycopg

    return isinstance(exc, queue_errors.ConnectorException) and isinstance(
        exc.__cause__, psycopg.errors.RaiseException
    )


class PatientConnector(procrastinate.PsycopgConnector):
    """procrastinate's psycopg connector, patient: every statement waits while the
    database is away (a connection refused, lost or timed out: ``Outage.patiently``,
    with its backoff) and runs again; a statement the server refuses is raised at once.

    For a statement with no result (procrastinate's job operations: finish, retry,
    heartbeat, unregister): one refused because the job is no longer in the state the
    call expects is a race another worker won (it took the job over, or finished it),
    logged at debug; one that cannot be sent while the worker stops with the database
    away is skipped (its row is pruned, its jobs taken over)."""

    def __init__(self, *, outage: Outage, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outage = outage
        self.refused: tuple[int | None, BaseException] | None = None
        """The first job operation the server refused otherwise (a disk full, a check
        an administrator added): the job's id and the error. Raised in procrastinate's
        task for the job, which nobody reads: ``refusal`` tells the worker's loop."""
        self.refusal = asyncio.Event()

    async def execute_query_async(self, query: Any, **arguments: Any) -> None:
        run = super().execute_query_async
        try:
            await self.outage.patiently(lambda: run(query, **arguments))
        except JournalError:
            if not self.outage.give_up.is_set():
                raise
            log.debug("stopping with the database away: left for another worker")
        except queue_errors.ConnectorException as exc:
            if not _refused_by_procrastinate(exc):
                if self.refused is None:
                    job = arguments.get("job_id")
                    self.refused = (job if isinstance(job, int) else None, exc)
                    self.refusal.set()
                raise
            log.debug("a queue job taken over or finished by another worker already")

    async def execute_query_one_async(self, query: Any, **arguments: Any) -> dict[str, Any]:
        run = super().execute_query_one_async
        return await self.outage.patiently(lambda: run(query, **arguments))

    async def execute_query_all_async(self, query: Any, **arguments: Any) -> list[dict[str, Any]]:
        run = super().execute_query_all_async
        return await self.outage.patiently(lambda: run(query, **arguments))


async def apply_schema(app: procrastinate.App) -> None:
    """Create procrastinate's tables, if they are not there (``check_connection_async``,
    documented, says whether they are). The one call outside procrastinate's API
    reference: its ``schema_manager``, which its ``procrastinate schema --apply`` runs."""
    if not await app.job_manager.check_connection_async():
        await app.schema_manager.apply_schema_async()


def new_app(
    dsn: str,
    outage: Outage,
    *,
    task: Any,
    task_name: str,
    queue: str,
    never: tuple[type[BaseException], ...],
) -> procrastinate.App:
    """The app of a shared batch: its connector patient through outages (its pool
    checks a connection before handing it out: one lost to a restart is replaced), and
    its one task ``task_name`` on ``queue`` (``task(context, key)``), retried by
    ``Retry`` except for the exceptions of ``never``."""
    connector = PatientConnector(
        outage=outage, conninfo=dsn, timeout=5.0, kwargs={"connect_timeout": 5}
    )
    app = procrastinate.App(connector=connector)
    app.task(name=task_name, queue=queue, pass_context=True, retry=Retry(never=never))(task)
    return app


async def open_app(app: procrastinate.App) -> None:
    """Open ``app``'s connections."""
    await app.open_async()


async def close_app(app: procrastinate.App) -> None:
    """Close ``app``'s connections."""
    await app.close_async()


def connector_of(app: procrastinate.App) -> PatientConnector:
    """The patient connector of an app made by ``new_app``."""
    connector = app.connector
    assert isinstance(connector, PatientConnector)
    return connector


def start_worker(
    app: procrastinate.App,
    queue: str,
    *,
    concurrency: int,
    context: dict[str, Any],
    stalled_after: float,
    poll: float,
) -> asyncio.Task[None]:
    """A procrastinate worker on ``queue``, as a task: ``concurrency`` jobs at once, a
    heartbeat every sixth of ``stalled_after`` (at least 0.5 s), polling every ``poll``
    seconds (no LISTEN: one lost to a restart ends a worker), its jobs handed
    ``context``; it leaves signals to the caller."""
    return asyncio.create_task(
        app.run_worker_async(
            queues=[queue],
            concurrency=concurrency,
            wait=True,
            additional_context=context,
            install_signal_handlers=False,
            update_heartbeat_interval=max(0.5, stalled_after / 6),
            stalled_worker_timeout=stalled_after,
            fetch_job_polling_interval=poll,
            shutdown_graceful_timeout=30,
            listen_notify=False,
        ),
        name="vidapi-worker",
    )


def refused_by_server(exc: BaseException) -> bool:
    """Whether ``exc`` is procrastinate's wrapping of a statement the server refused
    (``ConnectorException``)."""
    return isinstance(exc, queue_errors.ConnectorException)


class DeferRefused(Exception):
    """procrastinate's insert of the job ``key`` refused by the server (a check an
    administrator added...): the enqueue's transaction is undone, and it raises
    ``JournalError`` naming the key and the SQLSTATE."""

    def __init__(self, key: str, error: BaseException) -> None:
        super().__init__(key)
        self.key = key
        self.error = error


async def defer_jobs(
    app: procrastinate.App,
    conn: Any,
    keys: list[str],
    jobs: dict[str, Job],
    *,
    halves: bool = True,
) -> set[str]:
    """Defer the jobs of ``keys`` in one statement on ``conn``, in a savepoint; refused
    by a queueing lock (a job of the key waits), halves deferred apart (``halves``, else
    each key alone: keys likely waiting), down to the keys refused alone: those keys. A
    job the server refuses otherwise is named (``DeferRefused``)."""
    from ._postgres import db_away

    if not keys:
        return set()
    try:
        async with conn.transaction():
            await app.job_manager.batch_defer_jobs_async(
                [jobs[key] for key in keys], connection=conn
            )
        return set()
    except queue_errors.AlreadyEnqueued:
        if len(keys) == 1:
            return set(keys)
    except queue_errors.ConnectorException as exc:
        if db_away(exc):
            raise
        if len(keys) == 1:
            raise DeferRefused(keys[0], exc) from exc
    parts = [keys[: len(keys) // 2], keys[len(keys) // 2 :]] if halves else [[k] for k in keys]
    refused: set[str] = set()
    for part in parts:
        refused |= await defer_jobs(app, conn, part, jobs)
    return refused


async def lock_held_by(app: procrastinate.App, queue: str, lock: str, key: str) -> bool:
    """Whether the waiting job holding the queueing lock ``lock`` is ``queue``'s job
    for ``key`` (else another queue's)."""
    holders = await app.job_manager.list_jobs_async(queueing_lock=lock, status="todo")
    return any(j.queue == queue and j.task_kwargs.get("key") == key for j in holders)


def new_job(task: str, queue: str, lock: str, key: str) -> Job:
    """A job of ``task`` for ``key`` to defer (``batch_defer_jobs_async``): one key at
    a time across every worker (``lock``), once in the queue (its queueing lock)."""
    return Job(queue=queue, lock=lock, queueing_lock=lock, task_name=task, task_kwargs={"key": key})


async def take_over(
    app: procrastinate.App, task: str, queue: str, stalled_after: float
) -> list[str]:
    """Hand the jobs of ``queue`` held by a worker without a heartbeat for
    ``stalled_after`` seconds to the queue again: for each, a new job for its key
    (deferred first: its lock keeps it from starting while the old one holds it), then
    the old one ended ``aborted``. Its first holder, if it still runs, can neither
    finish nor requeue the new one (procrastinate refuses: a race, logged at debug); the
    journal's fencing stops its writes. The keys this call queued again (another worker
    taking over the same job at the same moment queues it once)."""
    manager = app.job_manager
    stalled = await manager.get_stalled_jobs(queue=queue, seconds_since_heartbeat=stalled_after)
    again: list[str] = []
    for job in stalled:
        key = job.task_kwargs.get("key")
        if job.task_name != task or not isinstance(key, str) or job.lock is None:
            continue
        try:
            await manager.batch_defer_jobs_async([new_job(task, queue, job.lock, key)])
        except queue_errors.AlreadyEnqueued:
            pass  # queued again already (another worker's takeover, an enqueue)
        else:
            again.append(key)
        await manager.finish_job(job, status=Status.ABORTED, delete_job=False)
    return again


async def key_of(app: procrastinate.App, job_id: int | None) -> str | None:
    """The key of the queue job ``job_id`` (``list_jobs_async``), if it is known."""
    if job_id is None:
        return None
    for job in await app.job_manager.list_jobs_async(id=job_id):
        key = job.task_kwargs.get("key")
        return key if isinstance(key, str) else None
    return None


async def queue_counts(app: procrastinate.App, queue: str) -> tuple[int, int]:
    """Jobs of ``queue`` waiting and running (``list_queues_async``)."""
    for row in await app.job_manager.list_queues_async(queue=queue):
        if row["name"] == queue:
            return int(row["todo"]), int(row["doing"])
    return 0, 0


_STATES: Final = (Status.DOING, Status.TODO, Status.FAILED)
"""The queue's states of a key that ``key_states`` reports, strongest first."""


async def key_states(
    app: procrastinate.App,
    queue: str,
    keys: Iterable[str] | None = None,
    *,
    only: Status | None = None,
) -> dict[str, str]:
    """The state in the queue of each key of ``queue`` (of ``keys`` only, if given)
    that has one: ``doing`` when a worker holds a job of it, else ``todo`` when one
    waits, else ``failed`` when one failed for good (``list_jobs_async``, one call per
    state; jobs that succeeded, the bulk of a queue, are not read). ``only``: that
    state's keys alone (one call: ``doing``, the running jobs, is a short listing)."""
    wanted = None if keys is None else set(keys)
    states: dict[str, str] = {}
    for status in reversed(_STATES if only is None else (only,)):  # the strongest written last
        for job in await app.job_manager.list_jobs_async(queue=queue, status=status.value):
            key = job.task_kwargs.get("key")
            if isinstance(key, str) and (wanted is None or key in wanted):
                states[key] = status.value
    return states


async def running_keys(app: procrastinate.App, queue: str, keys: Iterable[str]) -> set[str]:
    """The keys among ``keys`` a worker holds a job of (``key_states``, ``doing``)."""
    return set(await key_states(app, queue, keys, only=Status.DOING))


async def waiting_keys(app: procrastinate.App, queue: str, keys: Iterable[str]) -> set[str]:
    """The keys among ``keys`` a job of waits for a worker (``key_states``, ``todo``)."""
    return set(await key_states(app, queue, keys, only=Status.TODO))


async def legacy_waiting(app: procrastinate.App) -> dict[str, str]:
    """The jobs waiting on the queue ``vidapi`` that a release up to 0.1.0 queued (their
    queueing lock the bare key, not ``vidapi/KEY``): each one's queueing lock and key
    (``list_jobs_async``; a listing of that queue's waiting jobs)."""
    held: dict[str, str] = {}
    for job in await app.job_manager.list_jobs_async(queue="vidapi", status=Status.TODO.value):
        key = job.task_kwargs.get("key")
        lock = job.queueing_lock
        if isinstance(key, str) and lock is not None and lock != f"vidapi/{key}":
            held[lock] = key
    return held


class Transient(Exception):
    """Raised in the task so that the queue runs the job again later, unless
    ``attempts`` (the tries it counts) reached ``MAX_ATTEMPTS``."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class GivenBack(Exception):
    """Raised in the task for a job handed back (no fault of the job's: this worker's
    credentials were refused, or its account waits for its quota): the queue runs it
    again (after ``wait`` seconds, if given), and no attempt is counted."""

    def __init__(self, message: str, *, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


def _expected_without_traceback(record: logging.LogRecord) -> bool:
    """procrastinate's line for a job that ended on one of our expected failures
    (``Transient``, ``GivenBack``: recorded in the journal, said by our own log) keeps
    its text and loses the traceback; any other keeps it."""
    if record.exc_info and isinstance(record.exc_info[1], (Transient, GivenBack)):
        record.exc_info = None
        record.exc_text = None
    return True


logging.getLogger("procrastinate.worker").addFilter(_expected_without_traceback)


class Retry(procrastinate.BaseRetryStrategy):
    """The queue's retries: a job handed back always; a transient failure
    (``Transient``) until the attempts it counts reach ``MAX_ATTEMPTS``; any other
    exception (a statement the server refused...) until procrastinate's count does,
    except those of ``never`` (a job without its spec)."""

    def __init__(self, never: tuple[type[BaseException], ...] = ()) -> None:
        self.never = never

    def get_retry_decision(
        self, *, exception: BaseException, job: Job
    ) -> procrastinate.RetryDecision | None:
        """``None`` (failed for good) or when to run the job again."""
        if isinstance(exception, self.never):
            return None
        if not isinstance(exception, GivenBack):
            tried = exception.attempts if isinstance(exception, Transient) else job.attempts
            if tried >= MAX_ATTEMPTS:
                return None
        wait: float = RETRY_WAIT
        if isinstance(exception, GivenBack) and exception.wait is not None:
            wait = exception.wait
        at = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=wait)
        return procrastinate.RetryDecision(retry_at=at)


def registration_lost(worker: Any) -> bool:
    """Whether a procrastinate worker (its ``run_worker_async`` task, done) ended because
    its registration was pruned while it was paused: the database refused a job for its
    worker id (a foreign key violation, SQLSTATE 23503, read from the class)."""
    import psycopg

    if worker.cancelled():
        return False
    exc = worker.exception()
    return isinstance(exc, queue_errors.ConnectorException) and isinstance(
        exc.__cause__, psycopg.errors.ForeignKeyViolation
    )


async def queue_tables_exist(dsn: str) -> bool:
    """Whether ``dsn``'s database holds procrastinate's tables (``check_connection_async``),
    creating nothing."""
    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(
            conninfo=dsn, timeout=5.0, kwargs={"connect_timeout": 5}
        )
    )
    await app.open_async()
    try:
        return bool(await app.job_manager.check_connection_async())
    finally:
        await app.close_async()
