"""Hostile feeds, reports and journals (the attacker's fourth look at the migration):
a feed's thumbnails are http(s) urls only; a report never destroys the manifest, the
journal, a symlink's target or a file that is not a report; CSV cells a spreadsheet
would run are quoted; a corrupt journal metadata value is a named JournalError."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from vidapi_async.batch import jobs_from_source
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

HEAD = '<?xml version="1.0"?>\n<rss xmlns:media="http://search.yahoo.com/mrss/"><channel>\n'


def _feed(tmp_path: Path, body: str) -> str:
    path = tmp_path / "feed.xml"
    path.write_text(HEAD + body + "</channel></rss>\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("thumb", ["/etc/hostname", "../x", "file:///etc/hostname"])
async def test_a_feed_thumbnail_that_is_a_local_path_is_refused(tmp_path: Path, thumb: str) -> None:
    path = _feed(
        tmp_path,
        '<item>\n<guid>g</guid><media:content url="http://127.0.0.1:9/a.mp4"/>\n'
        f'<media:thumbnail url="{thumb}"/></item>\n',
    )
    with pytest.raises(va.InvalidArgumentError, match=r"feed\.xml line 3: .*http") as info:
        list(jobs_from_source(path, channel="news"))
    assert thumb not in str(info.value)
    async with Emulator() as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            with pytest.raises(va.InvalidArgumentError):
                _ = [r async for r in batch.run(jobs_from_source(path, channel="news"))]
        assert emu.videos() == []
