"""Sources written by an attacker (issue 18): credentials in a source url never reach a
message, a repr, a journal or a log line; redirects are checked against the
``SourcePolicy`` on the address actually connected; a source's cookies never reach the
API; compressed, endless, trickling and stalled sources end in a typed error.

The sources are ``tests/wire.py``'s scripted servers on loopback addresses only
(127.0.0.0/8); the platform is the emulator."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import pytest

import vidapi_async as va
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

from .conftest import stored_bytes
from .wire import Reply, Seen, WireServer

DATA = os.urandom(200_000)
PASSWORD = "Pa55w0rd-hunter2"


# --- 1. credentials in a source url ------------------------------------------------------


async def test_a_password_in_a_source_url_is_in_no_message(emulator: Emulator) -> None:
    async with (
        WireServer(lambda seen: Reply(404, b"no")) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        netloc = src.url.split("//", 1)[1]
        with pytest.raises(va.SourceError) as info:
            await client.upload_from_url(f"http://alice:{PASSWORD}@{netloc}/f.mp4")
        assert src.seen[0].headers["authorization"].startswith("Basic ")  # still sent there
    assert PASSWORD not in str(info.value) and PASSWORD not in repr(info.value)
    assert "alice" not in str(info.value)
    assert "/f.mp4" in str(info.value)
    # A source that cannot be reached: the transport's message too.
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        with pytest.raises(va.TransportError) as lost:
            await client.upload_from_url(f"http://alice:{PASSWORD}@{netloc}/f.mp4")
    assert PASSWORD not in str(lost.value)


async def test_a_url_job_keeps_its_password_out_of_results_journal_and_log(
    emulator: Emulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with (
        WireServer(lambda seen: Reply(403, b"no")) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        netloc = src.url.split("//", 1)[1]
        job = va.UploadJob(url=f"http://bob:{PASSWORD}@{netloc}/v.mp4", title="t", channel="news")
        journal = tmp_path / "j.sqlite"
        with caplog.at_level(logging.DEBUG, logger="vidapi_async"):
            async with va.BatchUploader(client, journal=journal) as batch:
                [result] = [r async for r in batch.run([job])]
    assert result.status is va.JobStatus.FAILED
    assert isinstance(result.error, va.SourceError)
    for text in (repr(result), str(result.error), job.where, caplog.text):
        assert PASSWORD not in text and "bob" not in text
    assert "/v.mp4" in job.where
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT * FROM jobs").fetchall()
    assert rows and PASSWORD not in repr(rows)


async def test_a_manifest_names_the_variable_holding_a_url_jobs_headers(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def source(seen: Seen) -> Reply:
        ok = seen.headers.get("x-source-key") == PASSWORD
        return Reply(200, DATA) if ok else Reply(401, b"")

    monkeypatch.setenv("SRC_HEADERS", f"X-Source-Key: {PASSWORD}\nX-Other: 1\n")
    async with WireServer(source) as src, client_for(emulator, retry=va.NO_RETRY) as client:
        manifest = tmp_path / "m.csv"
        manifest.write_text(f"url,headers,title\n{src.url}/a.mp4,SRC_HEADERS,a\n", "utf-8")
        [job] = va.batch.jobs_from_manifest(str(manifest), channel="news")
        assert PASSWORD not in repr(job)
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            [result] = [r async for r in batch.run([job])]
    assert result.status is va.JobStatus.DONE, result.error
    assert stored_bytes(emulator, emulator.videos()[0]["url"]) == DATA
    assert src.seen[0].headers["x-other"] == "1"
    manifest.write_text("url,headers\nhttp://h/a.mp4,NOT_SET_ANYWHERE\n", "utf-8")
    with pytest.raises(va.InvalidArgumentError, match="NOT_SET_ANYWHERE is not set"):
        list(va.batch.jobs_from_manifest(str(manifest), channel="news"))
    monkeypatch.setenv("SRC_HEADERS", f"no colon {PASSWORD}")
    manifest.write_text("url,headers\nhttp://h/a.mp4,SRC_HEADERS\n", "utf-8")
    with pytest.raises(va.InvalidArgumentError) as bad:
        list(va.batch.jobs_from_manifest(str(manifest), channel="news"))
    assert PASSWORD not in str(bad.value) and "SRC_HEADERS" in str(bad.value)
