"""A batch's playlists and the platform's 404s: a 404 adding a video to a playlist is a
deleted playlist (forgotten, found or made again once) only if the playlist itself is
gone; a deleted video is the job's failure and never makes a second playlist of the
name. Against the emulator; its state is the oracle."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch._playlists import Playlists
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def videos(client: va.Client, tmp_path: Path, *names: str) -> list[str]:
    """A video made of a small file per name; their ids."""
    return [
        (
            await client.upload_video(
                make_file(tmp_path / f"{n}.mp4", 3000), title=n, channel="news"
            )
        ).id
        for n in names
    ]


async def test_a_deleted_video_fails_its_job_and_the_playlist_stays_one(tmp_path: Path) -> None:
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        playlists = Playlists(client)
        ids = await videos(client, tmp_path, "a", "b", "c")
        await playlists.add(ids[0], ["Common"], None)
        await client.videos.delete(ids[1])  # deleted while its job runs
        with pytest.raises(va.NotFoundError, match=ids[1]):
            await playlists.add(ids[1], ["Common"], None)
        await playlists.add(ids[2], ["Common"], None)
        [common] = [p for p in emu.state.all("playlist") if p["name"] == "Common"]
        assert common["videos"] == [ids[0], ids[2]]


async def test_a_deleted_playlist_is_made_again_once(tmp_path: Path) -> None:
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        playlists = Playlists(client)
        ids = await videos(client, tmp_path, "a", "b")
        await playlists.add(ids[0], ["Common"], None)
        [gone] = emu.state.all("playlist")
        await client.playlists.delete(gone["id"])
        await playlists.add(ids[1], ["Common"], None)
        [common] = emu.state.all("playlist")
        assert common["id"] != gone["id"] and common["videos"] == [ids[1]]
