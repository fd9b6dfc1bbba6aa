"""A shared queue's job whose account's variable is not set on the worker that takes it
(issue 41, the attacker's look): recorded failed with an error naming the variable
(never a value), seen by ``status`` and the report, tried again by the queue (another
worker may have the variable) and, once failed for good, enqueued again and done."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import attrs
import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import OTHER_TOKEN, Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system  # workers against PostgreSQL
pytest.importorskip("psycopg")
batch = pytest.importorskip("vidapi_async.batch")


async def test_a_job_whose_account_is_not_set_on_the_worker_is_failed_not_done(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIDAPI_SPORT_TOKEN", raising=False)
    own = make_file(tmp_path / "own.mp4", 2100)
    sport = make_file(tmp_path / "sport.mp4", 2200)
    jobs = [
        va.UploadJob(path=own, title="own", channel="news"),
        va.UploadJob(path=sport, title="sport", channel="news", account="VIDAPI_SPORT_TOKEN"),
    ]
    async with Emulator(probe=False) as emu, batch.SharedBatch(dsn) as shared:
        assert (await shared.enqueue(jobs)).added == 2
        async with client_for(emu) as client:
            await asyncio.wait_for(shared.work(client, until_empty=True, poll=0.2), 120)
        status = await shared.status()
        assert (status.done, status.failed, status.queued, status.running) == (1, 1, 0, 0)
        [(error,)] = await shared.journal.fetchall(
            shared.journal.statement("select error from {s}.jobs where error is not null")
        )
        assert "VIDAPI_SPORT_TOKEN" in error and "not set" in error
        report = tmp_path / "map.csv"
        await shared.write_report(report)
        with report.open(encoding="utf-8") as text:
            rows = {r["source"]: r for r in csv.DictReader(text)}
        assert rows[str(sport)]["status"] == "failed"
        assert "VIDAPI_SPORT_TOKEN" in rows[str(sport)]["error"]
        assert [v["title"] for v in emu.videos()] == ["own"]
        # retryable: once the variable is set, an enqueue runs it again, by its account
        monkeypatch.setenv("VIDAPI_SPORT_TOKEN", OTHER_TOKEN)
        assert (await shared.enqueue(jobs)).added == 1
        async with client_for(emu) as client:
            await asyncio.wait_for(shared.work(client, until_empty=True, poll=0.2), 120)
        status = await shared.status()
        assert (status.done, status.failed) == (2, 0)
        assert sorted(v["title"] for v in emu.videos()) == ["own", "sport"]


async def test_two_variables_holding_one_token_share_one_window_across_workers(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.test_accounts import one_account_two_names
    from tests.system.test_shared_quota import refusals

    jobs = one_account_two_names(tmp_path, monkeypatch)  # OTHER_TOKEN, by two names
    async with Emulator(quota="2/1s", probe=False) as emu, batch.SharedBatch(dsn) as shared:
        assert (await shared.enqueue(jobs)).added == 4
        async with client_for(emu) as client:
            await asyncio.wait_for(
                shared.work(client, concurrency=4, until_empty=True, poll=0.2, quota="2/1s"), 120
            )
        status = await shared.status()
        assert (status.done, status.failed) == (4, 0)
        assert refusals(emu) == 0  # one window for the one account
        tables = await shared.journal.fetchall(
            shared.journal.statement(
                "select account from {s}.quota_slots union all "
                "select account || coalesce(name, '') from {s}.quota_accounts"
            )
        )
        assert tables and all(OTHER_TOKEN not in row[0] for row in tables)
        assert len(status.accounts) == 1  # shown by the first variable's name


EARLIER_WINDOWS = (  # the windows' tables as a worker of an earlier release made them
    "create table {s}.quota_slots (id bigserial primary key, account text not null, "
    "at timestamptz not null default now(), ended boolean not null default false)",
    "create table {s}.quota_blocks (account text primary key, until timestamptz not null)",
)


async def test_status_reads_the_quota_table_an_earlier_worker_made(dsn: str) -> None:
    async with batch.SharedBatch(dsn) as shared:
        await shared.status()  # the schema made
        journal = shared.journal
        for statement in (  # the table as workers before the name column made it
            "create table {s}.quota_accounts (account text primary key, "
            "videos integer not null, period double precision not null)",
            "insert into {s}.quota_accounts values ('VIDAPI_NEWS_TOKEN', 2, 3600)",
            *EARLIER_WINDOWS,
        ):
            await journal.execute(journal.statement(statement))
        status = await shared.status()
        assert status.accounts["VIDAPI_NEWS_TOKEN"]["quota"] == "2/1h"
        assert status.accounts["VIDAPI_NEWS_TOKEN"]["used"] == 0


async def test_a_done_job_enqueued_under_another_account_is_said_changed(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDAPI_NEWS_TOKEN", OTHER_TOKEN)
    path = make_file(tmp_path / "moved.mp4", 2400)
    job = va.UploadJob(path=path, title="moved", channel="news")
    async with Emulator(probe=False) as emu, batch.SharedBatch(dsn) as shared:
        await shared.enqueue([job])
        async with client_for(emu) as client:
            await asyncio.wait_for(shared.work(client, until_empty=True, poll=0.2), 120)
        moved = await shared.enqueue([attrs.evolve(job, account="VIDAPI_NEWS_TOKEN")])
        assert (moved.added, len(moved.changed)) == (0, 1)  # said, not applied
        assert len(emu.videos()) == 1


async def test_an_accounts_refused_token_fails_its_job_and_the_worker_goes_on(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.test_accounts import REVOKED, account_then_own

    monkeypatch.setenv("VIDAPI_REVOKED_TOKEN", REVOKED)
    jobs = account_then_own(tmp_path, "VIDAPI_REVOKED_TOKEN", ["bad", "own", "own2"])
    async with Emulator(probe=False) as emu, batch.SharedBatch(dsn) as shared:
        assert (await shared.enqueue(jobs)).added == 3
        async with client_for(emu) as client:  # the worker does not stop at the bad token
            await asyncio.wait_for(
                shared.work(client, concurrency=1, until_empty=True, poll=0.2), 120
            )
        status = await shared.status()
        assert (status.done, status.failed, status.queued, status.running) == (2, 1, 0, 0)
        [(error,)] = await shared.journal.fetchall(
            shared.journal.statement("select error from {s}.jobs where error is not null")
        )
        assert "VIDAPI_REVOKED_TOKEN" in error and REVOKED not in error
        assert sorted(v["title"] for v in emu.videos()) == ["own", "own2"]


async def _own_quota_flagged(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch, quota: str | None
) -> tuple[dict[str, str | None], list[str]]:
    """An earlier unpaced worker's refusal kept for the client's own account (an hour),
    then a worker (paced by ``quota``, or not) running a job of the client's own account
    and one of another's: each job's error (``None``: done) and the videos made."""
    monkeypatch.setenv("VIDAPI_SPORT_TOKEN", OTHER_TOKEN)
    jobs = [
        va.UploadJob(path=make_file(tmp_path / "own.mp4", 2400), title="own", channel="news"),
        va.UploadJob(path=make_file(tmp_path / "sport.mp4", 2401), title="sport",
                     channel="news", account="VIDAPI_SPORT_TOKEN"),
    ]  # fmt: skip
    async with Emulator(probe=False) as emu, batch.SharedBatch(dsn) as shared:
        assert (await shared.enqueue(jobs)).added == 2
        await shared.quota_hit(va.QuotaExceededError("quota", status=403, retry_after=3600))
        async with client_for(emu) as client:
            await asyncio.wait_for(
                shared.work(client, until_empty=True, poll=0.2, quota=quota), 120
            )
        report = tmp_path / "map.csv"
        await shared.write_report(report)
        with report.open(encoding="utf-8") as text:
            rows = {Path(r["source"]).stem: r for r in csv.DictReader(text)}
        errors = {title: rows[title]["error"] or None for title in ("own", "sport")}
        return errors, sorted(v["title"] for v in emu.videos())


async def test_a_paced_worker_never_fails_a_job_by_an_earlier_refusals_flag(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors, made = await _own_quota_flagged(tmp_path, dsn, monkeypatch, "5/1s")
    assert errors == {"own": None, "sport": None}
    assert made == ["own", "sport"]


async def test_one_accounts_refusal_never_stops_another_accounts_jobs(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors, made = await _own_quota_flagged(tmp_path, dsn, monkeypatch, None)
    assert errors["sport"] is None and made == ["sport"]
    assert errors["own"] is not None and "quota" in errors["own"]


async def test_status_skips_a_window_an_earlier_release_kept_with_a_period_now_refused(
    dsn: str,
) -> None:
    async with batch.SharedBatch(dsn) as shared:
        await shared.status()  # the schema made
        journal = shared.journal
        for statement in (
            "create table {s}.quota_accounts (account text primary key, "
            "videos integer not null, period double precision not null, name text)",
            "insert into {s}.quota_accounts values ('VIDAPI_OLD_TOKEN', 1, 8.64e12, "
            "'VIDAPI_OLD_TOKEN'), ('VIDAPI_NEWS_TOKEN', 2, 3600, 'VIDAPI_NEWS_TOKEN')",
            *EARLIER_WINDOWS,
        ):
            await journal.execute(journal.statement(statement))
        status = await shared.status()
        assert list(status.accounts) == ["VIDAPI_NEWS_TOKEN"]
        assert status.accounts["VIDAPI_NEWS_TOKEN"]["quota"] == "2/1h"
