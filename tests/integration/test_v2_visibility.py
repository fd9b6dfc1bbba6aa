"""API v2's ``visibility`` from the legacy ``published``/``private``/``password``:
these never lower a video's protection. Wire side: a scripted v2 server (tests/wire.py)
that keeps one video's visibility, the client's PATCH bodies read as they arrived.
Emulator side: a video protected through the legacy dialect, changed through v2, read
back through the legacy dialect (one store)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import vidapi_async as va
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

VIDEO = b"\x00\x00\x00\x18ftypmp42" + b"vis-bytes" * 300


def one_video(state: dict[str, str]) -> Any:
    """A v2 server holding video x1 with ``state["visibility"]``."""

    def handle(seen: Seen) -> Reply:
        if (seen.method, seen.path) == ("GET", "/v2/videos/x1"):
            return Reply.json({"video_id": "x1", "visibility": state["visibility"]})
        if (seen.method, seen.path) == ("PATCH", "/v2/videos/x1"):
            body = json.loads(seen.body)
            state["visibility"] = body.get("visibility", state["visibility"])
            return Reply(204)
        return Reply.json({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no"}}, status=404)

    return handle


def patches(seen: list[Seen]) -> list[dict[str, Any]]:
    return [json.loads(s.body) for s in seen if s.method == "PATCH"]


@pytest.mark.parametrize(
    ("before", "call", "after"),
    [
        ("private", {"published": True}, "private"),
        ("password", {"published": True}, "password"),
        ("password", {"private": False}, "password"),
        ("password", {"published": True, "private": False}, "password"),
        ("private", {"private": False}, "public"),  # what the caller asked
        ("public", {"published": True}, "public"),
        ("public", {"private": False}, "public"),
        ("password", {"password": None}, "private"),
        ("private", {"password": None}, "private"),
        ("public", {"password": None}, "public"),
        ("public", {"published": False}, "private"),
        ("password", {"private": True}, "private"),
    ],
)
async def test_update_video_never_lowers_protection(
    before: str, call: dict[str, object], after: str
) -> None:
    state = {"visibility": before}
    async with WireServer(one_video(state)) as srv:
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            if set(call) == {"password"}:
                await client.set_password("x1", None)
            else:
                await client.update_video("x1", **call)  # type: ignore[arg-type]
    assert state["visibility"] == after
    for body in patches(srv.seen):
        assert body.get("visibility") != "public" or after == "public"


async def test_a_password_video_made_public_takes_two_explicit_steps() -> None:
    state = {"visibility": "password"}
    async with WireServer(one_video(state)) as srv:
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            await client.set_password("x1", None)
            assert state["visibility"] == "private"
            await client.update_video("x1", private=False)
    assert patches(srv.seen) == [{"visibility": "private"}, {"visibility": "public"}]


async def test_published_true_on_a_private_video_sends_no_visibility() -> None:
    state = {"visibility": "private"}
    async with WireServer(one_video(state)) as srv:
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            await client.update_video("x1", title="T", published=True)
    assert patches(srv.seen) == [{"title": "T"}]


@pytest.mark.parametrize(
    ("given", "visibility"),
    [
        ({"published": True}, "public"),
        ({"published": False}, "private"),
        ({"private": True}, "private"),
        ({"private": False}, "public"),
        ({"password": "pw-1234"}, "password"),
        ({"published": True, "password": "pw-1234"}, "password"),
    ],
)
async def test_the_create_path(emulator: Emulator, given: dict[str, Any], visibility: str) -> None:
    async with client_for(emulator, api="v2") as client, client_for(emulator) as legacy:
        url = await client.upload_file(VIDEO, filename="v.mp4")
        made = await client.create_video(url=url.url, title="V", channel="news", **given)
        seen = await legacy.get_video(made.id, ["private", "password_protected", "published"])
    protected = (seen.private, seen.password_protected)
    assert (
        protected
        == {
            "public": (False, False),
            "private": (True, False),
            "password": (False, True),
        }[visibility]
    )


@pytest.mark.parametrize("given", [{"published": False, "password": "pw-1234"}])
async def test_an_unpublished_video_with_a_password_is_refused_in_v2(
    emulator: Emulator, given: dict[str, Any]
) -> None:
    async with client_for(emulator, api="v2") as client:
        with pytest.raises(va.InvalidArgumentError) as info:
            await client.create_video(
                url="https://f.example/v.mp4", title="V", channel="news", **given
            )
    assert "pw-1234" not in str(info.value) and "published" in str(info.value)


async def test_a_legacy_protected_video_stays_protected_through_v2(emulator: Emulator) -> None:
    async with client_for(emulator, api="v2") as v2client, client_for(emulator) as legacy:
        url = await legacy.upload_file(VIDEO, filename="l.mp4")
        made = await legacy.create_video(
            url=url.url, title="L", channel="news", private=True, password="pw-1234"
        )
        await v2client.update_video(made.id, published=True)
        await v2client.update_video(made.id, private=False)
        seen = await legacy.get_video(made.id, ["private", "password_protected"])
        assert seen.password_protected is True
        other = await legacy.upload_video(
            VIDEO, title="M", channel="news", filename="m.mp4", private=True
        )
        await v2client.set_password(other.id, None)
        await v2client.update_video(other.id, published=True)
        again = await legacy.get_video(other.id, ["private", "password_protected"])
        assert (again.private, again.password_protected) == (True, False)
