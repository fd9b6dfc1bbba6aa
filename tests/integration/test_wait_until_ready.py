"""wait_until_ready: polls until the platform says a video is playable."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def new_video(client: va.Client, tmp_path: Path) -> va.Video:
    uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 4000))
    return await client.create_video(url=uploaded.url, title="t", channel="news")


async def test_returns_the_video_once_ready_having_seen_it_processing(tmp_path: Path) -> None:
    seen: list[tuple[str | None, int | None]] = []
    async with Emulator(encoding_delay=0.4) as emu, client_for(emu) as client:
        video = await new_video(client, tmp_path)
        assert video.status == "processing"
        ready = await client.wait_until_ready(
            video.id, poll=0.05, progress=lambda v: seen.append((v.status, v.encoding_progress))
        )
    assert ready.id == video.id
    assert ready.is_ready
    assert ready.status == "ready"
    assert ready.encoding_progress == 100
    assert seen[-1] == ("ready", 100)
    processing = [p for s, p in seen if s == "processing"]
    assert processing  # it looked while encoding ran, and saw progress grow
    assert processing == sorted(processing)


async def test_a_failed_encoding_raises_a_typed_error(tmp_path: Path) -> None:
    async with Emulator(encoding_delay=0.2) as emu, client_for(emu) as client:
        video = await new_video(client, tmp_path)
        emu.fail_encoding(video.id)
        with pytest.raises(va.EncodingError, match="encoding_error") as info:
            await client.wait_until_ready(video.id, poll=0.05)
    assert info.value.video_id == video.id
    assert info.value.status == "encoding_error"
    assert not isinstance(info.value, TimeoutError)


async def test_running_out_of_time_is_a_timeout_error_that_says_how_far_it_got(
    tmp_path: Path,
) -> None:
    async with Emulator(encoding_delay=30) as emu, client_for(emu) as client:
        video = await new_video(client, tmp_path)
        with pytest.raises(TimeoutError) as info:
            await client.wait_until_ready(video.id, timeout=0.3, poll=0.05)
    err = info.value
    assert isinstance(err, va.ReadyTimeoutError)
    assert isinstance(err, va.VidapiError)
    assert not isinstance(err, va.EncodingError)  # nothing failed: it may still be ready
    assert err.video_id == video.id
    assert err.status == "processing"
    assert err.encoding_progress is not None
    assert 0 <= err.encoding_progress < 100
    assert "not ready after 0.3 s" in str(err)


async def test_a_live_stream_and_a_ready_video_return_at_the_first_look(
    emulator: Emulator, tmp_path: Path
) -> None:
    calls = 0
    async with client_for(emulator) as client:
        video = await new_video(client, tmp_path)

        def count(_: va.Video) -> None:
            nonlocal calls
            calls += 1

        await client.wait_until_ready(video.id, poll=0.5, progress=count)  # ready at 0.2 s
    assert calls == 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"timeout": 0}, "timeout"),
        ({"poll": -1}, "poll"),
        ({"max_poll": float("nan")}, "max_poll"),
        ({"timeout": True}, "timeout"),
    ],
)
async def test_bad_waits_are_refused_before_any_request(
    client: va.Client, kwargs: dict[str, float], name: str
) -> None:
    with pytest.raises(va.InvalidArgumentError, match=name):
        await client.wait_until_ready("x1", **kwargs)


async def test_a_batch_can_wait_for_its_videos_to_be_ready(tmp_path: Path) -> None:
    files = [make_file(tmp_path / f"r{i}.mp4", 3000 + i) for i in range(3)]
    journal = tmp_path / "j.sqlite"
    async with Emulator(encoding_delay=0.3) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=3, journal=journal, wait_ready=True) as b:
            results = [
                r
                async for r in b.run(
                    va.UploadJob(path=f, title=f.name, channel="news") for f in files
                )
            ]
        assert all(r.ok for r in results)
        for r in results:
            assert r.video_id is not None
            video = await client.get_video(r.video_id)
            assert video.is_ready  # done means encoded
    assert {r.stage for r in va.SQLiteJournal(journal).records_sync()} == {va.Stage.DONE}


async def test_the_cli_waits_with_a_bar(tmp_path: Path) -> None:
    from tests.cli_run import vidapi

    src = make_file(tmp_path / "clip.mp4", 20_000)
    async with Emulator(encoding_delay=1.5) as emu:
        env = {"VIDAPI_TOKEN": emu.token, "VIDAPI_BASE_URL": emu.base_url}
        code, out, err = await vidapi(
            "--json",
            "upload",
            str(src),
            "--title",
            "t",
            "--channel",
            "news",
            "--wait-ready",
            env=env,
        )
    assert code == 0, err
    assert '"status": "ready"' in out
    assert "encoding" in err and "100%" in err
