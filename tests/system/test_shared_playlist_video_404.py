"""Attack on 903a201 (issue 43, the shared queue's playlist fix): ``SharedPlaylists``
now takes any 404 of ``playlists.add_video`` as proof that the *playlist* is gone and
remembers (name, id) in ``_gone`` for good: the next ``id_of`` deletes the queue's row
and lists the account's playlists *skipping that id*, so it makes a second playlist of
the same name. But the platform answers 404 for an unknown *video* too (the emulator:
``visible_video``): a video deleted while its job runs (by hand, by another tool)
makes the worker create a duplicate playlist, and every later job of the queue goes
into the new one while the earlier videos stay in the old. Before 903a201 the row was
dropped and the account's listing found the same live playlist again: no duplicate."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch import SharedBatch
from vidapi_async.batch._playlists_shared import SharedPlaylists
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system


async def test_a_deleted_video_does_not_make_a_second_playlist_of_the_name(
    tmp_path: Path,
    dsn: str,
) -> None:
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with SharedBatch(dsn, schema="att43") as shared:
            playlists = SharedPlaylists(client, shared.journal)
            first = (
                await client.upload_video(
                    make_file(tmp_path / "a.mp4", 3000), title="a", channel="news"
                )
            ).id
            await playlists.add(first, ["Common"], None)
            [common] = emu.state.all("playlist")

            doomed = (
                await client.upload_video(
                    make_file(tmp_path / "b.mp4", 3000), title="b", channel="news"
                )
            ).id
            await client.videos.delete(doomed)  # deleted while its job runs
            with pytest.raises(va.NotFoundError):
                await playlists.add(doomed, ["Common"], None)  # that job fails: fair

            later = (
                await client.upload_video(
                    make_file(tmp_path / "c.mp4", 3000), title="c", channel="news"
                )
            ).id
            await playlists.add(later, ["Common"], None)  # the next job of the queue
            named = [p for p in emu.state.all("playlist") if p["name"] == "Common"]
            assert [p["id"] for p in named] == [common["id"]], "a second playlist 'Common'"
            assert named[0]["videos"] == [first, later]
