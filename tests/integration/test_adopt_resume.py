"""Adoption for a job whose create was never sent (issue 40, the attack after it): a job
an old journal left at ``uploading`` or ``uploaded`` looks for its video on the platform
before creating, as a job at ``pending`` does. The emulator's state is the oracle."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_adopt import posts, video_posts
from tests.integration.test_batch import assert_one_video_per_job, jobs_for, make_files
from vidapi_async.batch import _create_step
from vidapi_async.batch._adopt import origin_tag, tag
from vidapi_async.batch._pipeline_state import JobRun
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


class Killed(va.VidapiError):
    """The process died here (as a kill after the upload, before the create)."""


async def _die(self: object, run: JobRun) -> va.Video:
    raise Killed(f"killed before the create of {run.record.key}")


@pytest.mark.parametrize("plan_first", [False, True])
async def test_a_journal_left_at_uploaded_adopts_the_video_a_new_journal_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plan_first: bool
) -> None:
    files = make_files(tmp_path / "files", 2)
    laptop = tmp_path / "laptop.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        with monkeypatch.context() as patch:
            patch.setattr(_create_step.CreateStep, "_create", _die)
            async with va.BatchUploader(client, journal=laptop) as batch:
                died = [r async for r in batch.run(jobs_for(files))]
        assert {r.stage for r in died} == {va.Stage.UPLOADED}
        assert not emu.videos()
        # another machine, a new journal, does the jobs
        async with va.BatchUploader(client, journal=tmp_path / "new.sqlite") as batch:
            made = {r.key: r.video_id async for r in batch.run(jobs_for(files))}
        before = posts(emu)
        # the laptop's journal runs again: its jobs adopt those videos
        async with va.BatchUploader(client, journal=laptop) as batch:
            if plan_first:
                plan = await batch.plan(jobs_for(files))
                assert (sorted(plan.adopt), plan.create) == (sorted(made), ())
            again = [r async for r in batch.run(jobs_for(files))]
        assert {r.status for r in again} == {va.JobStatus.ADOPTED}
        assert {r.key: r.video_id for r in again} == made
        assert posts(emu)["/me/videos"] == before["/me/videos"]  # no second create
        assert_one_video_per_job(emu, files)


async def test_a_job_of_no_origin_never_adopts_a_video_of_an_origin(tmp_path: Path) -> None:
    """A shared queue's job (no origin) with the key and title of a video a local batch
    made from a manifest adopted it, rewrote it and removed its origin tag."""
    path = make_file(tmp_path / "a.mp4", 4000)
    made_job = va.UploadJob(path=path, title="Intro", channel="news", key="q1", tags=["alpha"])
    other = make_file(tmp_path / "b.mp4", 5000)
    job = va.UploadJob(path=other, title="Intro", channel="news", key="q1", tags=["beta"])
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=tmp_path / "a.sqlite") as batch:
            [first] = [r async for r in batch.run([made_job], origin="/team-a/m.csv")]
        [made] = emu.videos()
        before, edits = posts(emu), video_posts(emu)
        async with va.BatchUploader(client, journal=tmp_path / "b.sqlite") as batch:
            plan = await batch.plan([job])
            assert (plan.adopt, plan.refuse) == ((), ("q1",))
            [again] = [r async for r in batch.run([job])]  # no origin
        assert again.status is va.JobStatus.FAILED, again
        assert first.video_id in str(again.error) and "q1" in str(again.error)
        assert posts(emu) == before and video_posts(emu) == edits  # nothing sent
        [after] = emu.videos()
        assert (after["tags"], after["description"]) == (made["tags"], made["description"])
        assert after["tags"][-2:] == [origin_tag("/team-a/m.csv"), tag("q1")]


async def test_an_update_keeps_an_origin_tag_the_video_carries(tmp_path: Path) -> None:
    """A done job recorded with no origin (a journal of an earlier release) whose video
    carries an origin tag: a tag edit kept the key tag and removed the origin tag."""
    path = make_file(tmp_path / "a.mp4", 4000)
    journal = tmp_path / "j.sqlite"

    def job(tags: list[str]) -> va.UploadJob:
        return va.UploadJob(path=path, title="T", channel="news", key="k1", tags=tags)

    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            [r async for r in batch.run([job(["a"])], origin="/lib/m.csv")]
        sqlite = va.SQLiteJournal(journal)
        [record] = sqlite.records_sync()
        record.origin = record.source = None  # as an earlier release recorded it
        await sqlite.open()
        try:
            await sqlite.save(record)
        finally:
            await sqlite.close()
        async with va.BatchUploader(client, journal=journal) as batch:
            [again] = [r async for r in batch.run([job(["b"])])]
        assert again.status is va.JobStatus.UPDATED, again
        [video] = emu.videos()
        assert video["tags"] == ["b", origin_tag("/lib/m.csv"), tag("k1")]


async def test_a_moved_manifests_refusal_says_to_run_it_from_where_it_was(tmp_path: Path) -> None:
    """A manifest folder moved with its journal: each job was refused saying only "give
    this job its own key", which makes every video a second time."""
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old = make_file(tmp_path / "old" / "a.mp4", 4000)
    new = make_file(tmp_path / "new" / "a.mp4", 4000)
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        for path, origin in ((old, "/old/m.csv"), (new, "/new/m.csv")):
            job = va.UploadJob(path=path, title="T", channel="news", key="k1")
            async with va.BatchUploader(client, journal=journal) as batch:
                [result] = [r async for r in batch.run([job], origin=origin)]
        assert result.status is va.JobStatus.FAILED
        said = str(result.error)
        assert "run it from the manifest or feed" in said and "/old/m.csv" in said, said
        assert "same path or address" in said, said
        assert "a second video" in said, said  # what its own key would do
        assert len(emu.videos()) == 1


async def test_an_update_of_a_video_deleted_on_the_platform_says_it_is_gone(
    tmp_path: Path,
) -> None:
    """A done job whose video was deleted on the platform, its row edited since: the
    update failed with a bare 404. It fails naming the video, saying it is gone and how
    to make it again; nothing is uploaded or created."""
    path = make_file(tmp_path / "a.mp4", 4000)
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        for title in ("T", "T edited"):
            job = va.UploadJob(path=path, title=title, channel="news", key="e1")
            async with va.BatchUploader(client, journal=journal) as batch:
                [result] = [r async for r in batch.run([job])]
            if title == "T":
                assert result.video_id is not None
                await client.videos.delete(result.video_id)
                before = posts(emu)
        assert result.status is va.JobStatus.FAILED
        assert isinstance(result.error, va.NotFoundError)
        said = str(result.error)
        assert result.video_id is not None and result.video_id in said, said
        assert "gone from the platform" in said and "new journal" in said, said
        assert posts(emu) == before and not emu.videos()
