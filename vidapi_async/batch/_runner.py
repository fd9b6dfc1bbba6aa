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
import hashlib
import logging
import os
import re
import time
import warnings
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any

import attrs

from .. import _validate as check
from .._client import Client
from .._errors import (
    BadRequestError,
    FileError,
    InvalidArgumentError,
    NotFoundError,
    QuotaExceededError,
    SubtitleFileError,
    UnsupportedOperationError,
    UsageError,
    VidapiError,
)
from .._files import LocalFile, check_srt_file, inspect_file
from .._internals import internals
from .._metrics import MetricsServer
from .._models import Subtitle, UploadSession, Video
from .._observe import outside_job
from .._s3 import is_s3_url
from .._uploads import load_mime_types
from ._bucket import object_send, object_size
from ._jobs import (
    CLEARED,
    BatchPlan,
    BatchProgress,
    JobResult,
    JobStatus,
    UploadJob,
    file_key,
    legacy_url_key,
    missing_key,
    url_key,
)
from ._journal import JobLost, JobRecord, Journal, MemoryJournal, SQLiteJournal, Stage
from ._postgres import PostgresJournal
from ._report import Links, ReportWriter
from ._spares import Spares

__all__ = ["BatchUploader"]

log = logging.getLogger("vidapi_async.batch")


_STOP = object()


class BatchUploader:
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
    video id, page and embed addresses, error), flushed at once.
    """

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
    ) -> None:
        self.client = client
        """The client the jobs use."""
        self._report_to = None
        if report is not None:
            journal_file = (
                os.fspath(journal)
                if isinstance(journal, str | os.PathLike)
                and not os.fspath(journal).startswith(("postgresql://", "postgres://"))
                else None
            )
            self._report_to = ReportWriter(
                report, not_over={} if journal_file is None else {journal_file: "journal"}
            )
        self._links = Links(client)
        if metrics_port is not None and (
            not isinstance(metrics_port, int)
            or isinstance(metrics_port, bool)
            or not 0 <= metrics_port <= 65535
        ):
            raise InvalidArgumentError("metrics_port", "expected a port number (0: any free one)")
        self._metrics_port = metrics_port
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
        if chunked is None and limit is not None:
            # Chunked by size: the big files' workers share what the pool has beyond
            # one connection per pipeline.
            self.workers = max(1, min(self.workers, limit // self.concurrency))
        needed = self.concurrency * (self.workers if chunked is not False else 1)
        if limit is not None and needed > limit:
            # Waiting for a pooled connection counts against a request's total timeout:
            # queue here, not in the pool.
            raise InvalidArgumentError(
                "concurrency",
                f"{needed} uploads in flight need {needed} connections but the client allows "
                f"{limit}: lower concurrency/workers or raise Client(connection_limit=...)",
            )
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
        self._progress_cb = progress
        self._counts = {"started": 0, "done": 0, "skipped": 0, "failed": 0, "updated": 0}
        self._bytes_sent = 0
        self._bytes_total = 0
        self._files: dict[str, tuple[str, int, int]] = {}
        self._started_at = time.monotonic()
        self._in_flight: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        # Addresses are fetched ahead only on the API pool's connections no pipeline can
        # need: a pipeline holds one at a time (its uploads and ranges go through the
        # upload pump's own sockets).
        self._spares = Spares(
            client.get_upload_session, room=None if limit is None else limit - self.concurrency
        )
        self._quota: QuotaExceededError | None = None
        """The first refusal for the account's quota: no new upload starts after it."""
        self._not_sent: weakref.WeakSet[QuotaExceededError] = weakref.WeakSet()
        self._waiting = 0  # jobs queued that no pipeline has taken yet
        self._requeue: Callable[[BaseException], bool] | None = None
        """Set by a shared queue: whether a failed job goes back to the queue to be run
        again; such a job is counted ``requeued`` in the metrics, and neither started
        nor failed in the progress."""
        self._channels: dict[str, InvalidArgumentError | None] = {}
        """Each channel checked against the platform's categories, and its verdict."""
        self._playlist_ids: dict[str, str] = {}
        """Each playlist name's id, found or created once per batch."""
        self._playlist_lock = asyncio.Lock()
        self._known_playlists: dict[str, str] | None = None
        """The account's playlists by name, listed once per batch."""
        self._turn = asyncio.Condition()
        self._passed: set[int] = set()
        self._next_turn = 0
        """Jobs of ``run`` add their video to playlists in their order: a job waits for
        every job before it to have passed that point (or ended)."""
        self._settle_for = 0.0
        """How long a worker that lost its job after a create waits for the job to
        record its video before deciding whether to delete its own (a shared queue
        sets it from ``stalled_after``)."""

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
                await self._report_to.open()
            return await self._open()
        except BaseException:
            await self._close_metrics()
            if self._report_to is not None:
                await self._report_to.close()
            raise

    async def _close_metrics(self) -> None:
        if self._metrics is not None:
            server, self._metrics = self._metrics, None
            await server.aclose()  # closed at once; waits for its connections to be gone

    async def _open(self) -> BatchUploader:
        arg = self._journal_arg
        if arg is None:
            self._journal, self._owns_journal = MemoryJournal(), True
        elif isinstance(arg, str) and arg.startswith(("postgresql://", "postgres://")):
            self._journal, self._owns_journal = PostgresJournal(arg), True
        elif isinstance(arg, str | os.PathLike):
            self._journal, self._owns_journal = SQLiteJournal(arg), True
        elif isinstance(arg, Journal):
            self._journal = arg
        else:
            raise InvalidArgumentError("journal", "expected a path, a Journal or None")
        opener = getattr(self._journal, "open", None)
        if opener is not None:
            try:
                await opener()
            except BaseException:
                if self._owns_journal:
                    await self._journal.close()
                self._journal = None
                raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        # Leaving the block stops a run whose iteration was abandoned (a ``break`` does
        # not close an async generator at once).
        await self._stop_tasks()
        try:
            if self._journal is not None and self._owns_journal:
                await self._journal.close()
        finally:
            self._journal = None
            await self._close_metrics()
            if self._report_to is not None:
                await self._report_to.close()

    async def _stop_tasks(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._spares.close()

    # --- running -----------------------------------------------------------------------

    async def run(
        self, jobs: Iterable[UploadJob] | AsyncIterable[UploadJob]
    ) -> AsyncIterator[JobResult]:
        """Yield one ``JobResult`` per job, as each finishes. Stopping the iteration (or
        cancelling the task that runs it) cancels the pipelines in flight; the journal
        keeps every stage reached."""
        if self._journal is None:
            raise UsageError("use the BatchUploader as 'async with BatchUploader(...)'")
        if self._tasks:
            raise UsageError("this BatchUploader is already running a batch")
        self._started_at = time.monotonic()
        self._counts = dict.fromkeys(self._counts, 0)
        self._bytes_sent = self._bytes_total = 0
        self._waiting = 0
        self._quota = None
        self._passed, self._next_turn = set(), 0
        todo: asyncio.Queue[object] = asyncio.Queue(maxsize=self.concurrency)
        results: asyncio.Queue[object] = asyncio.Queue(maxsize=self.concurrency)
        unchecked: collections.deque[_Checks] = collections.deque()
        """Queued jobs whose disk checks nobody has asked for yet, oldest first."""

        crashed: list[BaseException] = []

        async def feed() -> None:
            loop = asyncio.get_running_loop()
            try:
                async for seq, job in _numbered(_each(jobs)):
                    if not isinstance(job, UploadJob):
                        raise InvalidArgumentError("jobs", f"expected UploadJob, got {job!r}")
                    checks = _Checks(job, loop.create_future())
                    unchecked.append(checks)
                    await todo.put((seq, job, checks))
                    self._waiting += 1
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # the job iterable failed: finish what is queued
                crashed.append(exc)
            for _ in range(self.concurrency):
                await todo.put(_STOP)

        def checked(checks: _Checks) -> asyncio.Future[Prepared]:
            """The job's disk checks; asked for with those of every job queued after it
            (one trip to a worker thread for them all) if nobody has asked yet."""
            if unchecked and unchecked[0] is checks:
                group = list(unchecked)
                unchecked.clear()
                task = asyncio.create_task(_check_all(group), name="vidapi-batch-checks")
                self._tasks.append(task)
                task.add_done_callback(self._forget_task)
            return checks.done

        async def work() -> None:
            try:
                while (item := await todo.get()) is not _STOP:
                    assert isinstance(item, tuple)
                    self._waiting -= 1
                    seq, job, checks = item
                    await results.put(await self._run_job(job, seq, checked(checks)))
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # a bug, not a job failure: stop the batch
                crashed.append(exc)
            await results.put(_STOP)

        # The upload pump (its TLS trust loaded, its first thread started) gets ready
        # while the first jobs check their files and fetch their addresses.
        warm = asyncio.create_task(self._warm_pump(), name="vidapi-batch-warm")
        feeder = asyncio.create_task(feed(), name="vidapi-batch-feed")
        workers = [
            asyncio.create_task(work(), name=f"vidapi-batch-{i}") for i in range(self.concurrency)
        ]
        self._tasks += [warm, feeder, *workers]
        try:
            left = self.concurrency
            while left:
                item = await results.get()
                if item is _STOP:
                    left -= 1
                else:
                    assert isinstance(item, JobResult)
                    yield item
            if crashed:
                raise crashed[0]
        finally:
            await self._stop_tasks()

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

    async def run_one(self, job: UploadJob) -> JobResult:
        """One job through the pipeline, outside ``run`` (a queue worker's task)."""
        if self._journal is None:
            raise UsageError("use the BatchUploader as 'async with BatchUploader(...)'")
        return await self._run_job(job)

    async def plan(self, jobs: Iterable[UploadJob] | AsyncIterable[UploadJob]) -> BatchPlan:
        """What ``run(jobs)`` would do, from the jobs and the journal only (no write to
        the platform, none to the journal): the keys of the jobs it would create,
        update (done, with other metadata) and skip (done, unchanged)."""
        if self._journal is None:
            raise UsageError("use the BatchUploader as 'async with BatchUploader(...)'")
        create: list[str] = []
        update: list[str] = []
        skip: list[str] = []
        async for job in _each(jobs):
            if not isinstance(job, UploadJob):
                raise InvalidArgumentError("jobs", f"expected UploadJob, got {job!r}")
            key = (await asyncio.to_thread(_prepare, job))[0]
            if job.url is not None and key == url_key(job.url):
                key = await self._recorded_url_key(key, job.url)
            record = await self._journal.load(key)
            if record is None or record.stage is not Stage.DONE:
                create.append(key)
            elif _changed(record.metadata, _now(job, record, quiet=True)):
                update.append(key)
            else:
                skip.append(key)
        return BatchPlan(create=tuple(create), update=tuple(update), skip=tuple(skip))

    async def _run_job(
        self,
        job: UploadJob,
        seq: int | None = None,
        checked: Awaitable[Prepared] | None = None,
    ) -> JobResult:
        try:
            result = await self._observed(job, seq, checked)
        finally:
            if seq is not None:
                await self._pass_turn(seq)
        if self._report_to is not None:
            await self._report_row(result)
        return result

    async def _report_row(self, result: JobResult) -> None:
        assert self._report_to is not None
        video_id = None if result.status is JobStatus.LOST else result.video_id
        page, embed = await self._links.of(video_id, result.key, private=bool(result.job.private))
        await self._report_to.write(
            {
                "key": result.key,
                "source": result.job.where,
                "status": result.status.value,
                "video_id": result.video_id,
                "url": page,
                "embed_url": embed,
                "error": None if result.error is None else str(result.error),
            }
        )

    async def _pass_turn(self, seq: int) -> None:
        async with self._turn:
            if seq < self._next_turn:
                return  # passed already
            self._passed.add(seq)
            while self._next_turn in self._passed:
                self._passed.discard(self._next_turn)
                self._next_turn += 1
            self._turn.notify_all()

    async def _wait_turn(self, seq: int | None) -> None:
        """Wait until every job before ``seq`` has added its video to its playlists
        (or ended): playlists get their videos in the order of the jobs."""
        if seq is None:
            return
        async with self._turn:
            await self._turn.wait_for(lambda: self._next_turn >= seq)

    async def _observed(
        self, job: UploadJob, seq: int | None, checked: Awaitable[Prepared] | None
    ) -> JobResult:
        observer = internals(self.client).observer
        if not observer.active:
            return await self._run_job_inner(job, seq, checked)
        started = time.perf_counter()
        counted = observer.job_started()
        outcome: str | None = "failed"
        try:
            with observer.job_span():
                result = await self._run_job_inner(job, seq, checked)
                observer.label_video(result.video_id)  # made now, or by an earlier run
                if result.status is JobStatus.FAILED:
                    observer.job_failed(result.error)
            outcome = result.status.value
            if result.status is JobStatus.FAILED and self._goes_back(result.error):
                outcome = "requeued"
            return result
        except asyncio.CancelledError:
            outcome = None  # stopped, not failed: no outcome
            raise
        finally:
            observer.job_finished(outcome, time.perf_counter() - started, counted)

    async def _run_job_inner(
        self,
        job: UploadJob,
        seq: int | None = None,
        checked: Awaitable[Prepared] | None = None,
    ) -> JobResult:
        """``checked``: the job's disk checks under way (``run`` asks for those of the
        queued jobs together); without, one trip to a worker thread for this job's."""
        assert self._journal is not None
        if checked is None:
            checked = asyncio.to_thread(_prepare, job)
        key, local, subtitles, stale = await checked
        if job.url is not None and key == url_key(job.url):  # the default (a shared queue's too)
            key = await self._recorded_url_key(key, job.url)
        forget = getattr(self._journal, "forget", None)
        if stale is not None and forget is not None:
            await forget(stale)  # the failure recorded while its file was missing
        if key in self._in_flight:
            self._count("failed")
            twice = InvalidArgumentError("key", f"another job in this batch has key {key!r}")
            return JobResult(job, key, JobStatus.FAILED, None, Stage.PENDING, twice)
        self._in_flight.add(key)
        internals(self.client).observer.label_job(
            key, local.size if isinstance(local, LocalFile) else None
        )
        claim = getattr(self._journal, "claim", None)  # a fenced journal (PostgreSQL)
        try:
            if claim is not None:
                record = await claim(key)
            else:
                record = await self._journal.load(key) or JobRecord(key)
            if record.stage is Stage.DONE:
                return await self._done_before(job, record, seq)
            if claim is None:
                record.runs += 1
            self._count("started")
            try:
                try:
                    await self._pipeline(job, record, local, subtitles, seq)
                except VidapiError as exc:
                    if isinstance(exc, QuotaExceededError) and exc not in self._not_sent:
                        internals(self.client).observer.quota_refused()  # each refusal
                        if self._quota is None:
                            self._quota = exc
                            log.warning("the account's quota is reached: no new upload will start")
                    record.error = f"{type(exc).__name__}: {exc}"
                    await self._journal.save(record)
                    if self._goes_back(exc):
                        self._counts["started"] -= 1  # to be run again: not this one's
                        self._report()
                    else:
                        self._count("failed")
                        log.warning("job %s failed at %s: %s", key, record.stage, record.error)
                    return JobResult(
                        job, key, JobStatus.FAILED, record.video_id, record.stage, exc, record.runs
                    )
            except JobLost:
                log.warning("lost job %s to another worker", key)
                return JobResult(
                    job, key, JobStatus.LOST, record.video_id, record.stage, runs=record.runs
                )
            self._count("done")
            return JobResult(
                job, key, JobStatus.DONE, record.video_id, record.stage, runs=record.runs
            )
        finally:
            self._in_flight.discard(key)
            self._files.pop(key, None)

    async def _done_before(self, job: UploadJob, record: JobRecord, seq: int | None) -> JobResult:
        """A job the journal says is done: skipped if its metadata is as recorded, else
        one update of what changed (the file is never sent again)."""
        assert self._journal is not None
        new = _now(job, record)
        if not _changed(record.metadata, new):
            self._count("skipped")
            return JobResult(
                job, record.key, JobStatus.SKIPPED, record.video_id, record.stage, runs=record.runs
            )
        assert record.video_id is not None
        try:
            added = await self._update(job, record, record.metadata or {}, new, seq)
            record.metadata = {**new, "added": added} if added or new["playlists"] else new
            await self._journal.save(record)
        except VidapiError as exc:
            self._count("failed")
            log.warning("job %s: its update failed: %s", record.key, exc)
            return JobResult(
                job, record.key, JobStatus.FAILED, record.video_id, record.stage, exc, record.runs
            )
        except JobLost:
            return JobResult(
                job, record.key, JobStatus.LOST, record.video_id, record.stage, runs=record.runs
            )
        self._count("updated")
        return JobResult(
            job, record.key, JobStatus.UPDATED, record.video_id, record.stage, runs=record.runs
        )

    async def _update(
        self,
        job: UploadJob,
        record: JobRecord,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        seq: int | None,
    ) -> list[str]:
        """Send what differs between ``old`` and ``new`` (``UploadJob.metadata()``):
        one ``update_video`` with the changed fields only, the thumbnail if it changed,
        the video added to the playlists new to it and taken out of those the batch
        put it in that the job no longer names. The playlists the batch put it in now."""
        assert record.video_id is not None
        given = job.metadata_arguments()
        fields: dict[str, Any] = {}
        for name in {*old, *new} - {"thumbnail", "playlists", "kept"}:
            if old.get(name) == new.get(name):
                continue
            if name in given:
                fields[name] = given[name]
            elif name in CLEARED:
                fields[name] = CLEARED[name]
        if fields:
            await self.client.update_video(record.video_id, **fields)
        if job.thumbnail is not None and old.get("thumbnail") != new.get("thumbnail"):
            await self.client.set_thumbnail(record.video_id, job.thumbnail)
        named = list(old.get("playlists") or ())
        # The playlists the batch put the video in (a journal written before it kept
        # them: all it named); one the video was in already is the user's, left alone.
        ours = list(old["added"]) if isinstance(old.get("added"), list) else named
        joined = [
            name
            for name in job.playlists
            if name not in named and not await self._member(name, record.video_id)
        ]
        await self._add_to_playlists(record.video_id, joined, seq)
        for name in ours:
            if name not in job.playlists:
                playlist = await self._playlist_id(name)
                # not there: taken out already (by hand, or by a run that stopped after)
                with contextlib.suppress(NotFoundError):
                    await self.client.playlists.remove_video(playlist, record.video_id)
        return [name for name in job.playlists if name in ours or name in joined]

    async def _member(self, name: str, video_id: str) -> bool:
        """Whether the account's playlist ``name`` holds ``video_id`` already (``False``
        where there is no such playlist, or the dialect cannot list one's videos)."""
        async with self._playlist_lock:
            await self._list_playlists()
            assert self._known_playlists is not None
            playlist_id = self._playlist_ids.get(name) or self._known_playlists.get(name)
        if playlist_id is None:
            return False
        try:
            async for video in self.client.playlists.videos(playlist_id, fields=("id",)):
                if video.id == video_id:
                    return True
        except UnsupportedOperationError:
            return False
        return False

    async def _list_playlists(self) -> None:
        """The account's playlists by name, listed once per batch (under the lock)."""
        if self._known_playlists is None:
            known: dict[str, str] = {}
            async for playlist in self.client.playlists.mine(fields=("id", "name")):
                if playlist.name is not None:
                    known.setdefault(playlist.name, playlist.id)
            self._known_playlists = known

    async def _add_to_playlists(self, video_id: str, names: Iterable[str], seq: int | None) -> None:
        names = list(names)
        await self._wait_turn(seq if names else None)
        try:
            for name in names:
                await self.client.playlists.add_video(await self._playlist_id(name), video_id)
        finally:
            if seq is not None:
                await self._pass_turn(seq)

    async def _playlist_id(self, name: str) -> str:
        """The id of the account's playlist ``name``: one it has (listed once per
        batch), else one created, once per batch."""
        async with self._playlist_lock:
            if name in self._playlist_ids:
                return self._playlist_ids[name]
            await self._list_playlists()
            assert self._known_playlists is not None
            playlist_id = self._known_playlists.get(name)
            if playlist_id is None:
                playlist_id = (await self.client.playlists.create(name=name)).id
                self._known_playlists[name] = playlist_id
            self._playlist_ids[name] = playlist_id
            return playlist_id

    async def _recorded_url_key(self, key: str, url: str) -> str:
        """``key``, or the key a journal written up to 0.1.0 has this url job under (a
        digest of the whole url), so that the job is skipped or resumed there rather
        than making a second video. Looked up only, never written anew."""
        assert self._journal is not None
        if await self._journal.load(key) is not None:
            return key
        old = legacy_url_key(url)
        return old if await self._journal.load(old) is not None else key

    async def _advance(self, record: JobRecord, stage: Stage, **changes: Any) -> None:
        assert self._journal is not None
        for name, value in changes.items():
            setattr(record, name, value)
        record.stage = stage
        record.error = None
        await self._journal.save(record)

    async def _pipeline(
        self,
        job: UploadJob,
        record: JobRecord,
        local: LocalFile | FileError | None,
        subtitles: dict[str, LocalFile] | UsageError,
        seq: int | None = None,
    ) -> None:
        client = self.client
        if record.stage.rank < Stage.SUBTITLES.rank and isinstance(subtitles, UsageError):
            # Every input is checked before the first byte is sent: a broken or missing
            # subtitle file fails the job here, not after its video exists.
            raise subtitles
        if record.stage.rank < Stage.UPLOADED.rank and isinstance(local, FileError):
            raise local
        if record.stage.rank < Stage.CREATED.rank:
            # Before any address is asked for: an unknown channel, or what the client's
            # API dialect does not offer (v2: subtitle files, live, thumbnails), is
            # refused with no side effect on the platform.
            offered = internals(client).check_offered
            if job.subtitles:
                offered("upload_subtitle")
            if job.live:
                offered("make_live")
            if job.thumbnail is not None:
                offered("set_thumbnail")
            await self._check_channel(job.channel)
        if record.stage.rank < Stage.UPLOADED.rank:
            assert not isinstance(local, FileError)
            self._check_quota()
            await self._upload(job, record, local)  # None: a url job
        if record.stage.rank < Stage.CREATED.rank:
            # With nothing to do after the create (no subtitles, not live, no wait for
            # the encoding), the job is done once its video is recorded: one record,
            # not one per empty stage.
            nothing_after = (
                not job.subtitles
                and not job.live
                and not self.wait_ready
                and job.thumbnail is None
                and not job.playlists
            )
            created = Stage.DONE if nothing_after else Stage.CREATED
            done_now = {"metadata": _with_added(job)} if nothing_after else {}
            video = None
            if record.stage is Stage.CREATING or (record.runs > 1 and self._fenced()):
                # The create may have been sent before the last run stopped (or by a
                # worker that held the job before): look first.
                await self._advance(record, Stage.CREATING)  # fenced: still ours?
                found = await client.videos.find_by_tag(_tag(record.key))
                earlier = _earlier_tag(record.key)
                if not found and earlier is not None:
                    found = await client.videos.find_by_tag(earlier)
                video = found[0] if found else None
            if video is None:
                self._check_quota()
                video = await self._create(job, record)
                try:
                    await self._advance(record, created, video_id=video.id, **done_now)
                except JobLost:  # made while another worker held the job
                    await self._drop_unrecorded_video(record.key, video.id)
                    raise
            else:
                await self._advance(record, created, video_id=video.id, **done_now)
            if record.stage is Stage.DONE:
                return
        assert record.video_id is not None
        if record.stage.rank < Stage.SUBTITLES.rank:
            if job.subtitles and record.runs > 1:
                # An earlier run may have sent a subtitle and died before recording it.
                present = {
                    sub.language
                    for sub in await client.subtitles.list(record.video_id)
                    if sub.language is not None
                }
                record.subtitles_done = sorted(set(record.subtitles_done) | present)
            for spec in job.subtitles:
                if spec.language in record.subtitles_done:
                    continue
                if self._fenced():
                    await self._advance(record, Stage.CREATED)  # still ours, just before
                if spec.path is not None:
                    assert isinstance(subtitles, dict)
                    track = await internals(client).attach_subtitle(
                        record.video_id,
                        subtitles[spec.language],
                        language=check.language(spec.language),
                        dedupe=True,
                    )
                else:
                    assert spec.url is not None
                    track = await client.create_subtitle(
                        record.video_id, language=spec.language, url=spec.url, dedupe=True
                    )
                record.subtitles_done.append(check.language(spec.language))
                try:
                    await self._advance(record, Stage.CREATED)
                except JobLost:  # sent while another worker held the job
                    await self._drop_unrecorded_subtitle(record, track)
                    raise
            await self._advance(record, Stage.SUBTITLES)
        if record.stage.rank < Stage.PASSWORD.rank:
            # The password travelled with the create: the video was never public.
            await self._advance(record, Stage.PASSWORD)
        if record.stage.rank < Stage.LIVE.rank:
            if job.live:
                await client.live.convert(record.video_id)
            await self._advance(record, Stage.LIVE)
        if record.stage.rank < Stage.READY.rank:
            # The thumbnail and the playlists: both idempotent (set again, added again
            # after a crash changes nothing), so no stage of their own.
            if job.thumbnail is not None:
                await client.set_thumbnail(record.video_id, job.thumbnail)
            await self._add_to_playlists(record.video_id, job.playlists, seq)
            if self.wait_ready and not job.live:
                await client.videos.wait_until_ready(record.video_id, timeout=self.ready_timeout)
            await self._advance(record, Stage.READY)
        await self._advance(record, Stage.DONE, metadata=_with_added(job))

    async def _settled(self, key: str, stage: Stage) -> JobRecord | None:
        """The job's record once it reaches ``stage`` (written by the worker that took
        the job over), polled for at most ``_settle_for`` seconds; ``None`` if it did not."""
        assert self._journal is not None
        deadline = time.monotonic() + self._settle_for
        while True:
            record = await self._journal.load(key)
            if record is not None and record.stage.rank >= stage.rank:
                return record
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(min(0.5, max(0.05, self._settle_for / 20)))

    async def _drop_unrecorded_video(self, key: str, video_id: str) -> None:
        """This worker created ``video_id`` after losing the job: the journal is the
        truth. Once the job records its video, ours is deleted unless it is that one
        (the worker that took over found it by its tag and adopted it). Only the
        creator deletes, and only a video the journal does not hold: two workers never
        delete each other's recorded video."""
        try:
            record = await self._settled(key, Stage.CREATED)
        except asyncio.CancelledError:
            log.warning(
                "possible duplicate video %s for job %s: stopped before knowing", video_id, key
            )
            raise
        if record is None:
            log.warning(
                "possible duplicate video %s for job %s: the job records no video after %gs; kept",
                video_id,
                key,
                self._settle_for,
            )
        elif record.video_id != video_id:
            try:
                await self.client.videos.delete(video_id)
            except VidapiError as exc:
                log.warning(
                    "possible duplicate video %s for job %s: cannot delete it (%s)",
                    video_id,
                    key,
                    type(exc).__name__,
                )
            else:
                log.warning(
                    "job %s: deleted its duplicate video %s (the job's video is %s)",
                    key,
                    video_id,
                    record.video_id,
                )

    async def _drop_unrecorded_subtitle(self, mine: JobRecord, track: Subtitle) -> None:
        """This worker sent the subtitle ``track`` after losing the job. Once the job's
        subtitles are done, ours is deleted if the video has another track in its
        language (the one the worker that took over sent); kept if it is the only one
        (adopted by that worker's listing)."""
        assert mine.video_id is not None
        try:
            record = await self._settled(mine.key, Stage.SUBTITLES)
        except asyncio.CancelledError:
            log.warning(
                "possible duplicate subtitle %s for job %s: stopped before knowing",
                track.id,
                mine.key,
            )
            raise
        others = []
        if record is not None:
            others = [
                sub.id
                for sub in await self.client.subtitles.list(mine.video_id)
                if sub.language == track.language and sub.id != track.id
            ]
        if record is None or not others or track.id is None:
            if record is None:
                log.warning(
                    "possible duplicate subtitle %s for job %s: the job's subtitles are "
                    "not done after %gs; kept",
                    track.id,
                    mine.key,
                    self._settle_for,
                )
            return
        try:
            await self.client.subtitles.delete(track.id)
        except VidapiError as exc:
            log.warning(
                "possible duplicate subtitle %s for job %s: cannot delete it (%s)",
                track.id,
                mine.key,
                type(exc).__name__,
            )
        else:
            log.warning(
                "job %s: deleted its duplicate subtitle %s (%s)", mine.key, track.id, track.language
            )

    async def _check_channel(self, channel: str) -> None:
        """``upload_video``'s check of a channel against the platform's categories,
        once per distinct channel in a batch (its verdict kept)."""
        if channel not in self._channels:
            try:
                await internals(self.client).check_category(channel)
                self._channels[channel] = None
            except InvalidArgumentError as exc:
                self._channels[channel] = exc
        refused = self._channels[channel]
        if refused is not None:
            raise InvalidArgumentError("channel", refused.message)

    def _check_quota(self) -> None:
        """After the account's quota was refused, no job uploads or creates: each ends
        failed with ``QuotaExceededError`` at the stage it reached (resumable)."""
        hit = self._quota
        if hit is not None:
            not_sent = QuotaExceededError(
                "not sent: the account's quota was reached earlier in this batch",
                status=hit.status,
                error_type=hit.error_type,
                reason=hit.reason,
                retry_after=hit.retry_after,
            )
            self._not_sent.add(not_sent)  # the batch's own stop: not a platform refusal
            raise not_sent

    async def _create(self, job: UploadJob, record: JobRecord) -> Video:
        """Create the video from the uploaded file; if the platform no longer knows the
        file (an upload from an earlier run that has expired), upload it again, once."""
        for again in (False, True):
            await self._advance(record, Stage.CREATING)
            assert record.file_url is not None
            try:
                return await self.client.create_video(
                    url=record.file_url,
                    **job.metadata_arguments(),
                    dedupe_tag=_tag(record.key),
                    password=job.password,
                )
            except BadRequestError as exc:
                if again or _bad_param(exc) != "url":
                    raise
                log.info("job %s: the uploaded file is gone; uploading it again", record.key)
                local = None
                if job.path is not None:
                    local = await asyncio.to_thread(inspect_file, job.path)
                # recorded at 'creating' still: a record never moves to an earlier stage
                await self._upload(job, record, local, again=True)
        raise AssertionError("unreachable")

    def _fenced(self) -> bool:
        return hasattr(self._journal, "claim")

    async def _upload(
        self, job: UploadJob, record: JobRecord, local: LocalFile | None, *, again: bool = False
    ) -> None:
        async def mark(stage: Stage, **changes: Any) -> None:
            await self._advance(record, record.stage if again else stage, **changes)

        if local is None and job.url is not None and is_s3_url(job.url):
            local = await object_size(job.url)  # then sent as a file is, by object_send
        if local is not None:
            self._bytes_total += local.size
        sent_before = [0]
        counted = [local is not None]

        def progress(sent: int, total: int) -> None:  # only with a progress callback
            if not counted[0]:  # a url's size is known once its answer has come
                self._bytes_total += total
                counted[0] = True
            if sent < sent_before[0]:
                sent_before[0] = 0  # a retry starts the file again: its bytes go out again
            self._bytes_sent += sent - sent_before[0]
            sent_before[0] = sent
            self._files[record.key] = (job.where, sent, total)
            self._report()

        # Without a callback nobody sees the counts: the upload then posts nothing to
        # the loop as it goes, and its thread never waits for the loop before the
        # body's last bytes (the barrier that lets a callback's error stop the body).
        watch = progress if self._progress_cb is not None else None

        if local is None:
            assert job.url is not None
            uploaded = await self.client.uploads.from_url(
                job.url,
                headers=job.headers,
                upload_session=await self._spares.take(),
                progress=watch,
                read_size=self.read_size,
            )
            self._files.pop(record.key, None)
            self._spares.ahead(self._waiting)
            await mark(Stage.UPLOADED, file_url=uploaded.url, upload_url=None)
            return

        # The file was checked just above: the client does not check it again.
        kwargs: dict[str, Any] = {
            "progress": watch,
            "read_size": self.read_size,
            "range_size": self.range_size,
            "filename": None,
            "upload_session": None,
            "resume": False,
            "chunked": False,
            "workers": self.workers,
        }
        if self.chunked if self.chunked is not None else self.client.uploads.chunks(local.size):
            kwargs["chunked"] = True
            if (
                not again
                and record.stage is Stage.UPLOADING
                and record.upload_url
                and record.progress_url
            ):
                session = UploadSession(record.upload_url, record.progress_url)
                try:
                    uploaded = await object_send(
                        self.client,
                        job,
                        local,
                        {**kwargs, "upload_session": session, "resume": True},
                    )
                except VidapiError as exc:  # the old address is gone or refused
                    log.info(
                        "job %s: cannot resume its upload (%s); starting over",
                        record.key,
                        type(exc).__name__,
                    )
                else:
                    await mark(Stage.UPLOADED, file_url=uploaded.url, upload_url=None)
                    return
            session = await self._spares.take()
            await mark(
                Stage.UPLOADING,
                upload_url=session.upload_url,
                progress_url=session.progress_url,
            )
            kwargs["upload_session"] = session
        else:
            kwargs["upload_session"] = await self._spares.take()
        uploaded = await object_send(self.client, job, local, kwargs)
        self._files.pop(record.key, None)  # off the list of uploads in flight
        self._spares.ahead(self._waiting)  # the next job's address, during this create
        await mark(Stage.UPLOADED, file_url=uploaded.url, upload_url=None)

    def _goes_back(self, error: BaseException | None) -> bool:
        """A job that failed with ``error`` goes back to a shared queue (``_requeue``)."""
        return error is not None and self._requeue is not None and self._requeue(error)

    def _count(self, name: str) -> None:
        self._counts[name] += 1
        self._report()

    def _report(self) -> None:
        if self._progress_cb is None:
            return
        progress = BatchProgress(
            started=self._counts["started"],
            done=self._counts["done"],
            skipped=self._counts["skipped"],
            failed=self._counts["failed"],
            updated=self._counts["updated"],
            bytes_sent=self._bytes_sent,
            bytes_total=self._bytes_total,
            elapsed=time.monotonic() - self._started_at,
            files=dict(self._files),
        )
        outside_job(self._progress_cb, progress)


def _bad_param(exc: BadRequestError) -> str | None:
    """The parameter a 400 names (``error.error_data.param``), if any."""
    error = exc.body.get("error")
    data = error.get("error_data") if isinstance(error, Mapping) else None
    param = data.get("param") if isinstance(data, Mapping) else None
    return param if isinstance(param, str) else None


_TAG_SAFE = re.compile(r"[A-Za-z0-9_-]{1,80}")


Prepared = tuple[str, LocalFile | FileError | None, dict[str, LocalFile] | UsageError, str | None]
"""What ``_prepare`` finds of a job on disk."""


@attrs.define
class _Checks:
    """A queued job, and its disk checks once done (``_check_all``)."""

    job: UploadJob
    done: asyncio.Future[Prepared]


async def _check_all(group: list[_Checks]) -> None:
    """The disk checks of ``group``'s jobs in one trip to a worker thread, each handed
    to its job's future. A failure (a bug: ``_prepare`` returns the checks' failures)
    is each job's; cancelled (the batch stopped), the jobs' futures are cancelled."""
    try:
        found = await asyncio.to_thread(_prepare_all, [checks.job for checks in group])
    except asyncio.CancelledError:
        for checks in group:
            checks.done.cancel()
        raise
    except Exception as exc:
        for checks in group:
            if not checks.done.done():
                checks.done.set_exception(exc)
                checks.done.exception()  # its worker raises it; not "never retrieved"
        return
    for checks, prepared in zip(group, found, strict=True):
        if not checks.done.done():
            checks.done.set_result(prepared)


def _prepare_all(jobs: list[UploadJob]) -> list[Prepared]:
    """``_prepare`` for each job (blocking: in a worker thread)."""
    return [_prepare(job) for job in jobs]


def _prepare(job: UploadJob) -> Prepared:
    """Everything a job needs from the disk, in one trip to a worker thread (blocking):
    its key, its file checked, its subtitle files checked (or the first broken one),
    and the key of a failure recorded while its file was missing, to forget. The
    checks' failures are returned, not raised: a job the journal says is done needs
    neither. A missing file's job has ``missing_key``: its failure is recorded there,
    and a re-run tries it again."""
    local: LocalFile | FileError | None = None
    stale = None
    if job.path is None:
        key = job.key if job.key is not None else url_key(job.url or "")
    else:
        try:
            local = inspect_file(job.path)
        except FileError as exc:
            local = exc
        if job.key is not None:
            key = job.key
        else:
            try:
                key, stale = file_key(job.path), missing_key(job.path)
            except OSError:
                key = missing_key(job.path)
                if not isinstance(local, FileError):
                    local = FileError(job.where, "no such file")
    subtitles: dict[str, LocalFile] = {}
    for spec in job.subtitles:
        if spec.path is not None:
            try:
                subtitles[spec.language] = check_srt_file(spec.path)
            except (FileError, SubtitleFileError) as exc:
                return key, local, exc, stale
    return key, local, subtitles, stale


def _tag(key: str) -> str:
    """The tag that marks the video a job created: ``vidapi-`` and the key itself when
    it is ASCII letters, digits, '-' and '_' (80 at most), else ``vidapih-`` and a hash
    of the key (a prefix no key's own tag has)."""
    if _TAG_SAFE.fullmatch(key):
        return f"vidapi-{key}"
    return f"vidapih-{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def _earlier_tag(key: str) -> str | None:
    """The tag earlier releases gave a key that is hashed (``vidapi-`` and the hash):
    a job they left at ``creating`` looks its video up by it too."""
    if _TAG_SAFE.fullmatch(key):
        return None
    return f"vidapi-{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def _now(job: UploadJob, record: JobRecord, *, quiet: bool = False) -> dict[str, Any]:
    """The metadata of a done job now, to compare with its record: what a re-run does
    not change (a password given, live, the subtitles) is kept as recorded, and a
    change there is said at WARNING (not applied, never silently)."""
    new = job.metadata()
    old = record.metadata
    if old is not None and isinstance(old.get("kept"), Mapping) and old["kept"] != new["kept"]:
        if not quiet:
            names = sorted(n for n in new["kept"] if old["kept"].get(n) != new["kept"][n])
            log.warning(
                "job %s is done: a re-run does not change its %s (not applied; change the "
                "video with the client, or give the job a new key for a new video)",
                record.key,
                ", ".join("password" if n == "protected" else n for n in names),
            )
        new["kept"] = old["kept"]
    return new


def _with_added(job: UploadJob) -> dict[str, Any]:
    """The metadata a job's first run records: the video is new, so every playlist it
    is in, the batch put it in (``added``: the ones a re-run may take it out of)."""
    metadata = job.metadata()
    if job.playlists:
        metadata["added"] = list(job.playlists)
    return metadata


def _changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether a done job's recorded metadata (``None``: recorded before journals kept
    it, so unknown) differs from its metadata now (``added`` is the batch's own)."""
    if old is None:
        return True
    return {k: v for k, v in old.items() if k != "added"} != {
        k: v for k, v in new.items() if k != "added"
    }


async def _numbered(jobs: AsyncIterator[UploadJob]) -> AsyncIterator[tuple[int, UploadJob]]:
    seq = 0
    async for job in jobs:
        yield seq, job
        seq += 1


async def _each(jobs: Iterable[UploadJob] | AsyncIterable[UploadJob]) -> AsyncIterator[UploadJob]:
    if isinstance(jobs, AsyncIterable):
        async for job in jobs:
            yield job
    else:
        for job in jobs:
            yield job
