"""Adoption for a job whose create was never sent (issue 40, the attack after it): a job
an old journal left at ``uploading`` or ``uploaded`` looks for its video on the platform
before creating, as a job at ``pending`` does. The emulator's state is the oracle."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.integration.test_adopt import posts
from tests.integration.test_batch import assert_one_video_per_job, jobs_for, make_files
from vidapi_async.batch import _create_step
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
