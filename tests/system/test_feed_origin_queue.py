"""Issue 38/39 review #1: a feed's origin survives the shared queue. ``vidapi batch
http://PUBLIC/feed.xml --journal postgresql://... --enqueue-only`` then ``vidapi worker``:
the worker, whose source policy knows no origin, must refuse an item's internal video and
thumbnail as ``vidapi batch`` on a SQLite journal does (``test_feed_origin``).

``127.0.0.1`` plays a public host and ``127.0.0.2`` an internal one (the policy's
``internal`` networks)."""

from __future__ import annotations

import argparse
import asyncio
from xml.sax.saxutils import quoteattr

import pytest

import vidapi_async as va
from tests.integration.test_feed_origin import DATA, rss
from tests.wire import Reply, Seen, WireServer
from vidapi_async.batch import SharedBatch
from vidapi_async.cli._batch import _read_in_thread, feed_source
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system
pytest.importorskip("procrastinate")


async def test_a_worker_judges_a_queued_feed_items_sources_by_the_feeds_origin(
    emulator: Emulator, dsn: str
) -> None:
    async with (
        WireServer(lambda seen: Reply(200, DATA), host="127.0.0.2") as inner,
        WireServer(lambda seen: Reply(200, DATA)) as media,
    ):
        thumbed = (
            "<item><guid>thumb</guid><title>thumb</title>"
            f"<media:content url={quoteattr(media.url + '/c.mp4')} type='video/mp4'/>"
            f"<media:thumbnail url={quoteattr(inner.url + '/t.jpg')}/></item>"
        )
        feed_text = rss(("video", f"{inner.url}/a.mp4"), ("fine", f"{media.url}/b.mp4"))
        feed_text = feed_text.replace("</channel>", thumbed + "</channel>")

        def serve_feed(seen: Seen) -> Reply:
            return Reply(200, feed_text.encode(), {"Content-Type": "application/rss+xml"})

        policy = va.SourcePolicy(internal=["127.0.0.2/32"])
        async with WireServer(serve_feed) as feeds, SharedBatch(dsn) as shared:
            async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as enqueuer:
                args = argparse.Namespace(
                    source=f"{feeds.url}/feed.rss", channel="news", encoding=None
                )
                async with feed_source(args, enqueuer):
                    assert (await shared.enqueue(_read_in_thread(args))).added == 3
            # the worker: another client, its policy with no origin (as `vidapi worker`)
            async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as worker:
                await asyncio.wait_for(shared.work(worker, until_empty=True), 60)
            status = await shared.status()
    assert (status.done, status.failed) == (1, 2), status
    assert inner.seen == []  # not a byte was asked of the internal host
    # the thumbnail's job failed at its thumbnail before its video was made (as on SQLite)
    assert sorted(v["title"] for v in emulator.videos()) == ["fine"]
