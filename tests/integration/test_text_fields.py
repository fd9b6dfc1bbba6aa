"""Text a job or a call carries is refused when it holds what no database, form or log
line can carry (a NUL, a lone surrogate, a control character): ``InvalidArgumentError``
naming the field, when the value is built, before anything is sent or written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from vidapi_async.emulator import Emulator

BAD = {"nul": "a\x00b", "surrogate": "x\ud800y", "escape": "a\x1bb"}


def _job(**changes: Any) -> va.UploadJob:
    fields: dict[str, Any] = {"path": "/v.mp4", "title": "t", "channel": "news", "key": "k"}
    fields.update(changes)
    return va.UploadJob(**fields)


@pytest.mark.parametrize("bad", list(BAD.values()), ids=list(BAD))
@pytest.mark.parametrize("field", ["title", "password", "key"])
def test_a_job_field_with_bad_text_is_refused(field: str, bad: str) -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        _job(**{field: bad})
    assert caught.value.argument == field


@pytest.mark.parametrize("field", ["key"])
@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\u2028", "\u2029", "\ufeff"])
def test_a_key_with_invisible_or_reordering_characters_is_refused(field: str, char: str) -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        _job(key=f"abc{char}def")
    assert caught.value.argument == field


def test_a_path_with_nul_is_refused() -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        _job(path="/tmp/a\x00.mp4")
    assert caught.value.argument == "path"


def test_a_subtitle_path_with_nul_is_refused() -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        va.SubtitleSpec("en", path="/tmp/a\x00.srt")
    assert caught.value.argument == "subtitles.path"


def test_a_path_that_is_not_utf8_is_kept() -> None:
    """A file name that is not UTF-8 (surrogate-escaped by the OS layer) names a file:
    not refused when built (a batch fails that job alone if it cannot use it)."""
    assert _job(path="/tmp/caf\udce9.mp4").path == "/tmp/caf\udce9.mp4"


def test_a_header_with_bad_text_is_refused() -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        _job(path=None, url="https://example.com/v.mp4", headers={"X-Token": "a\x00b"})
    assert caught.value.argument == "headers"


@pytest.mark.parametrize("bad", list(BAD.values()), ids=list(BAD))
async def test_the_client_refuses_a_title_before_uploading(
    emulator: Emulator, client: va.Client, video_file: Path, bad: str
) -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        await client.upload_video(video_file, title=bad, channel="news")
    assert caught.value.argument == "title"
    assert emulator.videos() == []


@pytest.mark.parametrize("bad", list(BAD.values()), ids=list(BAD))
async def test_the_client_refuses_a_password_before_sending(
    emulator: Emulator, client: va.Client, bad: str
) -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        await client.set_password("x123", bad)
    assert caught.value.argument == "password"


def test_keys_of_ascii_are_judged_as_every_other_key() -> None:
    """The check's short cut for ASCII keys refuses exactly the characters the general
    rule does (of ASCII: the control characters, DEL included)."""
    import unicodedata

    from vidapi_async.batch._journal import check_key

    for code in range(128):
        char = chr(code)
        refused = unicodedata.category(char) in {"Cc", "Cs", "Cf", "Zl", "Zp"}
        if refused:
            with pytest.raises(va.InvalidArgumentError):
                check_key(f"a{char}b")
        else:
            assert check_key(f"a{char}b") == f"a{char}b"
