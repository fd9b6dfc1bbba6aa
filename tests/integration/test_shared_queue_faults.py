"""The shared queue under faults other than SIGKILL: a worker paused past
``--stalled-after`` (SIGSTOP), workers racing for the same stalled job, PostgreSQL
restarted under running workers, and journal specs the CLI must not mistake for files.
Against real PostgreSQL servers: the shared test server (a fresh database per test) and,
for restarts, a throwaway cluster the test starts and restarts itself."""

from __future__ import annotations

import asyncio
import random
import signal
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.children import default_signals
from tests.cli_run import vidapi
from tests.conftest import make_file
from tests.pg_cluster import pg_cluster
from tests.system.test_shared_queue import (
    assert_one_video_per_file,
    jobs_for,
    spawn,
    worker_cmd,
)
from vidapi_async.batch import QueueStatus, SharedBatch
from vidapi_async.batch._worker import retry_stalled
from vidapi_async.emulator import Emulator, Faults

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")


async def wait_for_request(emu: Emulator, host: str, method: str, path: str) -> None:
    while not any(  # noqa: ASYNC110 - waiting for the emulator to see a request
        r.host == host and r.method == method and r.path.rstrip("/") == path for r in emu.requests
    ):
        await asyncio.sleep(0.01)


async def journal_records(where: str) -> dict[str, object]:
    async with SharedBatch(where) as shared:
        return {r.key: r for r in await shared.journal.records()}


@pytest.mark.system
@pytest.mark.parametrize(
    ("host", "method", "path"),
    [("upload", "POST", "/upload"), ("api", "POST", "/me/videos")],
    ids=["mid-upload", "mid-create"],
)
async def test_a_paused_worker_that_resumes_makes_no_second_video(
    tmp_path: Path,
    dsn: str,
    host: str,
    method: str,
    path: str,
) -> None:
    files = [make_file(tmp_path / "paused.mp4", 200_000)]
    async with Emulator(faults=Faults(latency=0.3)) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        opts = ("--stalled-after", "1.5", "--until-empty")
        first = await asyncio.create_subprocess_exec(
            *worker_cmd(emu, dsn, *opts),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            await asyncio.wait_for(wait_for_request(emu, host, method, path), 60)
            first.send_signal(signal.SIGSTOP)  # a VM pause, a suspended laptop
            second = await spawn(worker_cmd(emu, dsn, *opts))
            _, err2 = await asyncio.wait_for(second.communicate(), 90)
            assert second.returncode == 0, err2.decode()[-2000:]
            taken_over = await journal_records(dsn)
        finally:
            first.send_signal(signal.SIGCONT)
        _, err1 = await asyncio.wait_for(first.communicate(), 90)
        assert first.returncode == 0, err1.decode()[-2000:]
        videos = emu.videos()
        assert len(videos) == 1, [v["id"] for v in videos]  # one video for one job
        assert_one_video_per_file(emu, files)
        after = await journal_records(dsn)
    (record,) = after.values()
    (before,) = taken_over.values()
    assert str(record.stage) == "done"  # type: ignore[attr-defined]
    assert record.video_id == before.video_id == videos[0]["id"]  # type: ignore[attr-defined]
    assert "lost job" in err1.decode() and "to another worker" in err1.decode()


@pytest.mark.system
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.usefixtures("parent_ignores_signals")
async def test_three_workers_ten_kills_no_survivor_fails(
    tmp_path: Path,
    dsn: str,
    seed: int,
) -> None:
    """Kills make stalled jobs that two live workers may both try to take over: that
    race is normal, and no worker that was not killed exits non-zero."""
    rng = random.Random(seed)
    files = [make_file(tmp_path / f"s{i:02d}.mp4", 20_000 + i) for i in range(12)]
    async with Emulator(faults=Faults(latency=0.02)) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        cmd = worker_cmd(emu, dsn, "--stalled-after", "1")
        workers = [await spawn(cmd) for _ in range(3)]
        survivors: list[asyncio.subprocess.Process] = []
        try:
            for _ in range(10):
                await asyncio.sleep(rng.uniform(0.05, 0.6))
                victim = rng.randrange(len(workers))
                proc = workers[victim]
                assert proc.returncode is None, "a live worker exited on its own"
                proc.send_signal(signal.SIGKILL)
                await proc.wait()
                workers[victim] = await spawn(cmd)
            for proc in workers:  # no kill now: they must finish the queue and stay up
                assert proc.returncode is None, "a live worker exited on its own"
            survivors = list(workers)
            last = await spawn(worker_cmd(emu, dsn, "--stalled-after", "1", "--until-empty"))
            _, err = await asyncio.wait_for(last.communicate(), 120)
            assert last.returncode == 0, err.decode()[-2000:]
        finally:
            for proc in workers:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
            errs = [await asyncio.wait_for(p.communicate(), 60) for p in workers]
        for proc, (_, err) in zip(survivors, errs, strict=False):
            assert proc.returncode == 0, err.decode()[-2000:]
        assert_one_video_per_file(emu, files)


@pytest.mark.system
async def test_two_workers_taking_over_one_stalled_job_is_no_error(
    tmp_path: Path,
    dsn: str,
) -> None:
    """Both live workers see the same stalled job and hand it back at once: the loser's
    refusal is a normal race (it crashed the worker: ConnectorException)."""
    files = [make_file(tmp_path / "stalled.mp4", 1000)]
    async with SharedBatch(dsn) as a, SharedBatch(dsn) as b:
        await a.enqueue(jobs_for(files))
        manager = a._ready().job_manager
        dead = await manager.register_worker()  # a worker that took the job, then died
        job = await manager.fetch_job(queues=[a.queue], worker_id=dead)
        assert job is not None
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(
                "update procrastinate_workers set last_heartbeat = now() - interval '1 hour'"
            )
        for _ in range(5):  # both at once, and again once it is queued already
            await asyncio.gather(
                retry_stalled(a._ready(), a.queue, 60), retry_stalled(b._ready(), b.queue, 60)
            )
        status = await a.status()
    assert (status.queued, status.running) == (1, 0)


def _status(s: QueueStatus) -> tuple[int, int, int, int]:
    return (s.queued, s.running, s.done, s.failed)


@pytest.mark.system
async def test_postgresql_restarted_twice_under_two_workers(tmp_path: Path) -> None:
    files = [make_file(tmp_path / f"r{i:02d}.mp4", 10_000 + i) for i in range(40)]
    with pg_cluster() as cluster:
        async with Emulator(faults=Faults(latency=0.05)) as emu:
            async with SharedBatch(cluster.dsn) as shared:
                assert (await shared.enqueue(jobs_for(files))).added == 40
            cmd = worker_cmd(emu, cluster.dsn, "--stalled-after", "3", "--until-empty")
            workers = [await spawn(cmd) for _ in range(2)]
            answers: list[tuple[int, int, int, int]] = []

            async def watch() -> None:
                async with SharedBatch(cluster.dsn) as shared:
                    while True:
                        answers.append(_status(await shared.status()))
                        await asyncio.sleep(0.2)

            watcher = asyncio.create_task(watch())
            try:

                async def videos_at_least(n: int) -> None:
                    while len(emu.videos()) < n:  # noqa: ASYNC110 - waiting for work
                        await asyncio.sleep(0.05)

                for _ in range(2):
                    await asyncio.wait_for(videos_at_least(len(emu.videos()) + 5), 120)
                    await asyncio.to_thread(cluster.restart)
                for proc in workers:
                    _, err = await asyncio.wait_for(proc.communicate(), 180)
                    assert proc.returncode == 0, err.decode()[-3000:]
                    said = err.decode()
                    assert "error connecting in" not in said, said[-3000:]  # psycopg_pool's
                    assert said.count("is away") <= 2, said[-3000:]  # ours: once per outage
            finally:
                for proc in workers:
                    if proc.returncode is None:
                        proc.kill()
                        await proc.wait()
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
            async with SharedBatch(cluster.dsn) as shared:
                final = _status(await shared.status())
            assert_one_video_per_file(emu, files)
    assert final == (0, 0, 40, 0)
    assert answers
    for queued, running, done, failed in answers:
        assert failed == 0
        assert queued + running + done == 40, answers
    dones = [a[2] for a in answers]
    assert dones == sorted(dones)  # never backwards


@pytest.mark.system
@pytest.mark.usefixtures("parent_ignores_signals")
async def test_a_worker_stopped_while_postgresql_is_down_stops_at_once(tmp_path: Path) -> None:
    files = [make_file(tmp_path / f"d{i}.mp4", 50_000 + i) for i in range(6)]
    with pg_cluster() as cluster:
        async with Emulator(faults=Faults(latency=0.2)) as emu:
            async with SharedBatch(cluster.dsn) as shared:
                await shared.enqueue(jobs_for(files))
            worker = await spawn(worker_cmd(emu, cluster.dsn, "--stalled-after", "2"))
            assert worker.stderr is not None
            await asyncio.wait_for(wait_for_request(emu, "upload", "POST", "/upload"), 60)
            await asyncio.to_thread(cluster.stop)

            async def read_until_away() -> bytes:
                said = b""
                while b"is away" not in said:
                    line = await worker.stderr.readline()  # type: ignore[union-attr]
                    if not line:
                        break
                    said += line
                return said

            said = await asyncio.wait_for(read_until_away(), 60)
            assert b"is away" in said  # the worker says so; then it is stopped
            worker.send_signal(signal.SIGTERM)
            # a guard against a hang (it took a minute, then a traceback), not a timing
            _, err = await asyncio.wait_for(worker.communicate(), 30)
            assert worker.returncode == 0, err.decode()
            assert "Traceback" not in err.decode()
            assert "left to be taken over" in err.decode()
            await asyncio.to_thread(cluster.start)
            last = await spawn(
                worker_cmd(emu, cluster.dsn, "--stalled-after", "1", "--until-empty")
            )
            _, err = await asyncio.wait_for(last.communicate(), 120)
            assert last.returncode == 0, err.decode()[-2000:]
            assert_one_video_per_file(emu, files)


async def _run_child(cmd: list[str], cwd: Path) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *cmd, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode() + err.decode()


async def _run(args: list[str], cwd: Path) -> tuple[int, str]:
    """``vidapi --token t ARGS`` in ``cwd`` (in this process): its code, stdout + stderr."""
    code, out, err = await vidapi("--token", "t", *args, cwd=cwd)
    return code, out + err


@pytest.mark.parametrize(
    "spec", ["host=db.invalid password=hunter2secret", "mysql://u:hunter2secret@h/db", "journal"]
)
async def test_a_journal_spec_that_is_no_file_form_is_refused(tmp_path: Path, spec: str) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    make_file(folder / "a.mp4", 1000)
    code, out = await _run(["batch", str(folder), "--channel", "news", "--journal", spec], tmp_path)
    if spec.startswith("host="):  # a key=value DSN: PostgreSQL, never a file
        assert code != 0
        assert "hunter2secret" not in out
        assert "db.invalid" in out
    else:
        assert code == 2, out
        assert "sqlite:PATH" in out and "postgresql://" in out
        assert "hunter2secret" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["videos"]  # no file made


@pytest.mark.parametrize(
    ("spec", "is_dsn"),
    [
        ("PostgreSQL://postgres:hunter2secret@127.0.0.1:1/x.db", True),  # any case: a DSN
        ("POSTGRES://postgres:hunter2secret@127.0.0.1:1/x.db", True),
        ("mysql://u:hunter2secret@127.0.0.1/x.db", False),  # another scheme: refused
        ("file://u:hunter2secret@h/x.db", False),
        ("u:hunter2secret@db.example/x.db", False),  # credentials, not a file name
        ("u@db.example:hunter2secret/x.sqlite", False),
        ("runs/u:hunter2secret@db.example/x.db", False),
    ],
)
@pytest.mark.parametrize("command", ["batch", "status"])
async def test_a_url_like_journal_is_a_dsn_or_refused_never_echoed(
    tmp_path: Path, spec: str, is_dsn: bool, command: str
) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    make_file(folder / "a.mp4", 1000)
    args = ["batch", str(folder), "--channel", "news"] if command == "batch" else ["status"]
    code, out = await _run([*args, "--journal", spec], tmp_path)
    assert "hunter2secret" not in out
    if is_dsn:  # PostgreSQL on a closed port: cannot connect
        assert code != 0 and "cannot connect" in out, out
    else:
        assert code == 2, out
        assert "sqlite:PATH" in out and "postgresql://" in out
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.mp4", "videos"]  # no file made


async def test_journal_file_forms_are_files(tmp_path: Path) -> None:
    from vidapi_async.cli._journal_spec import parse_journal

    assert parse_journal("sqlite:my journal") == ("sqlite", "my journal")
    assert parse_journal("runs/batch.db") == ("sqlite", "runs/batch.db")
    assert parse_journal("x.sqlite") == ("sqlite", "x.sqlite")
    assert parse_journal("postgres://u@h/d") == ("postgresql", "postgres://u@h/d")
    assert parse_journal("PostgreSQL://u@h/d") == ("postgresql", "postgresql://u@h/d")
    assert parse_journal("dbname=x user=y") == ("postgresql", "dbname=x user=y")


async def pause_while_another_takes_over(
    emu: Emulator,
    dsn: str,
    first: asyncio.subprocess.Process,
    opts: tuple[str, ...],
    in_flight: Coroutine[Any, Any, object],
) -> bytes:
    """Stop worker A (SIGSTOP) once its request is at the platform (``in_flight``), let
    worker B take the job over and finish, resume A; A's stderr. A's request then lands
    in 8 s (the emulator's latency when it was sent), B's at once, before it."""
    try:
        await asyncio.wait_for(in_flight, 60)
        first.send_signal(signal.SIGSTOP)
        emu.faults.latency = 0.05
        second = await spawn(worker_cmd(emu, dsn, *opts))
        _, err2 = await asyncio.wait_for(second.communicate(), 90)
        assert second.returncode == 0, err2.decode()[-2000:]
    finally:
        first.send_signal(signal.SIGCONT)
    _, err1 = await asyncio.wait_for(first.communicate(), 90)
    assert first.returncode == 0, err1.decode()[-2000:]
    return err1


@pytest.mark.system
async def test_a_worker_paused_while_its_create_is_in_flight_deletes_its_duplicate(
    tmp_path: Path,
    dsn: str,
) -> None:
    """A is paused right after sending its create, which the platform takes 8 s to
    process: B takes the job over, finds no tagged video yet and creates its own; A's
    create lands later. A, resumed, is refused the record of its video: it deletes it."""
    files = [make_file(tmp_path / "slow.mp4", 100_000)]
    slow_create = Faults(latency=8.0, methods=("POST",), paths=("/me/videos",))
    async with Emulator(faults=slow_create) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        opts = ("--stalled-after", "1.5", "--until-empty")
        first = await spawn(worker_cmd(emu, dsn, *opts))
        err1 = await pause_while_another_takes_over(
            emu, dsn, first, opts, wait_for_request(emu, "api", "POST", "/me/videos")
        )
        creates = [r for r in emu.requests if r.method == "POST" and r.path == "/me/videos"]
        assert len(creates) == 2  # both sent one: the case under test
        videos = emu.videos()
        assert len(videos) == 1, [(v["id"], v.get("tags")) for v in videos]
        after = await journal_records(dsn)
    (record,) = after.values()
    assert str(record.stage) == "done"  # type: ignore[attr-defined]
    assert record.video_id == videos[0]["id"]  # type: ignore[attr-defined]
    said = err1.decode()
    assert "lost job" in said and "deleted its duplicate video" in said


@pytest.mark.system
async def test_a_worker_paused_while_its_subtitle_is_in_flight_deletes_its_duplicate(
    tmp_path: Path,
    dsn: str,
    subtitle_host: str,
) -> None:
    """The same for a subtitle track: A's track lands after B listed none and sent its
    own; A, resumed, deletes its track and the video keeps one per language."""
    files = [make_file(tmp_path / "subbed.mp4", 100_000)]
    jobs = [
        va.UploadJob(
            path=f,
            title=f.name,
            channel="news",
            subtitles=[va.SubtitleSpec("en", url=f"{subtitle_host}/en.srt")],
        )
        for f in files
    ]
    slow_subtitle = Faults(latency=8.0, methods=("POST",), paths=("/video/",))
    async with Emulator(faults=slow_subtitle) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs)
        opts = ("--stalled-after", "1.5", "--until-empty")
        first = await spawn(worker_cmd(emu, dsn, *opts))

        def sends() -> list[object]:
            return [r for r in emu.requests if r.method == "POST" and r.path.endswith("/subtitles")]

        async def sent() -> None:
            while not sends():  # noqa: ASYNC110 - waiting for the emulator to see it
                await asyncio.sleep(0.01)

        err1 = await pause_while_another_takes_over(emu, dsn, first, opts, sent())
        assert len(sends()) == 2  # both sent one: the case under test
        (video,) = emu.videos()
        async with va.Client(access_token=emu.token, base_url=emu.base_url) as client:
            tracks = await client.list_subtitles(video["id"])
        after = await journal_records(dsn)
    assert [t.language for t in tracks] == ["en"], tracks
    (record,) = after.values()
    assert str(record.stage) == "done"  # type: ignore[attr-defined]
    assert record.video_id == video["id"]  # type: ignore[attr-defined]
    said = err1.decode()
    assert "lost job" in said and "deleted its duplicate subtitle" in said


_POOL_NOISE = """
import logging, sys
from vidapi_async._observe import configure_logging
configure_logging(int(sys.argv[1]))
logging.getLogger("psycopg.pool").warning(
    "error connecting in 'pool-1': connection failed: connection to server at "
    '"127.0.0.1", port 1 failed: hunter2secret'
)
logging.getLogger("psycopg_pool.sched").warning("error connecting in the scheduler")
logging.getLogger("psycopg").warning("error connecting: hunter2secret")
logging.getLogger("vidapi_async.worker").warning("the database x is away (refused)")
"""


@pytest.mark.parametrize("verbosity", [0, 1, 2])
async def test_the_cli_logs_psycopg_pool_retries_only_at_debug(
    tmp_path: Path, verbosity: int
) -> None:
    """While PostgreSQL is away psycopg_pool warns at each reconnect attempt, server
    text included: the CLI's stderr keeps our one outage line and shows theirs only at
    ``-vv`` (debug). In a fresh process: no test runner's handler in the way."""
    code, out = await _run_child([sys.executable, "-c", _POOL_NOISE, str(verbosity)], tmp_path)
    assert code == 0, out
    assert out.count("the database x is away") == 1
    if verbosity < 2:
        assert "error connecting" not in out and "hunter2secret" not in out, out
    else:
        assert out.count("error connecting") == 3, out


class CutProxy:
    """A TCP proxy on 127.0.0.1 in front of PostgreSQL, as a network cut looks to a
    worker: ``cut()`` aborts every connection through it and refuses new ones (each is
    accepted, then closed at once), ``restore()`` lets them through again."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.up = True
        self.pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> CutProxy:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        self.cut()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.server.wait_closed()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.up:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        pair = (writer, up_writer)
        self.pairs.add(pair)
        me = asyncio.current_task()
        assert me is not None
        self.tasks.add(me)  # type: ignore[arg-type]
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            self.pairs.discard(pair)
            self.tasks.discard(me)  # type: ignore[arg-type]

    def cut(self) -> None:
        self.up = False
        for a, b in list(self.pairs):
            a.transport.abort()
            b.transport.abort()

    def restore(self) -> None:
        self.up = True


def through(where: str, port: int) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return make_conninfo(**{**conninfo_to_dict(where), "host": "127.0.0.1", "port": str(port)})


@pytest.mark.system
@pytest.mark.parametrize("delay", [0.0, 1.0], ids=["at-the-cut", "1s-after"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.usefixtures("parent_ignores_signals")
async def test_a_worker_signalled_just_after_a_network_cut_stops(
    tmp_path: Path,
    dsn: str,
    sig: signal.Signals,
    delay: float,
) -> None:
    """The cut not yet noticed by the worker (no 'is away' waited for): SIGTERM or
    Ctrl-C still stops it, with exit 0 and the one line, its jobs left to be taken
    over (SIGTERM was lost: the worker ran on for minutes)."""
    from psycopg.conninfo import conninfo_to_dict

    files = [make_file(tmp_path / f"n{i}.mp4", 50_000 + i) for i in range(6)]
    parts = conninfo_to_dict(dsn)
    async with (
        Emulator(faults=Faults(latency=0.2)) as emu,
        CutProxy(str(parts.get("host", "127.0.0.1")), int(parts.get("port", 5432))) as proxy,
    ):
        cut_dsn = through(dsn, proxy.port)
        async with SharedBatch(cut_dsn) as shared:
            await shared.enqueue(jobs_for(files))
        worker = await asyncio.create_subprocess_exec(
            *worker_cmd(emu, cut_dsn),  # the default --stalled-after, as the reviewer ran it
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=default_signals,
        )
        try:
            await asyncio.wait_for(wait_for_request(emu, "upload", "POST", "/upload"), 60)
            proxy.cut()
            await asyncio.sleep(delay)  # the reviewer: 1 s after the cut
            worker.send_signal(sig)
            # a guard against a hang (it ran on for minutes), not a timing
            _, err = await asyncio.wait_for(worker.communicate(), 30)
        finally:
            if worker.returncode is None:
                worker.kill()
                await worker.wait()
        said = err.decode()
        assert worker.returncode == 0, said[-3000:]
        assert "Traceback" not in said, said[-3000:]
        assert "left to be taken over" in said, said[-3000:]
        proxy.restore()
        last = await spawn(worker_cmd(emu, cut_dsn, "--stalled-after", "1", "--until-empty"))
        _, err = await asyncio.wait_for(last.communicate(), 120)
        assert last.returncode == 0, err.decode()[-2000:]
        assert_one_video_per_file(emu, files)
