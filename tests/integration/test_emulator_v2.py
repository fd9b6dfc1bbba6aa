"""The emulator's API v2, spoken in raw HTTP (aiohttp, JSON written by hand): nothing of
the client's dialect module is used, so these tests are an oracle apart from it."""

from __future__ import annotations

import re
from typing import Any

import aiohttp
import pytest
import yarl

from vidapi_async.emulator import DEMO_TOKEN, Emulator

LEGACY = {"Authorization": f"Bearer {DEMO_TOKEN}"}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


async def token_answer(
    s: aiohttp.ClientSession, emu: Emulator, form: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    async with s.post(f"{emu.v2_base_url}/token", data=form) as r:
        return r.status, await r.json()


async def v2_token(
    s: aiohttp.ClientSession,
    emu: Emulator,
    scope: str | None = "video.manage video.read account.read profile.manage profile.read",
    key: str = "demo-api-key",
    secret: str = "demo-api-secret",  # noqa: S107 - the emulator's public demo key
) -> dict[str, str]:
    form = {"grant_type": "client_credentials", "client_id": key, "client_secret": secret}
    if scope is not None:
        form["scope"] = scope
    status, body = await token_answer(s, emu, form)
    assert status == 200, body
    return {"Authorization": f"Bearer {body['access_token']}"}


async def call(
    s: aiohttp.ClientSession, method: str, url: str, headers: dict[str, str], **kw: Any
) -> tuple[int, Any, bytes]:
    async with s.request(method, url, headers=headers, **kw) as r:
        raw = await r.read()
        return r.status, (await r.json() if raw else None), raw


async def profile_of(s: aiohttp.ClientSession, emu: Emulator, auth: dict[str, str]) -> str:
    status, me, _ = await call(s, "GET", f"{emu.v2_base_url}/me", auth)
    assert status == 200
    assert len(me["profiles"]) == 1
    return str(me["profiles"][0]["profile_id"])


async def uploaded(s: aiohttp.ClientSession, emu: Emulator, auth: dict[str, str]) -> str:
    """An upload session, then the multipart POST (without the token): the file's url."""
    status, session, _ = await call(s, "POST", f"{emu.v2_base_url}/files/upload_sessions", auth)
    assert status == 200, session
    form = aiohttp.FormData()
    form.add_field("file", b"\x00video bytes" * 100, filename="clip.mp4")
    async with s.post(yarl.URL(session["upload_url"], encoded=True), data=form) as r:
        assert r.status == 200
        return str((await r.json())["url"])


def new_video(file_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": "From v2",
        "category": "news",
        "visibility": "public",
        "is_for_kids": False,
        "source": {"file_url": file_url},
        **extra,
    }


def assert_v2_error(body: Any, code: str) -> None:
    err = body["error"]
    assert err["code"] == code, body
    assert UUID.fullmatch(err["correlation_id"])
    assert isinstance(err["message"], str) and err["message"]
    assert isinstance(err["details"], dict) and err["documentation_url"].startswith("https://")


async def test_upload_create_read_in_both_dialects_patch_and_delete(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        file_url = await uploaded(s, emulator, auth)
        body = new_video(
            file_url, tags=["a", "b"], language="fr", published_at="2026-06-01T12:00:00Z"
        )
        status, created, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/videos", auth, json=body
        )
        assert status == 201, created
        video_id = created["video_id"]
        assert (created["title"], created["category"], created["visibility"]) == (
            "From v2",
            "news",
            "public",
        )
        fields = "video_id,title,category,is_for_kids,tags,language,published_at,profile.profile_id"
        status, read, _ = await call(s, "GET", f"{base}/videos/{video_id}?fields={fields}", auth)
        assert status == 200
        assert read == {
            "video_id": video_id,
            "title": "From v2",
            "category": "news",
            "is_for_kids": False,
            "tags": ["a", "b"],
            "language": "fr",
            "published_at": "2026-06-01T12:00:00Z",
            "profile": {"profile_id": profile},
        }
        # The same video, read in the legacy dialect (same backend).
        legacy_fields = "id,title,channel,published,private,password_protected,is_created_for_kids"
        status, old, _ = await call(
            s, "GET", f"{emulator.base_url}/video/{video_id}?fields={legacy_fields}", LEGACY
        )
        assert status == 200
        assert old == {
            "id": video_id,
            "title": "From v2",
            "channel": "news",
            "published": True,
            "private": False,
            "password_protected": False,
            "is_created_for_kids": False,
        }
        status, _answer, raw = await call(
            s, "PATCH", f"{base}/videos/{video_id}", auth, json={"title": "Changed"}
        )
        assert (status, raw) == (204, b"")
        status, read, _ = await call(s, "GET", f"{base}/videos/{video_id}?fields=title,tags", auth)
        assert read == {"title": "Changed", "tags": ["a", "b"]}  # the rest untouched
        status, _, raw = await call(s, "DELETE", f"{base}/videos/{video_id}", auth)
        assert (status, raw) == (204, b"")
        status, gone, _ = await call(s, "GET", f"{base}/videos/{video_id}", auth)
        assert status == 404
        assert_v2_error(gone, "RESOURCE_NOT_FOUND")
        status, _, _ = await call(s, "DELETE", f"{base}/videos/{video_id}", auth)
        assert status == 204  # a repeat delete "may still return success"
        status, _, _ = await call(s, "GET", f"{emulator.base_url}/video/{video_id}", LEGACY)
        assert status == 404


async def test_a_legacy_video_reads_in_v2(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        async with s.get(f"{emulator.base_url}/file/upload", headers=LEGACY) as r:
            upload_url = (await r.json())["upload_url"]
        form = aiohttp.FormData()
        form.add_field("file", b"data" * 50, filename="a.mp4")
        async with s.post(yarl.URL(upload_url, encoded=True), data=form) as r:
            file_url = (await r.json())["url"]
        async with s.post(
            f"{emulator.base_url}/me/videos",
            headers=LEGACY,
            data={"url": file_url, "title": "Old", "channel": "fun", "published": "true"},
        ) as r:
            video_id = (await r.json())["id"]
        status, read, _ = await call(
            s,
            "GET",
            f"{emulator.v2_base_url}/videos/{video_id}?fields=title,category,visibility,created_at",
            auth,
        )
        assert status == 200
        assert (read["title"], read["category"], read["visibility"]) == ("Old", "fun", "public")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", read["created_at"])


async def test_json_only_a_form_body_is_refused(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        file_url = await uploaded(s, emulator, auth)
        form = {"title": "t", "category": "news", "visibility": "public", "is_for_kids": "false"}
        status, body, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/videos", auth, data=form
        )
        assert status == 415
        assert_v2_error(body, "UNSUPPORTED_MEDIA_TYPE")
        status, created, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/videos", auth, json=new_video(file_url)
        )
        status, body, _ = await call(
            s, "PATCH", f"{base}/videos/{created['video_id']}", auth, data={"title": "x"}
        )
        assert status == 415
        status, body, _ = await call(
            s, "POST", f"{base}/files/upload_sessions", auth, data={"a": "b"}
        )
        assert status == 415
        status, body, _ = await call(
            s,
            "PATCH",
            f"{base}/videos/{created['video_id']}",
            {**auth, "Content-Type": "application/json"},
            data=b"{not json",
        )
        assert status == 400
        assert_v2_error(body, "INVALID_PARAMETER")


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"is_for_kids": "false"}, "is_for_kids"),
        ({"is_for_kids": 0}, "is_for_kids"),
        ({"is_explicit": "true"}, "is_explicit"),
        ({"visibility": "password"}, "password"),
        ({"password": "pw"}, "password"),
        ({"visibility": "password", "password": "x" * 33}, "password"),
        ({"visibility": "hidden"}, "visibility"),
        ({"category": "cooking"}, "category"),
        ({"published_at": 1780315200}, "published_at"),
        ({"channel": "news"}, "channel"),
    ],
)
async def test_strict_values_and_the_password_rule_on_create(
    emulator: Emulator, change: dict[str, Any], param: str
) -> None:
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        file_url = await uploaded(s, emulator, auth)
        status, body, _ = await call(
            s,
            "POST",
            f"{emulator.v2_base_url}/profiles/{profile}/videos",
            auth,
            json=new_video(file_url, **change),
        )
        assert status == 400, body
        assert_v2_error(body, "INVALID_PARAMETER")
        assert body["error"]["details"]["param"] == param
    assert emulator.videos() == []


async def test_visibility_password_and_what_cannot_be_unset(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        file_url = await uploaded(s, emulator, auth)
        status, created, _ = await call(
            s,
            "POST",
            f"{base}/profiles/{profile}/videos",
            auth,
            json=new_video(file_url, visibility="password", password="pw1", is_explicit=True),
        )
        assert status == 201, created
        video_id = created["video_id"]
        legacy_url = f"{emulator.base_url}/video/{video_id}?fields=password_protected,private"
        status, old, _ = await call(s, "GET", legacy_url, LEGACY)
        assert old == {"password_protected": True, "private": False}
        # a new password, the visibility unchanged: allowed
        status, _, _ = await call(
            s, "PATCH", f"{base}/videos/{video_id}", auth, json={"password": "pw2"}
        )
        assert status == 204
        status, body, _ = await call(
            s, "PATCH", f"{base}/videos/{video_id}", auth, json={"is_explicit": False}
        )
        assert status == 400
        assert body["error"]["details"]["param"] == "is_explicit"
        status, _, _ = await call(
            s, "PATCH", f"{base}/videos/{video_id}", auth, json={"visibility": "private"}
        )
        assert status == 204
        status, old, _ = await call(s, "GET", legacy_url, LEGACY)
        assert old == {"password_protected": False, "private": True}
        status, read, _ = await call(
            s, "GET", f"{base}/videos/{video_id}?fields=visibility,video_url", auth
        )
        assert read["visibility"] == "private"
        assert re.search(r"/video/k[0-9a-f]+$", read["video_url"])


async def test_errors_carry_a_correlation_id_each(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        ids = []
        for _ in range(2):
            status, body, _ = await call(s, "GET", f"{base}/videos/xnothere", auth)
            assert status == 404
            assert_v2_error(body, "RESOURCE_NOT_FOUND")
            ids.append(body["error"]["correlation_id"])
        assert ids[0] != ids[1]
        status, body, _ = await call(s, "GET", f"{base}/no/such/route", auth)
        assert status == 404
        assert_v2_error(body, "RESOURCE_NOT_FOUND")
        status, body, _ = await call(s, "GET", f"{base}/me", {})
        assert status == 401
        assert body["error"]["correlation_id"]
        status, body, _ = await call(s, "GET", f"{base}/me", LEGACY)
        assert status == 401  # a legacy token is not a v2 one


async def test_tokens_by_client_credentials_only_and_within_the_keys_permissions(
    emulator: Emulator,
) -> None:
    async with aiohttp.ClientSession() as s:
        base = {"client_id": "demo-api-key", "client_secret": "demo-api-secret"}
        status, body = await token_answer(
            s, emulator, {**base, "grant_type": "client_credentials", "scope": "bundle.user"}
        )
        assert status == 200
        assert body["token_type"] == "Bearer" and 0 < body["expires_in"] <= 1800
        assert body["scope"] == "bundle.user" and "refresh_token" not in body
        status, body = await token_answer(
            s, emulator, {**base, "grant_type": "password", "username": "demo", "password": "x"}
        )
        assert (status, body["error"]) == (400, "unsupported_grant_type")
        status, body = await token_answer(
            s, emulator, {**base, "client_secret": "wrong", "grant_type": "client_credentials"}
        )
        assert (status, body["error"]) == (401, "invalid_client")
        status, body = await token_answer(
            s, emulator, {**base, "grant_type": "client_credentials", "scope": "manage_videos"}
        )
        assert (status, body["error"]) == (400, "invalid_scope")
        narrow = {"client_id": "demo-readonly-key", "client_secret": "demo-readonly-secret"}
        status, body = await token_answer(
            s, emulator, {**narrow, "grant_type": "client_credentials", "scope": "video.manage"}
        )
        assert (status, body["error"]) == (400, "invalid_scope")


async def test_scopes_are_enforced(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        full = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, full)
        file_url = await uploaded(s, emulator, full)
        status, created, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/videos", full, json=new_video(file_url)
        )
        reader = await v2_token(s, emulator, scope="video.read")
        for method, url, kw in [
            ("POST", f"{base}/files/upload_sessions", {}),
            ("POST", f"{base}/profiles/{profile}/videos", {"json": new_video(file_url)}),
            ("PATCH", f"{base}/videos/{created['video_id']}", {"json": {"title": "no"}}),
            ("DELETE", f"{base}/videos/{created['video_id']}", {}),
            ("GET", f"{base}/me", {}),
        ]:
            status, body, _ = await call(s, method, url, reader, **kw)
            assert status == 403, (method, url)
            assert_v2_error(body, "MISSING_PERMISSIONS")
        status, _, _ = await call(s, "GET", f"{base}/videos/{created['video_id']}", reader)
        assert status == 200
        # a bundle grants what it holds
        bundle = await v2_token(s, emulator, scope="bundle.user")
        status, _, _ = await call(s, "POST", f"{base}/files/upload_sessions", bundle)
        assert status == 200


async def test_pages_follow_next_until_null(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        made = []
        for n in range(3):
            file_url = await uploaded(s, emulator, auth)
            status, created, _ = await call(
                s,
                "POST",
                f"{base}/profiles/{profile}/videos",
                auth,
                json=new_video(file_url, title=f"v{n}"),
            )
            made.append(created["video_id"])
        url: str | None = (
            f"{base}/profiles/{profile}/videos?page_size=2&sort=created_at&fields=video_id"
        )
        seen, pages = [], 0
        while url is not None:
            status, page, _ = await call(s, "GET", url, auth)
            assert status == 200, page
            assert page["page_size"] == 2 and page["total"] == 3
            seen += [v["video_id"] for v in page["data"]]
            url, pages = page["next"], pages + 1
        assert (seen, pages) == (made, 2)
        status, page, _ = await call(
            s, "GET", f"{base}/profiles/{profile}/videos?page_size=101", auth
        )
        assert status == 400
        status, page, _ = await call(s, "GET", f"{base}/profiles/{profile}/videos?limit=2", auth)
        assert status == 400  # legacy paging is not v2's


async def test_profiles_from_me_and_creating_under_a_second_one(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        main = await profile_of(s, emulator, auth)
        owner = emulator.backend.accounts["demo"].id
        emulator.state.put("profile", "xsecondp", {"id": "xsecondp", "owner": owner, "name": "B"})
        status, me, _ = await call(s, "GET", f"{base}/me", auth)
        assert [p["profile_id"] for p in me["profiles"]] == [main, "xsecondp"]
        file_url = await uploaded(s, emulator, auth)
        status, created, _ = await call(
            s, "POST", f"{base}/profiles/xsecondp/videos", auth, json=new_video(file_url)
        )
        assert status == 201
        status, page, _ = await call(s, "GET", f"{base}/profiles/{main}/videos", auth)
        assert page["data"] == []
        status, page, _ = await call(
            s, "GET", f"{base}/profiles/xsecondp/videos?fields=video_id", auth
        )
        assert page["data"] == [{"video_id": created["video_id"]}]
        other = emulator.backend.accounts["other"].id
        status, body, _ = await call(s, "GET", f"{base}/profiles/{other}/videos", auth)
        assert status == 403
        assert_v2_error(body, "MISSING_PERMISSIONS")


async def test_the_webhook_is_set_on_the_profile(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        hook = {"callback_url": "https://hooks.example.test/cb", "events": ["video.created"]}
        status, _, raw = await call(
            s, "PATCH", f"{base}/profiles/{profile}", auth, json={"webhook": hook}
        )
        assert (status, raw) == (204, b"")
        status, read, _ = await call(s, "GET", f"{base}/profiles/{profile}?fields=webhook", auth)
        assert read == {"webhook": hook}
        status, old, _ = await call(
            s, "GET", f"{emulator.base_url}/me?fields=webhook_url,webhook_events", LEGACY
        )
        assert old == {"webhook_url": hook["callback_url"], "webhook_events": "video.created"}
        bad = {
            "webhook": {"callback_url": "http://hooks.example.test/cb", "events": ["video.created"]}
        }
        status, _body, _ = await call(s, "PATCH", f"{base}/profiles/{profile}", auth, json=bad)
        assert status == 400
        status, _, _ = await call(
            s, "PATCH", f"{base}/profiles/{profile}", auth, json={"webhook": None}
        )
        assert status == 204


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/token"),
        ("POST", "/files/upload_sessions"),
        ("GET", "/profiles/p1/videos"),
        ("GET", "/livestreams/x1"),
    ],
)
async def test_a_v2_path_on_the_legacy_root_says_where_v2_is(
    emulator: Emulator, method: str, path: str
) -> None:
    async with (
        aiohttp.ClientSession() as s,
        s.request(method, emulator.base_url + path, headers=LEGACY) as r,
    ):
        body = await r.json()
    assert r.status == 404, body
    message = body["error"]["message"]
    assert "/v2" in message and emulator.v2_base_url in message, message


async def test_an_unknown_legacy_path_says_only_no_such_endpoint(emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as s, s.get(emulator.base_url + "/nothing") as r:
        body = await r.json()
    assert r.status == 404 and body["error"]["message"] == "no such endpoint", body


async def test_add_profile_gives_a_user_a_second_profile(emulator: Emulator) -> None:
    """``emu.add_profile(profile_id, user=..., name=...)``: the public way to a key that
    reaches several profiles (GET /me lists it; a video is created under it)."""
    assert emulator.add_profile("demo-second", name="Second") == "demo-second"
    with pytest.raises(KeyError):
        emulator.add_profile("x", user="nobody")
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        async with s.get(f"{emulator.v2_base_url}/me", headers=auth) as r:
            profiles = (await r.json())["profiles"]
    assert {"profile_id": "demo-second", "name": "Second"} in profiles and len(profiles) == 2
