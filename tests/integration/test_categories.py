"""Categories: the emulator's GET /channels, Client.categories(), and upload_video
checking a channel against them before the first byte (issue 16, defect 7)."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import aiohttp
import pytest
from mypy import api as mypy_api

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator

DOCUMENTED = (
    "animals auto creation fun kids lifestyle music news people school shortfilms sport "
    "tech travel tv videogames webcam"
).split()


def sent(emulator: Emulator) -> list[str]:
    return [f"{r.method} {r.path}" for r in emulator.requests]


async def test_the_emulator_lists_the_categories_as_the_platform_does(
    emulator: Emulator,
) -> None:
    slugs = []
    async with aiohttp.ClientSession() as http:
        for page in (1, 2):
            async with http.get(f"{emulator.base_url}/channels?page={page}") as answer:
                assert answer.status == 200
                body = await answer.json()
            assert body["page"] == page and body["limit"] == 10 and body["total"] == 17
            assert body["has_more"] is (page == 1)
            assert all(set(item) >= {"id", "name"} for item in body["list"])
            slugs += [item["id"] for item in body["list"]]
    assert slugs == DOCUMENTED


async def test_categories_pages_through_once_and_is_cached(
    client: va.Client, emulator: Emulator
) -> None:
    assert await client.categories() == DOCUMENTED
    assert await client.categories() == DOCUMENTED
    assert sent(emulator) == ["GET /channels"]  # one page of 100, asked once


async def test_an_unknown_channel_is_refused_before_the_first_byte(
    client: va.Client, emulator: Emulator, video_file: Path
) -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        await client.upload_video(video_file, title="t", channel="newz")
    message = str(caught.value)
    assert "newz" in message
    assert all(slug in message for slug in DOCUMENTED)
    assert all(r.path == "/channels" for r in emulator.requests)  # nothing uploaded
    assert emulator.state.count("file") == 0


async def test_a_missing_file_fails_before_any_request(
    client: va.Client, emulator: Emulator, tmp_path: Path
) -> None:
    with pytest.raises(va.FileError):
        await client.upload_video(tmp_path / "missing.mp4", title="t", channel="newz")
    assert emulator.requests == []


async def test_without_a_category_list_the_server_judges(
    client: va.Client, emulator: Emulator, video_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    emulator.faults.update({"error_rate": 1.0, "error_statuses": [404], "paths": ["/channels"]})
    with caplog.at_level("DEBUG", logger="vidapi_async"):
        video = await client.upload_video(video_file, title="t", channel="news")
    assert video.channel == "news"
    assert any("server will judge" in r.getMessage() for r in caplog.records)
    with pytest.raises(va.InvalidParameterError):  # as before: refused by the server
        await client.upload_video(video_file, title="t", channel="newz")


async def test_upload_video_takes_a_file_object_with_its_name_and_size(
    client: va.Client, emulator: Emulator, tmp_path: Path
) -> None:
    data = make_file(tmp_path / "src.bin", 50_000).read_bytes()
    video = await client.upload_video(
        io.BytesIO(data), title="t", channel="news", filename="clip.mp4", size=len(data)
    )
    [stored] = [f for f in emulator.state.all("file")]
    assert stored["name"] == "clip.mp4"
    assert Path(stored["path"]).read_bytes() == data
    assert video.title == "t"


@pytest.mark.system
def test_upload_video_is_typed_for_every_source(tmp_path: Path) -> None:
    snippet = tmp_path / "user_code.py"
    snippet.write_text(
        textwrap.dedent(
            """
            import io
            import vidapi_async as va

            async def main(client: va.Client) -> None:
                await client.upload_video(
                    io.BytesIO(b"x"), title="t", channel="news", filename="a.mp4", size=1
                )
                await client.upload_video(b"bytes", title="t", channel="news")
                slugs: list[str] = await client.categories()
            """
        ),
        encoding="utf-8",
    )
    out, err, code = mypy_api.run(
        ["--strict", "--no-incremental", "--follow-imports=silent", str(snippet)]
    )
    assert code == 0, out + err
