"""The emulator's v2 playlists and players, and v2's error shape for what the
middleware answers itself (injected faults, unknown methods), in raw HTTP."""

from __future__ import annotations

from typing import Any

import aiohttp

from tests.integration.test_emulator_v2 import (
    assert_v2_error,
    call,
    new_video,
    profile_of,
    uploaded,
    v2_token,
)
from vidapi_async.emulator import DEMO_TOKEN, Emulator

LEGACY = {"Authorization": f"Bearer {DEMO_TOKEN}"}
SCOPES = (
    "video.manage video.read account.read playlist.manage playlist.read player.manage player.read"
)


async def test_playlists_in_v2_read_in_legacy(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator, scope=SCOPES)
        profile = await profile_of(s, emulator, auth)
        status, created, _ = await call(
            s,
            "POST",
            f"{base}/profiles/{profile}/playlists",
            auth,
            json={"title": "Mix", "visibility": "private", "description": "d"},
        )
        assert status == 201, created
        playlist_id = created["playlist_id"]
        assert created == {"playlist_id": playlist_id, "title": "Mix", "visibility": "private"}
        file_url = await uploaded(s, emulator, auth)
        status, video, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/videos", auth, json=new_video(file_url)
        )
        status, _item, _ = await call(
            s,
            "POST",
            f"{base}/playlists/{playlist_id}/videos",
            auth,
            json={"video_id": video["video_id"]},
        )
        assert status == 201
        status, _, raw = await call(
            s, "PATCH", f"{base}/playlists/{playlist_id}", auth, json={"visibility": "public"}
        )
        assert (status, raw) == (204, b"")
        status, old, _ = await call(
            s,
            "GET",
            f"{emulator.base_url}/playlist/{playlist_id}?fields=name,private,videos_total",
            LEGACY,
        )
        assert old == {"name": "Mix", "private": False, "videos_total": 1}
        status, body, _ = await call(
            s, "PATCH", f"{base}/playlists/{playlist_id}", auth, json={"visibility": "password"}
        )
        assert status == 400
        assert_v2_error(body, "INVALID_PARAMETER")
        status, body, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/playlists", auth, json={"title": "No vis"}
        )
        assert status == 400
        assert_v2_error(body, "MISSING_PARAMETER")
        status, _, _ = await call(s, "DELETE", f"{base}/playlists/{playlist_id}", auth)
        assert status == 204
        status, body, _ = await call(s, "GET", f"{base}/playlists/{playlist_id}", auth)
        assert status == 404
        assert_v2_error(body, "RESOURCE_NOT_FOUND")


async def test_players_take_a_name_and_need_player_scopes(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator, scope=SCOPES)
        profile = await profile_of(s, emulator, auth)
        status, created, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/players", auth, json={"name": "Main"}
        )
        assert status == 201, created
        player_id = created["player_id"]
        status, _, raw = await call(
            s, "PATCH", f"{base}/players/{player_id}", auth, json={"name": "Renamed"}
        )
        assert (status, raw) == (204, b"")
        status, read, _ = await call(s, "GET", f"{base}/players/{player_id}", auth)
        assert read == {"player_id": player_id, "name": "Renamed"}
        status, old, _ = await call(
            s, "GET", f"{emulator.base_url}/player/{player_id}?fields=label", LEGACY
        )
        assert old == {"label": "Renamed"}
        status, body, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/players", auth, data={"name": "form"}
        )
        assert status == 415
        videos_only = await v2_token(s, emulator, scope="video.read")
        status, body, _ = await call(s, "GET", f"{base}/players/{player_id}", videos_only)
        assert status == 403
        assert_v2_error(body, "MISSING_PERMISSIONS")
        status, _, _ = await call(s, "DELETE", f"{base}/players/{player_id}", auth)
        assert status == 204


async def test_faults_and_unknown_methods_on_v2_answer_in_v2s_shape(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        emulator.faults.update({"error_rate": 1.0, "error_statuses": [503], "paths": ["/v2/me"]})
        status, body, _ = await call(s, "GET", f"{emulator.v2_base_url}/me", auth)
        assert status == 503
        assert_v2_error(body, "INTERNAL_ERROR")
        status, legacy, _ = await call(s, "GET", f"{emulator.base_url}/me", {})
        assert status != 503 and "correlation_id" not in str(legacy)  # legacy paths untouched
        emulator.faults.update({"error_rate": 0.0, "paths": None})
        status, body, _ = await call(s, "PUT", f"{emulator.v2_base_url}/videos/x1", auth)
        assert status == 405
        assert_v2_error(body, "METHOD_NOT_ALLOWED")
        async with s.get(f"{emulator.base_url}/video/xnothere") as r:
            old: Any = await r.json()
        assert isinstance(old["error"]["code"], int)  # the legacy shape stays legacy
