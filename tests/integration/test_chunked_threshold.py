"""Resumable by default: files at or above Client.chunked_threshold go chunked."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def upload_modes(emu: Emulator) -> list[str]:
    """Per upload request: "range" (chunked protocol) or "form" (single-shot)."""
    return [
        "range" if "content-range" in {k.lower() for k in r.headers} else "form"
        for r in emu.requests
        if r.host == "upload" and r.method == "POST"
    ]


async def test_the_threshold_picks_the_mode_and_an_explicit_one_wins(
    emulator: Emulator, tmp_path: Path
) -> None:
    small = make_file(tmp_path / "small.mp4", 90_000)
    big = make_file(tmp_path / "big.mp4", 100_000)
    async with client_for(emulator, chunked_threshold=100_000, range_size=32_768) as client:
        await client.upload_file(small)
        assert set(upload_modes(emulator)) == {"form"}
        emulator.reset()
        uploaded = await client.upload_file(big)
        assert set(upload_modes(emulator)) == {"range"}
        assert int(uploaded.size or 0) == 100_000
        emulator.reset()
        await client.upload_file(big, chunked=False)
        assert set(upload_modes(emulator)) == {"form"}
        emulator.reset()
        await client.upload_file(small, chunked=True)
        assert set(upload_modes(emulator)) == {"range"}


async def test_none_turns_the_threshold_off_and_the_default_is_64_mib(
    emulator: Emulator, tmp_path: Path
) -> None:
    async with client_for(emulator, chunked_threshold=None) as client:
        assert client.chunked_threshold is None
        assert not client.chunks(10**12)
    async with client_for(emulator) as client:
        assert client.chunked_threshold == 64 * 1024 * 1024
        assert client.chunks(64 * 1024 * 1024) and not client.chunks(64 * 1024 * 1024 - 1)
    with pytest.raises(va.InvalidArgumentError, match="chunked_threshold"):
        va.Client("t", chunked_threshold=0)


async def test_a_batch_sends_big_files_chunked_and_small_ones_single_shot(
    emulator: Emulator, tmp_path: Path
) -> None:
    files = [
        make_file(tmp_path / "a.mp4", 20_000),
        make_file(tmp_path / "b.mp4", 150_000),
    ]
    async with client_for(emulator, chunked_threshold=100_000, range_size=32_768) as client:
        async with va.BatchUploader(client, concurrency=2) as batch:
            jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
            results = [r async for r in batch.run(jobs)]
    assert all(r.ok for r in results)
    modes = upload_modes(emulator)
    assert modes.count("form") == 1
    assert modes.count("range") >= 150_000 // 32_768
