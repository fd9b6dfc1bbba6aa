"""A worker and a PostgreSQL server that is down or stopping (issue 29), on a throwaway
cluster (tests/pg_cluster.py): a worker started while the server is down waits for it
with the same backoff as one that loses it later, and SIGTERM always stops a worker
promptly, also while the server is stopping."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.conftest import make_file
from tests.integration.test_shared_queue_faults import wait_for_request
from tests.pg_cluster import pg_cluster
from tests.system.test_shared_queue import assert_one_video_per_file, jobs_for, spawn, worker_cmd
from vidapi_async.batch import SharedBatch
from vidapi_async.emulator import Emulator, Faults

pytestmark = pytest.mark.system

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")


async def read_until(proc: asyncio.subprocess.Process, text: bytes) -> bytes:
    said = b""
    assert proc.stderr is not None
    while text not in said:
        line = await proc.stderr.readline()
        if not line:
            break
        said += line
    return said


async def test_a_worker_started_while_postgresql_is_down_waits_for_it(tmp_path: Path) -> None:
    files = [make_file(tmp_path / f"w{i}.mp4", 20_000 + i) for i in range(3)]
    with pg_cluster() as cluster:
        async with Emulator(faults=Faults(latency=0.02)) as emu:
            async with SharedBatch(cluster.dsn) as shared:
                await shared.enqueue(jobs_for(files))
            await asyncio.to_thread(cluster.stop)
            worker = await spawn(
                worker_cmd(emu, cluster.dsn, "--stalled-after", "2", "--until-empty")
            )
            said = await asyncio.wait_for(read_until(worker, b"is away"), 60)
            assert b"is away" in said, said.decode()
            assert worker.returncode is None  # waiting, not exited
            await asyncio.to_thread(cluster.start)
            _, err = await asyncio.wait_for(worker.communicate(), 120)
            assert worker.returncode == 0, (said + err).decode()[-2000:]
            assert b"is back" in said + err
            assert_one_video_per_file(emu, files)


async def test_a_worker_waiting_for_postgresql_at_start_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    with pg_cluster() as cluster:
        async with Emulator() as emu:
            await asyncio.to_thread(cluster.stop)
            worker = await spawn(worker_cmd(emu, cluster.dsn))
            said = await asyncio.wait_for(read_until(worker, b"is away"), 60)
            assert b"is away" in said, said.decode()
            worker.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(worker.communicate(), 30)  # a guard, not a timing
            assert worker.returncode == 0, (said + err).decode()
            assert b"Traceback" not in said + err


async def test_a_worker_with_a_wrong_database_does_not_wait(tmp_path: Path) -> None:
    with pg_cluster() as cluster:
        async with Emulator() as emu:
            dsn = cluster.dsn.rsplit("/", 1)[0] + "/no_such_db"
            worker = await spawn(worker_cmd(emu, dsn))
            _, err = await asyncio.wait_for(worker.communicate(), 60)
            assert worker.returncode != 0
            assert b"no such database" in err and b"Traceback" not in err


@pytest.mark.parametrize(
    ("mode", "when"), [("fast", "seen-away"), ("fast", "stopping"), ("smart", "stopping")]
)
@pytest.mark.parametrize("run", range(3))
async def test_sigterm_while_postgresql_is_stopping_stops_the_worker(
    tmp_path: Path, mode: str, when: str, run: int
) -> None:
    """SIGTERM sent while ``pg_ctl stop`` is under way (jobs in flight): the worker
    exits within the guard, 0, whatever the statements in flight were waiting for."""
    files = [make_file(tmp_path / f"s{i}.mp4", 300_000 + i) for i in range(6)]
    with pg_cluster() as cluster:
        async with Emulator(faults=Faults(latency=0.3)) as emu:
            async with SharedBatch(cluster.dsn) as shared:
                await shared.enqueue(jobs_for(files))
            worker = await spawn(
                worker_cmd(emu, cluster.dsn, "--stalled-after", "3", "--concurrency", "4")
            )
            await asyncio.wait_for(wait_for_request(emu, "upload", "POST", "/upload"), 60)
            cmd = [
                f"{cluster.bin_dir}/pg_ctl", "-D", cluster.data, "-m", mode, "-t", "60", "stop",
            ]  # fmt: skip
            if cluster._user is not None:
                cmd = ["runuser", "-u", cluster._user, "--", *cmd]
            stopping = await asyncio.create_subprocess_exec(
                *cmd, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
            )
            try:
                if when == "seen-away":  # the worker says the database is away
                    said = await asyncio.wait_for(read_until(worker, b"is away"), 60)
                else:  # while the server stops, the worker may not have seen it yet
                    said = b""
                    await asyncio.sleep(0.5 if mode == "fast" else 1.0)
                await asyncio.sleep(0.1 * run)
                worker.send_signal(signal.SIGTERM)
                # a guard against the hang (it ran on until killed), not a timing
                try:
                    _, err = await asyncio.wait_for(worker.communicate(), 15)
                except TimeoutError:
                    worker.kill()
                    _, err = await worker.communicate()
                    pytest.fail("SIGTERM ignored: " + (said + err).decode()[-3000:])
                assert worker.returncode == 0, (said + err).decode()[-3000:]
                assert b"Traceback" not in said + err
            finally:
                if worker.returncode is None:
                    worker.kill()
                    await worker.wait()
                await asyncio.wait_for(stopping.wait(), 90)
