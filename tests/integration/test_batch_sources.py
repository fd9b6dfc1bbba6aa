"""A job key is one video from one source (issue 38 #2): a key done from one manifest or
feed, given again by another with another source, is refused naming both; given again
by the same one with a moved source, it stays done (its metadata updated only)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from aiohttp import web

import vidapi_async as va
from tests.cli_run import vidapi
from tests.integration.test_migrate_feed import serving
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

CLIPS = {"a.mp4": os.urandom(5000), "b.mp4": os.urandom(6000)}


@pytest.fixture
async def host() -> AsyncIterator[str]:
    """The old platform's files over http://127.0.0.1, under any folder."""

    async def serve(request: web.Request) -> web.Response:
        name = request.match_info["name"].rsplit("/", 1)[-1]
        if name in CLIPS:
            return web.Response(body=CLIPS[name], content_type="video/mp4")
        raise web.HTTPNotFound()

    app_host = serving(serve)
    async with app_host as base:
        yield base


def rss(items: list[tuple[str, str, str]]) -> str:
    """A Media RSS feed of ``(guid, url, title)`` items."""
    body = "".join(
        f'<item><guid isPermaLink="false">{guid}</guid>'
        f'<media:content url={quoteattr(url)} type="video/mp4">'
        f"<media:title>{title}</media:title></media:content></item>"
        for guid, url, title in items
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" '
        'xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>'
        + body
        + "</channel></rss>\n"
    )


def uploads(emu: Emulator) -> int:
    return sum(r.path == "/upload" for r in emu.requests)


async def test_a_key_of_another_feed_with_another_source_is_refused(
    emulator: Emulator, tmp_path: Path, host: str
) -> None:
    one, two = tmp_path / "one.xml", tmp_path / "two.xml"
    one.write_text(rss([("1", f"{host}/a.mp4", "From one")]), encoding="utf-8")
    two.write_text(rss([("1", f"{host}/b.mp4", "From two")]), encoding="utf-8")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = str(tmp_path / "vidapi-journal.sqlite")
    code, _, err = await vidapi(
        "batch", str(one), "--channel", "news", "--journal", journal, env=env
    )
    assert code == 0, err
    [video] = emulator.videos()
    # the dry run says the refusal, and exits as the run would (issue 38 #4)
    code, out, err = await vidapi(
        "batch", str(two), "--channel", "news", "--journal", journal, "--dry-run", env=env
    )
    assert code == 6, (out, err)
    assert "refuse 1: From two" in out and "refuse 1;" in out, out
    code, out, err = await vidapi(
        "batch", str(two), "--channel", "news", "--journal", journal, "--json", env=env
    )
    assert code == 6, (out, err)
    said = out + err
    for name in ("'1'", f"{host}/a.mp4", f"{host}/b.mp4", str(one), str(two)):
        assert name in said, (name, said)
    [after] = emulator.videos()  # feed 1's video, untouched
    assert (after["id"], after["title"], after["url"]) == (video["id"], "From one", video["url"])


async def test_a_moved_source_of_the_same_feed_stays_done(
    emulator: Emulator, tmp_path: Path, host: str
) -> None:
    feed = tmp_path / "feed.xml"
    feed.write_text(rss([("1", f"{host}/a.mp4", "Title")]), encoding="utf-8")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    common = ("batch", str(feed), "--channel", "news", "--journal", str(tmp_path / "j.sqlite"))
    code, _, err = await vidapi(*common, env=env)
    assert code == 0, err
    [video] = emulator.videos()
    sent = uploads(emulator)
    # the old platform moved its files: same guid, new url
    feed.write_text(rss([("1", f"{host}/moved/a.mp4", "Title")]), encoding="utf-8")
    code, out, err = await vidapi(*common, env=env)
    assert code == 0, err
    assert "moved" in out + err and f"{host}/moved/a.mp4" in out + err
    assert "skipped" in out and uploads(emulator) == sent
    # moved, and retitled: the title is updated, the file never sent again
    feed.write_text(rss([("1", f"{host}/moved/b.mp4", "New title")]), encoding="utf-8")
    code, out, err = await vidapi(*common, "--json", env=env)
    assert code == 0, err
    assert '"updated"' in out and "moved" in err
    [after] = emulator.videos()
    assert (after["id"], after["title"], after["url"]) == (video["id"], "New title", video["url"])
    assert uploads(emulator) == sent


async def test_from_python_the_origin_decides(tmp_path: Path, host: str) -> None:
    def job(name: str, title: str = "T") -> va.UploadJob:
        return va.UploadJob(url=f"{host}/{name}", title=title, channel="news", key="k")

    async with Emulator() as emu, client_for(emu) as client:
        journal = tmp_path / "j.sqlite"
        async with va.BatchUploader(client, journal=journal) as batch:
            [first] = [r async for r in batch.run([job("a.mp4")], origin="old.csv")]
            assert first.status is va.JobStatus.DONE
            [other] = [r async for r in batch.run([job("b.mp4", "X")], origin="new.csv")]
            assert other.status is va.JobStatus.FAILED
            assert isinstance(other.error, va.InvalidArgumentError)
            for name in ("'k'", "old.csv", "new.csv", f"{host}/a.mp4", f"{host}/b.mp4"):
                assert name in str(other.error)
            [none] = [r async for r in batch.run([job("b.mp4", "X")])]  # origin unknown
            assert none.status is va.JobStatus.FAILED
            [moved] = [r async for r in batch.run([job("b.mp4")], origin="old.csv")]
            assert moved.status is va.JobStatus.SKIPPED
            assert moved.moved == f"{host}/a.mp4"
            [again] = [r async for r in batch.run([job("b.mp4")], origin="old.csv")]
            assert (again.status, again.moved) == (va.JobStatus.SKIPPED, None)  # recorded
        assert len(emu.videos()) == 1 and emu.videos()[0]["title"] == "T"
        [record] = va.SQLiteJournal(journal).records_sync()
        assert (record.source, record.origin) == (f"{host}/b.mp4", "old.csv")


async def test_a_version_2_journal_gains_the_source_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "create table jobs (key text primary key, stage text not null, upload_url text, "
        "progress_url text, file_url text, video_id text, subtitles_done text not null, "
        "runs integer not null, error text, updated real not null, metadata text)"
    )
    db.execute(
        "insert into jobs values ('k', 'done', null, null, 'f', 'x1', '[]', 1, null, 0, null)"
    )
    db.execute("pragma user_version = 2")
    db.commit()
    db.close()
    os.chmod(path, 0o600)
    [record] = va.SQLiteJournal(path).records_sync()  # read before it is migrated
    assert (record.video_id, record.source, record.origin) == ("x1", None, None)

    journal = va.SQLiteJournal(path)
    await journal.open()
    got = await journal.load("k")
    assert got is not None and got.source is None
    got.source, got.origin = "/files/a.mp4", "m.csv"
    await journal.save(got)
    await journal.close()
    [record] = va.SQLiteJournal(path).records_sync()
    assert (record.source, record.origin) == ("/files/a.mp4", "m.csv")
    db = sqlite3.connect(path)
    assert db.execute("pragma user_version").fetchone()[0] == 4
    db.close()
