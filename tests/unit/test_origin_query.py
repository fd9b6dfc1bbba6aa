"""Issue 38, third attack F2: a feed's origin (what the journal and the origin tag say
made a job) identifies its query too, without holding it: two feeds at one path that
differ in the query (``?c=alice``, ``?c=bob``) are two origins, so one's item can never
update the other's video. A record or a video tag made by an earlier release (the
origin without its query) is still the same feed's."""

from __future__ import annotations

import vidapi_async as va
from vidapi_async.batch._adopt import Held, belongs, origin_tag
from vidapi_async.batch._job_run import _refusal
from vidapi_async.batch._journal import JobRecord, Stage
from vidapi_async.cli._batch import origin_of

FEED = "https://feeds.example.com/feed.xml"


def test_the_query_is_part_of_a_feeds_origin_and_never_kept() -> None:
    alice, bob = origin_of(FEED + "?c=alice"), origin_of(FEED + "?c=bob")
    assert alice != bob
    assert alice.startswith(FEED) and bob.startswith(FEED)
    assert "alice" not in alice and "bob" not in bob
    assert origin_of(FEED + "?a=1&b=2") == origin_of(FEED + "?b=2&a=1")  # its order is not
    assert origin_of(FEED).startswith(FEED + "?feed-sha256=")  # always its digest
    signed = origin_of(FEED + "?c=alice&X-Amz-Signature=SIGSECRET&X-Amz-Date=20261128T0000Z")
    assert "SIGSECRET" not in signed
    # a signature is renewed, the feed stays one
    again = origin_of(FEED + "?c=alice&X-Amz-Signature=OTHER&X-Amz-Date=20261129T0000Z")
    assert signed == again
    with_user = origin_of("https://u:PASSWORD@feeds.example.com/feed.xml")
    assert with_user.startswith(FEED + "?feed-sha256=") and "PASSWORD" not in with_user


def _record(origin: str | None) -> JobRecord:
    return JobRecord(
        "1", Stage.DONE, video_id="x1", source="https://media.example.com/alice.mp4",
        origin=origin,
    )  # fmt: skip


def _job() -> va.UploadJob:
    return va.UploadJob(url="https://media.example.com/bob.mp4", title="t", channel="news")


def test_another_querys_feed_cannot_take_a_keys_video() -> None:
    alice, bob = origin_of(FEED + "?c=alice"), origin_of(FEED + "?c=bob")
    refused = _refusal(_record(alice), _job(), bob)
    assert refused is not None and "one key is one video" in refused.message
    assert _refusal(_record(alice), _job(), alice) is None  # its own feed: the file moved


def test_an_address_alone_is_no_feeds_origin_of_today() -> None:
    """The last attack (F2): a record or a tag holding a feed's address alone (a form
    only unreleased code wrote: 0.1.0 kept no origin) was taken as any feed's at that
    address, so ``?c=bob`` adopted and retitled a video tagged so. No such rule now:
    an origin is the same only when it is equal."""
    assert _refusal(_record(FEED), _job(), origin_of(FEED + "?c=alice")) is not None
    job = va.UploadJob(url="https://media.example.com/a.mp4", title="first title", channel="news")
    earlier = Held("x1", "first title", None, False, None, origin_tag(FEED))
    why = belongs(earlier, job, None, origin_of(FEED + "?c=alice"))
    assert why is not None and "another manifest or feed" in why


def test_a_feed_without_a_query_and_the_same_with_one_are_two_feeds() -> None:
    """The third attack (N1, high): ``feed.xml`` and ``feed.xml?c=bob`` were one origin
    (the query-less one read as an earlier release's form of the other), so bob's guid
    1 updated (or adopted) the plain feed's video. Today's origins always carry their
    digest: the earlier form matches only what an earlier release wrote."""
    plain, bob = origin_of(FEED), origin_of(FEED + "?c=bob")
    assert plain != bob and plain != FEED
    assert _refusal(_record(plain), _job(), bob) is not None
    assert _refusal(_record(bob), _job(), plain) is not None
    job = va.UploadJob(url="https://media.example.com/a.mp4", title="t", channel="news")
    plains = Held("x1", "t", None, False, None, origin_tag(plain))
    assert belongs(plains, job, None, bob) is not None
    assert _refusal(_record(FEED), _job(), plain) is not None  # the address alone: no feed's


def test_feeds_told_apart_by_their_user_are_two_feeds_whatever_the_password() -> None:
    """The third attack (N4): per-user private feeds (``alice:pw@``, ``bob:pw@``) were one
    origin. The user is part of the digest (never shown); the password is not: a
    changed password is the same feed."""
    alice = origin_of("https://alice:pw@feeds.example.com/feed.xml")
    bob = origin_of("https://bob:pw@feeds.example.com/feed.xml")
    assert alice != bob and "alice" not in alice and "pw" not in alice.partition("//")[2]
    assert alice == origin_of("https://alice:NEWPASSWORD@feeds.example.com/feed.xml")
