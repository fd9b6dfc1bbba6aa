"""The origin tag (issue 40): which manifest or feed made a video, as a tag in the
batch's reserved prefix that no key's tag can be, for any origin text."""

from __future__ import annotations

import re

from vidapi_async.batch._adopt import ORIGIN_PREFIX, bookkeeping, origin_tag, own_tags, tag


def test_an_origin_with_undecodable_bytes_has_a_tag() -> None:
    """A manifest whose path is not UTF-8 (surrogate-escaped, as ``os.path`` gives it)
    raised ``UnicodeEncodeError`` when its tag was made."""
    odd = origin_tag("/lib/caf\udce9.csv")
    assert odd is not None and odd != origin_tag("/lib/café.csv")


def test_the_origin_tag_is_never_a_keys_tag() -> None:
    made = origin_tag("https://old.example.com/feed.rss")
    assert made is not None and re.fullmatch(ORIGIN_PREFIX + "[0-9a-f]{20}", made)
    assert len(made) <= 100  # the tag length the client takes
    assert made.startswith("vidapih-") and not re.fullmatch(r"vidapih-[0-9a-f]{32}", made)
    assert origin_tag(None) is None
    # the key's tag is the one a video is found by, whatever comes after it
    assert bookkeeping(["a", *own_tags("k1", "x")]) == tag("k1")
    assert bookkeeping([tag("k1"), made]) == tag("k1")
    assert own_tags("k1", None) == [tag("k1")]
