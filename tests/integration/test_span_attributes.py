"""Operation and batch-job spans carry what identifies the work: ``vidapi.video.id`` once
known, ``vidapi.job.key`` in a batch, ``vidapi.source.size`` for an upload; never a
title, a token or a password (the OpenTelemetry SDK's in-memory exporter reads them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

TITLE = "A title that is no identifier"
PASSWORD = "pw-never-on-a-span"
SRT = "1\n00:00:01,000 --> 00:00:02,000\nHello\n"


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider, memory
    provider.shutdown()


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def named(finished: list[ReadableSpan], name: str) -> list[dict[str, Any]]:
    return [attributes(s) for s in finished if s.name == name]


def no_title_nor_secret(finished: list[ReadableSpan], *secrets: str) -> None:
    for span in finished:
        for value in attributes(span).values():
            for secret in (TITLE, *secrets):
                assert secret not in str(value), (span.name, value)


async def test_operations_carry_the_video_id_and_the_source_size(
    emulator: Emulator, tmp_path: Path, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = spans
    src = make_file(tmp_path / "clip.mp4", 123_456)
    srt = tmp_path / "en.srt"
    srt.write_text(SRT, encoding="utf-8")
    async with client_for(emulator, tracer_provider=provider) as client:
        video = await client.upload_video(src, title=TITLE, channel="news")
        await client.get_video(video.id, ["title"])
        await client.set_password(video.id, PASSWORD)
        await client.update_video(video.id, description="d")
        await client.upload_subtitle(video.id, srt, language="en")
        await client.list_subtitles(video.id)
        await client.wait_until_ready(video.id, poll=0.05)
        uploaded = await client.upload_file(b"x" * 777)  # a source that is no file
        second = await client.create_video(url=uploaded.url, title=TITLE, channel="news")
        live = await client.create_live_stream(title=TITLE, channel="news")
        await client.get_live_stream(live.id)
        await client.delete_video(video.id)
        token = (await client.access_token()).token
    finished = list(memory.get_finished_spans())
    [upload_video] = named(finished, "vidapi upload_video")
    assert upload_video["vidapi.video.id"] == video.id
    assert upload_video["vidapi.source.size"] == 123_456
    sizes = [a["vidapi.source.size"] for a in named(finished, "vidapi upload_file")]
    assert sizes == [123_456, 777]
    # upload_video creates in its own span; create_video names the video it made
    [created] = named(finished, "vidapi create_video")
    assert created["vidapi.video.id"] == second.id
    for name in (
        "vidapi get_video",
        "vidapi set_password",
        "vidapi update_video",
        "vidapi upload_subtitle",
        "vidapi create_subtitle",
        "vidapi list_subtitles",
        "vidapi wait_until_ready",
        "vidapi delete_video",
    ):
        found = named(finished, name)
        assert found and all(a.get("vidapi.video.id") == video.id for a in found), name
    [made_live] = named(finished, "vidapi create_live_stream")
    [read_live] = named(finished, "vidapi get_live_stream")
    assert made_live["vidapi.video.id"] == read_live["vidapi.video.id"] == live.id
    # the request spans keep their own attributes (no vidapi.* there)
    for span in finished:
        if span.name in ("GET", "POST", "DELETE"):
            assert not [k for k in attributes(span) if k.startswith("vidapi.")], span.name
    no_title_nor_secret(finished, PASSWORD, token)


async def test_a_failed_operation_still_says_what_it_worked_on(
    emulator: Emulator, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = spans
    async with client_for(emulator, tracer_provider=provider) as client:
        with pytest.raises(va.NotFoundError):
            await client.get_video("x0gone")
    [span] = [s for s in memory.get_finished_spans() if s.name == "vidapi get_video"]
    assert attributes(span)["vidapi.video.id"] == "x0gone"
    assert attributes(span)["error.type"] == "NotFoundError"


async def test_batch_job_spans_carry_the_key_the_video_id_and_the_size(
    emulator: Emulator, tmp_path: Path, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = spans
    sizes = {"a": 10_000, "b": 20_000, "bad": 30_000}
    files = {key: make_file(tmp_path / f"{key}.mp4", size) for key, size in sizes.items()}
    jobs = [
        va.UploadJob(
            path=files[key],
            title=TITLE,
            channel="no-such-channel" if key == "bad" else "news",
            key=key,
            password=PASSWORD if key == "b" else None,
        )
        for key in sizes
    ]
    journal = tmp_path / "journal.sqlite"
    async with client_for(emulator, tracer_provider=provider) as client:
        async with va.BatchUploader(client, concurrency=2, journal=journal) as batch:
            results = {r.key: r async for r in batch.run(jobs)}
        first_spans = list(memory.get_finished_spans())
        first = [attributes(s) for s in first_spans if s.name == "vidapi job"]
        memory.clear()
        # run again: the done jobs are skipped, their video ids read from the journal
        async with va.BatchUploader(client, concurrency=2, journal=journal) as batch:
            again = {r.key: r async for r in batch.run(jobs[:2])}
        token = (await client.access_token()).token
    assert {k: r.status.value for k, r in results.items()} == {
        "a": "done",
        "b": "done",
        "bad": "failed",
    }
    by_key = {a["vidapi.job.key"]: a for a in first}
    assert by_key.keys() == sizes.keys()
    for key, size in sizes.items():
        assert by_key[key]["vidapi.source.size"] == size
        assert by_key[key].get("vidapi.video.id") == results[key].video_id
    assert "vidapi.video.id" not in by_key["bad"]  # refused before any video was made
    skipped = [attributes(s) for s in memory.get_finished_spans() if s.name == "vidapi job"]
    assert {a["vidapi.job.key"]: a["vidapi.video.id"] for a in skipped} == {
        key: r.video_id for key, r in again.items()
    }
    assert {r.status.value for r in again.values()} == {"skipped"}
    no_title_nor_secret([*first_spans, *memory.get_finished_spans()], PASSWORD, token)


async def test_no_tracer_no_attribute_work(emulator: Emulator, tmp_path: Path) -> None:
    """Without a tracer provider that records, the calls run as before (no span, no
    error): the attribute helper does nothing."""
    async with client_for(emulator) as client:
        src = make_file(tmp_path / "c.mp4", 5000)
        video = await client.upload_video(src, title="t", channel="news")
        assert (await client.get_video(video.id)).id == video.id
