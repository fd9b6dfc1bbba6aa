"""The emulator's API v2 refuses what its legacy dialect refuses (its own checks)."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.integration.test_emulator_v2 import call, new_video, profile_of, uploaded, v2_token
from vidapi_async.emulator import Emulator


async def _patched(emulator: Emulator, change: dict[str, Any]) -> tuple[int, Any, Any]:
    """A new video PATCHed with ``change``: the answer's status and body, then the
    video's tags and description as read after."""
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        body = new_video(await uploaded(s, emulator, auth))
        status, created, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/videos", auth, json=body
        )
        assert status == 201, created
        url = f"{base}/videos/{created['video_id']}"
        status, answer, _ = await call(s, "PATCH", url, auth, json=change)
        _, read, _ = await call(s, "GET", f"{url}?fields=tags,description", auth)
        return status, answer, read


@pytest.mark.parametrize(
    "change",
    [
        {"tags": ["a,b", "c"]},
        {"tags": ["a\x00b"]},
        {"tags": ["a\nb"]},
        {"published_at": "1960-01-01T00:00:00Z"},
        {"description": "d\x00e"},
    ],
)
async def test_v2_patch_refuses_what_legacy_refuses(
    emulator: Emulator, change: dict[str, Any]
) -> None:
    status, answer, read = await _patched(emulator, change)
    assert status == 400, answer
    assert "\x00" not in str(read) and "a,b" not in str(read)


async def test_v2_patch_keeps_line_breaks_in_a_description(emulator: Emulator) -> None:
    status, _, read = await _patched(emulator, {"description": "a\nb\tc"})
    assert status == 204
    assert read["description"] == "a\nb\tc"


@pytest.mark.parametrize(
    "tags",
    [[f"t{i}" for i in range(151)], ["x" * 101]],
    ids=["151 tags", "a tag of 101 characters"],
)
async def test_v2_refuses_more_tags_than_the_client_sends(
    emulator: Emulator, tags: list[str]
) -> None:
    """At most 150 tags of 100 characters (docs/guides/decisions.md), refused in v2's
    error shape: the emulator checks it itself, not only the client."""
    status, answer, read = await _patched(emulator, {"tags": tags})
    assert status == 400, answer
    error = answer["error"]
    assert error["code"] == "INVALID_PARAMETER" and error["correlation_id"]
    assert error["details"]["param"] == "tags"
    assert read["tags"] == []


async def test_v2_takes_150_tags_of_100_characters(emulator: Emulator) -> None:
    tags = [f"{i:03d}" + "x" * 97 for i in range(150)]
    status, answer, read = await _patched(emulator, {"tags": tags})
    assert status == 204, answer
    assert read["tags"] == tags


async def test_a_deeply_nested_body_is_a_400_not_a_500(emulator: Emulator) -> None:
    base = emulator.v2_base_url
    deep = '{"title":' * 100_000 + "1" + "}" * 100_000
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator)
        profile = await profile_of(s, emulator, auth)
        headers = {**auth, "Content-Type": "application/json"}
        status, body, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/videos", headers, data=deep
        )
    assert status == 400, body


async def test_a_title_is_measured_as_it_is_kept(emulator: Emulator) -> None:
    status, answer, _ = await _patched(emulator, {"title": " " * 300 + "a"})
    assert status == 400, answer
    assert "title" in str(answer)


async def _livestream(emulator: Emulator, times: dict[str, str]) -> tuple[int, Any]:
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as s:
        auth = await v2_token(s, emulator, scope="account.read live.manage live.read")
        profile = await profile_of(s, emulator, auth)
        body = {"title": "L", "category": "news", "visibility": "public", "is_for_kids": False}
        body.update(times)
        status, answer, _ = await call(
            s, "POST", f"{base}/profiles/{profile}/livestreams", auth, json=body
        )
    return status, answer


async def test_a_livestream_ending_before_it_starts_is_refused(emulator: Emulator) -> None:
    times = {"start_at": "2030-01-02T00:00:00Z", "end_at": "2030-01-01T00:00:00Z"}
    status, answer = await _livestream(emulator, times)
    assert status == 400, answer
    assert "end_at" in str(answer)


async def test_a_livestream_error_names_v2_fields(emulator: Emulator) -> None:
    status, answer = await _livestream(emulator, {"start_at": "9999-12-31T23:59:59-01:00"})
    assert status == 400, answer
    assert "start_at" in str(answer) and "start_time" not in str(answer)
