"""The emulator's API v2 refuses what its legacy dialect refuses (its own checks)."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.test_emulator_v2 import call, new_video, profile_of, uploaded, v2_token
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
