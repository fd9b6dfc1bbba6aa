"""The platform is the source of truth on a shared queue (issue 40): two ``vidapi
worker`` processes make each playlist once, and a queue in a new schema over a done
migration adopts its videos (no upload, no create). Against a real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.system.test_shared_queue import spawn, worker_cmd
from vidapi_async.batch import SharedBatch
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system

NAMES = ("Alpha", "Beta", "Gamma", "Delta", "Epsilon")


def playlist_jobs(files: list[Path]) -> list[va.UploadJob]:
    """Each job in one or two of five playlists."""
    return [
        va.UploadJob(
            path=f,
            title=f.name,
            channel="news",
            key=f.stem,
            playlists=[NAMES[i % 5], NAMES[(i + 2) % 5]] if i % 2 else [NAMES[i % 5]],
        )
        for i, f in enumerate(files)
    ]


async def test_two_workers_make_each_playlist_once(tmp_path: Path, dsn: str) -> None:
    files = [make_file(tmp_path / f"p{i:02d}.mp4", 5000 + i) for i in range(16)]
    jobs = playlist_jobs(files)
    # creates slow enough that both workers reach a new name's creation together
    async with Emulator(probe=False, faults=Faults(latency=0.05)) as emu:
        async with SharedBatch(dsn) as shared:
            assert (await shared.enqueue(jobs)).added == len(jobs)
        procs = [await spawn(worker_cmd(emu, dsn, "--until-empty")) for _ in range(2)]
        for proc in procs:
            _, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()[-2000:]
        names = Counter(p["name"] for p in emu.state.all("playlist"))
        assert names == Counter(NAMES)  # each name once
        titles = {v["id"]: v["title"] for v in emu.videos()}
        held = {
            p["name"]: sorted(titles[v] for v in p["videos"]) for p in emu.state.all("playlist")
        }
        wanted: dict[str, list[str]] = {name: [] for name in NAMES}
        for job in jobs:
            for name in job.playlists:
                wanted[name].append(job.title)
        assert held == {name: sorted(t) for name, t in wanted.items()}


async def test_a_new_queue_over_a_done_migration_adopts_its_videos(
    tmp_path: Path,
    dsn: str,
) -> None:
    files = [make_file(tmp_path / f"d{i:02d}.mp4", 5000 + i) for i in range(4)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news", key=f.stem) for f in files]
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with SharedBatch(dsn, schema="first") as shared:
            await shared.enqueue(jobs)
            await shared.work(client, until_empty=True, poll=0.1)
        made = {v["title"]: v["id"] for v in emu.videos()}
        before = [r for r in emu.requests if r.method == "POST"]
        async with SharedBatch(dsn, schema="second") as shared:  # the journal lost
            await shared.enqueue(jobs)
            await shared.work(client, until_empty=True, poll=0.1)
            records = {r.key: r for r in await shared.journal.records()}
        assert [r for r in emu.requests if r.method == "POST"] == before
        assert {k: (r.stage, r.video_id) for k, r in records.items()} == {
            f.stem: (va.Stage.DONE, made[f.name]) for f in files
        }
        # a vidapi worker says how many it adopted, and counts none of them running
        async with SharedBatch(dsn) as shared:  # the command's schema
            await shared.enqueue(jobs)
        proc = await asyncio.create_subprocess_exec(
            *worker_cmd(emu, dsn, "--until-empty"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()[-2000:]
        said = out.decode() + err.decode()
        assert "this worker: 0 done, 4 adopted, 0 failed" in said, said
        assert [r for r in emu.requests if r.method == "POST"] == before


async def test_enqueue_over_a_local_migration_adopts_its_videos(
    tmp_path: Path,
    dsn: str,
) -> None:
    """Issue 40 #3: a migration done by ``vidapi batch`` (its videos carry the
    manifest's origin tag), then ``vidapi batch --enqueue-only`` into a shared queue and
    a ``vidapi worker``: each job is adopted (by its key tag and origin: the enqueue
    keeps the manifest's origin in each spec), nothing uploaded or created."""
    from tests.cli_run import vidapi_process

    for name in ("a", "b", "c"):
        make_file(tmp_path / f"{name}.mp4", 4000 + ord(name))
    manifest = tmp_path / "library.csv"
    manifest.write_text(
        "key,path,title,channel\nold-1,a.mp4,A,news\nold-2,b.mp4,B,news\nold-3,c.mp4,C,news\n",
        encoding="utf-8",
    )
    async with Emulator(probe=False) as emu:
        env = {"VIDAPI_TOKEN": emu.token, "VIDAPI_BASE_URL": emu.base_url}
        code, _, err = await vidapi_process(
            "batch", str(manifest), "--journal", str(tmp_path / "local.sqlite"), env=env
        )
        assert code == 0, err
        made = {v["title"]: v["id"] for v in emu.videos()}
        before = [r for r in emu.requests if r.method == "POST"]
        code, _, err = await vidapi_process(
            "batch", str(manifest), "--journal", dsn, "--enqueue-only", env=env
        )
        assert code == 0, err
        proc = await asyncio.create_subprocess_exec(
            *worker_cmd(emu, dsn, "--until-empty"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err_bytes = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err_bytes.decode()[-2000:]
        said = out.decode() + err_bytes.decode()
        assert "0 done, 3 adopted, 0 failed" in said, said
        assert [r for r in emu.requests if r.method == "POST"] == before
        assert {v["title"]: v["id"] for v in emu.videos()} == made
        async with SharedBatch(dsn) as shared:
            records = {r.key: (r.stage, r.video_id) for r in await shared.journal.records()}
        assert records == {
            "old-1": (va.Stage.DONE, made["A"]),
            "old-2": (va.Stage.DONE, made["B"]),
            "old-3": (va.Stage.DONE, made["C"]),
        }
