"""A batch killed (SIGKILL) mid-run leaves a valid report of what it finished; the
re-run completes it: every job mapped once, a skipped one with its video id."""

from __future__ import annotations

import asyncio
import csv
import os
import signal
import sys
from pathlib import Path

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator, Faults

COLUMNS = ["key", "source", "status", "video_id", "url", "embed_url", "error"]


def read_report(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == COLUMNS
    assert all(len(row) == len(COLUMNS) for row in rows[1:]), rows  # no half line
    return [dict(zip(COLUMNS, row, strict=True)) for row in rows[1:]]


async def test_a_killed_batch_leaves_a_valid_report_and_the_rerun_completes_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(12):
        make_file(folder / f"c{i:02d}.mp4", 3000 + i)
    report, journal = tmp_path / "map.csv", str(tmp_path / "j.sqlite")
    async with Emulator(faults=Faults(latency=0.05)) as emu:
        env = {**os.environ, "VIDAPI_TOKEN": emu.token, "VIDAPI_BASE_URL": emu.base_url}
        args = [sys.executable, "-m", "vidapi_async.cli", "batch", str(folder)]
        args += ["--channel", "news", "--journal", journal, "--concurrency", "2"]
        args += ["--report", str(report)]
        proc = await asyncio.create_subprocess_exec(
            *args, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        try:
            for _ in range(1200):
                if report.exists() and len(report.read_text().splitlines()) >= 3:
                    break
                await asyncio.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        first = read_report(report)
        assert 2 <= len(first) < 12
        ids = {v["id"] for v in emu.videos()}
        assert {r["video_id"] for r in first} <= ids and all(r["status"] == "done" for r in first)

        emu.faults.latency = 0
        proc = await asyncio.create_subprocess_exec(
            *args, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        again = read_report(report)
        assert len(again) == 12 == len(emu.videos())
        assert {r["video_id"] for r in again} == {v["id"] for v in emu.videos()}
        by_key = {r["key"]: r for r in again}
        for row in first:  # done before the kill: skipped now, with the same video
            assert (by_key[row["key"]]["status"], by_key[row["key"]]["video_id"]) == (
                va.JobStatus.SKIPPED.value,
                row["video_id"],
            )
