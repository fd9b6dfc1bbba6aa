"""A Media RSS migration: a feed served over 127.0.0.1 (by the test itself), its items'
files streamed through, every field, thumbnails and subtitles on the emulator; the
command line's --report and --dry-run; XML bombs refused."""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from aiohttp import web

import vidapi_async as va
from tests.cli_run import vidapi
from vidapi_async.batch import jobs_from_source
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

SRT = b"1\n00:00:00,500 --> 00:00:02,000\nHello\n\n"
CLIPS = {"a.mp4": os.urandom(7000), "b.mp4": os.urandom(9000)}
FEEDS: dict[str, str] = {}  # what the media host serves as feeds, by name


@contextlib.asynccontextmanager
async def serving(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> AsyncIterator[str]:
    """``handler`` answering ``GET /{name}`` on http://127.0.0.1 (a server of the test's
    own): its base address."""
    app = web.Application()
    app.router.add_get("/{name}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@pytest.fixture
async def media_host() -> AsyncIterator[str]:
    """Files, thumbnails, subtitles and feeds over http://127.0.0.1."""

    async def serve(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name in CLIPS:
            return web.Response(body=CLIPS[name], content_type="video/mp4")
        if name.endswith(".srt"):
            return web.Response(body=SRT, content_type="text/plain")
        if name in FEEDS:
            return web.Response(body=FEEDS[name], content_type="application/rss+xml")
        if name.endswith(".jpg"):
            return web.Response(body=b"\xff\xd8\xff" + b"\0" * 32, content_type="image/jpeg")
        raise web.HTTPNotFound()

    async with serving(serve) as host:
        yield host


def feed(host: str, *, first_title: str = "First") -> str:
    item = """
    <item>
      <guid isPermaLink="false">{guid}</guid>
      <title>plain {guid}</title>
      <link>https://old.example.com/{guid}</link>
      <pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>
      <media:content url={url} type="video/mp4">
        <media:title>{title}</media:title>
        <media:description>{description}</media:description>
        <media:keywords>{keywords}</media:keywords>
        <media:thumbnail url={thumb}/>
        <media:subTitle href={sub} lang="en" type="application/x-subrip"/>
        <media:category>{category}</media:category>
      </media:content>
    </item>"""
    items = [
        item.format(
            guid="item-1",
            url=quoteattr(f"{host}/a.mp4?X-Amz-Signature=abc&X-Amz-Expires=60"),
            title=first_title,
            description="About &amp; more",
            keywords="cats, funny",
            thumb=quoteattr(f"{host}/a.jpg"),
            sub=quoteattr(f"{host}/a.srt"),
            category="music",
        ),
        item.format(
            guid="item-2",
            url=quoteattr(f"{host}/b.mp4"),
            title="Second",
            description="Two",
            keywords="dogs",
            thumb=quoteattr(f"{host}/b.jpg"),
            sub=quoteattr(f"{host}/b.srt"),
            category="Not A Category",
        ),
    ]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>'
        "<title>Old library</title>" + "".join(items) + "</channel></rss>\n"
    )


async def test_a_media_rss_feed_lands_as_written(tmp_path: Path, media_host: str) -> None:
    path = tmp_path / "feed.xml"
    path.write_text(feed(media_host), encoding="utf-8")
    report = tmp_path / "report.jsonl"
    async with Emulator() as emu, client_for(emu) as client:
        jobs = jobs_from_source(str(path), channel="news")
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite", report=report) as b:
            results = [r async for r in b.run(jobs)]
        assert [r.status for r in results] == [va.JobStatus.DONE] * 2, [r.error for r in results]
        videos = {v["title"]: v for v in emu.videos()}
        assert set(videos) == {"First", "Second"}
        first, second = videos["First"], videos["Second"]
        assert first["description"] == "About & more" and first["tags"][:2] == ["cats", "funny"]
        assert first["channel"] == "music" and second["channel"] == "news"  # not a category
        assert first["thumbnail_url"].startswith(emu.upload_base + "/")  # carried
        for video, clip in ((first, "a.mp4"), (second, "b.mp4")):
            stored = emu.state.get("file", video["url"])
            assert stored is not None and Path(stored["path"]).read_bytes() == CLIPS[clip]
            [sub] = emu.state.children("subtitle", video["id"])
            assert sub["language"] == "en"
        rows = [json.loads(line) for line in report.read_text().splitlines()]
        assert {r["key"]: r["video_id"] for r in rows} == {r.key: r.video_id for r in results}
        sources = {r["key"]: r["source"] for r in rows}
        assert sources["item-1"] == f"{media_host}/a.mp4"  # no signature in the report
        assert "Signature" not in report.read_text()
        # re-signed: the same source, so no second video
        path.write_text(feed(media_host).replace("Signature=abc", "Signature=new"))
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as b:
            again = [r async for r in b.run(jobs_from_source(str(path), channel="news"))]
        assert [r.status for r in again] == [va.JobStatus.SKIPPED] * 2
        assert len(emu.videos()) == 2


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        (
            '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            '<!ENTITY lol2 "&lol;&lol;&lol;">]><rss><channel><item>'
            "<title>&lol2;</title></item></channel></rss>",
            "line 1: a DOCTYPE",
        ),
        ("<rss><channel><item><guid>x</guid>", "not well-formed XML"),
        ("\n\n<?xml version='1.0'?>\n<rss><channel>\n<item></channel></rss>", "line 5: not well"),
        ("<rss><channel><item/></channel>\n<x>", "line 2: not well-formed XML"),
    ],
)
def test_a_bad_feed_is_refused_naming_its_line(tmp_path: Path, xml: str, message: str) -> None:
    path = tmp_path / "feed.rss"
    path.write_text(xml, encoding="utf-8")
    with pytest.raises(va.InvalidArgumentError, match=message):
        list(jobs_from_source(str(path), channel="news"))


def test_unused_elements_and_items_without_a_video_are_left_out_not_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "feed.rss"
    path.write_text(
        '<rss xmlns:media="http://search.yahoo.com/mrss/" xmlns:itunes="urn:i"><channel>\n'
        "<item><guid>a</guid>\n<media:titel>x</media:titel><itunes:duration>3</itunes:duration>"
        '<media:content url="https://x.test/a.mp4" type="video/mp4"/></item>\n'
        "<item><guid>b</guid><title>t</title></item>\n"
        '<item><guid>c</guid><media:player url="https://x.test/c"/></item>\n'
        "</channel></rss>",
        encoding="utf-8",
    )
    left: list[va.LeftOut] = []
    jobs = list(jobs_from_source(str(path), channel="news", left_out=left.append))
    assert [j.key for j in jobs] == ["a"]
    assert [(x.where.rsplit("/", 1)[-1], x.status, x.reason) for x in left] == [
        ("feed.rss line 4 (b)", "skipped", "no video file: no media"),
        ("feed.rss line 5 (c)", "skipped", "no video file: players only"),
        ("feed.rss", "ignored", "elements not used: media:titel, {urn:i}:duration"),
    ]
    assert [j.key for j in jobs_from_source(str(path), channel="news")] == ["a"]  # logged


async def test_the_command_line_reports_and_plans(
    emulator: Emulator, tmp_path: Path, media_host: str
) -> None:
    path = tmp_path / "feed.xml"
    path.write_text(feed(media_host), encoding="utf-8")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = str(tmp_path / "j.sqlite")
    report = tmp_path / "map.csv"
    common = ("batch", str(path), "--channel", "news", "--journal", journal)
    code, out, err = await vidapi(*common, "--dry-run", env=env)
    assert code == 0, err
    assert "would create 2, update 0, skip 0" in out and "create item-1" in out
    assert emulator.videos() == []
    code, _, err = await vidapi(*common, "--report", str(report), env=env)
    assert code == 0, err
    with report.open(newline="") as f:
        rows = list(csv.DictReader(f))
    ids = {v["title"]: v["id"] for v in emulator.videos()}
    assert {r["key"]: r["video_id"] for r in rows} == {
        "item-1": ids["First"],
        "item-2": ids["Second"],
    }
    assert all(r["status"] == "done" for r in rows)
    async with client_for(emulator) as client:
        for row in rows:  # the first asked of the API, the second written from it
            video = await client.get_video(row["video_id"], ["url", "embed_url"])
            assert (row["url"], row["embed_url"]) == (video.url, video.embed_url)
    path.write_text(feed(media_host, first_title="First, fixed"), encoding="utf-8")
    code, out, err = await vidapi(*common, "--dry-run", env=env)
    assert code == 0, err
    assert "would create 0, update 1, skip 1" in out and "update item-1" in out
    code, _, err = await vidapi(*common, "--report", str(report), env=env)
    assert code == 0, err
    with report.open(newline="") as f:
        statuses = {r["key"]: (r["status"], r["video_id"]) for r in csv.DictReader(f)}
    assert statuses == {"item-1": ("updated", ids["First"]), "item-2": ("skipped", ids["Second"])}
    assert sorted(v["title"] for v in emulator.videos()) == ["First, fixed", "Second"]


async def test_a_feed_given_by_its_address_is_fetched_and_migrated(
    emulator: Emulator, tmp_path: Path, media_host: str
) -> None:
    FEEDS["library"] = feed(media_host)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = str(tmp_path / "j.sqlite")
    code, _, err = await vidapi(
        "batch", f"{media_host}/library", "--channel", "news", "--journal", journal, env=env
    )
    assert code == 0, err
    assert sorted(v["title"] for v in emulator.videos()) == ["First", "Second"]
    code, _, err = await vidapi(
        "batch", f"{media_host}/missing.xml", "--channel", "news", "--journal", journal, env=env
    )
    assert code != 0 and "404" in err, err


def test_a_byte_order_mark_and_blank_lines_before_the_declaration_are_tolerated(
    tmp_path: Path,
) -> None:
    path = tmp_path / "feed.xml"
    body = (
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
        '<entry><id>tag:x,2024:1</id><title type="html">A &lt;b&gt;bold&lt;/b&gt; one</title>'
        '<link rel="enclosure" type="video/mp4" href="https://x.test/a.mp4" length="10"/>'
        "</entry>\n</feed>\n"
    )
    path.write_bytes(b"\xef\xbb\xbf\r\n \n" + body.encode())
    [job] = jobs_from_source(str(path), channel="news")
    assert (job.key, job.title, job.url) == ("tag:x,2024:1", "A bold one", "https://x.test/a.mp4")
    path.write_bytes(b"\xef\xbb\xbf\n\n" + body.replace("</entry>", "</entri>").encode())
    with pytest.raises(va.InvalidArgumentError, match=r"feed\.xml line 5: not well-formed"):
        list(jobs_from_source(str(path), channel="news"))


def test_a_permalink_guid_longer_than_a_key_gives_a_stable_key_and_texts_fit(
    tmp_path: Path,
) -> None:
    guid = "https://www.dailymotion.com/video/x21kjg_" + "a-very-long-slug-" * 12
    assert len(guid) > va.batch.MAX_KEY_LENGTH
    path = tmp_path / "feed.rss"
    path.write_text(
        '<rss xmlns:media="http://search.yahoo.com/mrss"><channel><item>'
        f"<guid>{guid}</guid><title>{'T' * 300}</title>"
        f"<description>&lt;p&gt;{'word ' * 1000}&lt;/p&gt;</description>"
        '<media:content url="https://x.test/a.mp4" medium="video"/></item></channel></rss>',
        encoding="utf-8",
    )
    [job] = jobs_from_source(str(path), channel="news")
    [again] = jobs_from_source(str(path), channel="news")
    assert job.key is not None and job.key.startswith("feed-") and job.key == again.key
    assert len(job.title) == 255 and job.title.endswith("\u2026")
    assert job.description is not None and len(job.description) <= 3000
    assert job.description.endswith("word\u2026")
