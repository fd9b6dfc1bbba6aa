"""``client.playlists``, ``client.players`` and the webhook in API v2: end to end on the
emulator, and the requests' bytes at tests/wire.py's scripted server."""

from __future__ import annotations

import json

import pytest

import vidapi_async as va
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

VIDEO = b"\x00\x00\x00\x18ftypmp42" + b"lib-bytes" * 300


async def test_playlists_in_v2_on_the_emulator(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as client:
        video = await client.upload_video(
            VIDEO, title="in a list", channel="news", filename="p.mp4"
        )
        made = await client.playlists.create(name="Mix", private=True)
        assert (made.name, made.private) == ("Mix", True)
        changed = await client.playlists.update(made, name="Mix 2", private=False)
        assert (changed.id, changed.name, changed.private) == (made.id, "Mix 2", False)
        await client.playlists.add_video(made, video)
        with pytest.raises(va.UnsupportedOperationError):
            await client.playlists.remove_video(made, video)
        await client.playlists.delete(made)
        with pytest.raises(va.NotFoundError):
            await client.playlists.get(made.id)


async def test_players_in_v2_on_the_emulator(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as client:
        player = await client.players.create(label="Site")
        assert player.id and player.label == "Site"
        renamed = await client.players.update(player, label="Site 2")
        assert (renamed.id, renamed.label) == (player.id, "Site 2")
        assert (await client.players.get(player.id)).label == "Site 2"
        await client.players.delete(player)
        with pytest.raises(va.NotFoundError):
            await client.players.get(player.id)
        with pytest.raises(va.UnsupportedOperationError):
            client.players.mine()


async def test_webhook_on_the_profile_in_v2(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as client:
        hook = await client.set_webhook("https://hooks.example/in", events=["video.created"])
        assert (hook.url, hook.events) == ("https://hooks.example/in", ("video.created",))
        assert await client.get_webhook() == hook
        await client.remove_webhook()
        assert await client.get_webhook() is None


def scripted(seen: Seen) -> Reply:
    if seen.path == "/v2/me":
        return Reply.json({"user_id": "u1", "profiles": [{"profile_id": "p1", "name": "M"}]})
    if (seen.method, seen.path) == ("POST", "/v2/profiles/p1/playlists"):
        return Reply.json({"playlist_id": "pl1", "title": "Mix", "visibility": "private"}, 201)
    if (seen.method, seen.path) == ("POST", "/v2/playlists/pl1/videos"):
        return Reply.json({"video_id": "x1"}, 201)
    if (seen.method, seen.path) == ("POST", "/v2/profiles/p1/players"):
        return Reply.json({"player_id": "pp1", "name": "Site"}, 201)
    if seen.method == "PATCH":
        return Reply(204)
    if seen.path == "/v2/profiles/p1":
        return Reply.json({"profile_id": "p1", "webhook": None})
    return Reply.json({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no"}}, status=404)


async def test_library_requests_on_the_wire() -> None:
    async with WireServer(scripted) as srv:
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            playlist = await client.playlists.create(name="Mix", private=True)
            await client.playlists.add_video(playlist, "x1")
            player = await client.players.create(label="Site")
            await client.remove_webhook()
    assert (playlist.id, player.id) == ("pl1", "pp1")
    sent = [(s.method, s.path, json.loads(s.body) if s.body else None) for s in srv.seen]
    assert sent == [
        ("GET", "/v2/me", None),
        ("POST", "/v2/profiles/p1/playlists", {"title": "Mix", "visibility": "private"}),
        ("POST", "/v2/playlists/pl1/videos", {"video_id": "x1"}),
        ("POST", "/v2/profiles/p1/players", {"name": "Site"}),
        ("PATCH", "/v2/profiles/p1", {"webhook": None}),
    ]
    for s in srv.seen[1:]:
        assert s.headers["authorization"] == "Bearer t0"
        assert s.headers["content-type"] == "application/json"
