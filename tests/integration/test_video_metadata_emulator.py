"""The typed video metadata round trip over the emulator: written by upload, create and
update, stored, validated and returned with the platform's types (tags a JSON list,
times integers, duration in seconds); a video's ``url`` is its page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator

WHEN = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
LATER = datetime(2031, 6, 30, 2, 0, tzinfo=timezone(timedelta(hours=2)))
ALL_FIELDS = [
    "id",
    "title",
    "channel",
    "published",
    "description",
    "tags",
    "language",
    "private",
    "private_id",
    "explicit",
    "is_created_for_kids",
    "duration",
    "created_time",
    "publish_date",
    "expiry_date",
    "geoblocking",
    "url",
    "embed_url",
    "thumbnail_url",
    "views_total",
]


async def test_upload_then_read_every_field(
    emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    made = await client.upload_video(
        make_file(tmp_path / "m.mp4", 5000),
        title="Été",
        channel="travel",
        description="Deux lignes,\navec & et =.",
        tags=["paris", "summer 2030"],
        language="fr",
        private=True,
        explicit=True,
        is_created_for_kids=False,
        publish_date=WHEN,
        expiry_date=LATER,
        geoblocking=("deny", "fr", "de"),
        thumbnail_url="https://images.example/t.jpg",
    )
    video = await client.get_video(made, fields=ALL_FIELDS)
    assert (video.title, video.channel, video.published) == ("Été", "travel", True)
    assert video.description == "Deux lignes,\navec & et =."
    assert video.tags == ["paris", "summer 2030"]
    assert (video.language, video.private, video.explicit) == ("fr", True, True)
    assert video.is_created_for_kids is False
    assert video.publish_date == WHEN and video.publish_date.tzinfo is not None
    assert video.expiry_date == LATER
    assert video.geoblocking == ["deny", "fr", "de"]
    assert video.thumbnail_url == "https://images.example/t.jpg"
    assert video.created_time is not None and video.created_time >= before
    assert isinstance(video.duration, int) and video.duration >= 0
    assert video.views_total == 0
    assert video.private_id and video.private_id != video.id
    assert video.url == f"{emulator.base_url}/page/video/{video.id}"
    assert video.embed_url == f"{emulator.base_url}/embed/video/{video.id}"
    # the platform's types on the wire: a JSON list, integers
    raw = video.fields
    assert raw["tags"] == ["paris", "summer 2030"]
    assert raw["publish_date"] == 1893553445 and raw["expiry_date"] == 1940544000
    assert type(raw["created_time"]) is int and type(raw["duration"]) is int


async def test_create_update_and_list_the_metadata(
    emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    up = await client.upload_file(make_file(tmp_path / "m.mp4", 3000))
    made = await client.create_video(
        url=up.url, title="t", channel="news", description="first", tags=["a"], language="en"
    )
    changed = await client.update_video(
        made,
        description="second",
        tags=["b", "c"],
        publish_date=WHEN,
        geoblocking=["allow", "fr"],
        returning=["id", "description", "tags", "publish_date", "geoblocking", "language"],
    )
    assert changed.description == "second" and changed.tags == ["b", "c"]
    assert changed.publish_date == WHEN and changed.geoblocking == ["allow", "fr"]
    assert changed.language == "en"  # not given: untouched
    cleared = await client.update_video(
        made, publish_date=None, geoblocking=None, tags=[], returning=ALL_FIELDS
    )
    assert (cleared.publish_date, cleared.geoblocking, cleared.tags) == (None, None, [])
    listed = [v async for v in client.iter_videos(fields=["id", "description", "created_time"])]
    assert [(v.id, v.description) for v in listed] == [(made.id, "second")]
    assert listed[0].created_time is not None
    assert made.description is None  # the default fields stay lean


async def test_a_video_url_is_its_page(
    emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    video = await client.upload_video(
        make_file(tmp_path / "m.mp4", 3000), title="A <b> page", channel="news"
    )
    url = (await client.get_video(video, ["url"])).url
    assert url is not None
    async with aiohttp.ClientSession() as session, session.get(url) as page:
        assert page.status == 200
        assert page.content_type == "text/html"
        text = await page.text()
    assert "<title>A &lt;b&gt; page</title>" in text
    assert f"/embed/video/{video.id}" in text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("description", "x" * 3001),
        ("language", "eng"),
        ("publish_date", "2030-01-01"),
        ("expiry_date", "-5"),
        ("explicit", "maybe"),
        ("geoblocking", "deny"),
        ("geoblocking", "deny,france"),
    ],
)
async def test_the_emulator_refuses_a_bad_value(
    client: va.Client, tmp_path: Path, name: str, value: Any
) -> None:
    up = await client.upload_file(make_file(tmp_path / "m.mp4", 3000))
    video = await client.create_video(url=up.url, title="t", channel="news")
    with pytest.raises(va.InvalidParameterError, match=name):
        await client.post(f"/video/{video.id}", {name: value})
