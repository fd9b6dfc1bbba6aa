"""Issue 38 #1: a feed must not reach internal hosts. ``--deny``/``--allow`` on the
commands that fetch, applied to every url a batch fetches; a feed fetched from a public
address may not name an internal one (the rule redirects follow), refused per item.

The servers are ``tests/wire.py``'s (no code shared with the client) on loopback
addresses; which addresses count as internal is the policy's ``internal`` networks, so
that ``127.0.0.1`` can play a public host and ``127.0.0.2`` an internal one."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.wire import Reply, Seen, WireServer
from vidapi_async.batch import jobs_from_source
from vidapi_async.cli._batch import feed_source, run_plan
from vidapi_async.cli._journal_spec import JournalSpec
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

DATA = os.urandom(5000)


def rss(*items: tuple[str, str]) -> str:
    """A Media RSS feed of ``(guid, media url)`` items."""
    body = "".join(
        f"<item><guid>{guid}</guid><title>{guid}</title>"
        f"<media:content url={quoteattr(url)} type='video/mp4'/></item>"
        for guid, url in items
    )
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">'
        f"<channel><title>t</title>{body}</channel></rss>"
    )


def test_the_origin_rule_without_a_socket() -> None:
    public = "93.184.216.34"
    named = va.SourcePolicy(origin=public)
    unspecified = "0" + ".0.0.0"  # an address to judge, not one to bind
    for inner in ("127.0.0.1", "10.0.0.5", "169.254.169.254", unspecified, "::1", "fe80::1"):
        why = named.refusal(inner)
        assert why is not None and "SourcePolicy.origin" in why and public in why, inner
    assert named.refusal("8.8.8.8") is None
    assert va.SourcePolicy(origin="10.0.0.1").refusal("10.0.0.5") is None  # private to private
    assert va.SourcePolicy(origin=public, allow_private=True).refusal("10.0.0.5") is None
    # what counts as internal is the policy's: a lab's own ranges, a test bed's loopback
    lab = va.SourcePolicy(internal=["127.0.0.2/32"], origin="127.0.0.1")
    assert lab.refusal("127.0.0.3") is None
    assert "SourcePolicy.origin" in (lab.refusal("127.0.0.2") or "")
    assert lab.refusal("127.0.0.2", previous="127.0.0.1") is not None  # redirects too
    with pytest.raises(va.InvalidArgumentError):
        va.SourcePolicy(origin="not an address")
    with pytest.raises(va.InvalidArgumentError):
        va.SourcePolicy(internal="10.0.0.0/8")


async def test_a_public_feed_naming_an_internal_host_fails_that_item_only(
    emulator: Emulator, tmp_path: Path
) -> None:
    async with (
        WireServer(lambda seen: Reply(200, b'{"secret": "internal"}'), host="127.0.0.2") as inner,
        WireServer(lambda seen: Reply(200, DATA)) as media,
    ):
        feed_text = rss(("one", f"{inner.url}/latest/meta-data"), ("two", f"{media.url}/b.mp4"))

        def serve_feed(seen: Seen) -> Reply:
            return Reply(200, feed_text.encode(), {"Content-Type": "application/rss+xml"})

        async with WireServer(serve_feed) as feeds:
            policy = va.SourcePolicy(internal=["127.0.0.2/32"])  # 127.0.0.1 plays public
            async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
                args = argparse.Namespace(source=f"{feeds.url}/feed.rss")
                async with feed_source(args, client):
                    jobs = jobs_from_source(args.source, channel="news")
                    async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
                        results = {r.key: r async for r in batch.run(jobs)}
                assert client.source_policy == policy  # the run's rule is the run's only
    assert results["two"].status is va.JobStatus.DONE, results["two"].error
    failed = results["one"]
    assert failed.status is va.JobStatus.FAILED
    assert isinstance(failed.error, va.SourceError)
    assert "SourcePolicy.origin" in str(failed.error) and "127.0.0.2" in str(failed.error)
    assert inner.seen == []  # not a byte reached the internal host
    assert [v["title"] for v in emulator.videos()] == ["two"]


async def test_deny_and_allow_on_the_command_line_apply_to_each_item(
    emulator: Emulator, tmp_path: Path
) -> None:
    async with (
        WireServer(lambda seen: Reply(200, DATA), host="127.0.0.2") as inner,
        WireServer(lambda seen: Reply(200, DATA)) as media,
    ):
        feed = tmp_path / "feed.rss"
        feed.write_text(rss(("in", f"{inner.url}/a.mp4"), ("out", f"{media.url}/b.mp4")))
        env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
        for n, flags in enumerate((("--deny", "127.0.0.2/32"), ("--allow", "127.0.0.1/32"))):
            journal = str(tmp_path / f"j{n}.sqlite")
            code, out, err = await vidapi(
                "batch", str(feed), "--channel", "news", "--journal", journal, *flags, env=env
            )
            assert code == 6, (out, err)  # some jobs failed, the others went on
            rule = "SourcePolicy.deny" if flags[0] == "--deny" else "SourcePolicy.allow"
            assert rule in out + err, (out, err)
        code, _, err = await vidapi("batch", str(feed), "--deny", "not-a-network", env=env)
        assert code == 2 and "--deny" in err, err
    assert inner.seen == []
    # the second run (a new journal) adopts the video the first made (issue 40)
    assert [v["title"] for v in emulator.videos()] == ["out"]
    code, out, _ = await vidapi("worker", "--help")
    assert code == 0 and "--deny" in out and "--allow" in out


def test_a_jobs_feed_origin_goes_with_its_spec_into_the_shared_queue() -> None:
    """Issue 38/39 review #1: a job enqueued from a feed keeps the feed's address (its
    ``origin``) in the queue's spec, so the worker that runs it judges its sources by it."""
    from vidapi_async.batch._enqueue import job_of, spec_of

    job = va.UploadJob(url="http://127.0.0.2/a.mp4", title="t", channel="news", origin="127.0.0.1")
    assert job_of(json.loads(json.dumps(spec_of(job)))).origin == "127.0.0.1"
    plain = va.UploadJob(url="http://127.0.0.2/a.mp4", title="t", channel="news")
    assert job_of(spec_of(plain)).origin is None
    with pytest.raises(va.InvalidArgumentError, match="origin"):
        va.UploadJob(url="http://127.0.0.2/a.mp4", title="t", channel="news", origin="a host")


async def test_a_fetched_feeds_items_are_named_by_its_address_not_a_temporary_file(
    emulator: Emulator, tmp_path: Path
) -> None:
    """The fresh user's look at issue 39: an item left out of a feed fetched by url was
    named by the temporary file the feed was saved in (a new name each run, deleted at
    the end), in the output and in the report."""
    audio = (
        b'<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">'
        b"<channel><title>t</title><item><guid>ep1</guid><title>ep1</title>"
        b"<enclosure url='http://127.0.0.1/ep1.mp3' type='audio/mpeg' length='5'/>"
        b"</item></channel></rss>"
    )
    report = tmp_path / "report.csv"
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    async with WireServer(lambda seen: Reply(200, audio)) as feeds:
        address = f"{feeds.url}/pod.xml"
        code, out, err = await vidapi(
            "batch", address, "--channel", "news",
            "--journal", str(tmp_path / "j.sqlite"), "--report", str(report), env=env,
        )  # fmt: skip
    assert code == 0, err
    said = out + err + report.read_text()
    assert f"{address} line" in said, said
    assert "vidapi-feed-" not in said, said


async def test_two_feeds_at_one_path_differing_in_the_query_are_two_origins(
    emulator: Emulator, tmp_path: Path
) -> None:
    """Issue 38, third attack F2: ``feed.xml?c=alice`` and ``feed.xml?c=bob`` were one
    origin (the query left out), so bob's guid 1 turned into an update of alice's video
    (retitled). Now bob's item is refused (one key is one video) and alice's video
    stays hers; the journal never holds the query."""
    feeds_by_query = {
        who: rss(("1", f"http://127.0.0.1:{{port}}/{who}.mp4")).replace(
            "<title>1<", f"<title>{who}'s video<"
        )
        for who in ("alice", "bob")
    }

    def serve(seen: Seen) -> Reply:
        if seen.path == "/feed.xml":
            who = seen.target.rsplit("=", 1)[1]
            text = feeds_by_query[who].replace("{port}", str(port))
            return Reply(200, text.encode(), {"Content-Type": "application/rss+xml"})
        return Reply(200, DATA)

    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    journal = tmp_path / "j.sqlite"
    async with WireServer(serve) as server:
        port = int(server.url.rsplit(":", 1)[1])
        runs = []
        for who in ("alice", "bob"):
            runs.append(
                await vidapi(
                    "batch",
                    f"{server.url}/feed.xml?c={who}",
                    "--channel",
                    "news",
                    "--journal",
                    str(journal),
                    "--json",
                    env=env,
                )
            )
    assert runs[0][0] == 0, runs[0]
    code, out, err = runs[1]
    assert code == 6, (out, err)
    (bob,) = json.loads(out)
    assert bob["status"] == "failed" and "one key is one video" in bob["error"], bob
    assert [v["title"] for v in emulator.videos()] == ["alice's video"]
    assert b"c=alice" not in journal.read_bytes() and b"c=bob" not in journal.read_bytes()


async def test_a_dry_run_refuses_what_the_source_policy_would(
    emulator: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38, third attack F3: ``--dry-run`` planned ``create`` and exited 0 for a
    row whose url ``--deny`` refuses (and for a feed's item its origin rule refuses),
    where the run fails it and exits 6. Nothing is connected to judge them."""
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    async with WireServer(lambda seen: Reply(200, DATA), host="127.0.0.2") as inner:
        manifest = tmp_path / "m.jsonl"
        rows = [
            {"key": "denied", "url": f"{inner.url}/internal.mp4", "title": "x", "channel": "news"},
            {"key": "fine", "url": "http://127.0.0.1:9/a.mp4", "title": "y", "channel": "news"},
            {
                "key": "thumb",
                "url": "http://127.0.0.1:9/b.mp4",
                "title": "z",
                "channel": "news",
                "thumbnail": f"{inner.url}/t.jpg",
            },
        ]
        manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        code, out, err = await vidapi(
            "batch", str(manifest), "--deny", "127.0.0.2/32", "--dry-run", "--json",
            "--journal", str(tmp_path / "j.sqlite"), env=env,
        )  # fmt: skip
        assert code == 6, (out, err)
        plan = json.loads(out)
        assert sorted(plan["refuse"]) == ["denied", "thumb"] and plan["create"] == ["fine"], plan
        code, out, err = await vidapi(
            "batch", str(manifest), "--deny", "127.0.0.2/32", "--dry-run",
            "--journal", str(tmp_path / "j.sqlite"), env=env,
        )  # fmt: skip
        assert code == 6, (out, err)
        assert "refuse denied" in out and "SourcePolicy.deny" in out, out
        # a feed's item its origin rule refuses (127.0.0.1 plays a public host)
        feed_text = rss(("one", f"{inner.url}/meta"), ("two", "http://127.0.0.1:9/b.mp4"))

        def serve_feed(seen: Seen) -> Reply:
            return Reply(200, feed_text.encode(), {"Content-Type": "application/rss+xml"})

        async with WireServer(serve_feed) as feeds:
            policy = va.SourcePolicy(internal=["127.0.0.2/32"])
            async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
                args = argparse.Namespace(
                    source=f"{feeds.url}/feed.rss", channel="news", encoding=None,
                    json=True, dry_run=True,
                    journal=JournalSpec("sqlite", str(tmp_path / "none.sqlite")),
                )  # fmt: skip
                planned = await run_plan(args, client)
        assert planned == 6
        feed_plan = json.loads(capsys.readouterr().out)
        assert feed_plan["refuse"] == ["one"] and feed_plan["create"] == ["two"], feed_plan
        assert "SourcePolicy.origin" in feed_plan["refused_sources"]["one"], feed_plan
    assert inner.seen == []  # judged, never connected to


async def test_a_dry_run_judges_only_the_urls_the_run_would_still_fetch(
    emulator: Emulator,
) -> None:
    """The video's url until it is uploaded, the thumbnail's and subtitles' until the
    video is created (the run's steps): a job resumed past them is not refused for a
    url it will not fetch again."""
    from vidapi_async.batch._job_run import source_refusal
    from vidapi_async.batch._journal import JobRecord

    policy = va.SourcePolicy(deny=["10.0.0.0/8"])
    async with client_for(emulator, retry=va.NO_RETRY, source_policy=policy) as client:
        job = va.UploadJob(url="http://10.1.2.3/a.mp4", title="t", channel="news")
        thumbed = va.UploadJob(
            url="http://127.0.0.1:9/a.mp4", title="t", channel="news",
            thumbnail="http://10.1.2.4/t.jpg",
        )  # fmt: skip
        for stage in (va.Stage.PENDING, va.Stage.UPLOADING):
            why = await source_refusal(client, job, JobRecord("k", stage))
            assert why is not None and "10.1.2.3" in why and "SourcePolicy.deny" in why, stage
        assert await source_refusal(client, job, JobRecord("k", va.Stage.UPLOADED)) is None
        why = await source_refusal(client, thumbed, JobRecord("k", va.Stage.CREATING))
        assert why is not None and "10.1.2.4" in why
        assert await source_refusal(client, thumbed, JobRecord("k", va.Stage.CREATED)) is None
