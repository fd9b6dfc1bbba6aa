"""Workers of the shared queue in API v2 (PostgreSQL): the same queue worked by a
v2 client, in-process and through ``vidapi --api v2 batch --journal DSN``; one video
per job on the emulator's v2."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.system.test_shared_queue import uploads_per_title
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system  # workers against PostgreSQL
pytest.importorskip("psycopg")
batch = pytest.importorskip("vidapi_async.batch")


async def test_a_v2_worker_finishes_the_queue(emulator: Emulator, tmp_path: Path, dsn: str) -> None:
    files = [make_file(tmp_path / f"w{i}.mp4", 3000 + i) for i in range(5)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    async with batch.SharedBatch(dsn) as shared:
        assert (await shared.enqueue(jobs)).added == 5
        async with client_for(emulator, api="v2") as client:
            await asyncio.wait_for(shared.work(client, concurrency=3, until_empty=True), 120)
        status = await shared.status()
        assert (status.queued, status.running, status.done) == (0, 0, 5)
    assert uploads_per_title(emulator) == Counter(f.name for f in files)


async def test_the_cli_batch_on_a_queue_in_v2(tmp_path: Path, dsn: str) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    files = [make_file(folder / f"c{i}.mp4", 4000 + i) for i in range(4)]
    async with Emulator(probe=False) as emu:
        async with client_for(emu, api="v2") as client:
            token = (await client.access_token()).token
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "vidapi_async.cli",
            # --token=TOKEN: a random token may start with "-", which argparse would
            # take for an option after a separate "--token"
            *("--api", "v2", f"--token={token}", "--base-url", emu.v2_base_url, "--json"),
            *("batch", str(folder), "--channel", "news", "--journal", dsn),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        status = json.loads(out)
        assert (status["done"], status["queued"]) == (4, 0)
        assert uploads_per_title(emu) == Counter(f.stem for f in files)
