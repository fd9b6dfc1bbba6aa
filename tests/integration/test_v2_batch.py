"""A batch in API v2: ``BatchUploader`` against the emulator's v2 through faults, with
nothing changed but ``api="v2"`` (and the key): one video per job, byte-exact, on the
profile, none created twice (a lost create answer is found again by its tag)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import vidapi_async as va
from tests.conftest import fast_retry, make_file
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for


async def test_a_batch_in_v2_through_faults_makes_one_video_per_job(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    files = [make_file(folder / f"clip{i:02d}.mp4", 5000 + i) for i in range(24)]
    faults = Faults(
        error_rate=0.08,
        error_statuses=(500, 503),
        rate_limit_rate=0.05,
        retry_after=0.01,
        drop_response_rate=0.05,
        seed=32,
    )
    jobs = [va.UploadJob(path=f, title=f"v2 {f.name}", channel="news", key=f.name) for f in files]
    async with (
        Emulator(probe=False, faults=faults) as emu,
        client_for(emu, api="v2", retry=fast_retry(25)) as client,
    ):
        async with va.BatchUploader(client, concurrency=6, journal=tmp_path / "j.sqlite") as batch:
            results = [r async for r in batch.run(jobs)]
        assert {r.status for r in results} == {va.JobStatus.DONE}, [
            (r.key, r.stage, r.error) for r in results if r.error
        ]
        titles = Counter(v["title"] for v in emu.videos())
        assert set(titles) == {f"v2 {f.name}" for f in files}
        assert max(titles.values()) == 1
        for video in emu.videos():
            stored = emu.state.get("file", video["url"])
            assert stored is not None
            source = folder / video["title"].removeprefix("v2 ")
            assert (
                hashlib.sha256(Path(stored["path"]).read_bytes()).digest()
                == hashlib.sha256(source.read_bytes()).digest()
            )
        counters = dict(emu.platform.counters) if emu.platform else {}
    assert sum(v for k, v in counters.items() if k.startswith("faults_")) > 5, counters


async def test_a_v2_row_with_playlists_is_refused_before_its_file_is_sent(
    tmp_path: Path,
) -> None:
    """Issue 40: in v2 a row with playlists uploaded its file and created its video,
    then failed at the playlist step (``playlists.mine`` is not offered), on every
    re-run."""
    path = make_file(tmp_path / "clip.mp4", 5000)
    job = va.UploadJob(path=path, title="t", channel="news", key="k", playlists=["Best of"])
    async with Emulator(probe=False) as emu, client_for(emu, api="v2") as client:
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            [result] = [r async for r in batch.run([job])]
        assert result.status is va.JobStatus.FAILED
        assert result.stage is va.Stage.PENDING
        assert isinstance(result.error, va.UnsupportedOperationError)
        assert "playlists" in str(result.error)
        assert emu.videos() == []
        assert not [r for r in emu.requests if r.method == "POST"]
