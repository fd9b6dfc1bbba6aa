"""Issue 38, second attack #3: a feed's distinct names are bounded. expat (and pyexpat's
own table) keep every distinct element and attribute name, and every namespace prefix,
for the parser's life: a feed whose every tag has a name of its own cost about 13 times
its size in memory. Past ``MAX_NAMES`` distinct names, ``MAX_PREFIXES`` prefixes or a
name of ``MAX_NAME_LENGTH`` characters, the feed is refused naming the cap and the
line."""

from __future__ import annotations

import io
import tracemalloc

import pytest

import vidapi_async as va
from vidapi_async.batch._feed import (
    MAX_NAME_LENGTH,
    MAX_NAMES,
    MAX_PREFIXES,
    jobs_from_feed_stream,
)

HEAD = '<?xml version="1.0"?>\n<rss xmlns:media="http://search.yahoo.com/mrss/"><channel>\n'
TAIL = "</channel></rss>\n"


def _feed(items: list[str]) -> bytes:
    return (HEAD + "".join(items) + TAIL).encode()


def _item(n: int, more: str = "") -> str:
    return (
        f"<item><guid>g{n}</guid>"
        f'<media:content url="http://127.0.0.1:9/{n}.mp4" type="video/mp4"/>{more}</item>\n'
    )


def _read(data: bytes) -> list[va.UploadJob]:
    return list(
        jobs_from_feed_stream(io.BytesIO(data), "feed.xml", channel="news", categories=None)
    )


def test_more_distinct_names_than_the_cap_are_refused_naming_it() -> None:
    items = [_item(n, f'<x{n}_a y{n}="1"/><x{n}_b/>') for n in range(MAX_NAMES)]
    with pytest.raises(va.InvalidArgumentError, match="MAX_NAMES") as caught:
        _read(_feed(items))
    assert "feed.xml line" in caught.value.message and "distinct" in caught.value.message


def test_more_namespace_prefixes_than_the_cap_are_refused_naming_it() -> None:
    items = [_item(n, f'<p{n}:x xmlns:p{n}="urn:same"/>') for n in range(MAX_PREFIXES + 1)]
    with pytest.raises(va.InvalidArgumentError, match="MAX_PREFIXES"):
        _read(_feed(items))


def test_a_name_longer_than_the_cap_is_refused_naming_it() -> None:
    long = "x" * (MAX_NAME_LENGTH + 1)
    with pytest.raises(va.InvalidArgumentError, match="MAX_NAME_LENGTH"):
        _read(_feed([_item(1, f"<{long}/>")]))
    with pytest.raises(va.InvalidArgumentError, match="MAX_NAME_LENGTH"):
        _read(_feed([_item(1, f'<x {long}="1"/>')]))


def test_a_feed_of_many_items_with_the_usual_names_is_read() -> None:
    items = [
        _item(n, '<media:thumbnail url="http://127.0.0.1:9/t.jpg"/><x a="1"/>') for n in range(3000)
    ]
    assert len(_read(_feed(items))) == 3000


def test_a_feed_of_distinct_names_is_refused_in_bounded_memory() -> None:
    """8 MiB of elements named each its own way: refused once past the cap, its memory
    bounded by the cap (it grew with the feed: about 56 MiB for these 8 MiB)."""
    tag = "<{0}{1}_{2}xxxxxxxxxxxxxxxxxx {0}a{1}_{2}aaaaaaaaaaaaaaaaaa='1'/>"
    extra = "".join(tag.format("x", "{n}", j) for j in range(200))
    items = [_item(n, extra.format(n=n)) for n in range(800)]
    data = _feed(items)
    assert len(data) > 8 << 20
    tracemalloc.start()
    try:
        with pytest.raises(va.InvalidArgumentError, match="MAX_NAMES"):
            _read(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, peak
