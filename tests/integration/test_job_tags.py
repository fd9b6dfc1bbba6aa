"""The tag that marks a job's video: a key that cannot be a tag is hashed, and the
hashed tags have a prefix no plain key's tag has (before, key 'é' and key '<its 32-hex
hash>' shared a tag: a resume could take one's video for the other's). A journal of an
earlier release, stopped at ``creating``, still finds its video under the old tag."""

from __future__ import annotations

import hashlib
from pathlib import Path

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch import JobRecord, SQLiteJournal, Stage
from vidapi_async.batch._stages import tag as _tag
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def _old_tag(key: str) -> str:
    return "vidapi-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def test_a_hashed_tag_is_never_a_plain_keys_tag() -> None:
    hashed = hashlib.sha256("é".encode()).hexdigest()[:32]
    assert _tag("é") != _tag(hashed)
    assert _tag("plain-key_1") == "vidapi-plain-key_1"


async def test_a_job_stopped_at_creating_by_an_earlier_release_finds_its_video(
    tmp_path: Path,
) -> None:
    path = make_file(tmp_path / "v.mp4", 3000)
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        uploaded = await client.uploads.file(path)
        made = await client.videos.create(
            url=uploaded.url, title="t", channel="news", dedupe_tag=_old_tag("é")
        )
        journal = SQLiteJournal(tmp_path / "j.sqlite")
        await journal.save(JobRecord("é", Stage.CREATING, file_url=uploaded.url))
        await journal.close()
        job = va.UploadJob(path=path, title="t", channel="news", key="é")
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            (result,) = [r async for r in batch.run([job])]
        assert result.status is va.JobStatus.DONE, result.error
        assert [v["id"] for v in emu.videos()] == [made.id]
