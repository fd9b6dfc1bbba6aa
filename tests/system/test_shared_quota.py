"""The shared queue honours each account's quota across all its workers (issue 41):
the windows live in PostgreSQL, and a job of a waiting account is given back to the
queue rather than held, so other accounts' jobs go on. Short windows; assertions on
counts and order."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import OTHER_TOKEN, Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system  # workers against PostgreSQL
pytest.importorskip("psycopg")
batch = pytest.importorskip("vidapi_async.batch")


def refusals(emu: Emulator) -> int:
    creates = [r for r in emu.requests if r.method == "POST" and r.path == "/me/videos"]
    return len(creates) - len(emu.videos())


def creation_order(emu: Emulator) -> list[str]:
    rows = emu.state._db.execute(
        "select json_extract(data, '$.title') from objects where kind = 'video' order by created"
    ).fetchall()
    return [str(title) for (title,) in rows]


async def test_two_workers_share_one_window(tmp_path: Path, dsn: str) -> None:
    files = [make_file(tmp_path / f"w{i}.mp4", 2000 + i) for i in range(7)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    async with Emulator(quota="3/1s", probe=False) as emu, batch.SharedBatch(dsn) as shared:
        assert (await shared.enqueue(jobs)).added == 7
        async with client_for(emu) as one, client_for(emu) as two:
            await asyncio.wait_for(
                asyncio.gather(
                    *(
                        shared.work(c, concurrency=3, until_empty=True, poll=0.2, quota="3/1s")
                        for c in (one, two)
                    )
                ),
                120,
            )
        status = await shared.status()
        assert (status.done, status.failed) == (7, 0)
        assert len(emu.videos()) == 7
        assert refusals(emu) == 0  # six workers' pipelines, one window between them


async def test_a_waiting_account_does_not_hold_the_others_jobs(
    tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", OTHER_TOKEN)
    files = [make_file(tmp_path / f"j{i}.mp4", 2500 + i) for i in range(6)]
    jobs = [  # the client's account first, then B's
        va.UploadJob(path=f, title=f"{'A' if i < 4 else 'B'}{i}", channel="news",
                     account=None if i < 4 else "VIDAPI_ACCOUNT_B_TOKEN")
        for i, f in enumerate(files)
    ]  # fmt: skip
    async with Emulator(quota="2/3s", probe=False) as emu, batch.SharedBatch(dsn) as shared:
        for job in jobs:  # one at a time: queued in this order
            await shared.enqueue([job])
        async with client_for(emu) as client:
            await asyncio.wait_for(
                shared.work(client, concurrency=2, until_empty=True, poll=0.2, quota="2/3s"), 120
            )
        status = await shared.status()
        assert (status.done, status.failed) == (6, 0)
        specs = await shared.journal.fetchall(
            shared.journal.statement("select spec from {s}.specs")
        )
        assert all(OTHER_TOKEN not in spec for (spec,) in specs)  # the variable's name only
        assert sum('"VIDAPI_ACCOUNT_B_TOKEN"' in spec for (spec,) in specs) == 2
        order = creation_order(emu)
        assert refusals(emu) == 0
    # B's videos came before A's third: A's waiting jobs were given back, not held
    assert max(order.index("B4"), order.index("B5")) < order.index(
        [t for t in order if t.startswith("A")][2]
    )


async def test_status_and_metrics_show_each_accounts_window(tmp_path: Path, dsn: str) -> None:
    from tests.integration.test_queue_observe import scrape
    from vidapi_async._metrics import MetricsServer
    from vidapi_async.batch._shared_quota import publish_quota

    files = [make_file(tmp_path / f"s{i}.mp4", 1800 + i) for i in range(5)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    async with Emulator(probe=False) as emu, batch.SharedBatch(dsn) as shared:
        await shared.enqueue(jobs[:2])
        async with client_for(emu) as client:
            await asyncio.wait_for(
                shared.work(client, concurrency=2, until_empty=True, poll=0.2, quota="2/1h"), 120
            )
        await shared.enqueue(jobs[2:])
        status = await shared.status()
        [(name, own)] = status.accounts.items()
        assert name == ""  # the workers' own token
        assert (own["quota"], own["used"], own["left"]) == ("2/1h", 2, 3)
        next_free = datetime.datetime.fromisoformat(own["next_free"])
        finish = datetime.datetime.fromisoformat(own["finish_estimate"])
        now = datetime.datetime.now(datetime.UTC)
        assert 3500 < (next_free - now).total_seconds() <= 3600
        # three left, two per hour, none free now: the next place's hour, then one more
        assert 3500 < (finish - next_free).total_seconds() <= 3600
        assert status.as_dict()["accounts"][""]["left"] == 3
        server = MetricsServer(0)
        try:
            await publish_quota(shared.journal)
            text = await asyncio.to_thread(scrape, server.port)
        finally:
            await server.aclose()
        assert 'vidapi_quota_used{account="own"} 2' in text
        assert 'vidapi_quota_next_free_seconds{account="own"} 3' in text
        assert 'vidapi_quota_finish_estimate_seconds{account="own"} 7' in text


async def test_vidapi_status_prints_the_accounts_table(tmp_path: Path, dsn: str) -> None:
    from tests.cli_run import vidapi_process

    files = [make_file(tmp_path / f"c{i}.mp4", 1700 + i) for i in range(2)]
    jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
    async with Emulator(probe=False) as emu, batch.SharedBatch(dsn) as shared:
        await shared.enqueue(jobs)
        async with client_for(emu) as client:
            await asyncio.wait_for(
                shared.work(client, concurrency=2, until_empty=True, poll=0.2, quota="2/1h"), 120
            )
    code, out, err = await vidapi_process("status", "--journal", dsn, env={"COLUMNS": "200"})
    assert code == 0, err
    assert "quota per account" in out
    assert "(the command's own token)" in out and "2/1h" in out
