"""The account's daily quota: a typed error, and a batch that stops starting uploads."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.cli._batch import quota_advice
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for


def uploads(emu: Emulator) -> int:
    return len([r for r in emu.requests if r.host == "upload" and r.method == "POST"])


async def test_the_quota_refusal_is_typed_with_when_it_resets(tmp_path: Path) -> None:
    async with Emulator(faults=Faults(videos_per_day=1)) as emu, client_for(emu) as client:
        first = await client.upload_file(make_file(tmp_path / "a.mp4", 3000))
        await client.create_video(url=first.url, title="one", channel="news")
        second = await client.upload_file(make_file(tmp_path / "b.mp4", 3000))
        with pytest.raises(va.QuotaExceededError) as info:
            await client.create_video(url=second.url, title="two", channel="news")
    exc = info.value
    assert isinstance(exc, va.ForbiddenError)
    assert exc.reason == "quota_exceeded"
    assert exc.retry_after is not None
    assert 86000 < exc.retry_after <= 86400


async def test_a_batch_stops_starting_uploads_and_a_rerun_finishes(tmp_path: Path) -> None:
    files = [make_file(tmp_path / f"f{i}.mp4", 4000 + i) for i in range(10)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    journal = tmp_path / "j.sqlite"
    async with Emulator(faults=Faults(videos_per_day=3)) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=2, journal=journal) as batch:
            first = [r async for r in batch.run(jobs)]
        done = [r for r in first if r.status is va.JobStatus.DONE]
        failed = [r for r in first if r.status is va.JobStatus.FAILED]
        assert len(done) == 3
        assert len(failed) == 7
        assert all(isinstance(r.error, va.QuotaExceededError) for r in failed)
        # the refused create, and at most `concurrency` more uploads after it
        assert uploads(emu) <= 3 + 1 + 2
        not_uploaded = [r for r in failed if r.stage is va.Stage.PENDING]
        assert len(not_uploaded) >= 7 - 3
        sent_before = uploads(emu)
        emu.faults.videos_per_day = None  # the quota resets
        async with va.BatchUploader(client, concurrency=2, journal=journal) as batch:
            second = [r async for r in batch.run(jobs)]
        assert sorted(r.status.value for r in second) == ["done"] * 7 + ["skipped"] * 3
        # jobs whose file was uploaded already were only created
        assert uploads(emu) - sent_before == len(not_uploaded)
        assert len(emu.videos()) == 10


def test_the_cli_says_when_to_run_again() -> None:
    err = va.QuotaExceededError("quota", status=403, retry_after=3600)
    text = quota_advice(7, err)
    assert "7 job(s) not done" in text
    assert "run the same command again after 20" in text
    assert "once the quota resets" in quota_advice(1, va.QuotaExceededError("q", status=403))
    # a rolling window, not a day; and the way to finish unattended
    assert "daily" not in text and "--quota" in text and "15/24h" in text
