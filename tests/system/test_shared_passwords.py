"""A video password (and, third attack F5, a source url's credentials) in the shared queue
(issue 38 #12): kept in the queue's specs only
while its job needs it; once the job is done, cleared (a salted digest kept, so that a
re-enqueue of the same job is still seen unchanged, and a changed password refused)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs
import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch import SharedBatch
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system  # PostgreSQL

PASSWORD = "s3cretPW-issue38"


async def test_a_done_jobs_password_is_cleared_from_the_specs(
    emulator: Emulator,
    tmp_path: Path,
    dsn: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    f = make_file(tmp_path / "board.mp4", 5000)
    job = va.UploadJob(path=f, title="board", channel="news", key="k1", password=PASSWORD)
    async with SharedBatch(dsn) as shared:
        await shared.enqueue([job])
        [(spec,)] = await shared.journal.fetchall(
            shared.journal.statement("select spec from {s}.specs")
        )
        assert PASSWORD in spec  # the worker needs it until the video exists
        async with client_for(emulator) as client:
            await asyncio.wait_for(shared.work(client, until_empty=True), 60)
            record = await shared.journal.load("k1")
            assert record is not None and record.stage is va.Stage.DONE
            video = await client.get_video(record.video_id or "", fields=["password_protected"])
        assert video.password_protected
        [(spec,)] = await shared.journal.fetchall(
            shared.journal.statement("select spec from {s}.specs")
        )
        assert PASSWORD not in spec
        # the same job enqueued again: unchanged, done; another password: refused
        same = await shared.enqueue([job])
        assert (same.added, same.already, same.changed, same.updating) == (0, 1, [], [])
        other = await shared.enqueue([attrs.evolve(job, password="other-pw")])
        assert other.changed == ["k1"]
        # a metadata change is still an update, its password never stored again after it
        retitled = attrs.evolve(job, title="board (final)")
        assert (await shared.enqueue([retitled])).updating == ["k1"]
        async with client_for(emulator) as client:
            await asyncio.wait_for(shared.work(client, until_empty=True), 60)
        [(spec,)] = await shared.journal.fetchall(
            shared.journal.statement("select spec from {s}.specs")
        )
        assert PASSWORD not in spec and "board (final)" in spec
    assert PASSWORD not in caplog.text


SIGNATURE = "SIGSECRET-issue38"
SOURCE_PASSWORD = "SRCPASSWORD-issue38"


async def test_a_done_jobs_url_credentials_are_cleared_from_the_specs(
    emulator: Emulator,
    dsn: str,
) -> None:
    """Issue 38, third attack F5: a done job kept its source url's ``user:password@``
    and ``X-Amz-Signature`` in clear in the queue's specs, while its video password was
    cleared. Once done, the url is kept without them (as its key and the journal name
    it); the same job enqueued again, or with a renewed signature, is unchanged."""
    from tests.wire import Reply, WireServer

    async with WireServer(lambda seen: Reply(200, b"\x1a\x45\xdf\xa3" + bytes(5000))) as src:
        host = src.url.removeprefix("http://")

        def url(signature: str) -> str:
            return (
                f"http://srcuser:{SOURCE_PASSWORD}@{host}/a.webm?v=1"
                f"&X-Amz-Signature={signature}&X-Amz-Date=20261128T000000Z"
            )

        job = va.UploadJob(url=url(SIGNATURE), title="signed", channel="news", key="u1")
        async with SharedBatch(dsn) as shared:
            await shared.enqueue([job])
            async with client_for(emulator) as client:
                await asyncio.wait_for(shared.work(client, until_empty=True), 60)
            record = await shared.journal.load("u1")
            assert record is not None and record.stage is va.Stage.DONE, record
            [(spec,)] = await shared.journal.fetchall(
                shared.journal.statement("select spec from {s}.specs")
            )
            assert SIGNATURE not in spec and SOURCE_PASSWORD not in spec, spec
            assert f"{host}/a.webm?v=1" in spec  # the source it was made from, named
            same = await shared.enqueue([job])
            assert (same.added, same.already, same.changed, same.updating) == (0, 1, [], [])
            renewed = await shared.enqueue([attrs.evolve(job, url=url("RENEWED"))])
            assert (renewed.already, renewed.changed) == (1, []), renewed
            moved = attrs.evolve(job, url=f"http://{host}/b.webm")
            assert (await shared.enqueue([moved])).changed == ["u1"]
    assert len(src.seen) == 1 and src.seen[0].path == "/a.webm"
