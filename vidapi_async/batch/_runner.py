"""``BatchUploader``: many upload-and-create pipelines at once, under a concurrency
limit, resumable through a journal, never creating a video twice.

Each job runs as a pipeline of stages (``Stage``): upload, create, subtitles, password,
live, done. The journal records each stage as it is reached (a job with nothing to do
after its create goes from ``creating`` to ``done`` with its video's id, in one record);
a re-run skips done jobs and resumes the others from their stage.

Exactly one video per job, even if the process is killed between sending the create
request and recording the new video's id: before sending it, the job records the stage
``creating``, and the create carries the job's tag (``vidapi-<key>``). A job found at
``creating`` (after a crash, or after a failure whose outcome is unknown) first asks the
platform for a video with its tag (``GET /me/videos?tags=...``) and adopts it; only if
there is none is the create sent again. Subtitles are handled the same way, by language.

With a fenced journal (PostgreSQL, several workers) a worker may lose its job while its
create is on the way: paused after its last fenced write (each create and subtitle send
is preceded by one), or while the platform processes it. Another worker then takes the
job over, finds no tagged video yet and creates its own. The journal is the truth: the
worker whose record of its new video is refused (``JobLost``) waits for the job to record
a video and deletes its own unless it is that one; only the creator deletes, and never a
recorded video. If the job records none in time it keeps it and says "possible duplicate
video ID for job KEY" at WARNING. A subtitle track sent after losing the job is deleted
once the job's subtitles are done if the video has another track in its language.

Jobs are read from the iterable as workers free up (a queue of ``concurrency`` places),
so a list of a million jobs is never held in memory, and results come out as each job
finishes.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime
import logging
import os
import time
import warnings
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import attrs

from .. import _validate as check
from .._client import Client
from .._errors import InvalidArgumentError, UsageError
from .._internals import internals
from .._metrics import MetricsServer
from .._observe import Observer
from .._transfer.sending import load_mime_types
from ._accounts import in_turn
from ._disk_checks import Checks, Prepared, check_all
from ._duplicates import Duplicates
from ._job_run import JobRunning, each
from ._jobs import (
    BatchPlan,
    BatchProgress,
    JobResult,
    JobStatus,
    LeftOut,
    UploadJob,
)
from ._journal import Journal, MemoryJournal, SQLiteJournal
from ._playlists import Playlists
from ._postgres import PostgresJournal
from ._progress import QuotaTold, Tally
from ._quota import Pacing, Quota, QuotaStop, quota_of
from ._report import JobReport
from ._spares import Spares
from ._stages import Pipeline

__all__ = ["BatchUploader", "each", "for_queue", "know_quota", "pacing_of", "running"]

log = logging.getLogger("vidapi_async.batch")


_STOP = object()


@attrs.define
class _Queues:
    """One ``run``'s queues: jobs read and not yet taken, results not yet yielded,
    queued jobs whose disk checks nobody has asked for yet (oldest first), and what
    stopped the batch (a failing iterable, a bug)."""

    todo: asyncio.Queue[object]
    results: asyncio.Queue[object]
    unchecked: collections.deque[Checks] = attrs.Factory(collections.deque)
    crashed: list[BaseException] = attrs.Factory(list)


class BatchUploader(JobRunning):
    """Run many ``UploadJob`` pipelines at once. Use as ``async with``.

    ``journal`` is a path (an SQLite file, created if needed), a ``Journal``, or
    ``None`` (kept in memory: nothing survives the process). ``chunked``, ``workers``
    ``read_size`` and ``range_size`` choose how each file is sent (see
    ``Client.upload_file``; ``chunk_size`` is their deprecated alias). With
    ``chunked=None`` (default) files of ``client.chunked_threshold`` bytes or more go
    chunked, and resume after a crash from the ranges the server holds; their
    ``workers`` are capped so that every pipeline fits the client's connection limit.
    ``progress(BatchProgress)`` is called as bytes and jobs move. ``report``: a
    ``.csv`` or ``.jsonl`` file given one row per job as it ends (key, source, status,
    video id, page and embed addresses, error), flushed at once. ``adopt_only``: send
    nothing but the listing of the account's videos; each job not done is adopted (its
    video recorded done) or fails (see ``adopt_only``).
    """

    # Longer than the 80-line rule allows, as an accepted exception: its keyword
    # parameters and their documentation, nothing else.
    def __init__(
        self,
        client: Client,
        *,
        concurrency: int = 8,
        journal: str | os.PathLike[str] | Journal | None = None,
        chunked: bool | None = None,
        workers: int = 4,
        read_size: int | None = None,
        range_size: int | None = None,
        chunk_size: int | None = None,
        progress: Callable[[BatchProgress], Any] | None = None,
        wait_ready: bool = False,
        ready_timeout: float = 3600.0,
        metrics_port: int | None = None,
        report: str | os.PathLike[str] | None = None,
        quota: Quota | str | None = None,
        adopt_only: bool = False,
    ) -> None:
        self.client = client
        """The client the jobs use."""
        self.quota = quota_of(quota)
        """The account's upload quota (``Quota``, or its text: ``"15/24h"``): creates
        are paced to it, each account in a rolling window of its own, and a refusal
        waits rather than stopping the batch. ``None``: the first refusal stops the
        batch's new uploads and creates (run it again after the reset)."""
        self._report_to = None if report is None else JobReport(report, client, journal)
        self._metrics_port = _port(metrics_port)
        self._metrics: MetricsServer | None = None
        self.wait_ready = wait_ready
        """Each job also waits until the platform has encoded its video (stage
        ``ready``); a failed encoding fails the job with ``EncodingError``."""
        self.ready_timeout = check.positive_number(ready_timeout, "ready_timeout")
        """Seconds each video may take to be ready (``wait_ready=True``)."""
        self.concurrency = check.positive_int(concurrency, "concurrency")
        """Jobs running at once."""
        self._journal_arg = journal
        self._journal: Journal | None = None
        self._owns_journal = False
        self.chunked = chunked
        """``True``/``False`` forces the upload mode; ``None``: by size, as the client's
        ``chunked_threshold`` says."""
        self.workers = check.positive_int(workers, "workers")
        """Ranges in flight per chunked upload."""
        limit = client.connection_limit
        self.workers = _fitted_workers(limit, self.concurrency, chunked, self.workers)
        if chunk_size is not None:
            warnings.warn(
                "BatchUploader(chunk_size=) is deprecated; use read_size= or range_size=",
                DeprecationWarning,
                stacklevel=2,
            )
            if chunked:
                range_size = range_size or chunk_size
            else:
                read_size = read_size or chunk_size
        self.read_size = read_size
        """Bytes read from disk at a time (``None``: the client's)."""
        self.range_size = range_size
        """Bytes per chunked range (``None``: the client's)."""
        self._tally = Tally(check.callback(progress, "progress"))
        self._in_flight: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        # Addresses are fetched ahead only on the API pool's connections no pipeline can
        # need: a pipeline holds one at a time (its uploads and ranges go through the
        # upload pump's own sockets).
        self._spares = Spares(
            client.get_upload_session, room=None if limit is None else limit - self.concurrency
        )
        self._quota = QuotaStop()
        self._waiting = 0  # jobs queued that no pipeline has taken yet
        self._requeue: Callable[[BaseException], bool] | None = None
        """Set by a shared queue (``for_queue``): whether a failed job goes back to the
        queue to be run again; such a job is counted ``requeued`` in the metrics, and
        neither started nor failed in the progress."""
        self._playlists = Playlists(client)
        self._settle_for = 0.0
        """How long a worker that lost its job after a create waits for the job to
        record its video before deciding whether to delete its own (``for_queue``)."""
        self._pipeline: Pipeline | None = None
        self._shared_pacing: Pacing | None = None
        """A shared queue's windows (``for_queue``), in place of the batch's own."""
        if not isinstance(adopt_only, bool):
            raise InvalidArgumentError("adopt_only", "expected True or False")
        self.adopt_only = adopt_only
        """Rebuild the journal from the platform alone: each job not done is adopted
        (its video found by its tag, recorded done) or fails; nothing is uploaded,
        created or updated (a lost journal's mapping back, ``vidapi batch --adopt-only``)."""
        self._origin: str | None = None
        """The manifest or feed of the jobs ``run`` runs (``run(origin=)``)."""

    @property
    def metrics_port(self) -> int | None:
        """The port ``/metrics`` is served on while the batch runs (``metrics_port=0``:
        the one the system chose), or ``None``."""
        return None if self._metrics is None else self._metrics.port

    async def __aenter__(self) -> BatchUploader:
        if self._metrics_port is not None and self._metrics is None:
            try:
                self._metrics = MetricsServer(self._metrics_port)
            except OSError as exc:
                raise InvalidArgumentError(
                    "metrics_port",
                    f"cannot serve metrics on 127.0.0.1:{self._metrics_port}: {exc.strerror}",
                ) from None
        try:
            if self._report_to is not None:
                await self._report_to.writer.open()
            return await self._open()
        except BaseException:
            await self._close_metrics()
            if self._report_to is not None:
                await self._report_to.writer.close()
            raise

    async def _close_metrics(self) -> None:
        if self._metrics is not None:
            server, self._metrics = self._metrics, None
            await server.aclose()  # closed at once; waits for its connections to be gone

    async def _open(self) -> BatchUploader:
        self._journal, self._owns_journal = await _open_journal(self._journal_arg)
        self._pipeline = Pipeline(
            self.client,
            self._journal,
            uploads={},
            spares=self._spares,
            playlists=self._playlists,
            tally=self._tally,
            quota=self._quota,
            duplicates=Duplicates(self.client, self._journal, self._settle_for),
            waiting=lambda: self._waiting,
            ready_timeout=None,
            pacing=self._shared_pacing or self._pacing(),
        )
        self._pipeline.adopt_only = self.adopt_only
        return self

    def _pacing(self) -> Pacing | None:
        """A local paced batch's windows, their waits in the progress and their creates
        in the journal."""
        if self.quota is None:
            return None
        return Pacing(self.quota, told=QuotaTold(self._tally, lambda: self._journal))

    async def __aexit__(self, *exc_info: object) -> None:
        # Leaving the block stops a run whose iteration was abandoned (a ``break`` does
        # not close an async generator at once).
        await self._stop_tasks()
        try:
            if self._journal is not None and self._owns_journal:
                await self._journal.close()
        finally:
            self._journal = self._pipeline = None
            await self._close_metrics()
            if self._report_to is not None:
                await self._report_to.writer.close()

    async def _stop_tasks(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._spares.close()

    # --- scheduling --------------------------------------------------------------------

    async def run(
        self,
        jobs: Iterable[UploadJob] | AsyncIterable[UploadJob],
        *,
        origin: str | None = None,
    ) -> AsyncIterator[JobResult]:
        """Yield one ``JobResult`` per job, as each finishes. Stopping the iteration (or
        cancelling the task that runs it) cancels the pipelines in flight; the journal
        keeps every stage reached.

        ``origin`` names the manifest or feed the jobs come from (``vidapi batch``
        gives its source): the journal records it, with each job's source, for the jobs
        it makes. A key the journal holds from another source is refused (failed with
        ``InvalidArgumentError`` naming the key, both sources and both origins) unless
        it comes from the same ``origin``: then the source moved, and the job stays
        done (``JobResult.moved``)."""
        if self._journal is None:
            raise UsageError("use the BatchUploader as 'async with BatchUploader(...)'")
        if self._tasks:
            raise UsageError("this BatchUploader is already running a batch")
        self._origin = origin
        self._tally.reset()
        self._waiting = 0
        self._quota.reached.clear()
        self._playlists.new_run()
        if self._pipeline is not None:
            self._pipeline.adoption.new_run()
        queues = _Queues(asyncio.Queue(self.concurrency), asyncio.Queue(self.concurrency))
        # The upload pump (its TLS trust loaded, its first thread started) gets ready
        # while the first jobs check their files and fetch their addresses.
        warm = asyncio.create_task(self._warm_pump(), name="vidapi-batch-warm")
        feeder = asyncio.create_task(self._feed(jobs, queues), name="vidapi-batch-feed")
        workers = [
            asyncio.create_task(self._work(queues), name=f"vidapi-batch-{i}")
            for i in range(self.concurrency)
        ]
        self._tasks += [warm, feeder, *workers]
        try:
            left = self.concurrency
            while left:
                item = await queues.results.get()
                if item is _STOP:
                    left -= 1
                else:
                    assert isinstance(item, JobResult)
                    yield item
            if queues.crashed:
                raise queues.crashed[0]
        finally:
            await self._stop_tasks()

    async def _feed(
        self, jobs: Iterable[UploadJob] | AsyncIterable[UploadJob], queues: _Queues
    ) -> None:
        """Read the jobs into ``todo`` as workers free up, then one stop per worker."""
        loop = asyncio.get_running_loop()
        try:
            seq = 0
            source = each(jobs)
            if self.quota is not None:  # accounts in turn: one waiting blocks no other
                source = in_turn(source)
            async for job in source:
                if not isinstance(job, UploadJob):
                    raise InvalidArgumentError("jobs", f"expected UploadJob, got {job!r}")
                checks = Checks(job, loop.create_future())
                queues.unchecked.append(checks)
                await queues.todo.put((seq, job, checks))
                self._waiting += 1
                seq += 1
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the job iterable failed: finish what is queued
            queues.crashed.append(exc)
        for _ in range(self.concurrency):
            await queues.todo.put(_STOP)

    def _checked(self, queues: _Queues, checks: Checks) -> asyncio.Future[Prepared]:
        """The job's disk checks; asked for with those of every job queued after it
        (one trip to a worker thread for them all) if nobody has asked yet."""
        if queues.unchecked and queues.unchecked[0] is checks:
            group = list(queues.unchecked)
            queues.unchecked.clear()
            task = asyncio.create_task(check_all(group), name="vidapi-batch-checks")
            self._tasks.append(task)
            task.add_done_callback(self._forget_task)
        return checks.done

    async def _work(self, queues: _Queues) -> None:
        """One pipeline: jobs from ``todo`` until a stop, each one's result queued."""
        try:
            while (item := await queues.todo.get()) is not _STOP:
                assert isinstance(item, tuple)
                self._waiting -= 1
                seq, job, checks = item
                result = await self._run_job(job, seq, self._checked(queues, checks), self._origin)
                await queues.results.put(result)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # a bug, not a job failure: stop the batch
            queues.crashed.append(exc)
        await queues.results.put(_STOP)

    def _forget_task(self, task: asyncio.Task[None]) -> None:
        with contextlib.suppress(ValueError):  # (gone already: the batch was stopped)
            self._tasks.remove(task)

    async def _warm_pump(self) -> None:
        """Have the client's upload pump made now, not by the first upload. Shielded:
        a batch stopped meanwhile leaves the pump to the client, which closes it."""
        both = asyncio.gather(internals(self.client).ready_for_uploads(), load_mime_types())
        # Its outcome is always retrieved, even when the batch (or the program) ends first.
        both.add_done_callback(lambda f: f.cancelled() or f.exception())
        with contextlib.suppress(Exception):  # the first upload meets it and reports it
            await asyncio.shield(both)

    async def run_one(self, job: UploadJob, *, origin: str | None = None) -> JobResult:
        """One job of ``origin`` (as ``run``'s) outside ``run`` (a queue worker's task)."""
        if self._journal is None:
            raise UsageError("use the BatchUploader as 'async with BatchUploader(...)'")
        return await self._run_job(job, None, None, origin)

    async def plan(
        self,
        jobs: Iterable[UploadJob] | AsyncIterable[UploadJob],
        *,
        origin: str | None = None,
    ) -> BatchPlan:
        """What ``run(jobs, origin=origin)`` would do, from the jobs, the journal and one
        listing of the account's videos (no write to the platform, none to the journal):
        the keys of the jobs it would create, adopt (not in the journal, their video on
        the platform), update (done, with other metadata), skip (done, unchanged) and
        refuse (what the run would fail, with ``refused_sources`` saying why where it is
        a source: see ``BatchPlan.refuse``)."""
        return await self._plan(jobs, origin)

    # --- one job -----------------------------------------------------------------------

    async def _run_job(
        self,
        job: UploadJob,
        seq: int | None = None,
        checked: Awaitable[Prepared] | None = None,
        origin: str | None = None,
    ) -> JobResult:
        pipeline = self._pipeline
        machinery = internals(self.client) if pipeline is None else pipeline.machinery
        observer = machinery.observer
        inner = self._run_job_inner(job, seq, checked, origin)
        try:
            # observed only when the observer is active: else one coroutine less a job
            # that every resume of the job's steps goes through
            result = await (
                _observed(observer, inner, self._goes_back) if observer.active else inner
            )
        finally:
            if seq is not None:
                await self._playlists.pass_turn(seq)
        if self._report_to is not None:
            await self._report_to.row(result)
        return result

    async def report_left_out(self, left: LeftOut) -> None:
        """Give the report (if any) a row for a manifest row or feed item that gives no
        job (``LeftOut``: failed or skipped, with its reason); what is ``ignored`` has
        none."""
        if self._report_to is not None:
            await self._report_to.left_out(left)


async def _observed(
    observer: Observer,
    inner: Awaitable[JobResult],
    goes_back: Callable[[BaseException | None], bool],
) -> JobResult:
    """``inner``, a job's run, observed: a span, its outcome and duration counted
    (``_run_job`` calls it when the client's observer is active, else awaits ``inner``)."""
    started = time.perf_counter()
    counted = observer.job_started()
    outcome: str | None = "failed"
    try:
        with observer.job_span():
            result = await inner
            observer.label_video(result.video_id)  # made now, or by an earlier run
            if result.status is JobStatus.FAILED:
                observer.job_failed(result.error)
        outcome = result.status.value
        if result.status is JobStatus.FAILED and goes_back(result.error):
            outcome = "requeued"
        return result
    except asyncio.CancelledError:
        outcome = None  # stopped, not failed: no outcome
        raise
    finally:
        observer.job_finished(outcome, time.perf_counter() - started, counted)


def _port(metrics_port: int | None) -> int | None:
    """``metrics_port`` checked: ``None`` or a port number (0: any free one)."""
    if metrics_port is not None and (
        not isinstance(metrics_port, int)
        or isinstance(metrics_port, bool)
        or not 0 <= metrics_port <= 65535
    ):
        raise InvalidArgumentError("metrics_port", "expected a port number (0: any free one)")
    return metrics_port


def _fitted_workers(limit: int | None, concurrency: int, chunked: bool | None, workers: int) -> int:
    """The ranges in flight per chunked upload that fit the client's connection limit
    with ``concurrency`` pipelines; ``InvalidArgumentError`` if none do."""
    if chunked is None and limit is not None:
        # Chunked by size: the big files' workers share what the pool has beyond
        # one connection per pipeline.
        workers = max(1, min(workers, limit // concurrency))
    needed = concurrency * (workers if chunked is not False else 1)
    if limit is not None and needed > limit:
        # Waiting for a pooled connection counts against a request's total timeout:
        # queue here, not in the pool.
        raise InvalidArgumentError(
            "concurrency",
            f"{needed} uploads in flight need {needed} connections but the client allows "
            f"{limit}: lower concurrency/workers or raise Client(connection_limit=...)",
        )
    return workers


async def _open_journal(arg: str | os.PathLike[str] | Journal | None) -> tuple[Journal, bool]:
    """The batch's journal, opened (if it has ``open``), and whether the batch made it
    (then it closes it)."""
    journal: Journal
    if arg is None:
        journal, owned = MemoryJournal(), True
    elif isinstance(arg, str) and arg.startswith(("postgresql://", "postgres://")):
        journal, owned = PostgresJournal(arg), True
    elif isinstance(arg, str | os.PathLike):
        journal, owned = SQLiteJournal(arg), True
    elif isinstance(arg, Journal):
        journal, owned = arg, False
    else:
        raise InvalidArgumentError("journal", "expected a path, a Journal or None")
    opener = getattr(journal, "open", None)
    if opener is not None:
        try:
            await opener()
        except BaseException:
            if owned:
                await journal.close()
            raise
    return journal, owned


# --- what a shared queue's worker sets and reads of its runner ---------------------------


def for_queue(
    runner: BatchUploader,
    *,
    settle_for: float,
    requeue: Callable[[BaseException], bool],
    pacing: Pacing | None = None,
    playlists: Playlists | None = None,
) -> BatchUploader:
    """``runner`` made a shared queue's (before it is entered): a worker that lost a
    job after a create waits ``settle_for`` seconds for the job to record its video,
    a failure ``requeue`` accepts goes back to the queue (not counted failed),
    ``pacing``: the accounts' windows every worker shares (its ``quota=``), and
    ``playlists`` (the queue's, decided in its database) replace the batch's own."""
    runner._settle_for = settle_for
    runner._requeue = requeue
    runner._shared_pacing = pacing
    if playlists is not None:
        runner._playlists = playlists
    return runner


def pacing_of(runner: BatchUploader) -> Pacing | None:
    """``runner``'s accounts' windows (``None``: not paced)."""
    return None if runner._pipeline is None else runner._pipeline.pacing


def know_quota(runner: BatchUploader, account: str | None, until: datetime.datetime | None) -> None:
    """Tell ``runner`` the quota of the account of the variable ``account`` (``None``:
    the client's own) as the shared queue knows it: reached until ``until`` (no create
    of its starts), or not (``None``)."""
    runner._quota.told(account, until)


def running(runner: BatchUploader, key: str) -> bool:
    """Whether ``runner`` runs a job of ``key`` now."""
    return key in runner._in_flight
