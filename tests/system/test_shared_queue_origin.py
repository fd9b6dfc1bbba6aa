"""A shared queue's jobs carry the manifest or feed they were enqueued from (issue 40,
round three): a worker tags and adopts as the local batch does, never takes a video of
another manifest, and adopts its own whatever its title became. Against a real
PostgreSQL; the emulator's state is the oracle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_adopt import posts, video_posts
from vidapi_async.batch import SharedBatch
from vidapi_async.batch._adopt import origin_tag, tag
from vidapi_async.batch._playlists_shared import SharedPlaylists
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system


@pytest.mark.parametrize("enqueued_with", [None, "/team-b/m.csv"])
async def test_a_queue_job_never_takes_another_manifests_video(
    tmp_path: Path,
    dsn: str,
    enqueued_with: str | None,
) -> None:
    """Repro 3: ``vidapi batch`` made key ``q1`` from manifest A; the same key and title
    enqueued from manifest B: the worker adopted A's video, rewrote it and removed its
    origin tag."""
    a = make_file(tmp_path / "a.mp4", 4000)
    b = make_file(tmp_path / "b.mp4", 5000)
    mine = va.UploadJob(path=a, title="Intro", channel="news", key="q1", description="A")
    theirs = va.UploadJob(path=b, title="Intro", channel="news", key="q1", description="B")
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=tmp_path / "a.sqlite") as batch:
            [r async for r in batch.run([mine], origin="/team-a/m.csv")]
        [made] = emu.videos()
        before, edits = posts(emu), video_posts(emu)
        async with SharedBatch(dsn, schema="b") as shared:
            await shared.enqueue([theirs], origin=enqueued_with)
            await shared.work(client, until_empty=True, poll=0.1)
            [record] = await shared.journal.records()
        assert record.stage is va.Stage.PENDING and record.video_id is None
        assert record.error is not None and made["id"] in record.error, record.error
        assert posts(emu) == before and video_posts(emu) == edits  # nothing sent
        [after] = emu.videos()
        assert (after["description"], after["tags"]) == ("A", made["tags"])
        assert after["tags"][-2:] == [origin_tag("/team-a/m.csv"), tag("q1")]


async def test_a_queue_over_a_done_migration_adopts_a_video_whose_title_was_edited(
    tmp_path: Path,
    dsn: str,
) -> None:
    """Repro 4: a queue in a new schema over a done migration made a second video for a
    job whose title was edited on the platform since (its jobs carried no origin, so
    they matched by title)."""
    files = [make_file(tmp_path / f"s{i}.mp4", 5000 + i) for i in range(2)]
    jobs = [va.UploadJob(path=f, title=f"S {f.stem}", channel="news", key=f.stem) for f in files]
    origin = str(tmp_path / "m.csv")
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with SharedBatch(dsn, schema="first") as shared:
            await shared.enqueue(jobs, origin=origin)
            await shared.work(client, until_empty=True, poll=0.1)
        made = {v["title"]: v for v in emu.videos()}
        assert made["S s0"]["tags"][-2:] == [origin_tag(origin), tag("s0")]
        await client.update_video(made["S s0"]["id"], title="S s0 (edited on the platform)")
        before = posts(emu)
        async with SharedBatch(dsn, schema="second") as shared:  # the journal lost
            await shared.enqueue(jobs, origin=origin)
            await shared.work(client, until_empty=True, poll=0.1)
            records = {r.key: (r.stage, r.video_id) for r in await shared.journal.records()}
        assert posts(emu) == before  # no upload, no create
        assert records == {
            "s0": (va.Stage.DONE, made["S s0"]["id"]),
            "s1": (va.Stage.DONE, made["S s1"]["id"]),
        }
        assert sorted(v["title"] for v in emu.videos()) == ["S s0", "S s1"]  # the manifest's


async def test_a_playlist_deleted_on_the_platform_is_made_again_once(
    tmp_path: Path,
    dsn: str,
) -> None:
    """Repro 5: the queue's ``playlists`` table kept a playlist deleted on the platform:
    every later job naming it failed, 404 on adding to it, for good."""
    files = [make_file(tmp_path / f"n{i}.mp4", 5000 + i) for i in range(3)]
    jobs = [
        va.UploadJob(path=f, title=f.stem, channel="news", key=f.stem, playlists=["Common"])
        for f in files
    ]
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with SharedBatch(dsn, schema="q") as shared:
            await shared.enqueue(jobs[:1])
            await shared.work(client, until_empty=True, poll=0.1)
            [gone] = emu.state.all("playlist")
            await client.playlists.delete(gone["id"])
            await shared.enqueue(jobs[1:])
            await shared.work(client, until_empty=True, concurrency=2, poll=0.1)
            records = {r.key: r for r in await shared.journal.records()}
            rows = await shared.journal.fetchall(
                shared.journal.statement("select name, id from {s}.playlists"), ()
            )
        assert {k: r.stage for k, r in records.items()} == dict.fromkeys(
            ("n0", "n1", "n2"), va.Stage.DONE
        ), {k: r.error for k, r in records.items()}
        [common] = emu.state.all("playlist")  # made again once, for both jobs
        assert common["name"] == "Common" and common["id"] != gone["id"]
        assert sorted(common["videos"]) == sorted([records["n1"].video_id, records["n2"].video_id])
        assert [tuple(r) for r in rows] == [("Common", common["id"])]


async def test_a_key_enqueued_from_another_feed_is_refused_not_said_changed(
    tmp_path: Path,
    dsn: str,
) -> None:
    """The last attack (F1): another feed's job under a key the queue holds (done or
    waiting) was only 'not applied' among the changed specs, exit 0, and its report
    handed the other feed's video out as its own. It is refused, naming the key, as a
    SQLite journal refuses it; the queue's job keeps its spec."""
    clip = make_file(tmp_path / "a.mp4", 5000)
    other = make_file(tmp_path / "b.mp4", 6000)
    alice = "https://feeds.example.com/feed.xml?feed-sha256=aaaaaaaaaaaaaaaa"
    bob = "https://feeds.example.com/feed.xml?feed-sha256=bbbbbbbbbbbbbbbb"
    async with SharedBatch(dsn) as shared:
        first = await shared.enqueue(
            [va.UploadJob(path=clip, key="21", title="A", channel="news")], origin=alice
        )
        again = await shared.enqueue(
            [va.UploadJob(path=other, key="21", title="B", channel="news")], origin=bob
        )
        same = await shared.enqueue(
            [va.UploadJob(path=clip, key="21", title="A", channel="news")], origin=alice
        )
    assert first.added == 1
    assert again.refused == ["21"] and again.changed == [] and again.added == 0
    assert same.refused == [] and same.added == 0


async def test_a_job_reading_the_row_while_another_forgets_it_does_not_keep_the_dead_id(
    tmp_path: Path,
    dsn: str,
) -> None:
    """Seen on CI under load (the test above, concurrency 2): job A's 404 made it forget
    the playlist's id; before A's delete of the row was committed, job B read the row
    (the dead id) and kept it in the worker's memory, and A's second try took it from
    there: a second 404, A failed. Here B reads the row in exactly that gap."""
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with SharedBatch(dsn, schema="gap") as shared:
            playlists = SharedPlaylists(client, shared.journal)
            gone = await playlists.id_of("Common")
            await client.playlists.delete(gone)
            src = make_file(tmp_path / "v.mp4", 3000)
            video = (await client.upload_video(src, title="v", channel="news")).id
            locked = playlists._locked

            async def b_reads_first(name: str, work: Any) -> Any:
                playlists._locked = locked  # type: ignore[method-assign]
                await playlists.id_of(name)  # job B, in the gap
                return await locked(name, work)

            playlists._locked = b_reads_first  # type: ignore[method-assign]
            await playlists.add(video, ["Common"], None)  # job A
            [common] = emu.state.all("playlist")
            assert common["id"] != gone and common["videos"] == [video]
            assert await playlists.id_of("Common") == common["id"]
