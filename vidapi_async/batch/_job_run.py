"""One job of a ``BatchUploader`` from its record to its result (``JobRunning``, the
runner's base: the job's checks against the journal, its steps run, its failure
recorded), and a batch's plan read from the same records."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from contextlib import nullcontext

from .._client import Client
from .._errors import (
    AccountError,
    AccountNotSetError,
    InvalidArgumentError,
    QuotaExceededError,
    SourceError,
    UsageError,
    VidapiError,
)
from .._internals import internals
from .._transfer.files import LocalFile
from ._accounts import account_refused, acting_for, token_in
from ._adopt import one_key_advice
from ._disk_checks import Prepared, prepare
from ._jobs import (
    BatchPlan,
    JobResult,
    JobStatus,
    UploadJob,
    job_source,
    legacy_url_key,
    password_digests,
    shown_source,
    url_key,
)
from ._journal import JobLost, JobRecord, Journal, Stage
from ._origins import same_origin
from ._playlists import Playlists
from ._progress import Tally
from ._quota import QuotaStop
from ._stages import CHECKS, NOT_HELD, JobRun, Pipeline, run_steps
from ._updates import changed, done_before, metadata_now

__all__ = ["JobRunning", "each"]

log = logging.getLogger("vidapi_async.batch")


class JobRunning:
    """``BatchUploader``'s part that takes one job from its record to its result (its
    steps run by ``run_steps``), and reads the same records for ``plan``."""

    client: Client
    adopt_only: bool
    chunked: bool | None
    workers: int
    read_size: int | None
    range_size: int | None
    wait_ready: bool
    ready_timeout: float
    _journal: Journal | None
    _pipeline: Pipeline | None
    _tally: Tally
    _in_flight: set[str]
    _playlists: Playlists
    _quota: QuotaStop
    _requeue: Callable[[BaseException], bool] | None

    async def _held(self, job: UploadJob, key: str, origin: str | None) -> bool | None:
        """Whether the platform holds a video the job would adopt (listed under the
        job's own account's token); ``None``: one made from another manifest or feed,
        which refuses the job."""
        assert self._pipeline is not None
        with acting_for(self.client, job):
            try:
                return await self._pipeline.adoption.find(job, key, origin) is not None
            except InvalidArgumentError:
                return None

    async def _plan(
        self,
        jobs: Iterable[UploadJob] | AsyncIterable[UploadJob],
        origin: str | None,
    ) -> BatchPlan:
        """``BatchUploader.plan``'s reading: nothing written."""
        if self._journal is None:
            raise UsageError("use the BatchUploader as 'async with BatchUploader(...)'")
        assert self._pipeline is not None
        create: list[str] = []
        adopt: list[str] = []
        update: list[str] = []
        skip: list[str] = []
        refuse: list[str] = []
        refused_sources: dict[str, str] = {}
        async for job in each(jobs):
            if not isinstance(job, UploadJob):
                raise InvalidArgumentError("jobs", f"expected UploadJob, got {job!r}")
            prepared = await asyncio.to_thread(prepare, job)
            key = prepared[0]
            if job.url is not None and key == url_key(job.url):
                key = await _recorded_url_key(self._journal, key, job.url)
            record = await self._journal.load(key)
            if self.adopt_only:  # as the run: a done job skipped, any other adopted or failed
                if record is not None and record.stage is Stage.DONE:
                    skip.append(key)
                elif await self._held(job, key, origin_for(record, origin)):
                    adopt.append(key)
                else:
                    refuse.append(key)
                    refused_sources[key] = NOT_HELD
                continue
            new = record is None or record.stage.rank < Stage.CREATING.rank  # no create sent
            held = await self._held(job, key, origin_for(record, origin)) if new else False
            if held:
                adopt.append(key)
            elif held is None:
                refuse.append(key)  # another manifest's or feed's video
            elif record is None or record.stage is not Stage.DONE:
                why = _disk_refusal(prepared, record) or await source_refusal(
                    self.client, job, record
                )
                if why is not None:  # the run would fail it at its source
                    refuse.append(key)
                    refused_sources[key] = why
                else:
                    create.append(key)
            elif _refusal(record, job, origin) is not None:
                refuse.append(key)  # never an update of another source's or account's video
            elif await _changed_now(job, record):
                update.append(key)
            else:
                skip.append(key)
        return BatchPlan(
            create=tuple(create),
            update=tuple(update),
            skip=tuple(skip),
            adopt=tuple(adopt),
            refuse=tuple(refuse),
            refused_sources=refused_sources,
        )

    async def _run_job_inner(
        self,
        job: UploadJob,
        seq: int | None = None,
        checked: Awaitable[Prepared] | None = None,
        origin: str | None = None,
    ) -> JobResult:
        """``checked``: the job's disk checks under way (else one trip to a worker
        thread); ``origin``: its manifest or feed (``run(origin=)``, a queue spec's)."""
        assert self._journal is not None
        if checked is None:
            checked = asyncio.to_thread(prepare, job)
        key, local, subtitles, stale = await checked
        if job.url is not None and key == url_key(job.url):  # the default (a shared queue's too)
            key = await _recorded_url_key(self._journal, key, job.url)
        forget = getattr(self._journal, "forget", None)
        if stale is not None and forget is not None:
            await forget(stale)  # the failure recorded while its file was missing
        if key in self._in_flight:
            self._tally.count("failed")
            twice = InvalidArgumentError("key", f"another job in this batch has key {key!r}")
            return JobResult(job, key, JobStatus.FAILED, None, Stage.PENDING, twice)
        try:
            token_in(job.account)
        except AccountNotSetError as exc:  # its account's variable is not set (here, now)
            return await self._not_set(job, key, exc)
        self._in_flight.add(key)
        assert self._pipeline is not None
        self._pipeline.machinery.observer.label_job(
            key, local.size if isinstance(local, LocalFile) else None
        )
        claim = getattr(self._journal, "claim", None)  # a fenced journal (PostgreSQL)
        try:
            with acting_for(self.client, job):  # its account's token, read now
                if claim is not None:
                    record = await claim(key)
                else:
                    record = await self._journal.load(key) or JobRecord(key)
                refused = _refusal(record, job, origin)
                if refused is not None:
                    self._tally.count("failed")
                    log.warning("job %s refused: %s", key, refused.message)
                    return JobResult(
                        job,
                        key,
                        JobStatus.FAILED,
                        record.video_id,
                        record.stage,
                        refused,
                        record.runs,
                    )
                if record.stage is Stage.DONE and self.adopt_only:  # nothing sent
                    self._tally.count("skipped")
                    return JobResult(
                        job, key, JobStatus.SKIPPED, record.video_id, record.stage, runs=record.runs
                    )
                source, moved = job_source(job), None
                if record.source is not None and record.source != source:
                    moved = shown_source(record.source)  # the same origin's file, moved
                    record.source = source
                elif record.source is None and record.stage is not Stage.DONE:
                    record.source, record.origin = source, origin  # saved as it goes
                if record.video_id is None and record.stage is not Stage.DONE:
                    record.account = job.account or ""  # whose video it will be
                if record.stage is Stage.DONE:
                    return await done_before(
                        self.client,
                        self._journal,
                        self._playlists,
                        self._tally,
                        job,
                        record,
                        seq,
                        moved=moved,
                    )
                if claim is None:
                    record.runs += 1
                return await self._steps(JobRun(job, record, local, subtitles, seq))
        finally:
            self._in_flight.discard(key)
            self._tally.files.pop(key, None)

    async def _not_set(self, job: UploadJob, key: str, error: AccountNotSetError) -> JobResult:
        """A job whose account's variable is not set here: its failure recorded (unless
        it is done), so that ``vidapi status`` and the report see it; counted failed, or
        handed back to a shared queue (another worker may have the variable)."""
        assert self._journal is not None
        claim = getattr(self._journal, "claim", None)
        try:
            record = await claim(key) if claim is not None else await self._journal.load(key)
            record = record or JobRecord(key)
            if record.stage is not Stage.DONE:
                record.error = f"{type(error).__name__}: {error}"
                await self._journal.save(record)
        except JobLost:
            return self._lost(JobRun(job, JobRecord(key)))
        if not self._goes_back(error):
            self._tally.count("failed")
            log.warning("job %s failed: %s", key, error)
        return JobResult(
            job, key, JobStatus.FAILED, record.video_id, record.stage, error, record.runs
        )

    async def _steps(self, run: JobRun) -> JobResult:
        """A job not done through its steps (``run_steps``), and its result: a failure
        recorded, counted (or handed back to a shared queue) and said."""
        assert self._journal is not None
        assert self._pipeline is not None
        job, record = run.job, run.record
        self._pipeline.uploads = {
            "chunked": self.chunked,
            "workers": self.workers,
            "read_size": self.read_size,
            "range_size": self.range_size,
        }
        self._pipeline.ready_timeout = self.ready_timeout if self.wait_ready else None
        self._tally.count("started")
        try:
            if self.adopt_only:  # the checks, then adopted (or refused) whatever its stage
                await run_steps(self._pipeline, run, CHECKS)
                await self._pipeline.adopt(run)
            else:
                await run_steps(self._pipeline, run)
        except VidapiError as raised:
            exc = account_refused(job, raised)  # an account's token refused: its alone
            if isinstance(exc, QuotaExceededError) and self._quota.refused(exc, job.account):
                internals(self.client).observer.quota_refused()  # each refusal
            record.error = f"{type(exc).__name__}: {exc}"
            try:
                await self._journal.save(record)
            except JobLost:
                return self._lost(run)
            if self._goes_back(exc):
                self._tally.count("started", -1)  # to be run again: not this one's
            else:
                self._tally.count("failed")
                at = run.doing or record.stage
                log.warning("job %s failed at %s: %s", record.key, at, record.error)
            return JobResult(
                job,
                record.key,
                JobStatus.FAILED,
                record.video_id,
                record.stage,
                exc,
                record.runs,
                failed_at=run.doing,
            )
        except JobLost:
            return self._lost(run)
        finally:
            await self._pipeline.give_back(run)
        status = JobStatus.DONE if run.adopted is None else JobStatus.ADOPTED
        self._tally.count(status.value)
        return JobResult(job, record.key, status, record.video_id, record.stage, runs=record.runs)

    def _lost(self, run: JobRun) -> JobResult:
        record = run.record
        log.warning("lost job %s to another worker", record.key)
        return JobResult(
            run.job, record.key, JobStatus.LOST, record.video_id, record.stage, runs=record.runs
        )

    def _goes_back(self, error: BaseException | None) -> bool:
        """A job that failed with ``error`` goes back to a shared queue (``_requeue``)."""
        return error is not None and self._requeue is not None and self._requeue(error)


def _disk_refusal(prepared: Prepared, record: JobRecord | None) -> str | None:
    """Why the run would fail a job at its disk checks (its file or a subtitle file
    missing or unreadable), as ``prepare`` found them; ``None``: it would not (or the
    file is uploaded already)."""
    _, local, subtitles, _ = prepared
    rank = Stage.PENDING.rank if record is None else record.stage.rank
    if isinstance(local, Exception) and rank < Stage.UPLOADED.rank:
        return str(local)
    if isinstance(subtitles, Exception) and rank < Stage.CREATED.rank:
        return str(subtitles)
    return None


async def source_refusal(client: Client, job: UploadJob, record: JobRecord | None) -> str | None:
    """Why the run would refuse one of the urls it would fetch for ``job`` (its
    video's, before it is uploaded; its thumbnail's and subtitles', before its video is
    created) by the client's source policy and its feed's origin, judged as the fetch
    judges its first request (resolved here, nothing connected); ``None``: none is."""
    rank = Stage.PENDING.rank if record is None else record.stage.rank
    if job.channel is not None and rank < Stage.CREATING.rank:
        try:  # the platform's category list, as the create checks it (one read a run)
            await internals(client).check_category(job.channel)
        except InvalidArgumentError as exc:
            return str(exc)
    urls = [job.url] if rank < Stage.UPLOADED.rank else []
    if rank < Stage.CREATED.rank:
        urls += [job.thumbnail, *(spec.url for spec in job.subtitles)]
    with internals(client).named_by(job.origin) if job.origin is not None else nullcontext():
        for url in urls:
            if url is None:
                continue
            try:
                await internals(client).judge(url)
            except SourceError as exc:
                return str(exc)
    return None


async def _changed_now(job: UploadJob, record: JobRecord) -> bool:
    """Whether a done job's metadata differs from its record's (its password's digest
    compared off the loop first)."""
    await password_digests(job, record.metadata)
    return changed(record.metadata, metadata_now(job, record, quiet=True))


def origin_for(record: JobRecord | None, origin: str | None) -> str | None:
    """The origin a job's video is tagged with: the one its record holds (the manifest
    or feed that first ran it), else the run's."""
    return record.origin if record is not None and record.source is not None else origin


def _refusal(record: JobRecord, job: UploadJob, origin: str | None) -> InvalidArgumentError | None:
    """Why ``job`` may not run under ``record``: another source's key, or a video of
    another account."""
    return _other_source(record, job, origin) or _other_account(record, job)


def _other_account(record: JobRecord, job: UploadJob) -> AccountError | None:
    """Why ``job`` may not run under ``record``: its video was made by another account
    (a row's ``account`` changed since). Its video stays that account's: moving videos
    between accounts is not supported (neither a skip nor an update under the wrong
    token). ``None`` for a record that does not say (made before journals kept it)."""
    was, now = record.account, job.account or ""
    if was is None or was == now or (record.video_id is None and record.stage is not Stage.DONE):
        return None

    def named(account: str) -> str:
        return f"the account of {account}" if account else "the client's own account"

    return AccountError(
        f"key {record.key!r}: its video {record.video_id} belongs to {named(was)}; this "
        f"job names {named(now)}: moving videos between accounts is not supported (give "
        "the row its account back, or a key of its own for a new video)",
        variable=job.account,
    )


def _other_source(
    record: JobRecord, job: UploadJob, origin: str | None
) -> InvalidArgumentError | None:
    """Why ``job`` may not run under ``record`` (its key): the record was made from
    another source by another manifest or feed (or by jobs of no known origin). A key
    is one video: never re-uploaded, never an update of its video from another file."""
    if record.source is None or record.source == job_source(job):
        return None
    if same_origin(record.origin, origin):
        return None  # the same manifest or feed (an earlier release's form too): moved

    def named(what: str | None) -> str:
        return "no manifest named" if what is None else what

    return InvalidArgumentError(
        "key",
        f"key {record.key!r} is {record.stage} from {shown_source(record.source)} "
        f"({named(record.origin)}); this job gives it {shown_source(job_source(job))} "
        f"({named(origin)}): {one_key_advice(record.origin)}",
    )


async def _recorded_url_key(journal: Journal, key: str, url: str) -> str:
    """``key``, or the key a journal written up to 0.1.0 has this url job under (a
    digest of the whole url), so that the job is skipped or resumed there rather
    than making a second video. Looked up only, never written anew."""
    if await journal.load(key) is not None:
        return key
    old = legacy_url_key(url)
    return old if await journal.load(old) is not None else key


async def each(jobs: Iterable[UploadJob] | AsyncIterable[UploadJob]) -> AsyncIterator[UploadJob]:
    """The jobs of a plain or an async iterable, as an async iterator."""
    if isinstance(jobs, AsyncIterable):
        async for job in jobs:
            yield job
    else:
        for job in jobs:
            yield job
