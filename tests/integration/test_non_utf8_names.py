"""A file whose name is not UTF-8 (``caf\\xe9.mp4`` from a Latin-1 system, which Python
holds surrogate-escaped) never crashes a batch: its key is computed from the name's
bytes, and the job is uploaded or fails alone with a typed error."""

from __future__ import annotations

import os
from pathlib import Path

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch._jobs import file_key
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def _latin1_file(folder: Path) -> Path:
    return make_file(folder / os.fsdecode(b"caf\xe9.mp4"), 2000)


def test_a_key_is_computed_from_the_names_bytes(tmp_path: Path) -> None:
    path = _latin1_file(tmp_path)
    key = file_key(str(path))
    assert len(key) == 24
    assert key != file_key(str(make_file(tmp_path / "caf.mp4", 2000)))


def test_a_utf8_name_keeps_its_key(tmp_path: Path) -> None:
    """Keys of earlier runs are unchanged (their journals resume)."""
    import hashlib

    path = make_file(tmp_path / "café.mp4", 2000)
    st = os.stat(path)
    text = f"{os.path.realpath(path)}\0{st.st_size}\0{st.st_mtime_ns}"
    assert file_key(str(path)) == hashlib.sha256(text.encode()).hexdigest()[:24]


async def test_a_batch_with_a_non_utf8_name_does_not_crash(
    emulator: Emulator, tmp_path: Path
) -> None:
    odd = _latin1_file(tmp_path)
    plain = make_file(tmp_path / "plain.mp4", 2001)
    jobs = [
        va.UploadJob(path=p, title=p.name.encode(errors="replace").decode(), channel="news")
        for p in (odd, plain)
    ]
    async with client_for(emulator) as client:
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            results = {r.job.path: r async for r in batch.run(jobs)}
    assert {r.status for r in results.values()} == {va.JobStatus.DONE}, results
    names = sorted(v["title"] for v in emulator.videos())
    assert names == ["caf?.mp4", "plain.mp4"]


def test_a_folder_titles_odd_names_readably(tmp_path: Path) -> None:
    """A folder's file whose name has a newline or bytes that are not UTF-8 is a job
    like any other (before: the whole batch stopped on its title)."""
    from vidapi_async.batch import jobs_from_folder

    _latin1_file(tmp_path)
    make_file(tmp_path / "bad\nname.mp4", 2000)
    titles = sorted(job.title for job in jobs_from_folder(str(tmp_path), channel="news"))
    assert titles == ["bad name", "caf\ufffd"]


def test_a_jobs_where_shows_odd_names_escaped() -> None:
    """Messages name the file on one line, its odd characters escaped."""
    job = va.UploadJob(path="/tmp/bad\nname\udce9.mp4", title="t", channel="news")
    assert job.where == "/tmp/bad\\nname\\udce9.mp4"
    assert va.UploadJob(path="/tmp/café.mp4", title="t", channel="news").where == "/tmp/café.mp4"
