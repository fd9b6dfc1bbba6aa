"""BatchUploader against the emulator: faults, crashes, cancellation, resumption."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import fast_retry, make_file
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

HERE = Path(__file__).resolve().parents[1]


def make_files(folder: Path, count: int, size: int = 6000) -> list[Path]:
    folder.mkdir(exist_ok=True)
    return [make_file(folder / f"clip{i:03d}.mp4", size + i) for i in range(count)]


def stored_bytes_by_title(emulator: Emulator) -> dict[str, bytes]:
    """Each video's title and the bytes of the file it was created from."""
    out = {}
    for video in emulator.videos():
        record = emulator.state.get("file", video["url"])
        assert record is not None
        out[video["title"]] = Path(record["path"]).read_bytes()
    return out


def assert_one_video_per_job(
    emulator: Emulator, files: list[Path], title: str = "job {name}"
) -> None:
    titles = Counter(v["title"] for v in emulator.videos())
    expected = {title.format(name=f.name) for f in files}
    assert set(titles) == expected
    assert max(titles.values()) == 1, [t for t, n in titles.items() if n > 1]
    stored = stored_bytes_by_title(emulator)
    for f in files:
        assert (
            hashlib.sha256(stored[title.format(name=f.name)]).digest()
            == hashlib.sha256(f.read_bytes()).digest()
        )


def jobs_for(files: list[Path], **extra: object) -> Iterator[va.UploadJob]:
    for f in files:
        yield va.UploadJob(path=f, title=f"job {f.name}", channel="news", key=f.name, **extra)  # type: ignore[arg-type]


async def test_two_hundred_jobs_through_faults_make_two_hundred_videos(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 200)
    faults = Faults(
        error_rate=0.10,
        error_statuses=(500, 502, 503),
        reset_rate=0.05,
        rate_limit_rate=0.05,
        retry_after=0.01,
        drop_response_rate=0.03,
        seed=2026,
    )
    async with (
        Emulator(probe=False, faults=faults) as emu,
        client_for(emu, retry=fast_retry(25)) as client,
    ):
        async with va.BatchUploader(client, concurrency=16, journal=tmp_path / "j.sqlite") as batch:
            results = [r async for r in batch.run(jobs_for(files))]
        counters = dict(emu.platform.counters) if emu.platform else {}
        assert {r.status for r in results} == {va.JobStatus.DONE}, [
            (r.key, r.stage, r.error) for r in results if r.error
        ]
        assert len(results) == 200
        assert_one_video_per_job(emu, files)
    injected = sum(v for k, v in counters.items() if k.startswith("faults_"))
    assert injected > 100, counters  # the faults really struck


async def test_one_failure_does_not_stop_the_others(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 5)
    jobs = list(jobs_for(files))
    jobs.insert(2, va.UploadJob(path=tmp_path / "missing.mp4", title="gone", channel="news"))
    jobs.append(va.UploadJob(path=files[0], title="twin", channel="news", key=files[0].name))
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, concurrency=2) as batch:
            results = [r async for r in batch.run(jobs)]
    by_status = Counter(r.status for r in results)
    assert by_status[va.JobStatus.DONE] == 5
    [missing] = [r for r in results if r.job.title == "gone"]
    assert isinstance(missing.error, va.FileError)
    assert len(results) == 7


async def test_a_job_takes_one_trip_to_a_worker_thread(
    emulator: Emulator, tmp_path: Path, srt_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Key, file check and subtitle checks for a job go to a thread together: each trip
    costs a hop there and back, and a tiny job is mostly hops."""
    files = make_files(tmp_path / "files", 12)
    jobs = [
        va.UploadJob(
            path=f, title=f.name, channel="news", subtitles=[va.SubtitleSpec("en", path=srt_file)]
        )
        for f in files
    ]
    trips: list[str] = []
    real_to_thread = asyncio.to_thread

    async def counting_to_thread(fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        trips.append(getattr(fn, "__name__", repr(fn)))
        return await real_to_thread(fn, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counting_to_thread)
    async with client_for(emulator) as client:
        await client.upload_file(files[0])  # the client's one-off setup, not per job
        trips.clear()
        async with va.BatchUploader(client, concurrency=4) as batch:
            results = [r async for r in batch.run(jobs)]
        per_jobs = list(trips)
    trips = per_jobs
    assert [r.status for r in results] == [va.JobStatus.DONE] * len(jobs)
    assert len(trips) <= len(jobs), Counter(trips)


async def test_queued_jobs_share_their_trips_to_a_worker_thread(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk checks of the jobs waiting in the queue go to a worker thread together,
    in one trip, when the first of them is taken: a trip per job wakes a thread and
    hands the interpreter's lock back and forth, which cost a batch of small files more
    than the checks themselves."""
    files = make_files(tmp_path / "files", 40)
    trips: list[int] = []
    real_to_thread = asyncio.to_thread

    async def counting_to_thread(fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        trips.append(len(args[0]) if args and isinstance(args[0], list) else 1)
        return await real_to_thread(fn, *args, **kwargs)

    async with client_for(emulator) as client:
        await client.upload_file(files[0])  # the client's one-off setup, not per job
        monkeypatch.setattr(asyncio, "to_thread", counting_to_thread)
        async with va.BatchUploader(client, concurrency=8) as batch:
            results = [r async for r in batch.run(jobs_for(files))]
    assert [r.status for r in results] == [va.JobStatus.DONE] * len(files)
    assert_one_video_per_job(emulator, files)
    assert len(trips) <= len(files) / 2, trips


async def test_a_trickling_job_source_starts_each_job_at_once(
    emulator: Emulator, tmp_path: Path
) -> None:
    """Jobs that come one at a time (an async source waiting for each job's result
    before giving the next) are not held back to be checked with later ones."""
    files = make_files(tmp_path / "files", 4)
    finished = asyncio.Event()

    async def one_at_a_time() -> AsyncIterator[va.UploadJob]:
        for job in jobs_for(files):
            finished.clear()
            yield job
            await finished.wait()  # the next job only once this one has ended

    async with client_for(emulator) as client, va.BatchUploader(client, concurrency=4) as batch:
        done = []
        async with asyncio.timeout(30):
            async for result in batch.run(one_at_a_time()):
                done.append(result.status)
                finished.set()
    assert done == [va.JobStatus.DONE] * len(files)


async def test_subtitles_password_and_live_stages(
    tmp_path: Path, srt_file: Path, subtitle_host: str
) -> None:
    files = make_files(tmp_path / "files", 3)
    jobs = [
        va.UploadJob(
            path=files[0],
            title="a",
            channel="news",
            password="pw",
            subtitles=[
                va.SubtitleSpec("en", path=str(srt_file)),
                va.SubtitleSpec("fr", url=f"{subtitle_host}/fr.srt"),
            ],
        ),
        va.UploadJob(path=files[1], title="b", channel="news", live=True),
        va.UploadJob(path=files[2], title="c", channel="news", published=False),
    ]
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, concurrency=3) as batch:
            results = {r.job.title: r async for r in batch.run(jobs)}
        a = emu.state.get("video", results["a"].video_id or "")
        b = emu.state.get("video", results["b"].video_id or "")
        c = emu.state.get("video", results["c"].video_id or "")
        assert a and b and c
        assert a["password"] == "pw"
        assert sorted(s["language"] for s in emu.state.all("subtitle")) == ["en", "fr"]
        assert b["mode"] == "live"
        assert c["published"] is False


async def test_jobs_are_read_lazily_and_results_stream(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 40)
    pulled = [0]
    gaps = []

    def jobs() -> Iterator[va.UploadJob]:
        for job in jobs_for(files):
            pulled[0] += 1
            yield job

    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, concurrency=4) as batch:
            finished = 0
            async for _ in batch.run(jobs()):
                finished += 1
                gaps.append(pulled[0] - finished)
    assert finished == 40
    assert max(gaps) <= 4 * 3  # jobs in the queue + in the pipelines + results waiting


async def test_progress_reports_files_and_bytes(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 6, size=200_000)
    seen: list[va.BatchProgress] = []
    async with (
        Emulator(probe=False) as emu,
        client_for(emu, retry=va.NO_RETRY, read_size=65536) as client,
    ):
        async with va.BatchUploader(client, concurrency=3, progress=seen.append) as batch:
            [r async for r in batch.run(jobs_for(files))]
    total = sum(f.stat().st_size for f in files)
    assert seen[-1].done == 6
    assert max(p.bytes_sent for p in seen) == total
    assert [p.bytes_sent for p in seen] == sorted(p.bytes_sent for p in seen)
    assert any(p.files for p in seen)


def test_jobs_are_checked_when_built(tmp_path: Path) -> None:
    with pytest.raises(va.InvalidArgumentError, match="title"):
        va.UploadJob(path=tmp_path / "a.mp4", title="", channel="news")
    with pytest.raises(va.InvalidArgumentError, match="channel"):
        va.UploadJob(path=tmp_path / "a.mp4", title="t", channel="News!")
    with pytest.raises(va.InvalidArgumentError, match="exactly one"):
        va.SubtitleSpec("en")
    with pytest.raises(va.InvalidArgumentError, match="ISO 639"):
        va.SubtitleSpec("english", url="https://a.example/s.srt")
    job = va.UploadJob(path=tmp_path / "a.mp4", title="t", channel="news", password="secret-pw")
    assert "secret-pw" not in repr(job)


async def test_sqlite_journal_round_trip(tmp_path: Path) -> None:
    journal = va.SQLiteJournal(tmp_path / "j.sqlite")
    record = va.JobRecord(
        "k1",
        stage=va.Stage.CREATED,
        file_url="http://f/x#y",
        video_id="x1",
        subtitles_done=["en"],
        runs=2,
    )
    await journal.save(record)
    assert await journal.load("k1") == record
    assert await journal.load("nope") is None
    await journal.close()
    assert va.SQLiteJournal(tmp_path / "j.sqlite").records_sync() == [record]


async def test_run_needs_the_context_manager(client: va.Client) -> None:
    batch = va.BatchUploader(client)
    with pytest.raises(va.UsageError, match="async with"):
        async for _ in batch.run([]):
            pass


async def test_concurrency_beyond_the_connection_pool_is_refused(emulator: Emulator) -> None:
    async with client_for(emulator, connection_limit=10) as client:
        with pytest.raises(va.InvalidArgumentError, match="connection_limit"):
            va.BatchUploader(client, concurrency=4, chunked=True, workers=4)
        assert va.BatchUploader(client, concurrency=10).concurrency == 10


async def test_leaving_the_block_after_a_break_stops_the_pipelines(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 30)
    journal = tmp_path / "j.sqlite"
    async with (
        Emulator(probe=False, faults=Faults(latency=0.01)) as emu,
        client_for(emu, retry=va.NO_RETRY) as client,
    ):
        async with va.BatchUploader(client, concurrency=6, journal=journal) as batch:
            async for _ in batch.run(jobs_for(files)):
                break  # the generator is not closed by this
        # The emulator's own server tasks (a connection's, and a request's handler that
        # aiohttp lets finish after its client went away) are not the batch's.
        ours = [
            t
            for t in asyncio.all_tasks()
            if t is not asyncio.current_task()
            and not getattr(t.get_coro(), "__qualname__", "").startswith("RequestHandler.")
        ]
        assert ours == []
        done = sum(r.stage is va.Stage.DONE for r in va.SQLiteJournal(journal).records_sync())
        assert 1 <= done < 30
        async with va.BatchUploader(client, concurrency=6, journal=journal) as batch:
            [r async for r in batch.run(jobs_for(files))]
        assert_one_video_per_job(emu, files)


class StagesSeen(va.MemoryJournal):
    """A memory journal that remembers every stage saved, job by job."""

    def __init__(self) -> None:
        super().__init__()
        self.stages: dict[str, list[va.Stage]] = {}

    async def save(self, record: va.JobRecord) -> None:
        self.stages.setdefault(record.key, []).append(record.stage)
        await super().save(record)


async def test_a_job_with_nothing_after_its_create_is_recorded_done_with_its_video(
    tmp_path: Path,
) -> None:
    """Crash safety needs ``creating`` before the create and the video's id recorded
    after it; stages with nothing to do need no record of their own."""
    files = make_files(tmp_path / "in", 3)
    journal = StagesSeen()
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=2, journal=journal) as batch:
            results = [r async for r in batch.run(jobs_for(files))]
        assert all(r.ok and r.video_id for r in results)
        for r in results:
            assert journal.stages[r.key] == [va.Stage.UPLOADED, va.Stage.CREATING, va.Stage.DONE]
            # the done job's metadata as sent, to compare with on a re-run
            metadata = {
                "title": f"job {r.key}",
                "channel": "news",
                "published": "true",
                "is_created_for_kids": "false",
                "playlists": [],
                "kept": {"protected": False, "live": False, "subtitles": []},
            }
            assert (await journal.load(r.key)) == va.JobRecord(
                r.key,
                va.Stage.DONE,
                video_id=r.video_id,
                runs=1,
                metadata=metadata,
                source=os.path.abspath(r.job.path or ""),
                account="",  # the client's own account made its video
            )
        # a job with work after its create still records each stage it passes
        live = [make_file(tmp_path / "live.mp4", 5000)]
        async with va.BatchUploader(client, journal=journal) as batch:
            [result] = [r async for r in batch.run(jobs_for(live, live=True))]
        assert result.ok
        assert journal.stages[result.key][2:] == [
            va.Stage.CREATED,
            va.Stage.SUBTITLES,
            va.Stage.PASSWORD,
            va.Stage.LIVE,
            va.Stage.READY,
            va.Stage.DONE,
        ]
        assert_one_video_per_job(emu, [*files, *live])


async def test_an_unknown_channel_asks_for_no_upload_address(
    emulator: Emulator, tmp_path: Path
) -> None:
    """Bad input is refused before any side effect: a batch whose channel the platform
    does not list fetches no one-time upload address (each counts against the rate)."""
    files = [make_file(tmp_path / f"u{i}.mp4", 2000 + i) for i in range(10)]
    async with client_for(emulator) as client:
        async with va.BatchUploader(client, concurrency=8) as batch:
            jobs = [va.UploadJob(path=f, title="t", channel="nosuchchannel") for f in files]
            results = [r async for r in batch.run(jobs)]
    assert [r.ok for r in results] == [False] * 10
    asked = [r.path for r in emulator.requests if r.path.startswith("/file/upload")]
    assert asked == []


async def test_a_batch_with_nothing_to_upload_leaves_no_unretrieved_error(
    emulator: Emulator, tmp_path: Path
) -> None:
    """The pump made early is shielded from the batch's end: whatever becomes of it, its
    outcome is retrieved (before: ``vidapi batch`` of an empty folder, or a re-run of a
    finished batch, ended with asyncio's "_GatheringFuture exception was never
    retrieved" and a traceback on stderr)."""
    (tmp_path / "empty").mkdir()
    env = {**os.environ, "VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    for _ in range(2):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "vidapi_async.cli",
            "batch",
            "empty",
            "--channel",
            "news",
            "--journal",
            "e.sqlite",
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert "never retrieved" not in err.decode(), err.decode()
        assert "Traceback" not in err.decode(), err.decode()


@pytest.mark.parametrize(("limit", "chunked"), [(4, None), (6, None), (12, True)])
async def test_addresses_fetched_ahead_never_queue_for_a_pooled_connection(
    tmp_path: Path, limit: int, chunked: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next job's address is fetched during a create only on a connection no
    pipeline can need (``connection_limit`` beyond ``concurrency``): waiting for a pooled
    connection counts against a request's timeout, so nothing may wait in the pool.
    aiohttp's own trace says whether a request waited (before: with the pool as large as
    the concurrency, creates and fetches ahead queued for connections; and a chunked
    batch fetched none ahead, its room counted as if its ranges took pooled
    connections)."""
    import aiohttp

    queued = 0

    async def on_queued(*_: object) -> None:
        nonlocal queued
        queued += 1

    trace = aiohttp.TraceConfig()
    trace.on_connection_queued_start.append(on_queued)
    from vidapi_async.batch import _spares

    ahead = 0
    real_one = _spares.Spares._one

    async def one(self: _spares.Spares) -> object:
        nonlocal ahead
        ahead += 1
        return await real_one(self)

    monkeypatch.setattr(_spares.Spares, "_one", one)
    files = make_files(tmp_path / "files", 24)
    async with Emulator(probe=False, faults=Faults(latency=0.02)) as emu:
        async with (
            aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=limit), trace_configs=[trace]
            ) as session,
            va.Client(emu.token, base_url=emu.base_url, session=session) as client,
            va.BatchUploader(client, concurrency=4, chunked=chunked, workers=3) as batch,
        ):
            results = [r async for r in batch.run(jobs_for(files))]
        assert all(r.ok for r in results)
        assert queued == 0
        # uploads go through the pump's own sockets: the API pool's room beyond one
        # connection a pipeline is for fetches ahead, chunked or not
        assert (ahead > 0) == (limit > 4)
        assert_one_video_per_job(emu, files)
