"""One batch on a shared procrastinate queue in PostgreSQL, against a real server.

Each test gets a database of its own (created, then dropped), so procrastinate's tables
start empty. The DSN's server is ``$VIDAPI_TEST_POSTGRES_DSN``'s (see
test_postgres_journal)."""

from __future__ import annotations

import asyncio
import csv
import json
import random
import re
import signal
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.children import default_signals
from tests.conftest import make_file, stored_bytes
from vidapi_async.batch import SharedBatch
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system  # every test runs workers against PostgreSQL


psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")


def jobs_for(files: list[Path]) -> list[va.UploadJob]:
    return [va.UploadJob(path=f, title=f.name, channel="news") for f in files]


def job_outcomes(reader: Any) -> dict[str, float]:
    """``vidapi.jobs`` by outcome, as an OpenTelemetry ``InMemoryMetricReader`` holds it."""
    data = reader.get_metrics_data()
    assert data is not None
    return {
        point.attributes["outcome"]: point.value
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "vidapi.jobs"
        for point in metric.data.data_points
    }


def uploads_per_title(emu: Emulator) -> Counter[str]:
    return Counter(v["title"] for v in emu.videos())


def cli_for(
    emu: Emulator, cwd: Path | None = None
) -> Callable[..., Awaitable[tuple[int, str, str]]]:
    """``vidapi ARGS`` in a subprocess against ``emu`` (in ``cwd``): exit code, stdout,
    stderr."""
    base = [sys.executable, "-m", "vidapi_async.cli", "--token", emu.token]
    base += ["--base-url", emu.base_url]

    async def cli(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            *base,
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()

    return cli


async def test_enqueue_twice_adds_nothing_and_one_worker_finishes(
    emulator: Emulator, tmp_path: Path, dsn: str
) -> None:
    files = [make_file(tmp_path / f"q{i}.mp4", 3000 + i) for i in range(6)]
    async with SharedBatch(dsn) as shared:
        first = await shared.enqueue(jobs_for(files))
        again = await shared.enqueue(jobs_for(files))
        assert (first.added, first.already) == (6, 0)
        assert (again.added, again.already) == (0, 6)
        status = await shared.status()
        assert status.queued == 6
        async with client_for(emulator) as client:
            await asyncio.wait_for(shared.work(client, concurrency=3, until_empty=True), 60)
        status = await shared.status()
        assert (status.queued, status.running, status.done) == (0, 0, 6)
        assert status.stages == {"done": 6}
        done_again = await shared.enqueue(jobs_for(files))
        assert (done_again.added, done_again.already) == (0, 6)
    assert uploads_per_title(emulator) == Counter(f.name for f in files)


async def test_a_changed_spec_for_a_queued_or_done_job_is_reported_never_applied(
    emulator: Emulator, tmp_path: Path, dsn: str
) -> None:
    """A job queued (or done) keeps the spec it was enqueued with: enqueueing it again
    with a password added and a title changed neither half-applies them (the journal
    saying done while the video stays public) nor drops them silently: ``changed``
    names the job (its key, never the spec's values)."""
    f = make_file(tmp_path / "board.mp4", 5000)
    first = va.UploadJob(path=f, title="board meeting", channel="news", key="k1")
    second = va.UploadJob(
        path=f, title="board meeting (final)", channel="news", key="k1", password="s3cretPW"
    )
    async with SharedBatch(dsn) as shared:
        assert (await shared.enqueue([first])).changed == []
        again = await shared.enqueue(
            [second, va.UploadJob(path=f, title="other", key="k2", channel="news")]
        )
        assert (again.added, again.already, again.changed) == (1, 1, ["k1"])
        assert "s3cretPW" not in repr(again)
        async with client_for(emulator) as client:
            await asyncio.wait_for(shared.work(client, until_empty=True), 60)
            record = await shared.journal.load("k1")
            assert record is not None and record.video_id is not None
            video = await client.get_video(record.video_id, fields=["title", "password_protected"])
        assert (video.title, video.password_protected) == ("board meeting", False)
        done = await shared.enqueue([second])
        assert (done.added, done.already, done.changed) == (0, 1, ["k1"])
        same = await shared.enqueue([first])
        assert (same.already, same.changed) == (1, [])


def worker_cmd(emu: Emulator, dsn: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "vidapi_async.cli",
        "--token",
        emu.token,
        "--base-url",
        emu.base_url,
        "worker",
        "--journal",
        dsn,
        "--concurrency",
        "2",
        *extra,
    ]


async def spawn(cmd: list[str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *cmd,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=default_signals,
    )


def assert_one_video_per_file(emu: Emulator, files: list[Path]) -> None:
    assert uploads_per_title(emu) == Counter(f.name for f in files)
    for video in emu.videos():
        assert stored_bytes(emu, video["url"]) == (files[0].parent / video["title"]).read_bytes()


async def test_two_workers_share_the_queue_each_file_once(tmp_path: Path, dsn: str) -> None:
    files = [make_file(tmp_path / f"w{i:02d}.mp4", 5000 + i) for i in range(24)]
    async with Emulator(faults=Faults(latency=0.02)) as emu:
        async with SharedBatch(dsn) as shared:
            assert (await shared.enqueue(jobs_for(files))).added == 24
        procs = [await spawn(worker_cmd(emu, dsn, "--until-empty")) for _ in range(2)]
        for proc in procs:
            _, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()[-2000:]
        uploads = [r for r in emu.requests if r.host == "upload" and r.method == "POST"]
        assert len(uploads) == 24  # each file uploaded once, across both workers
        assert_one_video_per_file(emu, files)
        async with SharedBatch(dsn) as shared:
            status = await shared.status()
    assert (status.done, status.queued, status.running) == (24, 0, 0)


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_workers_killed_at_random_lose_nothing_and_duplicate_nothing(
    tmp_path: Path, dsn: str
) -> None:
    rng = random.Random(7)
    files = [make_file(tmp_path / f"k{i:02d}.mp4", 40_000 + i) for i in range(30)]
    async with Emulator(faults=Faults(latency=0.06)) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        cmd = worker_cmd(emu, dsn, "--stalled-after", "2")
        workers = [await spawn(cmd) for _ in range(3)]
        kills = 0

        def uploads_begun() -> int:
            return len([r for r in emu.requests if r.host == "upload" and r.method == "POST"])

        async def a_kill_landed_mid_job() -> bool:
            # an upload begun twice, or a job a second worker took over: under load a
            # kill may land between jobs, so kill on until one has landed within one
            async with SharedBatch(dsn) as shared:
                records = await shared.journal.records()
            return uploads_begun() > len(files) or any(r.runs > 1 for r in records)

        try:
            while kills < 6 or (kills < 24 and not await a_kill_landed_mid_job()):
                # a kill once work is flowing (workers take a while to start)
                seen = len(emu.requests)
                try:  # no traffic for long: the queue is worked out, nothing left to kill in
                    async with asyncio.timeout(15):
                        while len(emu.requests) < seen + 3:  # noqa: ASYNC110 - traffic
                            await asyncio.sleep(0.02)
                except TimeoutError:
                    break
                await asyncio.sleep(rng.uniform(0.0, 0.2))
                victim = rng.randrange(len(workers))
                workers[victim].send_signal(signal.SIGKILL)
                await workers[victim].wait()
                kills += 1
                workers[victim] = await spawn(cmd)
        finally:
            for proc in workers:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in workers:
                await asyncio.wait_for(proc.communicate(), 60)
        last = await spawn(worker_cmd(emu, dsn, "--stalled-after", "2", "--until-empty"))
        _, err = await asyncio.wait_for(last.communicate(), 180)
        assert last.returncode == 0, err.decode()[-2000:]
        assert_one_video_per_file(emu, files)
        async with SharedBatch(dsn) as shared:
            records = await shared.journal.records()
            status = await shared.status()
        started = uploads_begun()
    assert status.done == 30
    # the kills fell mid-job: some jobs were begun again by another worker (an upload
    # sent twice, or a job run twice), and still no video was made twice
    assert started > 30 or any(r.runs > 1 for r in records), (started, [r.runs for r in records])


async def test_a_quota_refusal_seen_by_one_worker_stops_them_all(tmp_path: Path, dsn: str) -> None:
    files = [make_file(tmp_path / f"z{i:02d}.mp4", 6000 + i) for i in range(16)]
    async with Emulator(faults=Faults(videos_per_day=4, latency=0.01)) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        procs = [await spawn(worker_cmd(emu, dsn, "--until-empty")) for _ in range(2)]
        for proc in procs:
            _, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()[-2000:]
        uploads = len([r for r in emu.requests if r.host == "upload" and r.method == "POST"])
        async with SharedBatch(dsn) as shared:
            status = await shared.status()
            until = await shared.quota_until()
        videos = len(emu.videos())
    assert videos == 4
    assert (status.done, status.failed) == (4, 12)
    assert until is not None  # kept for every worker until the reset
    # 4 created, the refused one, and at most the other pipelines already under way
    # (2 workers x 2): never the whole queue
    assert uploads <= 4 + 1 + 4


async def test_the_cli_enqueues_once_works_and_reports(tmp_path: Path, dsn: str) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    files = [make_file(folder / f"c{i}.mp4", 4000 + i) for i in range(5)]
    async with Emulator() as emu:
        cli = cli_for(emu)

        batch = ["batch", str(folder), "--channel", "news", "--journal", dsn]
        code, out, err = await cli(*batch, "--enqueue-only")
        assert code == 0, err
        assert "enqueued 5 job(s)" in out + err
        code, out, err = await cli(*batch, "--enqueue-only")
        assert "enqueued 0 job(s); 5 were done, queued or running already" in out + err
        assert "not applied" not in out + err
        moved = ["batch", str(folder), "--channel", "sport", "--journal", dsn, "--enqueue-only"]
        code, out, err = await cli(*moved)  # another channel: not applied, said so
        assert code == 0, err
        assert "warning: 5 job(s) queued or running already" in out + err
        assert "not applied" in out + err and "vidapi video" in out + err
        code, out, err = await cli("--json", "status", "--journal", dsn)
        assert code == 0, err
        assert json.loads(out) == {"queued": 5, "running": 0, "done": 0, "failed": 0, "stages": {}}
        code, out, err = await cli("--json", *batch)  # enqueues nothing more, works them
        assert code == 0, err
        status = json.loads(out)
        assert (status["done"], status["queued"], status["stages"]) == (5, 0, {"done": 5})
        assert uploads_per_title(emu) == Counter(f.stem for f in files)


async def test_a_shared_batch_writes_the_report_it_is_given(tmp_path: Path, dsn: str) -> None:
    """``vidapi batch --journal postgresql://... --report FILE`` writes the queue's
    mapping report (it was ignored, with no word: only ``vidapi status`` wrote one)."""
    folder = tmp_path / "videos"
    folder.mkdir()
    files = [make_file(folder / f"r{i}.mp4", 4100 + i) for i in range(3)]
    async with Emulator() as emu:
        cli = cli_for(emu)
        report = tmp_path / "mapping.csv"
        batch = ["batch", str(folder), "--channel", "news", "--journal", dsn]
        code, _, err = await cli(*batch, "--report", str(report))
        assert code == 0, err
        with report.open(newline="") as f:
            rows = list(csv.DictReader(f))
        ids = {video["id"] for video in emu.videos()}
    assert len(rows) == len(files) == len(ids)
    assert {row["video_id"] for row in rows} == ids
    assert {row["status"] for row in rows} == {"done"}


async def test_a_request_rate_shared_by_two_workers(tmp_path: Path, dsn: str) -> None:
    """Two workers each allowed 'the shared 8 per second': together they start no more
    than 8 requests a second (each alone would allow 8, together 16)."""
    files = [make_file(tmp_path / f"r{i}.mp4", 3000 + i) for i in range(6)]
    async with Emulator() as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        cmd = worker_cmd(emu, dsn, "--until-empty", "--max-requests-per-second", "8")
        procs = [await spawn(cmd) for _ in range(2)]
        for proc in procs:
            _, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()[-2000:]
        arrivals = sorted(r.at for r in emu.requests)
        assert_one_video_per_file(emu, files)
    # n requests at 8/s in all span at least (n - 1) / 8 s at the server, less jitter;
    # two unshared limiters would have let them through in half that
    assert len(arrivals) >= 18
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1) / 8 * 0.8


@pytest.mark.usefixtures("parent_ignores_signals")
async def test_sigterm_finishes_or_hands_back_the_jobs_in_flight(tmp_path: Path, dsn: str) -> None:
    files = [make_file(tmp_path / f"t{i:02d}.mp4", 30_000 + i) for i in range(12)]
    async with Emulator(faults=Faults(latency=0.05)) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        worker = await spawn(worker_cmd(emu, dsn))
        while len(emu.requests) < 4:  # noqa: ASYNC110 - waiting for jobs to be in flight
            await asyncio.sleep(0.02)
        worker.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(worker.communicate(), 60)
        assert worker.returncode == 0, err.decode()[-2000:]
        async with SharedBatch(dsn) as shared:
            after_stop = await shared.status()
        assert after_stop.running == 0  # nothing left held by the stopped worker
        assert after_stop.done < 12  # it stopped part-way
        last = await spawn(worker_cmd(emu, dsn, "--until-empty"))
        _, err = await asyncio.wait_for(last.communicate(), 120)
        assert last.returncode == 0, err.decode()[-2000:]
        assert_one_video_per_file(emu, files)


async def test_each_worker_shows_its_own_jobs_and_totals(tmp_path: Path, dsn: str) -> None:
    files = [make_file(tmp_path / f"o{i}.mp4", 3000 + i) for i in range(8)]
    async with Emulator(faults=Faults(latency=0.02)) as emu:
        async with SharedBatch(dsn) as shared:
            assert (await shared.enqueue(jobs_for(files))).added == 8
        procs = [
            await asyncio.create_subprocess_exec(
                *worker_cmd(emu, dsn, "--until-empty"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                preexec_fn=default_signals,
            )
            for _ in range(2)
        ]
        outputs = []
        for proc in procs:
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()[-2000:]
            outputs.append((out.decode(), err.decode()))
    own = []
    for result, text in outputs:  # not a terminal: a log line per finished job (stderr)
        total = re.search(r"this worker: (\d+) done, (\d+) failed", result)  # stdout
        assert total is not None, (result, text)
        own.append(int(total.group(1)))
        assert "the queue: 8 done, 0 failed" in result
        lines = re.findall(
            r"^worker: (\d+) done, 0 failed, \d+ running, [\d.]+ jobs/min", text, re.M
        )
        assert [int(n) for n in lines] == list(range(1, own[-1] + 1))
    assert sum(own) == 8  # each counts its own jobs, not the queue's


@pytest.mark.parametrize(
    ("token", "scopes", "named"),
    [
        ("wrong-token-hunter2", None, "token"),  # refused: 401
        ("read-only-hunter2", ("read",), "manage_videos"),  # known, lacks the scope: 403
    ],
    ids=["refused-token", "scope-missing"],
)
async def test_refused_credentials_stop_the_worker_and_leave_the_queue(
    tmp_path: Path, dsn: str, token: str, scopes: tuple[str, ...] | None, named: str
) -> None:
    """The worker's own credentials refused (401, or 403 insufficient_scope) are no job's
    fault: it stops taking jobs, leaves them queued (not failed for good), says what is
    wrong and exits 3 (before: it failed the whole queue, then exited 0; a token lacking
    ``manage_videos`` failed every job as a bare ForbiddenError)."""
    files = [make_file(tmp_path / f"a{i}.mp4", 3000 + i) for i in range(4)]
    tokens = None if scopes is None else {token: scopes}
    async with Emulator(tokens=tokens) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        cmd = worker_cmd(emu, dsn, "--until-empty")
        cmd[cmd.index("--token") + 1] = token
        proc = await spawn(cmd)
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        said = err.decode()
        async with SharedBatch(dsn) as shared:
            status = await shared.status()
            from vidapi_async.batch._worker import attempts_counted

            jobs = await shared._ready().job_manager.list_jobs_async(queue=shared.queue)
            counted = [await attempts_counted(shared, job) for job in jobs]
        assert not emu.videos()
    assert proc.returncode == 3, said[-2000:]
    # no attempt counted against a job: five such runs would otherwise fail it for good
    # (tests/unit/test_queue_inmemory.py: handed back ten times, it is still run)
    assert counted == [0] * 4
    assert (status.queued, status.running, status.failed) == (4, 0, 0), said[-2000:]
    assert token not in said
    assert named in said.lower() and "Traceback" not in said, said[-2000:]
    # a job given back is neither failed nor still running in the worker's own lines
    assert "failed at" not in said, said[-2000:]
    assert not re.search(r"worker: \d+ done, [1-9]", said), said[-2000:]


async def test_a_job_given_back_to_the_queue_is_counted_requeued_not_failed(
    tmp_path: Path, dsn: str
) -> None:
    """A job the queue runs again (this worker's credentials refused, or a transient
    failure) has not failed: ``vidapi.jobs`` counts it ``requeued`` and the progress
    neither failed nor running (before: failed, then done once another worker ran it)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    files = [make_file(tmp_path / f"r{i}.mp4", 3000 + i) for i in range(2)]
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    seen: list[va.BatchProgress] = []
    async with Emulator() as emu, SharedBatch(dsn) as shared:
        await shared.enqueue(jobs_for(files))
        async with va.Client(
            access_token="wrong-token", base_url=emu.base_url, meter_provider=meters
        ) as client:
            with pytest.raises(va.AuthenticationError):
                await asyncio.wait_for(
                    shared.work(client, concurrency=1, until_empty=True, progress=seen.append),
                    60,
                )
        outcomes = job_outcomes(reader)
        status = await shared.status()
    meters.shutdown()
    assert outcomes == {"requeued": 1}, outcomes
    assert status.queued == 2 and status.failed == 0
    last = seen[-1]
    assert (last.started, last.done, last.failed) == (0, 0, 0), last


async def test_a_missing_file_is_a_failed_job_in_the_queue_as_in_a_file_journal(
    tmp_path: Path, dsn: str
) -> None:
    """A manifest row naming no file: the shared batch records it failed, as the SQLite
    journal's batch does, so that ``status`` and the batch's exit agree; once the file is
    there, running the batch again does it."""
    make_file(tmp_path / "a.mp4", 30_000)
    manifest = tmp_path / "jobs.csv"
    manifest.write_text("path,title,channel\na.mp4,A,news\nmissing.mp4,M,news\n", encoding="utf-8")
    async with Emulator() as emu:
        cli = cli_for(emu)

        batch = ["--json", "batch", str(manifest), "--journal", dsn]
        code, out, err = await cli(*batch)
        assert code == 6, err  # some job failed
        assert "missing.mp4" in out + err
        code, out, err = await cli("--json", "status", "--journal", dsn)
        assert code == 0, err
        status = json.loads(out)
        assert (status["done"], status["failed"]) == (1, 1), status
        make_file(tmp_path / "missing.mp4", 30_000)
        code, out, err = await cli(*batch)
        assert code == 0, err
        code, out, err = await cli("--json", "status", "--journal", dsn)
        status = json.loads(out)
        assert (status["done"], status["failed"]) == (2, 0), status
        assert uploads_per_title(emu) == Counter({"A": 1, "M": 1})


async def test_a_relative_folder_is_enqueued_for_workers_started_anywhere(
    tmp_path: Path, dsn: str
) -> None:
    """``vidapi batch rel --enqueue-only`` in one folder, ``vidapi worker`` in another:
    the queue holds where the files are, not where they were from the enqueuing shell
    (before: every job failed for good with ``rel/a.mp4: no such file``). A file missing
    at enqueue time makes ``--enqueue-only`` exit as a failed batch does."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    (here / "rel").mkdir(parents=True)
    elsewhere.mkdir()
    files = [make_file(here / "rel" / f"r{i}.mp4", 3000 + i) for i in range(2)]
    make_file(here / "o.mp4", 5000)
    subs = here / "en.srt"
    subs.write_text("1\n00:00:01,000 --> 00:00:02,000\nHi\n", encoding="utf-8")
    manifest = here / "jobs.csv"
    manifest.write_text(
        "path,title,channel,subtitles\no.mp4,O,news,en=en.srt\ngone.mp4,G,news,\n",
        encoding="utf-8",
    )
    async with Emulator(probe=False) as emu:
        enqueue = cli_for(emu, cwd=here)
        code, _, err = await enqueue(
            "batch", "rel", "--channel", "news", "--journal", dsn, "--enqueue-only"
        )
        assert code == 0, err
        code, _, err = await enqueue("batch", "jobs.csv", "--journal", dsn, "--enqueue-only")
        assert code == 6, err  # gone.mp4: recorded failed, and the exit says so
        code, _, err = await cli_for(emu, cwd=elsewhere)(
            "worker", "--journal", dsn, "--until-empty"
        )
        assert code == 0, err
        assert "no such file" not in err, err
        assert sorted(v["title"] for v in emu.videos()) == sorted(["O", *(f.stem for f in files)])
        assert sum(r.method == "POST" and r.path.endswith("/subtitles") for r in emu.requests) == 1


async def test_a_jobs_last_transient_failure_is_failed_not_requeued(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue tries a transient failure again a few times, then fails the job for
    good: that last failure is ``failed`` in ``vidapi.jobs`` and in the progress, the
    ones before ``requeued`` (before: every one of them ``requeued``, none failed)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from vidapi_async.batch import _queue

    monkeypatch.setattr(_queue, "RETRY_WAIT", 0)  # the queue's tries without its waits
    path = make_file(tmp_path / "t.mp4", 3000)
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    seen: list[va.BatchProgress] = []
    faults = Faults(error_rate=1.0, error_statuses=(503,), methods=("POST",), paths=("/me/videos",))
    async with Emulator(probe=False, faults=faults) as emu, SharedBatch(dsn) as shared:
        await shared.enqueue(jobs_for([path]))
        async with client_for(emu, retry=va.NO_RETRY, meter_provider=meters) as client:
            await asyncio.wait_for(
                shared.work(client, until_empty=True, poll=0.1, progress=seen.append), 120
            )
        status = await shared.status()
        outcomes = job_outcomes(reader)
    meters.shutdown()
    assert status.failed == 1
    assert outcomes == {"requeued": _queue.MAX_ATTEMPTS, "failed": 1}, outcomes
    assert seen[-1].failed == 1


async def test_metrics_port_for_a_worker_and_a_shared_batch(tmp_path: Path, dsn: str) -> None:
    """``--metrics-port 0`` names the port it serves on, for ``vidapi worker`` and a
    shared ``vidapi batch`` as for a folder batch; a busy port is a usage error before
    anything is enqueued (before: the jobs were enqueued, then the error)."""
    import socket

    folder = tmp_path / "m"
    folder.mkdir()
    make_file(folder / "m0.mp4", 3000)
    async with Emulator(probe=False) as emu:
        cli = cli_for(emu)
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = str(busy.getsockname()[1])
            code, _, err = await cli(
                "batch", str(folder), "--channel", "news", "--journal", dsn,
                "--metrics-port", port,
            )  # fmt: skip
        assert code == 2 and "--metrics-port" in err and port in err, err
        async with SharedBatch(dsn) as shared:
            assert (await shared.status()).queued == 0  # nothing enqueued
        code, _, err = await cli(
            "batch", str(folder), "--channel", "news", "--journal", dsn, "--metrics-port", "0"
        )
        assert code == 0, err
        assert re.search(r"metrics at http://127\.0\.0\.1:[1-9]\d*/metrics", err), err
        code, _, err = await cli("worker", "--journal", dsn, "--until-empty", "--metrics-port", "0")
        assert code == 0, err
        assert re.search(r"metrics at http://127\.0\.0\.1:[1-9]\d*/metrics", err), err


async def test_a_report_no_report_can_be_is_refused_before_anything_is_enqueued(
    tmp_path: Path, dsn: str
) -> None:
    """The last attack (low): ``--report rb.json`` was refused only after the jobs
    were enqueued."""
    folder = tmp_path / "videos"
    folder.mkdir()
    make_file(folder / "r0.mp4", 4200)
    async with Emulator() as emu:
        cli = cli_for(emu)
        report = str(tmp_path / "rb.json")
        code, out, err = await cli(
            "batch", str(folder), "--channel", "news", "--journal", dsn, "--enqueue-only",
            "--report", report,
        )  # fmt: skip
        assert code == 2, (out, err)
        assert "a report is a .csv or a .jsonl file" in out + err
        async with SharedBatch(dsn) as shared:
            status = await shared.status()
    assert (status.queued, status.done) == (0, 0)
