"""A resume after the manifest changed (issue 38 #4): the journal records the metadata
the platform holds (what the create sent), and the resume sends what differs."""

from __future__ import annotations

from pathlib import Path

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

SRT = "1\n00:00:00,500 --> 00:00:02,000\nHello\n\n"


async def test_a_resume_sends_what_the_manifest_changed_after_the_create(tmp_path: Path) -> None:
    clip = make_file(tmp_path / "clip.mp4", 4000)
    subs = tmp_path / "clip.srt"
    subs.write_text(SRT, encoding="utf-8")

    def job(**edits: object) -> va.UploadJob:
        fields: dict[str, object] = {"title": "Old title", "description": "Old", **edits}
        return va.UploadJob(
            path=clip,
            channel="news",
            key="clip",
            subtitles=[va.SubtitleSpec("en", path=subs)],
            **fields,  # type: ignore[arg-type]
        )

    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        # the create goes through; the subtitle after it fails: the job stops there
        emu.faults.update({"error_rate": 1.0, "methods": ["POST"], "paths": ["/video/"]})
        async with va.BatchUploader(client, journal=journal) as batch:
            [first] = [r async for r in batch.run([job()])]
        assert first.status is va.JobStatus.FAILED and first.video_id is not None
        [video] = emu.videos()
        assert (video["title"], video["private"]) == ("Old title", False)
        emu.faults.update({"error_rate": 0.0})
        # the manifest changed meanwhile: a new title, private, no description
        edited = job(title="New title", private=True, description=None)
        async with va.BatchUploader(client, journal=journal) as batch:
            [second] = [r async for r in batch.run([edited])]
        assert second.status is va.JobStatus.DONE, second.error
        [video] = emu.videos()
        assert video["id"] == first.video_id
        assert (video["title"], video["private"]) == ("New title", True)
        assert not video.get("description")
        # and the journal holds what the platform holds: a third run sends nothing
        before = len(emu.requests)
        async with va.BatchUploader(client, journal=journal) as batch:
            [third] = [r async for r in batch.run([edited])]
        assert third.status is va.JobStatus.SKIPPED
        assert [r.path for r in emu.requests[before:] if r.method == "POST"] == []
