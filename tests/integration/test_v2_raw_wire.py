"""API v2 on the wire, the rest: raw calls (JSON bodies, PATCH, paging by ``next``)
and the reads, updates and deletes of playlists, players, the webhook and the tag
search, as they arrive at tests/wire.py's scripted server."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable

import pytest

import vidapi_async as va
from tests.wire import Reply, Seen, WireServer


def scripted(base: list[str]) -> Callable[[Seen], Reply]:
    def handle(seen: Seen) -> Reply:
        m, path = seen.method, seen.path
        q = urllib.parse.parse_qs(seen.raw_query)
        if m in ("PATCH", "DELETE"):
            return Reply(204)
        if path == "/v2/things":
            page = int(q.get("cursor", ["1"])[0])
            nxt = f"{base[0]}/v2/things?cursor={page + 1}" if page < 3 else None
            return Reply.json({"data": [{"n": page}], "next": nxt})
        if (m, path) == ("POST", "/v2/anything"):
            return Reply.json({"ok": True}, 201)
        if path == "/v2/playlists/pl1":
            return Reply.json({"playlist_id": "pl1", "title": "T2", "visibility": "public"})
        if path == "/v2/players/pp1":
            return Reply.json({"player_id": "pp1", "name": "N2"})
        if path == "/v2/me":
            return Reply.json({"user_id": "u1", "profiles": [{"profile_id": "p1"}]})
        if path == "/v2/profiles/p1":
            hook = {"callback_url": "https://h.example/x", "events": ["video.created"]}
            return Reply.json({"profile_id": "p1", "webhook": hook})
        if path == "/v2/profiles/p1/videos":
            return Reply.json({"data": [{"video_id": "x9", "tags": ["job-1"]}], "next": None})
        return Reply.json({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no"}}, 404)

    return handle


async def test_raw_calls_in_v2() -> None:
    base: list[str] = []
    async with WireServer(scripted(base)) as srv:
        base.append(srv.url)
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            assert await client.post("/anything", {"a": True, "n": 2, "x": None}) == {"ok": True}
            assert await client.raw.patch("/videos/x1", {"title": "é"}) == {}
            assert await client.delete("/videos/x1") == {}
            rows = [r async for r in client.paginate("/things", limit=5)]
    assert rows == [{"n": 1}, {"n": 2}, {"n": 3}]
    post, patch, delete, *pages = srv.seen
    assert post.headers["content-type"] == "application/json"
    assert json.loads(post.body) == {"a": True, "n": 2, "x": None}
    assert (patch.method, patch.path) == ("PATCH", "/v2/videos/x1")
    assert json.loads(patch.body.decode("utf-8")) == {"title": "é"}
    assert (delete.method, delete.body) == ("DELETE", b"")
    assert urllib.parse.parse_qs(pages[0].raw_query) == {"page": ["1"], "page_size": ["5"]}
    assert [p.target for p in pages[1:]] == ["/v2/things?cursor=2", "/v2/things?cursor=3"]
    for s in srv.seen:
        assert s.headers["authorization"] == "Bearer t0"


async def test_raw_patch_is_v2_only() -> None:
    async with va.Client(access_token="t", base_url="http://127.0.0.1:9") as client:
        with pytest.raises(va.UnsupportedOperationError) as info:
            await client.raw.patch("/video/x1", {"title": "t"})
    assert info.value.dialect == "legacy"


async def test_library_reads_updates_and_deletes_in_v2() -> None:
    base: list[str] = []
    async with WireServer(scripted(base)) as srv:
        base.append(srv.url)
        async with va.Client(
            access_token="t0", api="v2", base_url=f"{srv.url}/v2", profile_id="p1"
        ) as client:
            playlist = await client.playlists.update("pl1", name="T2", private=False)
            await client.playlists.delete("pl1")
            player = await client.players.update("pp1", label="N2")
            await client.players.delete("pp1")
            hook = await client.get_webhook()
            found = await client.find_videos_by_tag("job-1")
    assert (playlist.name, playlist.private, player.label) == ("T2", False, "N2")
    assert hook is not None and hook.url == "https://h.example/x"
    assert [v.id for v in found] == ["x9"]
    sent = [(s.method, s.path, json.loads(s.body) if s.body else None) for s in srv.seen]
    assert sent == [
        ("PATCH", "/v2/playlists/pl1", {"title": "T2", "visibility": "public"}),
        ("GET", "/v2/playlists/pl1", None),
        ("DELETE", "/v2/playlists/pl1", None),
        ("PATCH", "/v2/players/pp1", {"name": "N2"}),
        ("GET", "/v2/players/pp1", None),
        ("DELETE", "/v2/players/pp1", None),
        ("GET", "/v2/me", None),  # the profile given, verified once
        ("GET", "/v2/profiles/p1", None),
        ("GET", "/v2/profiles/p1/videos", None),
    ]
    query = urllib.parse.parse_qs(srv.seen[-1].raw_query)
    assert query["tags"] == ["job-1"] and query["sort"] == ["created_at"]


async def test_a_next_on_another_host_or_repeated_stops_the_listing() -> None:
    def handle(seen: Seen) -> Reply:
        cursor = urllib.parse.parse_qs(seen.raw_query).get("cursor", ["1"])[0]
        if cursor == "1":
            nxt = "http://127.0.0.2:9/v2/profiles/p1/videos?cursor=2"
            if "loop" in seen.raw_query:
                nxt = f"{srv.url}{seen.target}"
            return Reply.json({"data": [{"video_id": "x1"}], "next": nxt})
        return Reply.json({"data": [], "next": None})

    async with WireServer(handle) as srv:
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            with pytest.raises(va.UnexpectedResponseError, match="another host"):
                [v async for v in client.paginate("/profiles/p1/videos")]
            with pytest.raises(va.UnexpectedResponseError, match="already read"):
                [v async for v in client.paginate("/profiles/p1/videos", {"loop": 1})]
    assert len(srv.seen) == 2  # nothing more was sent, to the other host or again
