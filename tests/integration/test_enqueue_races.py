"""One spec per key in the shared queue (issue 29): two processes enqueuing one key with
different specs, and one key twice in one call. The spec that runs is the one whose
enqueue was told ``added``; the other is told its spec differs (``changed``)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch import SharedBatch

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")


async def stored_title(shared: SharedBatch, key: str) -> str:
    row = await shared.journal.fetchone(
        shared.journal.statement("select spec from {s}.specs where key = %s"), (key,)
    )
    assert row is not None
    return str(json.loads(row[0])["title"])


@pytest.mark.system
async def test_two_enqueuers_of_one_key_agree_on_one_spec(
    tmp_path: Path,
    dsn: str,
) -> None:
    f = make_file(tmp_path / "race.mp4", 1000)
    async with SharedBatch(dsn) as a, SharedBatch(dsn) as b:
        for round_ in range(8):
            key = f"race-{round_}"
            job_a = va.UploadJob(path=f, title="A's title", channel="news", key=key)
            job_b = va.UploadJob(
                path=f, title="B's title", channel="news", key=key, password="b-secret"
            )
            got_a, got_b = await asyncio.gather(a.enqueue([job_a]), b.enqueue([job_b]))
            assert got_a.added + got_b.added == 1, (round_, got_a, got_b)
            winner, loser = (got_a, got_b) if got_a.added else (got_b, got_a)
            assert loser.changed == [key], (round_, loser)  # told, by key
            assert loser.already == 1
            expected = "A's title" if winner is got_a else "B's title"
            assert await stored_title(a, key) == expected, round_


@pytest.mark.system
async def test_one_key_twice_in_one_enqueue_with_another_spec_is_reported(
    tmp_path: Path,
    dsn: str,
) -> None:
    f = make_file(tmp_path / "twice.mp4", 1000)
    jobs = [
        va.UploadJob(path=f, title="first", channel="news", key="k"),
        va.UploadJob(path=f, title="second", channel="news", key="k"),
        va.UploadJob(path=f, title="first", channel="news", key="k"),
    ]
    async with SharedBatch(dsn) as shared:
        got = await shared.enqueue(jobs)
        assert (got.added, got.already, got.changed) == (1, 2, ["k"])
        assert await stored_title(shared, "k") == "first"


@pytest.mark.system
async def test_a_manifest_with_one_key_twice_enqueues_nothing(
    tmp_path: Path,
    dsn: str,
) -> None:
    """Checked whole before the first row is enqueued: both lines named, exit 2."""
    make_file(tmp_path / "a.mp4", 1000)
    rows = ["path,title,channel,key"] + [f"a.mp4,t{i},news,k{i}" for i in range(2500)]
    rows.append("a.mp4,again,news,k7")
    manifest = tmp_path / "jobs.csv"
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vidapi_async.cli", "--token", "t", "batch", str(manifest),
        "--journal", dsn, "--enqueue-only",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 2, err.decode()
    assert "line 9 and line 2502" in err.decode()
    async with SharedBatch(dsn) as shared:
        assert (await shared.status()).queued == 0


@pytest.mark.system
async def test_a_job_starting_while_its_key_is_enqueued_keeps_its_spec(
    tmp_path: Path,
    dsn: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The enqueue reads the running keys, then defers the others under their queueing
    lock: a job that starts in between no longer holds that lock, so the defer is not
    refused. Read before it started (the first reading of running keys misses it), the
    key is still told ``changed``: not queued a second time, its spec not replaced."""
    from procrastinate.jobs import Status

    from vidapi_async.batch import _queue

    f = make_file(tmp_path / "starts.mp4", 1000)
    async with SharedBatch(dsn) as shared:
        await shared.enqueue([va.UploadJob(path=f, title="t", channel="news", key="k")])
        manager = shared._ready().job_manager
        worker_id = await manager.register_worker()
        assert await manager.fetch_job([shared.queue], worker_id) is not None  # running
        real = _queue.key_states
        missed: list[bool] = []

        async def before_it_started(*args: object, **kwargs: object) -> dict[str, str]:
            states = await real(*args, **kwargs)  # type: ignore[arg-type]
            if kwargs.get("only") is Status.DOING and not missed:
                missed.append(True)
                return {}
            return states

        monkeypatch.setattr(_queue, "key_states", before_it_started)
        told = await shared.enqueue([va.UploadJob(path=f, title="t2", channel="news", key="k")])
        assert missed
        assert (told.added, told.already, told.changed) == (0, 1, ["k"])
        assert await stored_title(shared, "k") == "t"
        status = await shared.status()
        assert (status.queued, status.running) == (0, 1)


@pytest.mark.system
@pytest.mark.parametrize("listing", [0, 10**6], ids=["deferred-one-at-a-time", "listed"])
async def test_keys_waiting_are_told_by_either_reading(
    tmp_path: Path,
    dsn: str,
    monkeypatch: pytest.MonkeyPatch,
    listing: int,
) -> None:
    """Enqueued again while they wait: the keys waiting are told by their queueing lock
    (deferred one at a time, refused) on a long queue, by a listing of the waiting jobs
    on a short one; either way the same answer, and a new key among them is queued."""
    from vidapi_async.batch import _enqueue

    monkeypatch.setattr(_enqueue, "_LISTING_PER_KEY", listing)
    f = make_file(tmp_path / "w.mp4", 1000)

    def job(key: str, title: str = "t") -> va.UploadJob:
        return va.UploadJob(path=f, title=title, channel="news", key=key)

    async with SharedBatch(dsn) as shared:
        first = await shared.enqueue([job("a"), job("b"), job("c")])
        assert first.added == 3
        told = await shared.enqueue([job("a"), job("b", "t2"), job("d"), job("c")])
        assert (told.added, told.already, told.changed, told.updating) == (1, 3, ["b"], [])
        assert await stored_title(shared, "b") == "t"
        assert (await shared.status()).queued == 4
