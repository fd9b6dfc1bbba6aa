"""A shared queue's enqueue: each job's spec kept in the journal's schema (table
``specs``) and a queue job deferred for its key, unless the key is done, queued or
running already; ``batch_size`` jobs per transaction, enqueuers of one queue taking turns
per batch (an advisory lock), so that one spec per key is decided."""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import os
from collections.abc import AsyncIterable, Iterable
from typing import TYPE_CHECKING, Any, Final

import attrs

from .._errors import FileError, UsageError
from .._transfer.files import inspect_file
from ._jobs import (
    METADATA_FIELDS,
    SubtitleSpec,
    UploadJob,
    file_key,
    missing_key,
    password_digest,
    same_password,
    source_identity,
    url_key,
)
from ._postgres import PostgresJournal
from ._runner import each

if TYPE_CHECKING:
    from ._queue import App

__all__ = ["TASK", "Enqueued", "Enqueuer", "job_of", "lock_of", "spec_of"]

TASK = "vidapi.pipeline"
"""The queue's task: one job, by its key, through the batch's pipeline."""

log = logging.getLogger("vidapi_async.worker")


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
    refused: list[str] = attrs.field(factory=list)
    """Keys the queue holds (done, waiting or running) for a job of another manifest or
    feed (another ``origin``): one key is one video, so these are refused (not in
    ``changed``); give one of the sources keys of its own."""


class Enqueuer:
    """The enqueue of one ``SharedBatch`` (its queue app, journal and queue name)."""

    def __init__(self, app: App, journal: PostgresJournal, queue: str) -> None:
        self.app = app
        """The procrastinate app of the shared batch (``_queue``)."""
        self.journal = journal
        """The shared batch's journal: the specs beside its jobs."""
        self.queue = queue
        """The queue's name."""
        self._legacy_gone = False
        """No job of release 0.1.0 waited at this enqueue's last look (none is queued
        any more: not looked for again)."""

    async def enqueue(
        self,
        jobs: Iterable[UploadJob] | AsyncIterable[UploadJob],
        *,
        batch_size: int,
        origin: str | None = None,
    ) -> Enqueued:
        """``SharedBatch.enqueue``: ``batch_size`` jobs per ``_enqueue_locked``."""
        added = already = 0
        unreadable: list[str] = []
        changed: list[str] = []
        updating: list[str] = []
        refused: list[str] = []
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
                spec = json.dumps(spec_of(job, origin))
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
                others = await self._other_origins(differ, specs)
                refused.extend(k for k in others if k not in refused)
                changed.extend(k for k in differ if k not in changed and k not in others)
                updating.extend(updates)

        async for job in each(jobs):
            chunk.append(job)
            if len(chunk) >= batch_size:
                await flush()
        if chunk:
            await flush()
        return Enqueued(added, already, unreadable, changed, updating, refused)

    async def _other_origins(self, keys: list[str], specs: dict[str, str]) -> list[str]:
        """Of ``keys`` (kept specs that differ), those kept for another manifest or feed
        than the one enqueuing them now (both origins known, not equal)."""
        if not keys:
            return []
        q = self.journal.statement
        rows = await self.journal.fetchall(
            q("select key, spec from {s}.specs where key = any(%s)"), (keys,)
        )
        others = []
        for key, stored in rows:
            kept = origin_in(json.loads(stored) if isinstance(stored, str) else stored)
            now = origin_in(json.loads(specs[key]))
            if kept is not None and now is not None and kept != now:
                others.append(key)
        return sorted(others)

    async def _enqueue_locked(self, specs: dict[str, str]) -> tuple[int, list[str], list[str]]:
        """``_enqueue_batch`` in one transaction holding this queue's enqueue lock, on
        the lock's own connection: two hosts enqueuing one key agree on one spec (the
        first one's; the second sees the job queued and is told its spec differs). A
        connection lost meanwhile (a restart) undoes the transaction, and the step is
        done again from taking the lock; the lock is the server's, released with the
        transaction or with a process that dies."""
        import psycopg

        from ._queue import DeferRefused

        journal = self.journal

        async def once() -> tuple[int, list[str], list[str]]:
            conn = await journal.connect()
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
        except DeferRefused as exc:  # inside procrastinate's insert of a job
            raise journal.refused(exc.error, exc.key) from None

    async def _record_missing(self, failed: dict[str, str], found: list[str]) -> None:
        """Jobs whose file is missing: failed in the journal (``status`` counts them, a
        run that finds the file does them); those whose file is there now: their
        failure forgotten. One statement each, only when there is something to write."""
        q = self.journal.statement
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
        stored_of, done, running, legacy = await self._facts(specs, conn)
        differ: list[str] = []
        keep_old: list[str] = []  # there, with no spec kept: this one is kept
        candidates = _candidates(specs, stored_of, done, running, differ, keep_old)
        refused = await self._defer_checked(conn, candidates, stored_of, done)
        if refused is None:
            log.debug("enqueue: a job of the batch started or finished meanwhile; again")
            return None
        deferred = [key for key in candidates if key not in refused]
        updates: list[str] = []
        for key in candidates:
            stored = stored_of.get(key)
            if key not in refused:
                if key in done:
                    updates.append(key)
                continue
            if lock_of(self.queue, key) in legacy:
                await self._check_lock_holder(key)
            if stored is None:
                keep_old.append(key)
            elif (old := json.loads(stored)) != as_stored(old, json.loads(specs[key])):
                differ.append(key)  # waiting: its spec is kept
        await self._keep_specs(conn, specs, deferred, keep_old)
        differ.sort()
        return len(deferred), differ, updates

    async def _facts(
        self, specs: dict[str, str], conn: Any
    ) -> tuple[dict[str, str], set[str], set[str], dict[str, str]]:
        """Of the batch's keys: the specs kept, the keys done, the keys running (with
        those of 0.1.0's waiting jobs on the queue ``vidapi``), and 0.1.0's waiting
        jobs (lock: key)."""
        from ._queue import legacy_waiting, running_keys

        keys = list(specs)
        cursor = await conn.execute(
            self.journal.statement(
                "select n.k, s.spec, "
                "exists(select 1 from {s}.jobs where key = n.k and stage = 'done') "
                "from unnest(%s::text[]) n(k) left join {s}.specs s on s.key = n.k"
            ),
            (keys,),
        )
        facts = await cursor.fetchall()
        stored_of = {key: stored for key, stored, _ in facts if stored is not None}
        done = {key for key, _, is_done in facts if is_done}
        running = await running_keys(self.app, self.queue, keys)
        legacy: dict[str, str] = {}  # waiting jobs of release 0.1.0: lock -> key
        if not self._legacy_gone:
            legacy = await legacy_waiting(self.app)
            self._legacy_gone = not legacy
        if self.queue == "vidapi":  # 0.1.0's jobs are this queue's
            running |= {key for key in legacy.values() if key in specs}
        return stored_of, done, running, legacy

    async def _defer_checked(
        self, conn: Any, candidates: list[str], stored_of: dict[str, str], done: set[str]
    ) -> set[str] | None:
        """Defer the jobs of ``candidates`` in a savepoint: the keys refused (a job of
        theirs waits), or ``None`` when one deferred started or finished meanwhile
        (the savepoint undone)."""
        from ._queue import defer_jobs, new_job, queue_counts, running_keys, waiting_keys

        app = self.app
        jobs = {key: new_job(TASK, self.queue, lock_of(self.queue, key), key) for key in candidates}
        # likely waiting (a spec kept, not done): together, then one at a time; the
        # others together, halves apart when refused. Many likely waiting on a short
        # queue: its waiting jobs listed instead (cheaper than a statement per key).
        alone = [key for key in candidates if key in stored_of and key not in done]
        together = [key for key in candidates if key not in stored_of or key in done]
        listed: set[str] = set()
        if alone and (await queue_counts(app, self.queue))[0] < _LISTING_PER_KEY * len(alone):
            listed = await waiting_keys(app, self.queue, alone)
            together += [key for key in alone if key not in listed]
            alone = []
        try:
            async with conn.transaction():  # a savepoint: undone if a job moved meanwhile
                refused = listed | await defer_jobs(app, conn, together, jobs)
                refused |= await defer_jobs(app, conn, alone, jobs, halves=False)
                deferred = [key for key in candidates if key not in refused]
                if deferred:
                    started = await running_keys(app, self.queue, deferred)
                    finished = await conn.execute(
                        self.journal.statement(
                            "select key from {s}.jobs "
                            "where key = any(%s::text[]) and stage = 'done'"
                        ),
                        ([key for key in deferred if key not in done],),
                    )
                    if started or await finished.fetchall():
                        raise _Moved
        except _Moved:
            return None
        return refused

    async def _keep_specs(
        self, conn: Any, specs: dict[str, str], deferred: list[str], keep_old: list[str]
    ) -> None:
        """The specs of the jobs deferred kept (replacing any), and those of the jobs
        there with no spec kept (a job of 0.1.0)."""
        q = self.journal.statement
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

    async def _check_lock_holder(self, key: str) -> None:
        """The queueing lock of ``key`` refused: fine if a job of this queue for this key
        holds it (queued meanwhile), else a job of another queue does (queued by a
        release that gave the queue ``vidapi`` bare keys): ``JournalError`` naming it."""
        from ._queue import lock_held_by

        lock = lock_of(self.queue, key)
        if await lock_held_by(self.app, self.queue, lock, key):
            return
        raise self.journal.failure(
            f"job {key[:40]}: its queue lock {lock[:60]!r} is held by another queue's "
            "job (one queued on queue 'vidapi' by a release up to 0.1.0, under that "
            "key); run that queue until it is empty, then enqueue again"
        )


def _candidates(
    specs: dict[str, str],
    stored_of: dict[str, str],
    done: set[str],
    running: set[str],
    differ: list[str],
    keep_old: list[str],
) -> list[str]:
    """The keys of the batch to defer unless a job of theirs waits: not running nor
    done, or done with a change an update applies. Those running or done with a spec
    kept that differs go to ``differ``; those with no spec kept, to ``keep_old``.
    Specs compared here, not as jsonb: a path that is not UTF-8 is a lone surrogate's
    escape in its spec, which jsonb refuses."""
    candidates: list[str] = []
    for key in specs:
        stored = stored_of.get(key)
        if key not in running and key not in done:
            candidates.append(key)
        elif stored is None:
            keep_old.append(key)
        elif (old := json.loads(stored)) != (new := as_stored(old, json.loads(specs[key]))):
            if key not in running and _metadata_only(old, new):
                candidates.append(key)  # an update, unless one waits
            else:
                differ.append(key)
    return candidates


def spec_of(job: UploadJob, origin: str | None = None) -> dict[str, Any]:
    """The spec a queue keeps of ``job``; ``origin``: the manifest or feed it was
    enqueued from (``batch_origin``; kept out when none, as in specs of earlier
    releases)."""
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
        "account": job.account,  # a variable's name: each worker reads its own environment
        "profile": job.profile,
        # the feed's address: a worker judges the job's sources by it (kept out when
        # none, so that a spec enqueued before there was one compares equal)
        **({"origin": job.origin} if job.origin is not None else {}),
        **({BATCH_ORIGIN: origin} if origin is not None else {}),
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


def lock_of(queue: str, key: str) -> str:
    """The procrastinate lock (and queueing lock) of ``key`` on ``queue``: prefixed with
    the queue's name on every queue (procrastinate's locks span every queue; a queue's
    name holds no ``/``, so two queues' locks never overlap). Releases up to 0.1.0 gave
    the queue ``vidapi`` the bare key: such jobs still run (a worker reads the key from
    the job's arguments; a takeover keeps the job's lock), and one whose bare key is
    another queue's lock is named when that lock is refused (``_check_lock_holder``)."""
    return f"{queue}/{key}"


_URLS_CLEARED: Final = "urls_cleared"
"""In a done job's spec: its urls are kept without their credentials (``cleared``)."""


def _urls_without_credentials(values: dict[str, Any]) -> dict[str, Any]:
    """A spec's values with each http(s) url (the video's, the thumbnail's, the
    subtitles') as ``source_identity`` gives it: no ``user:password@``, no signature
    or credential in the query (what its key and the journal name it by)."""

    def bare(url: Any) -> Any:
        if isinstance(url, str) and url.lower().startswith(("http://", "https://")):
            return source_identity(url)
        return url

    out: dict[str, Any] = dict(values)
    for name in ("url", "thumbnail"):
        if name in values:
            out[name] = bare(values[name])
    if isinstance(values.get("subtitles"), list):
        out["subtitles"] = [
            {**s, "url": bare(s["url"])} if isinstance(s, dict) and "url" in s else s
            for s in values["subtitles"]
        ]
    return out


def cleared(spec: str) -> str | None:
    """A done job's spec without its password (a salted digest of it kept in
    ``password_digest``, to see a re-enqueue unchanged) and its urls without their
    credentials (``urls_cleared``: a re-enqueue's urls are compared without theirs), or
    ``None`` when it holds neither: the queue keeps them in clear only while a job
    needs them."""
    values = json.loads(spec)
    bare = _urls_without_credentials(values)
    if bare != values:
        values = {**bare, _URLS_CLEARED: True}
    password = values.get("password")
    if isinstance(password, str):
        values["password"] = None
        values["password_digest"] = password_digest(password)
    return None if values == json.loads(spec) else json.dumps(values)


def as_stored(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new``, a spec enqueued, as ``old`` (the one kept) would hold it if it is the
    same job: a password that matches ``old``'s digest (its password cleared once
    done) compared as that digest."""
    if old.get(_URLS_CLEARED) is True:  # compared without their credentials
        new = {**_urls_without_credentials(new), _URLS_CLEARED: True}
    if BATCH_ORIGIN not in old:  # kept by an earlier release: the same job, of no origin
        new = {k: v for k, v in new.items() if k != BATCH_ORIGIN}
    kept, password = old.get("password_digest"), new.get("password")
    if not isinstance(kept, str) or not isinstance(password, str):
        return new
    if not same_password(kept, password):  # not the same, or no digest of ours
        return new
    return {**new, "password": None, "password_digest": kept}


BATCH_ORIGIN: Final = "batch_origin"
"""The key of a spec's manifest or feed (``SharedBatch.enqueue(origin=)``)."""


def origin_in(spec: dict[str, Any]) -> str | None:
    """The manifest or feed a spec was enqueued from (``None``: none given, or a spec
    of an earlier release)."""
    origin = spec.get(BATCH_ORIGIN)
    return origin if isinstance(origin, str) else None


def job_of(spec: dict[str, Any]) -> UploadJob:
    spec = {
        k: v for k, v in spec.items() if k not in ("password_digest", _URLS_CLEARED, BATCH_ORIGIN)
    }
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


_LISTING_PER_KEY: Final = 20
"""An enqueue lists the queue's waiting jobs rather than defer its likely-waiting keys
one at a time while the queue holds fewer than this many per such key: a statement
per key costs about as much as 20 listed jobs (``benchmarks/reenqueue_scale.py``), so
either way a batch costs at most this many listed jobs per key (linear)."""


class _Moved(Exception):
    """A job of an enqueue's batch started or finished while it was deferred: the
    batch's savepoint is undone, and the batch worked out again."""
