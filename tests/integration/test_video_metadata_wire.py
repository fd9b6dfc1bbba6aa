"""The typed video metadata on the wire: each value as the platform reads a form, checked
at a scripted server that shares no code with the client (``tests/wire.py``); a bad
value sends nothing; what the server answers is read strictly into ``Video``."""

from __future__ import annotations

import json
import urllib.parse
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.wire import Reply, Seen, WireServer

TOKEN = "tok-metadata"
WHEN = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)  # 1893553445, as `date -d ... +%s` says
LATER = datetime(2031, 6, 30, 2, 0, tzinfo=timezone(timedelta(hours=2)))  # 1940544000

METADATA: dict[str, Any] = {
    "title": "Été à Paris",
    "channel": "travel",
    "description": "Deux lignes,\navec & et = et é.",
    "tags": ["paris", "summer 2030", "été"],
    "language": "FR",
    "published": False,
    "private": True,
    "is_created_for_kids": False,
    "explicit": True,
    "publish_date": WHEN,
    "expiry_date": LATER,
    "geoblocking": ("deny", "FR", "de"),
    "thumbnail_url": "https://images.example/thumb.jpg?size=big",
}
ON_THE_WIRE = [
    ("title", "Été à Paris"),
    ("channel", "travel"),
    ("description", "Deux lignes,\navec & et = et é."),
    ("tags", "paris,summer 2030,été"),
    ("language", "fr"),
    ("published", "false"),
    ("private", "true"),
    ("is_created_for_kids", "false"),
    ("explicit", "true"),
    ("publish_date", "1893553445"),
    ("expiry_date", "1940544000"),
    ("geoblocking", "deny,fr,de"),
    ("thumbnail_url", "https://images.example/thumb.jpg?size=big"),
]


def _platform(seen: Seen) -> Reply:
    """Just enough of the platform for an upload and a create, by path."""
    if seen.path == "/file/upload":
        host = seen.headers["host"]
        return Reply.json(
            {
                "upload_url": f"http://{host}/upload?uuid=u1&seal=s1",
                "progress_url": f"http://{host}/progress?uuid=u1",
            }
        )
    if seen.path == "/upload":
        return Reply.json({"url": "http://files.example/f1.mp4#abc", "size": "1000"})
    if seen.path == "/channels":
        return Reply.json({"list": [{"id": "travel"}, {"id": "news"}], "has_more": False})
    return Reply.json({"id": "x1new", "title": "Été à Paris", "channel": "travel"})


def _form(seen: Seen) -> list[tuple[str, str]]:
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    return urllib.parse.parse_qsl(seen.body.decode("ascii"), keep_blank_values=True)


async def test_create_video_sends_each_value_in_the_platforms_conventions() -> None:
    async with WireServer(_platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        video = await client.create_video(url="http://files.example/f1.mp4#abc", **METADATA)
    assert video.id == "x1new"
    (seen,) = srv.seen
    assert (seen.method, seen.path) == ("POST", "/me/videos")
    assert _form(seen) == [("url", "http://files.example/f1.mp4#abc"), *ON_THE_WIRE]


async def test_upload_video_sends_the_same_metadata_after_the_file(tmp_path: Path) -> None:
    source = make_file(tmp_path / "clip.mp4", 1000)
    async with WireServer(_platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        await client.upload_video(source, **METADATA)
    assert [s.path for s in srv.seen] == ["/channels", "/file/upload", "/upload", "/me/videos"]
    assert _form(srv.seen[-1]) == [("url", "http://files.example/f1.mp4#abc"), *ON_THE_WIRE]


async def test_update_video_sends_only_what_is_given_and_none_clears() -> None:
    async with WireServer(_platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        await client.update_video(
            "x1", description="", tags=[], publish_date=None, geoblocking=None, private=False
        )
        await client.update_video("x1", title="New", extra={"allow_embed": "false"})
    first, second = srv.seen
    assert (first.method, first.path) == ("POST", "/video/x1")
    assert _form(first) == [
        ("description", ""),
        ("tags", ""),
        ("private", "false"),
        ("publish_date", ""),
        ("geoblocking", ""),
    ]
    assert _form(second) == [("title", "New"), ("allow_embed", "false")]


async def test_the_old_positional_form_text_still_works_with_a_warning() -> None:
    async with WireServer(_platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.warns(DeprecationWarning, match="extra="):
            await client.update_video("x1", {"allow_embed": "true"})
        # a typed field is its argument's, checked: never form text (issue 38/39 review)
        with (
            pytest.warns(DeprecationWarning, match="extra="),
            pytest.raises(va.InvalidArgumentError),
        ):
            await client.update_video("x1", {"published": "true"})
    assert _form(srv.seen[0]) == [("allow_embed", "true")]
    assert len(srv.seen) == 1


BAD: list[tuple[str, Any]] = [
    ("description", "x" * 3001),
    ("description", 12),
    ("tags", "a,b"),  # a string is a sequence of strings, but never meant as tags
    ("tags", ["a", "b,c"]),
    ("tags", ["a", ""]),
    ("tags", ["a", 3]),
    ("language", "english"),
    ("language", "xx"),
    ("published", "yes"),
    ("private", 1),
    ("explicit", None),
    ("publish_date", datetime(2030, 1, 1)),  # naive: which zone?
    ("expiry_date", 1893553445),
    ("publish_date", "2030-01-01"),
    ("geoblocking", ("deny",)),
    ("geoblocking", ("deny", "france")),
    ("geoblocking", ("fr", "deny")),
    ("geoblocking", "deny,fr"),
    ("thumbnail_url", "ftp://images.example/t.jpg"),
    ("title", " "),
    ("channel", "Travel!"),
]


@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD)])
async def test_a_bad_value_is_named_and_nothing_is_sent(
    name: str, value: Any, tmp_path: Path
) -> None:
    source = make_file(tmp_path / "clip.mp4", 1000)
    async with WireServer(_platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        given = {**METADATA, name: value}
        with pytest.raises(va.InvalidArgumentError) as caught:
            await client.upload_video(source, **given)
        assert caught.value.argument == name
        with pytest.raises(va.InvalidArgumentError):
            await client.create_video(url="http://files.example/f", **given)
        if name not in ("title", "channel"):
            with pytest.raises(va.InvalidArgumentError):
                await client.update_video("x1", **{name: value})
    assert srv.seen == []


async def test_a_name_given_typed_and_in_extra_is_refused() -> None:
    async with WireServer(_platform) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.raises(va.InvalidArgumentError, match="given twice"):
            await client.update_video("x1", title="a", extra={"title": "b"})
        with pytest.raises(va.InvalidArgumentError, match="at least one"):
            await client.update_video("x1")
    assert srv.seen == []


READ = {
    "id": "x1",
    "description": "d",
    "tags": ["a", "b"],
    "language": "fr",
    "private": True,
    "private_id": "k2abc",
    "explicit": False,
    "is_created_for_kids": False,
    "duration": 37,
    "created_time": 1893553445,
    "publish_date": 1940544000,
    "expiry_date": None,
    "geoblocking": ["deny", "fr"],
    "url": "https://www.example/video/x1",
    "embed_url": "https://www.example/embed/video/x1",
    "thumbnail_url": "https://images.example/x1.jpg",
    "views_total": 12,
}


async def test_get_video_reads_every_named_field_typed() -> None:
    async with (
        WireServer(lambda seen: Reply.json(READ)) as srv,
        va.Client(TOKEN, base_url=srv.url) as client,
    ):
        video = await client.get_video("x1", fields=list(READ))
    query = urllib.parse.parse_qs(srv.seen[0].raw_query)
    assert query["fields"] == [",".join(READ)]
    assert video.tags == ["a", "b"] and video.geoblocking == ["deny", "fr"]
    assert video.created_time == datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert video.created_time.utcoffset() == timedelta(0)
    assert video.publish_date == datetime(2031, 6, 30, tzinfo=UTC)
    assert video.expiry_date is None
    assert (video.duration, video.views_total) == (37, 12)
    assert (video.private, video.private_id, video.explicit) == (True, "k2abc", False)
    assert video.url == "https://www.example/video/x1"
    assert video.embed_url == "https://www.example/embed/video/x1"
    assert video.thumbnail_url == "https://images.example/x1.jpg"
    assert (video.description, video.language, video.is_created_for_kids) == ("d", "fr", False)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("tags", "a,b"),
        ("tags", ["a", 1]),
        ("created_time", "1893553445"),
        ("created_time", 1893553445.5),
        ("publish_date", True),
        ("duration", "37"),
        ("duration", -1),
        ("views_total", 1.0),
        ("private", "true"),
        ("geoblocking", "deny,fr"),
        ("url", 3),
    ],
)
async def test_a_wrong_type_read_is_an_error_never_a_guess(name: str, value: Any) -> None:
    body = json.dumps({"id": "x1", name: value}).encode()
    reply = Reply(200, body, {"Content-Type": "application/json"})
    async with (
        WireServer(lambda seen: reply) as srv,
        va.Client(TOKEN, base_url=srv.url) as client,
    ):
        with pytest.raises(va.UnexpectedResponseError, match=name):
            await client.get_video("x1", fields=["id", name])
