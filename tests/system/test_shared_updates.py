"""A shared queue converges too: enqueuing a done job with other metadata queues its
update (one update, no file sent again); a change an update cannot apply is refused."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.system.test_shared_queue import cli_for
from vidapi_async.batch import SharedBatch
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system
pytest.importorskip("procrastinate")


async def test_a_done_job_with_new_metadata_is_updated_by_the_queue(
    emulator: Emulator,
    tmp_path: Path,
    dsn: str,
) -> None:
    f = make_file(tmp_path / "clip.mp4", 5000)
    when = datetime(2031, 5, 6, 7, 8, tzinfo=UTC)
    first = va.UploadJob(
        path=f, key="k", title="Before", channel="news", tags=["a"], publish_date=when,
        playlists=["Old"],
    )  # fmt: skip
    edited = va.UploadJob(
        path=f, key="k", title="After", channel="news", tags=["a"], publish_date=when,
        playlists=["New"],
    )  # fmt: skip
    async with SharedBatch(dsn) as shared, client_for(emulator) as client:
        assert (await shared.enqueue([first])).added == 1
        await asyncio.wait_for(shared.work(client, until_empty=True), 60)
        [video] = emulator.videos()
        assert video["publish_date"] == int(when.timestamp())
        logged = len(emulator.requests)
        got = await shared.enqueue([edited])
        assert (got.added, got.updating, got.changed) == (0, ["k"], [])
        await asyncio.wait_for(shared.work(client, until_empty=True), 60)
        [video] = emulator.videos()  # the same video
        assert video["title"] == "After"
        assert not [r for r in emulator.requests[logged:] if r.host == "upload"]
        names = {p["name"]: p["videos"] for p in emulator.state.all("playlist")}
        assert names == {"Old": [], "New": [video["id"]]}
        # the same again: nothing to do
        again = await shared.enqueue([edited])
        assert (again.added, again.already, again.updating) == (0, 1, [])
        # a password added to a done job: an update cannot apply it, so refused
        secret = va.UploadJob(path=f, key="k", title="After", channel="news", password="pw1234")
        refused = await shared.enqueue([secret])
        assert (refused.updating, refused.changed) == ([], ["k"])


async def test_status_report_maps_every_job_of_the_queue(
    emulator: Emulator,
    tmp_path: Path,
    dsn: str,
) -> None:
    files = [make_file(tmp_path / f"r{i}.mp4", 3000 + i) for i in range(3)]
    signed = "https://files.example.com/x.mp4?X-Amz-Signature=s3cr3t&X-Amz-Credential=k"
    async with SharedBatch(dsn) as shared, client_for(emulator) as client:
        await shared.enqueue([va.UploadJob(path=f, title=f.name, channel="news") for f in files])
        await asyncio.wait_for(shared.work(client, until_empty=True), 60)
        # a url job not run yet: reported queued, its source without the signature
        await shared.enqueue([va.UploadJob(url=signed, title="x", channel="news", key="u")])
    report = tmp_path / "queue.jsonl"
    code, _, err = await cli_for(emulator)("status", "--journal", dsn, "--report", str(report))
    assert code == 0, err
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(rows) == 4
    ids = {v["title"]: v["id"] for v in emulator.videos()}
    done = {r["source"]: r for r in rows if r["status"] == "done"}
    assert {s: r["video_id"] for s, r in done.items()} == {str(f): ids[f.name] for f in files}
    assert all(r["url"] and r["embed_url"] for r in done.values())
    [queued] = [r for r in rows if r["key"] == "u"]
    assert (queued["status"], queued["source"]) == ("queued", "https://files.example.com/x.mp4")
    assert "s3cr3t" not in report.read_text()
