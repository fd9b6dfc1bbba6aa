"""The Prometheus endpoint (``metrics_port``, ``--metrics-port``) of a batch, of ``vidapi
batch`` and of ``vidapi worker``: scraped while the jobs run, checked against what they
did; a port in use or not a port refused by name."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX only")


def _scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = resp.read().decode()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}"] = sample.value
    return values


async def test_the_metrics_endpoint_scraped_during_a_batch(tmp_path: Path) -> None:
    files = [make_file(tmp_path / f"f{i}.mp4", 4000) for i in range(3)]
    finished: list[int] = []
    scrapes: list[float] = []
    done = asyncio.Event()

    def progress(p: va.BatchProgress) -> None:
        finished.append(p.done + p.failed)
        done.set()

    async with Emulator(probe=False, faults=Faults(latency=0.01)) as emu:
        async with client_for(emu) as client:
            batch = va.BatchUploader(client, concurrency=1, progress=progress, metrics_port=0)
            async with batch:
                port = batch.metrics_port
                assert port is not None

                async def jobs() -> Any:
                    for i, f in enumerate(files):
                        while (finished[-1] if finished else 0) < i:
                            done.clear()
                            await done.wait()
                        got = await asyncio.to_thread(_scrape, port)
                        scrapes.append(got.get("vidapi_jobs_total{outcome=done}", 0.0))
                        yield va.UploadJob(path=f, title=f"t{i}", channel="news")

                results = [r async for r in batch.run(jobs())]
                last = await asyncio.to_thread(_scrape, port)
    assert [r.status.value for r in results] == ["done"] * 3
    assert scrapes == [0.0, 1.0, 2.0]
    assert last["vidapi_jobs_total{outcome=done}"] == 3.0
    assert last["vidapi_upload_bytes_total{}"] == 3 * 4000
    assert last["vidapi_jobs_in_flight{}"] == 0.0
    assert any(k.startswith("http_client_request_duration_seconds_count{") for k in last)
    with pytest.raises(urllib.error.URLError, match="refused"):  # closed with the batch
        _scrape(port)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_vidapi_batch_serves_metrics_while_it_runs(tmp_path: Path) -> None:
    """``vidapi batch DIR --metrics-port N``: the endpoint a worker has, for a batch run
    from the command line (before: only in code); it says where, and counts every job."""
    folder = tmp_path / "clips"
    folder.mkdir()
    for i in range(4):
        make_file(folder / f"b{i}.mp4", 3000 + i)
    port = _free_port()
    async with Emulator(probe=False, faults=Faults(latency=0.05)) as emu:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "vidapi_async.cli",
            "--token", emu.token, "--base-url", emu.base_url,
            "batch", str(folder), "--channel", "news", "--concurrency", "1",
            "--journal", str(tmp_path / "j.sqlite"), "--metrics-port", str(port),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        finished = asyncio.ensure_future(proc.communicate())
        scraped: list[float] = []
        while not finished.done():
            try:
                got = await asyncio.to_thread(_scrape, port)
            except OSError:
                got = None  # not listening yet, or closing
            if got is not None:
                scraped.append(got.get("vidapi_jobs_total{outcome=done}", 0.0))
            await asyncio.wait([finished], timeout=0.05)
        _, err = await finished
    assert proc.returncode == 0, err.decode()[-2000:]
    assert scraped and scraped == sorted(scraped) and scraped[-1] <= 4, scraped
    assert any(0 < n < 4 for n in scraped), scraped  # seen part-way through
    assert f"http://127.0.0.1:{port}/metrics" in err.decode()


async def test_a_busy_metrics_port_is_a_usage_error_for_batch_and_worker(
    tmp_path: Path,
) -> None:
    make_file(tmp_path / "a.mp4", 3000)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        async with Emulator(probe=False) as emu:
            code, _, err = await vidapi(
                "--token", emu.token, "--base-url", emu.base_url, "batch", str(tmp_path),
                "--channel", "news", "--journal", str(tmp_path / "j.sqlite"),
                "--metrics-port", port,
            )  # fmt: skip
            assert not emu.videos()
    assert code == 2 and "--metrics-port" in err and port in err, err
    for command in ("batch", "worker"):
        code, _, err = await vidapi(command, "--metrics-port", "70000")
        assert code == 2 and "70000 is not a port" in err, err


@pytest.mark.system
async def test_vidapi_worker_serves_metrics_and_logs_json_lines(tmp_path: Path) -> None:
    pytest.importorskip("procrastinate")
    from tests.system.test_shared_queue import jobs_for, spawn, worker_cmd
    from vidapi_async.batch import SharedBatch

    admin_dsn = await _database()
    files = [make_file(tmp_path / f"w{i}.mp4", 3000) for i in range(4)]
    port = _free_port()
    try:
        async with Emulator(probe=False, faults=Faults(latency=0.02)) as emu:
            async with SharedBatch(admin_dsn) as shared:
                assert (await shared.enqueue(jobs_for(files))).added == 4
            cmd = worker_cmd(emu, admin_dsn, "--until-empty", "--metrics-port", str(port))
            proc = await spawn([*cmd, "--log-format", "json"])
            finished = asyncio.ensure_future(proc.communicate())
            scraped: list[float] = []
            while not finished.done():  # scrape the worker while it runs
                try:
                    got = await asyncio.to_thread(_scrape, port)
                except OSError:  # URLError included
                    got = None  # not listening yet, or closing
                if got is not None:
                    scraped.append(got.get("vidapi_jobs_total{outcome=done}", 0.0))
                await asyncio.wait([finished], timeout=0.05)
            _, err = await finished
            token = emu.token
    finally:
        await _drop(admin_dsn)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert scraped, "the endpoint answered while the worker ran"
    assert scraped == sorted(scraped) and scraped[-1] <= 4
    lines = [json.loads(line) for line in err.decode().splitlines()]  # every line JSON
    jobs = [
        x for x in lines if x["logger"] == "vidapi_async.worker" and " done at " in x["message"]
    ]
    assert len(jobs) == 4
    assert not any(token in x["message"] for x in lines)


async def _database() -> str:
    from tests.pg import DSN, connect_or_install

    psycopg = pytest.importorskip("psycopg")
    admin = await connect_or_install()
    name = f"t_{uuid.uuid4().hex[:12]}"
    try:
        await admin.execute(
            psycopg.sql.SQL("create database {}").format(psycopg.sql.Identifier(name))
        )
    finally:
        await admin.close()
    return DSN.rsplit("/", 1)[0] + "/" + name


async def _drop(dsn: str) -> None:
    from tests.pg import connect_or_install

    psycopg = pytest.importorskip("psycopg")
    admin = await connect_or_install()
    try:
        name = dsn.rsplit("/", 1)[1]
        await admin.execute(
            psycopg.sql.SQL("drop database if exists {} with (force)").format(
                psycopg.sql.Identifier(name)
            )
        )
    finally:
        await admin.close()


async def test_a_metrics_port_in_use_is_a_clear_error(emulator: Emulator) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with client_for(emulator) as client:
            batch = va.BatchUploader(client, metrics_port=port)
            with pytest.raises(va.InvalidArgumentError, match=r"metrics_port.*in use"):
                await batch.__aenter__()
            with pytest.raises(va.InvalidArgumentError, match="metrics_port"):
                va.BatchUploader(client, metrics_port=70000)


async def test_bool_is_not_a_metrics_port(emulator: Emulator) -> None:
    async with client_for(emulator) as client:
        with pytest.raises(va.InvalidArgumentError, match="metrics_port"):
            va.BatchUploader(client, metrics_port=True)


async def test_an_endpoint_started_again_never_serves_a_negative_in_flight() -> None:
    from vidapi_async._metrics import REGISTRY, MetricsServer
    from vidapi_async._observe import Observer

    observer = Observer()
    first = MetricsServer(0)
    counted = observer.job_started()
    first.close()
    second = MetricsServer(0)  # starts from zero: the job above is none of its
    try:
        observer.job_finished("done", 0.1, counted)
        text = REGISTRY.render()
    finally:
        second.close()
    assert "\nvidapi_jobs_in_flight 0\n" in text, text
