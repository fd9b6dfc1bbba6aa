"""Feeds as their sites published them (``tests/feeds``, sources in its SOURCES.md),
read by our reader: the jobs and the items left out, as read from each document by
hand; feedparser, an independent reader, agrees on the items and on each video's url."""

from __future__ import annotations

import re
from pathlib import Path

import feedparser
import pytest

from vidapi_async.batch import LeftOut, UploadJob
from vidapi_async.batch._feed import feed_file_entries

FEEDS = Path(__file__).parents[1] / "feeds"
DM = "http://www.dailymotion.com/get/14/320x240/flv/"
BLIP = "http://blip.tv/file/get/Robertlofthouse-"
IA = "http://www.archive.org/download/"

EXPECTED: dict[str, tuple[list[tuple[str | None, str]], list[str]]] = {
    # file: ([(key, the video url's start)], [each item left out: its status and reason])
    "dailymotion.rss": (  # media:group of four renditions, no isDefault: the first largest
        [
            ("http://www.dailymotion.com/video/x21kjg_but-de-raul", DM + "3432508.flv"),
            ("http://www.dailymotion.com/video/x21kja_boom", DM + "3432502.flv"),
            ("http://www.dailymotion.com/video/x21kiy_37-rdc-85yz", DM + "3432490.flv"),
        ],
        [],
    ),
    "archive_org_movies.rss": (  # a blank line before <?xml; isDefault renditions
        [
            ("http://www.archive.org/details/SFGTV_20111020_130000", IA + "SFGTV_20111020_130000/format=h.264"),
            ("http://www.archive.org/details/forsan2011-2196", IA + "forsan2011-2196/format=h.264"),
        ],
        [],
    ),
    "blip_api.rss": (
        [("4809E60A-C2AB-11DF-BBAC-A6337D0214E0", BLIP + "ScalingTheWorldsLargestDjangoApplication558.ogv")],
        [],
    ),
    "blip_search.rss": (
        [
            ("66A6F7E4-F888-11DE-B230-6815ED752C46", BLIP + "ScalingDjangoWebApplications964.flv"),
            ("4809E60A-C2AB-11DF-BBAC-A6337D0214E0", BLIP + "ScalingTheWorldsLargestDjangoApplication558.ogv"),
        ],
        [],
    ),
    "stupidvideos.rss": (
        [("403051", "http://videos.stupidvideos.com/2/00/40/30/51/403051.flv")],
        [],
    ),
    "motor_ru.rss": (  # an image and a video/mp4 enclosure; then images only
        [
            (
                "https://motor.ru/news/kia-stinger-future-25-04-2020.htm",
                "https://motor.media.eagleplatform.com/index/player?record_id=1410861",
            )
        ],
        ["skipped: no video file: images only"],
    ),
    "vimeo_user_videos.rss": ([], ["skipped: no video file: media elements without a url and players only"]),
    "youtube_channel.xml": ([], ["skipped: no video file: players only"] * 3),
    "atom_podcast_example.xml": ([], ["skipped: no video file: other files (application/ogg) only"]),
    "joe_rogan_podcast.rss": ([], ["skipped: no video file: audio only"]),
    "acast_podcast.rss": ([], ["skipped: no video file: audio only"]),
    "mastodon_media.rss": ([], ["skipped: no video file: images only"] * 2),
    "feedparser_media_group.xml": ([], ["skipped: no video file: no media"]),
    "feedparser_media_player1.xml": ([], ["skipped: no video file: players only"]),
    "feedparser_media_thumbnail.xml": ([], ["skipped: no video file: no media"]),
    "feedparser_item_media_category_label.xml": ([], ["skipped: no video file: no media"]),
    "feedparser_item_enclosure_multiple.xml": ([], ["skipped: no video file: images only"]),
}  # fmt: skip
CUT_SHORT = {"miro_community.xml": r"line 17: not well-formed XML \(no element found\)"}
"""Feeds published cut short: their whole entries read, then an error naming the line."""


def _read(name: str) -> tuple[list[UploadJob], list[LeftOut], str | None]:
    jobs: list[UploadJob] = []
    left: list[LeftOut] = []
    try:
        for entry in feed_file_entries(FEEDS / name, "news", None):
            (left if isinstance(entry, LeftOut) else jobs).append(entry)  # type: ignore[arg-type]
    except Exception as exc:
        return jobs, left, str(exc)
    return jobs, left, None


def test_the_corpus_is_what_its_sources_list() -> None:
    files = sorted(p.name for p in FEEDS.iterdir() if p.name != "SOURCES.md")
    assert files == sorted([*EXPECTED, *CUT_SHORT])
    sources = (FEEDS / "SOURCES.md").read_text()
    for name in files:
        assert f"`{name}`" in sources, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_published_feed_reads_as_expected(name: str) -> None:
    jobs, left, error = _read(name)
    assert error is None, error
    expected_jobs, expected_left = EXPECTED[name]
    assert [(j.key, j.url) for j in jobs] == [
        (key, next((j.url for j in jobs if j.url and j.url.startswith(url)), url))
        for key, url in expected_jobs
    ]
    assert [f"{x.status}: {x.reason}" for x in left if x.status != "ignored"] == expected_left
    for job in jobs:  # every job a title, a channel and no blank around its text
        assert job.title == job.title.strip() and job.title and job.channel == "news"
        assert job.description is None or len(job.description) <= 3000


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_feedparser_agrees_on_the_items_and_the_videos(name: str) -> None:
    parsed = feedparser.parse(str(FEEDS / name))
    jobs, left, _ = _read(name)
    assert len(parsed.entries) == len(jobs) + len([x for x in left if x.status != "ignored"])
    videos = set()
    for entry in parsed.entries:
        for media in [*entry.get("media_content", []), *entry.get("enclosures", [])]:
            url = media.get("url") or media.get("href")
            kind = (media.get("type") or "") + (media.get("medium") or "")
            if url and "video" in kind:
                videos.add(url)
    assert {j.url for j in jobs} <= videos


@pytest.mark.parametrize("name", sorted(CUT_SHORT))
def test_a_feed_cut_short_gives_its_whole_entries_then_a_named_error(name: str) -> None:
    jobs, _, error = _read(name)
    assert error is not None and re.search(CUT_SHORT[name], error), error
    assert [j.url for j in jobs] == [
        "http://podcast.onnetworks.com/videos/sgatp_0108_kenaudra_480x270.mp4"
        "?feed=video&key=6100&target=itunes"
    ]
    # an Atom text title holds what it says (the site escaped it twice), blanks collapsed
    assert jobs[0].title == "&quot;The Dancer &amp; Kenaudra&quot;"


def test_descriptions_are_plain_text() -> None:
    jobs, _, _ = _read("dailymotion.rss")
    first = jobs[0].description or ""
    assert "<" not in first and "Auteur : Deep_33" in first, first
    jobs, _, _ = _read("archive_org_movies.rss")
    assert (jobs[0].description or "").startswith("No description available."), jobs[0]
