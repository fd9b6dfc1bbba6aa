"""A local paced batch (SQLite journal) shows its quota (issue 41, the fresh user's
look): a job that waits for its account's window is said at INFO (the account, places
used of the window's, when the next frees) and in the progress handed to the callback;
``vidapi status`` on the journal shows each account's quota, places used, next free
place and an estimate of when its jobs are done."""

from __future__ import annotations

import datetime
import json
import logging
import re
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from vidapi_async.emulator import OTHER_TOKEN, Emulator
from vidapi_async.testing import client_for


async def test_a_wait_for_the_window_is_logged_and_in_the_progress(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDAPI_SPORT_TOKEN", OTHER_TOKEN)
    files = [make_file(tmp_path / f"w{i}.mp4", 1000 + i) for i in range(3)]
    jobs = [
        va.UploadJob(path=f, title=f.name, channel="news", account="VIDAPI_SPORT_TOKEN")
        for f in files
    ]
    seen: list[va.BatchProgress] = []
    caplog.set_level(logging.INFO, logger="vidapi_async.batch")
    async with Emulator(quota="2/1s", probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, quota="2/1s", progress=seen.append) as batch:
            results = [r async for r in batch.run(jobs)]
    assert [r.status for r in results] == [va.JobStatus.DONE] * 3
    said = [r.getMessage() for r in caplog.records if "waits for its quota" in r.getMessage()]
    assert said, caplog.text
    assert re.search(r"VIDAPI_SPORT_TOKEN waits for its quota \(2/1s\): 2 of 2 places used; "
                     r"the next frees at \d\d:\d\d:\d\d", said[0]), said[0]  # fmt: skip
    assert OTHER_TOKEN not in caplog.text
    waits = [p.quota for p in seen if p.quota]
    assert waits, "no progress showed the wait"
    used, videos, free_at = waits[0]["VIDAPI_SPORT_TOKEN"]
    assert (used, videos) == (2, 2)
    now = datetime.datetime.now(datetime.UTC).timestamp()
    assert now - 30 < free_at < now + 2
    assert not seen[-1].quota  # the wait is over


async def test_vidapi_status_shows_a_local_journals_quota(tmp_path: Path) -> None:
    files = [make_file(tmp_path / f"s{i}.mp4", 1100 + i) for i in range(2)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, quota="2/1h", journal=journal) as batch:
            results = [r async for r in batch.run(jobs)]
    assert [r.status for r in results] == [va.JobStatus.DONE] * 2
    code, out, err = await vidapi("status", "--journal", str(journal), "--json")
    assert code == 0, err
    status = json.loads(out)
    own = status["accounts"][""]
    assert (own["quota"], own["used"], own["left"]) == ("2/1h", 2, 0)
    next_free = datetime.datetime.fromisoformat(own["next_free"])
    wait = (next_free - datetime.datetime.now(datetime.UTC)).total_seconds()
    assert 3500 < wait <= 3600
    code, out, err = await vidapi("status", "--journal", str(journal), env={"COLUMNS": "200"})
    assert code == 0, err
    assert "quota per account" in out and "2/1h" in out


async def test_the_local_estimate_counts_the_accounts_jobs_not_done(tmp_path: Path) -> None:
    from vidapi_async.batch._quota import local_accounts

    journal = va.SQLiteJournal(tmp_path / "j.sqlite")
    await journal.open()
    now = datetime.datetime.now(datetime.UTC).timestamp()
    await journal.save_quota("VIDAPI_NEWS_TOKEN", 2, 3600.0, [now - 600, now - 60])
    for n in range(3):  # three not done of this account, one of another
        await journal.save(va.JobRecord(f"k{n}", account="VIDAPI_NEWS_TOKEN"))
    await journal.save(va.JobRecord("other", account=""))
    await journal.save(va.JobRecord("done", va.Stage.DONE, account="VIDAPI_NEWS_TOKEN"))
    await journal.close()
    reader = va.SQLiteJournal(tmp_path / "j.sqlite")
    [(name, news)] = local_accounts(reader.quota_sync(), reader.records_sync()).items()
    assert name == "VIDAPI_NEWS_TOKEN"
    assert (news["quota"], news["used"], news["left"]) == ("2/1h", 2, 3)
    next_free = datetime.datetime.fromisoformat(news["next_free"]).timestamp()
    finish = datetime.datetime.fromisoformat(news["finish_estimate"]).timestamp()
    assert abs(next_free - (now - 600 + 3600)) < 5  # the oldest leaves the window
    assert abs(finish - (next_free + 3600)) < 5  # two then, the third a period later


def test_the_batch_bar_names_each_account_waiting_and_until_when() -> None:
    from vidapi_async.cli._progress import jobs_line

    assert jobs_line({}) == "jobs"
    at = datetime.datetime(2026, 11, 28, 21, 3, 5).timestamp()
    line = jobs_line({"VIDAPI_SPORT_TOKEN": (15, 15, at), "": (2, 2, at)})
    assert "VIDAPI_SPORT_TOKEN waits for its quota (15/15 used) until 21:03:05" in line
    assert "own account waits for its quota (2/2 used) until 21:03:05" in line


async def test_a_local_paced_batch_sets_the_quota_gauges(tmp_path: Path) -> None:
    import asyncio

    from tests.integration.test_queue_observe import scrape

    files = [make_file(tmp_path / f"m{i}.mp4", 1200 + i) for i in range(2)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, quota="2/1h", metrics_port=0) as batch:
            results = [r async for r in batch.run(jobs)]
            text = await asyncio.to_thread(scrape, batch.metrics_port or 0)
    assert [r.status for r in results] == [va.JobStatus.DONE] * 2
    assert 'vidapi_quota_used{account="own"} 2' in text
    assert re.search(r'vidapi_quota_next_free_seconds\{account="own"\} 3[56]\d\d', text), text
