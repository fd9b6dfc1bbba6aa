"""BatchUploader stopped part-way (cancelled, killed, a chunked upload cut short, an
uploaded file expired) and run again with its journal: every job ends with one video,
and nothing sent before the stop is sent again."""

from __future__ import annotations

import asyncio
import random
import signal
import sys
from collections import Counter
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_batch import HERE, assert_one_video_per_job, jobs_for, make_files
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for


async def test_a_rerun_skips_done_jobs_and_resumes_the_rest(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 12)
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        # creating fails for good the first time: every job stops at the upload stage
        emu.faults.update({"error_rate": 1.0, "methods": ["POST"], "paths": ["/me/videos"]})
        async with va.BatchUploader(client, concurrency=4, journal=journal) as batch:
            first = [r async for r in batch.run(jobs_for(files))]
        assert {r.status for r in first} == {va.JobStatus.FAILED}
        assert {r.stage for r in first} == {va.Stage.CREATING}
        assert all(isinstance(r.error, va.ServerError) for r in first)
        uploads_before = len([r for r in emu.requests if r.path == "/upload"])
        emu.faults.update({"error_rate": 0.0})
        async with va.BatchUploader(client, concurrency=4, journal=journal) as batch:
            second = [r async for r in batch.run(jobs_for(files))]
        assert {r.status for r in second} == {va.JobStatus.DONE}
        assert {r.runs for r in second} == {2}
        # resumed from their stage: nothing was uploaded again
        assert len([r for r in emu.requests if r.path == "/upload"]) == uploads_before
        async with va.BatchUploader(client, concurrency=4, journal=journal) as batch:
            third = [r async for r in batch.run(jobs_for(files))]
        assert {r.status for r in third} == {va.JobStatus.SKIPPED}
        assert_one_video_per_job(emu, files)


async def test_cancellation_stops_promptly_and_leaves_a_consistent_journal(
    tmp_path: Path,
) -> None:
    files = make_files(tmp_path / "files", 40)
    journal = tmp_path / "j.sqlite"
    async with (
        Emulator(probe=False, faults=Faults(latency=0.01)) as emu,
        client_for(emu, retry=va.NO_RETRY) as client,
    ):
        got: list[va.JobResult] = []

        async def consume() -> None:
            async with va.BatchUploader(client, concurrency=8, journal=journal) as batch:
                async for result in batch.run(jobs_for(files)):
                    got.append(result)
                    if len(got) == 5:
                        task.cancel()

        task = asyncio.create_task(consume())
        with pytest.raises(asyncio.CancelledError):
            await task
        ours = [
            t
            for t in asyncio.all_tasks()
            if t is not asyncio.current_task()
            and getattr(t.get_coro(), "__qualname__", "") != "RequestHandler.start"
        ]  # the emulator's own connection handlers aside, nothing is left running
        assert ours == []
        records = va.SQLiteJournal(journal).records_sync()
        assert all(r.stage in set(va.Stage) for r in records)
        assert 5 <= sum(r.stage is va.Stage.DONE for r in records) < 40
        async with va.BatchUploader(client, concurrency=8, journal=journal) as batch:
            rest = [r async for r in batch.run(jobs_for(files))]
        assert {r.status for r in rest} <= {va.JobStatus.DONE, va.JobStatus.SKIPPED}
        assert_one_video_per_job(emu, files)


@pytest.mark.system
async def test_killed_at_random_moments_then_rerun_makes_one_video_per_job(
    tmp_path: Path, subtitle_host: str
) -> None:
    files = make_files(tmp_path / "files", 64, size=150_000)
    journal = tmp_path / "j.sqlite"
    rng = random.Random(1234)
    stages_at_kill: list[Counter[str]] = []
    # a little latency widens the window between "create sent" and "id recorded";
    # no ffprobe (0.1 s an upload where it is installed, as in CI): with it, a kill 0-80 ms
    # after a wave of jobs ended always fell before the next wave recorded anything
    async with Emulator(faults=Faults(latency=0.01), probe=False) as emu:

        async def spawn() -> asyncio.subprocess.Process:
            return await asyncio.create_subprocess_exec(
                sys.executable,
                str(HERE / "batch_child.py"),
                emu.base_url,
                str(tmp_path / "files"),
                str(journal),
                f"{subtitle_host}/en.srt",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )

        for _ in range(15):
            proc = await spawn()
            assert proc.stdout is not None
            assert (await proc.stdout.readline()).strip() == b"ready"
            # the moment of the kill: after 1 to 3 more jobs are done, then a little later
            fresh = rng.randint(1, 3)
            while fresh:
                line = await proc.stdout.readline()
                if not line:
                    break
                fresh -= b" done " in line
            await asyncio.sleep(rng.uniform(0.0, 0.08))
            if proc.returncode is None:
                proc.send_signal(signal.SIGKILL)
            await proc.communicate()
            stages_at_kill.append(
                Counter(r.stage.value for r in va.SQLiteJournal(journal).records_sync())
            )
        proc = await spawn()
        _, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()[-2000:]
        assert_one_video_per_job(emu, files)
    # the kills fell at many different points of the work
    assert len({tuple(sorted(c.items())) for c in stages_at_kill}) >= 10
    # and some of them caught jobs part-way through their pipeline
    assert any(set(c) - {"done"} for c in stages_at_kill), stages_at_kill


async def test_a_chunked_upload_cut_short_resumes_where_it_stopped(tmp_path: Path) -> None:
    import re

    chunk = 256 * 1024
    src = make_file(tmp_path / "long.mp4", 12 * chunk)
    journal = tmp_path / "j.sqlite"
    job = va.UploadJob(path=src, title="long", channel="news", key="long")

    def ranges(emu: Emulator, since: int = 0) -> list[str]:
        return [
            r.headers["Content-Range"]
            for r in emu.requests[since:]
            if re.fullmatch(r"bytes \d+-\d+/\d+", r.headers.get("Content-Range", ""))
        ]

    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        emu.faults.update({"paths": ["/upload"], "error_statuses": [500]})

        def cut_after_five(p: va.BatchProgress) -> None:
            if p.bytes_sent >= 5 * chunk:
                emu.faults.error_rate = 1.0

        async with va.BatchUploader(
            client,
            journal=journal,
            chunked=True,
            workers=1,
            range_size=chunk,
            progress=cut_after_five,
        ) as batch:
            [first] = [r async for r in batch.run([job])]
        assert first.status is va.JobStatus.FAILED
        assert first.stage is va.Stage.UPLOADING
        sent_first = set(ranges(emu))
        emu.faults.error_rate = 0.0
        before = len(emu.requests)
        async with va.BatchUploader(
            client, journal=journal, chunked=True, workers=2, range_size=chunk
        ) as batch:
            [second] = [r async for r in batch.run([job])]
        assert second.status is va.JobStatus.DONE
        resent = set(ranges(emu, before)) & {r for r in sent_first}
        held_first = {f"bytes {i}-{i + chunk - 1}/{12 * chunk}" for i in range(0, 5 * chunk, chunk)}
        assert not (resent & held_first), "acknowledged ranges were sent again"
        assert_one_video_per_job(emu, [src], title="long")


async def test_a_subtitle_sent_before_a_crash_is_not_sent_again(
    tmp_path: Path, subtitle_host: str
) -> None:
    files = make_files(tmp_path / "files", 1)
    journal = tmp_path / "j.sqlite"
    job = va.UploadJob(
        path=files[0],
        title="subs",
        channel="news",
        key="subs",
        subtitles=[va.SubtitleSpec("en", url=f"{subtitle_host}/en.srt")],
    )
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        # the subtitle is created but its answer is lost: the run fails at that stage,
        # as a crash right after sending would leave it
        emu.faults.update({"drop_response_rate": 1.0, "paths": ["/video/"], "methods": ["POST"]})
        async with va.BatchUploader(client, journal=journal) as batch:
            [first] = [r async for r in batch.run([job])]
        assert first.status is va.JobStatus.FAILED
        assert emu.state.count("subtitle") == 1
        emu.faults.update({"drop_response_rate": 0.0})
        async with va.BatchUploader(client, journal=journal) as batch:
            [second] = [r async for r in batch.run([job])]
        assert second.status is va.JobStatus.DONE
        assert emu.state.count("subtitle") == 1


async def test_an_uploaded_file_that_expired_is_uploaded_again(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 1)
    journal = tmp_path / "j.sqlite"
    job = va.UploadJob(path=files[0], title="late", channel="news", key="late")
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        emu.faults.update({"error_rate": 1.0, "methods": ["POST"], "paths": ["/me/videos"]})
        async with va.BatchUploader(client, journal=journal) as batch:
            [first] = [r async for r in batch.run([job])]
        assert first.stage is va.Stage.CREATING
        [stale] = va.SQLiteJournal(journal).records_sync()
        assert stale.file_url is not None
        emu.state.delete("file", stale.file_url.split("#")[0])  # the platform forgot it
        emu.faults.update({"error_rate": 0.0})
        async with va.BatchUploader(client, journal=journal) as batch:
            [second] = [r async for r in batch.run([job])]
        assert second.status is va.JobStatus.DONE
        assert len([r for r in emu.requests if r.path == "/upload"]) == 2
        assert_one_video_per_job(emu, files, title="late")
