"""Hostile typed metadata (``video_form``): extreme dates, odd languages, control
characters and too many tags are refused, the same way in both dialects."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from vidapi_async import InvalidArgumentError
from vidapi_async._protocol import _v2 as v2
from vidapi_async._resources.video_metadata import MAX_TAG_LENGTH, MAX_TAGS, video_form
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

FAR = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(-timedelta(hours=23, minutes=59)))
EARLY = datetime(1, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("when", [FAR, EARLY, datetime(1960, 1, 1, tzinfo=UTC)])
@pytest.mark.parametrize("name", ["publish_date", "expiry_date"])
def test_dates_out_of_range_are_refused_naming_the_field(when: datetime, name: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        video_form({name: when})
    assert caught.value.argument == name


def test_range_edges_are_taken() -> None:
    assert video_form({"publish_date": datetime(1970, 1, 1, tzinfo=UTC)}) == [("publish_date", "0")]
    last = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert video_form({"publish_date": last}) == [("publish_date", "253402300799")]


def test_v2_iso_conversion_never_overflows() -> None:
    with pytest.raises(InvalidArgumentError):
        v2.iso_from_unix(FAR, "publish_date")
    with pytest.raises(InvalidArgumentError):
        v2.iso_from_unix(EARLY, "publish_date")


def test_unix_seconds_floor() -> None:
    # 1.5 s after the epoch and 0.5 s before it: floor, not toward zero
    assert video_form({"publish_date": datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)}) == [
        ("publish_date", "1")
    ]


@pytest.mark.parametrize("value", ["\u212aA", "é n", "e\u0301"])
def test_language_is_ascii_letters_only(value: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        video_form({"language": value})
    assert caught.value.argument == "language"


@pytest.mark.parametrize("tag", ["a\nb", "a\x00b", "\u200b", "x\u2028y", "a\x1bb", "\ud800"])
def test_tags_with_control_format_or_separator_characters_are_refused(tag: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        video_form({"tags": ["ok", tag]})
    assert caught.value.argument == "tags"


def test_tags_are_bounded() -> None:
    assert video_form({"tags": ["t"] * MAX_TAGS}) == [("tags", ",".join(["t"] * MAX_TAGS))]
    with pytest.raises(InvalidArgumentError):
        video_form({"tags": [f"t{i}" for i in range(MAX_TAGS + 1)]})
    with pytest.raises(InvalidArgumentError):
        video_form({"tags": ["x" * (MAX_TAG_LENGTH + 1)]})


@pytest.mark.parametrize("text", ["d\x00e", "a\x1b[2Jb", "lone \ud800"])
def test_descriptions_refuse_other_control_characters(text: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        video_form({"description": text})
    assert caught.value.argument == "description"


def test_descriptions_keep_line_breaks_and_tabs() -> None:
    assert video_form({"description": "a\nb\r\nc\td"}) == [("description", "a\nb\r\nc\td")]


@pytest.mark.parametrize("api", ["legacy", "v2"])
async def test_both_dialects_send_the_checked_language(api: str, tmp_path: Path) -> None:
    media = tmp_path / "m.mp4"
    media.write_bytes(os.urandom(3000))
    async with Emulator(probe=False) as emu, client_for(emu, api=api) as client:
        video = await client.upload_video(media, title="t", channel="news")
        await client.update_video(video.id, language="EN")
        stored = next(x for x in emu.videos() if x["id"] == video.id)
        assert stored["language"] == "en"
        with pytest.raises(InvalidArgumentError):
            await client.update_video(video.id, language="\u212aA")
        with pytest.raises(InvalidArgumentError):
            await client.update_video(video.id, publish_date=FAR)
        with pytest.raises(InvalidArgumentError):
            await client.update_video(video.id, tags=["a\x00b"])
