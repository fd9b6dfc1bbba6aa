"""The platform is the source of truth (issue 40): a batch whose journal does not know a
job adopts the video the platform holds for it (its tag, its owner, its title), with no
upload and no create, and says how many it adopted."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_batch import assert_one_video_per_job, jobs_for, make_files
from vidapi_async.batch._adopt import tag
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def posts(emu: Emulator) -> Counter[str]:
    """The uploads and creates the emulator received."""
    return Counter(
        r.path
        for r in emu.requests
        if r.method == "POST" and r.path in ("/upload", "/me/videos", "/file/upload")
    )


async def test_a_new_journal_over_a_done_migration_sends_no_upload_and_no_create(
    tmp_path: Path,
) -> None:
    files = make_files(tmp_path / "files", 3)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=tmp_path / "first.sqlite") as batch:
            first = {r.key: r.video_id async for r in batch.run(jobs_for(files))}
        before = posts(emu)
        assert before["/me/videos"] == 3
        # the journal is lost: a new one over the same jobs
        async with va.BatchUploader(client, journal=tmp_path / "second.sqlite") as batch:
            plan = await batch.plan(jobs_for(files))
            # in the manifest's order (the first run's results came in completion order)
            assert (plan.create, plan.update, plan.skip) == ((), (), ())
            assert sorted(plan.adopt) == sorted(first)
            again = [r async for r in batch.run(jobs_for(files))]
        assert posts(emu) == before  # no upload, no create
        assert not video_posts(emu)  # nor an update: the metadata is the same
        assert {r.status for r in again} == {va.JobStatus.ADOPTED}
        assert {r.key: r.video_id for r in again} == first
        records = {r.key: r for r in va.SQLiteJournal(tmp_path / "second.sqlite").records_sync()}
        assert {k: (r.stage, r.video_id) for k, r in records.items()} == {
            k: (va.Stage.DONE, v) for k, v in first.items()
        }
        assert_one_video_per_job(emu, files)
        # and a third run with that journal skips them: nothing sent, nothing listed
        listed = len(emu.requests)
        async with va.BatchUploader(client, journal=tmp_path / "second.sqlite") as batch:
            third = [r async for r in batch.run(jobs_for(files))]
        assert {r.status for r in third} == {va.JobStatus.SKIPPED}
        assert not [r for r in emu.requests[listed:] if r.path == "/me/videos"]


def video_posts(emu: Emulator) -> list[str]:
    """The edits (``POST /video/<id>``) the emulator received."""
    return [r.path for r in emu.requests if r.method == "POST" and r.path.startswith("/video/")]


async def test_adoption_sends_what_differs_as_one_update_and_keeps_the_tag(
    tmp_path: Path,
) -> None:
    files = make_files(tmp_path / "files", 2)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=tmp_path / "first.sqlite") as batch:
            [r async for r in batch.run(jobs_for(files, description="old"))]
        before, edits = posts(emu), len(video_posts(emu))
        async with va.BatchUploader(client, journal=tmp_path / "second.sqlite") as batch:
            again = [r async for r in batch.run(jobs_for(files, description="new", tags=["x"]))]
        assert posts(emu) == before
        assert {r.status for r in again} == {va.JobStatus.ADOPTED}
        assert len(video_posts(emu)) - edits == 2  # one update per job
        for video in emu.videos():
            assert video["description"] == "new"
            assert video["tags"][0] == "x"
            assert video["tags"][1:] == [tag(video["title"].removeprefix("job "))]
        # the journal recorded what the platform holds now: a re-run sends nothing
        async with va.BatchUploader(client, journal=tmp_path / "second.sqlite") as batch:
            third = [r async for r in batch.run(jobs_for(files, description="new", tags=["x"]))]
        assert {r.status for r in third} == {va.JobStatus.SKIPPED}
        assert len(video_posts(emu)) - edits == 2


async def test_a_rerun_that_edits_tags_keeps_the_bookkeeping_tag(tmp_path: Path) -> None:
    """Issue 40: after a re-run that edits a row's tags, the video lost its ``vidapi-``
    tag and could no longer be found as the job's."""
    files = make_files(tmp_path / "files", 1)
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            [r async for r in batch.run(jobs_for(files, tags=["a"]))]
        async with va.BatchUploader(client, journal=journal) as batch:
            [edited] = [r async for r in batch.run(jobs_for(files, tags=["b", "c"]))]
        assert edited.status is va.JobStatus.UPDATED
        [video] = emu.videos()
        assert video["tags"] == ["b", "c", tag(files[0].name)]
        found = await client.videos.find_by_tag(tag(files[0].name))
        assert [v.id for v in found] == [edited.video_id]
        # and a job whose tags the manifest removes keeps it too
        async with va.BatchUploader(client, journal=journal) as batch:
            [r async for r in batch.run(jobs_for(files))]
        [video] = emu.videos()
        assert video["tags"] == [tag(files[0].name)]


async def test_a_video_with_the_tag_but_another_title_is_not_adopted(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 1)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=tmp_path / "first.sqlite") as batch:
            [first] = [r async for r in batch.run(jobs_for(files))]
        job = va.UploadJob(path=files[0], title="another title", channel="news", key=files[0].name)
        async with va.BatchUploader(client, journal=tmp_path / "second.sqlite") as batch:
            [second] = [r async for r in batch.run([job])]
        assert second.status is va.JobStatus.DONE
        assert second.video_id != first.video_id
        assert len(emu.videos()) == 2  # the first one is left alone


async def test_a_user_tag_posing_as_another_jobs_tag_is_not_adopted(tmp_path: Path) -> None:
    """Issue 38 #3: job A carrying the tag ``vidapi-b`` made job B, whose create answer
    was lost, adopt A's video."""
    files = make_files(tmp_path / "files", 1)
    journal = tmp_path / "j.sqlite"
    [job_b] = [va.UploadJob(path=files[0], title="job b", channel="news", key="b")]
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        # B's create fails: B is left at 'creating', its file uploaded
        emu.faults.update({"error_rate": 1.0, "methods": ["POST"], "paths": ["/me/videos"]})
        async with va.BatchUploader(client, journal=journal) as batch:
            [failed] = [r async for r in batch.run([job_b])]
        assert failed.stage is va.Stage.CREATING
        emu.faults.update({"error_rate": 0.0})
        owner = (await client.account.me(fields=("id",))).id
        # A's video, made with the same title and a user tag that looks like B's
        poser = emu.backend.create_video(
            owner,
            {
                "title": "job b",
                "channel": "news",
                "mode": "live",
                "is_created_for_kids": "false",
                "tags": "vidapi-b,vidapi-a",
            },
        )
        async with va.BatchUploader(client, journal=journal) as batch:
            [done] = [r async for r in batch.run([job_b])]
        assert done.status is va.JobStatus.DONE
        assert done.video_id != poser["id"]
        assert {v["id"] for v in emu.videos()} == {poser["id"], done.video_id}
        # nor by a new journal's adoption
        async with va.BatchUploader(client, journal=tmp_path / "new.sqlite") as batch:
            [again] = [r async for r in batch.run([job_b])]
        assert again.status is va.JobStatus.ADOPTED
        assert again.video_id == done.video_id


async def test_adoption_lists_once_per_batch_not_per_job(tmp_path: Path) -> None:
    files = make_files(tmp_path / "files", 6)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite", concurrency=3) as batch:
            [r async for r in batch.run(jobs_for(files))]
        listings = [r for r in emu.requests if r.method == "GET" and r.path == "/me/videos"]
        assert len(listings) == 1
        assert "tags" not in listings[0].query


async def test_a_lagging_listing_does_not_make_a_journals_jobs_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing may not show a video made a moment ago: the journal, read first,
    covers that window (a job it knows past its upload is never adopted nor made
    again)."""
    files = make_files(tmp_path / "files", 3)
    journal = tmp_path / "j.sqlite"

    async def nothing_listed(self: object, job: object = None) -> dict[str, list[object]]:
        return {}

    monkeypatch.setattr("vidapi_async.batch._adopt.Adoption.index", nothing_listed)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        emu.faults.update({"error_rate": 1.0, "methods": ["POST"], "paths": ["/me/videos"]})
        async with va.BatchUploader(client, journal=journal) as batch:
            [r async for r in batch.run(jobs_for(files[:1]))]  # left at 'creating'
        emu.faults.update({"error_rate": 0.0})
        async with va.BatchUploader(client, journal=journal) as batch:
            [r async for r in batch.run(jobs_for(files[1:]))]
        async with va.BatchUploader(client, journal=journal) as batch:
            results = [r async for r in batch.run(jobs_for(files))]
        assert Counter(r.status for r in results) == {
            va.JobStatus.DONE: 1,
            va.JobStatus.SKIPPED: 2,
        }
        assert_one_video_per_job(emu, files)


async def test_adopt_only_rebuilds_a_lost_journal_and_its_report_uploading_nothing(
    emulator: Emulator, tmp_path: Path
) -> None:
    from tests.cli_run import vidapi

    (tmp_path / "media").mkdir()
    for name in ("a", "b", "c"):
        make_file(tmp_path / "media" / f"{name}.mp4", 4000 + len(name))
    manifest = tmp_path / "library.csv"
    manifest.write_text(
        "key,path,title,channel,tags\n"
        "old-1,media/a.mp4,A,news,x\n"
        "old-2,media/b.mp4,B,news,\n"
        "old-3,media/c.mp4,C,news,\n",
        encoding="utf-8",
    )
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    lost = str(tmp_path / "lost.sqlite")
    code, _, err = await vidapi("batch", str(manifest), "--journal", lost, env=env)
    assert code == 0, err
    made = {v["title"]: v["id"] for v in emulator.videos()}
    emulator.state.delete("video", made["C"])  # one job's video is gone from the platform
    before = posts(emulator)
    journal = str(tmp_path / "rebuilt.sqlite")
    report = tmp_path / "mapping.csv"
    # its dry run plans what it does (the fresh user's look: it planned a normal run,
    # 'create old-3', exit 0)
    code, out, err = await vidapi(
        "--json", "batch", str(manifest), "--journal", journal, "--adopt-only", "--dry-run",
        env=env,
    )  # fmt: skip
    planned = json.loads(out)
    assert code == 6, (out, err)
    assert (planned["adopt"], planned["create"]) == (["old-1", "old-2"], []), planned
    assert planned["refuse"] == ["old-3"], planned
    assert "run without it to upload it" in planned["refused_sources"]["old-3"]
    code, out, err = await vidapi(
        "--json",
        "batch",
        str(manifest),
        "--journal",
        journal,
        "--adopt-only",
        "--report",
        str(report),
        env=env,
    )
    assert posts(emulator) == before  # nothing uploaded, nothing created
    assert not video_posts(emulator)  # nor updated
    assert code == 6, err  # a job without its video
    results = {r["key"]: r for r in json.loads(out)}
    assert {k: r["status"] for k, r in results.items()} == {
        "old-1": "adopted",
        "old-2": "adopted",
        "old-3": "failed",
    }
    assert results["old-1"]["video_id"] == made["A"]
    records = {r.key: r for r in va.SQLiteJournal(journal).records_sync()}
    assert (records["old-1"].stage, records["old-1"].video_id) == (va.Stage.DONE, made["A"])
    assert (records["old-2"].stage, records["old-2"].video_id) == (va.Stage.DONE, made["B"])
    assert records["old-3"].stage is va.Stage.PENDING
    with report.open(encoding="utf-8") as f:
        rows = {row["key"]: row for row in csv.DictReader(f)}
    assert rows["old-2"]["video_id"] == made["B"]
    assert rows["old-1"]["status"] == "adopted"
    # the next run with the rebuilt journal uploads the missing one only
    code, out, err = await vidapi("--json", "batch", str(manifest), "--journal", journal, env=env)
    assert code == 0, err
    assert posts(emulator)["/me/videos"] == before["/me/videos"] + 1


async def test_a_key_shaped_like_another_keys_earlier_tag_adopts_nothing(tmp_path: Path) -> None:
    """The attacker's second look at issue 38: a job whose key is the 32-hex digest an
    earlier release tagged another key with (``earlier_tag``) carried that tag as its
    own, and the other job, run with a journal of its own, adopted its video (one video
    for two files). Adoption looks for a job's own tag only."""
    from vidapi_async.batch._adopt import earlier_tag

    mine = "clips/é.mp4"
    earlier = earlier_tag(mine)
    assert earlier is not None
    posing = earlier.removeprefix("vidapi-")
    a = make_file(tmp_path / "a.mp4", 4000)
    b = make_file(tmp_path / "b.mp4", 5000)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        job_b = va.UploadJob(path=b, title="Weekly news", channel="news", key=posing)
        async with va.BatchUploader(client, journal=tmp_path / "b.sqlite") as batch:
            assert [r.status async for r in batch.run([job_b])] == [va.JobStatus.DONE]
        job_a = va.UploadJob(path=a, title="Weekly news", channel="news", key=mine)
        async with va.BatchUploader(client, journal=tmp_path / "a.sqlite") as batch:
            [result] = [r async for r in batch.run([job_a])]
        assert result.status is va.JobStatus.DONE, result
        assert len(emu.videos()) == 2


async def test_a_crash_at_creating_then_a_title_edit_makes_no_second_video(
    tmp_path: Path,
) -> None:
    """The attacker's look at issue 40: a job whose create answer was lost (left at
    'creating'), then retitled in the manifest, did not find the video its create made
    (the title compared was the new one, not the one sent) and made a second."""
    [path] = make_files(tmp_path / "files", 1)
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        old = va.UploadJob(path=path, title="Old title", channel="news", key="k1")
        async with va.BatchUploader(client, journal=journal) as batch:
            assert [r.status async for r in batch.run([old])] == [va.JobStatus.DONE]
        store = va.SQLiteJournal(journal)
        record = await store.load("k1")
        assert record is not None
        record.stage = va.Stage.CREATING  # as if the create's answer had been lost
        await store.save(record)
        await store.close()
        new = va.UploadJob(path=path, title="New title", channel="news", key="k1", private=True)
        async with va.BatchUploader(client, journal=journal) as batch:
            [result] = [r async for r in batch.run([new])]
        assert result.status is va.JobStatus.DONE, result
        assert [(v["title"], v["private"]) for v in emu.videos()] == [("New title", True)]
