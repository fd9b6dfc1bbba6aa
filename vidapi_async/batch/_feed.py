"""Media RSS feeds as batch jobs, read as a stream (one item in memory at a time).

An item's ``guid`` is its job's key, ``media:content@url`` its url source,
``media:title`` (else ``title``) its title, ``media:description`` (else
``description``) its description, ``media:keywords`` its tags (comma-separated),
``media:thumbnail@url`` its thumbnail, each ``media:subTitle@href``/``@lang`` a
subtitle, and ``media:category`` its channel when that is one of the platform's
categories (else the ``channel`` given). ``media:group`` may wrap the media elements.

The XML is parsed by expat with no DTD: a feed with a ``<!DOCTYPE`` (where entity
expansion and external entities live) is refused, as is an element the tool does not
know in the Media RSS namespace or in another namespace; the plain RSS elements of an
item that carry nothing the platform takes (``link``, ``pubDate``...) are left out.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Collection, Iterator
from typing import IO, TYPE_CHECKING, Any, BinaryIO
from xml.parsers import expat

from .. import _validate as check
from .._errors import InvalidArgumentError
from .._internals import internals
from .._protocol import url_file_name
from ._jobs import SubtitleSpec, UploadJob, once_each

if TYPE_CHECKING:
    from .._client import Client

__all__ = ["MEDIA_RSS", "download_feed", "jobs_from_feed", "jobs_from_feed_stream"]

MEDIA_RSS = "http://search.yahoo.com/mrss/"
_SEP = "\x1f"
_ATTRIBUTE_LIMIT = 8 << 10
"""The longest attribute (a url) a feed may hold, in characters."""
_MEDIA_TEXT = {"title", "description", "keywords", "category"}
_MEDIA_KNOWN = {*_MEDIA_TEXT, "content", "thumbnail", "subTitle", "group"}
_RSS_TEXT = {"title", "description", "guid"}
_RSS_IGNORED = {
    "link", "pubDate", "author", "category", "comments", "enclosure", "source",
}  # fmt: skip


class _Item:
    def __init__(self, line: int) -> None:
        self.line = line
        self.text: dict[str, str] = {}
        self.url: str | None = None
        self.thumbnail: str | None = None
        self.subtitles: list[tuple[str, str]] = []


class _Reader:
    """Expat's handlers, collecting each finished item."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.parser = expat.ParserCreate(namespace_separator=_SEP)
        self.parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self.parser.StartDoctypeDeclHandler = self._doctype
        self.parser.EntityDeclHandler = self._entity
        self.parser.StartElementHandler = self._start
        self.parser.EndElementHandler = self._end
        self.parser.CharacterDataHandler = self._chars
        self.item: _Item | None = None
        self.field: str | None = None
        self.buffer: list[str] = []
        self.done: list[_Item] = []
        self.items = 0

    def _at(self) -> str:
        return f"{self.where} line {self.parser.CurrentLineNumber}"

    def _doctype(self, *_: object) -> None:
        raise InvalidArgumentError(
            "feed", f"{self._at()}: a DOCTYPE (a DTD, entities) is refused in a feed"
        )

    def _entity(self, *_: object) -> None:
        raise InvalidArgumentError("feed", f"{self._at()}: an entity declaration is refused")

    def _start(self, name: str, attributes: dict[str, str]) -> None:
        space, _, local = name.rpartition(_SEP)
        for attribute, value in attributes.items():
            if len(value) > _ATTRIBUTE_LIMIT:
                raise InvalidArgumentError(
                    attribute.rpartition(_SEP)[2],
                    f"{self._at()}: the attribute {attribute.rpartition(_SEP)[2]} of "
                    f"{local} is longer than {_ATTRIBUTE_LIMIT // 1024} KiB",
                )
        if local == "item" and not space:
            if self.item is not None:
                raise InvalidArgumentError("feed", f"{self._at()}: an item inside an item")
            self.item = _Item(self.parser.CurrentLineNumber)
            self.items += 1
            return
        item = self.item
        if item is None:
            return  # the channel's own elements
        if space == MEDIA_RSS:
            if local not in _MEDIA_KNOWN:
                raise InvalidArgumentError(local, f"{self._at()}: unknown element media:{local}")
            if local == "content" and "url" in attributes:
                if item.url is not None:
                    raise InvalidArgumentError(
                        "url", f"{self._at()}: an item with two media:content urls"
                    )
                item.url = attributes["url"]
            elif local == "thumbnail" and "url" in attributes:
                item.thumbnail = item.thumbnail or attributes["url"]
            elif local == "subTitle":
                lang, href = attributes.get("lang"), attributes.get("href")
                if not lang or not href:
                    raise InvalidArgumentError(
                        "subtitles", f"{self._at()}: media:subTitle needs href and lang"
                    )
                item.subtitles.append((lang, href))
            elif local in _MEDIA_TEXT:
                self.field, self.buffer = f"media:{local}", []
        elif not space and local in _RSS_TEXT:
            self.field, self.buffer = local, []
        elif space or local not in _RSS_IGNORED:
            shown = f"{{{space}}}{local}" if space else local
            raise InvalidArgumentError(local, f"{self._at()}: unknown element {shown} in an item")

    def _chars(self, data: str) -> None:
        if self.field is not None:
            self.buffer.append(data)

    def _end(self, name: str) -> None:
        space, _, local = name.rpartition(_SEP)
        if self.item is None:
            return
        if local == "item" and not space:
            self.done.append(self.item)
            self.item = None
        elif self.field is not None:
            self.item.text.setdefault(self.field, "".join(self.buffer).strip())
            self.field = None


def jobs_from_feed(
    path: str | os.PathLike[str],
    *,
    channel: str | None = None,
    categories: Collection[str] | None = None,
) -> Iterator[UploadJob]:
    """The jobs of a Media RSS feed file (blocking reads; run it off the loop)."""
    path = os.fspath(path)
    return once_each(path, _feed_jobs(path, channel, categories))


def _feed_jobs(
    path: str, channel: str | None, categories: Collection[str] | None
) -> Iterator[tuple[int, UploadJob]]:
    with open(path, "rb") as raw:
        yield from jobs_from_feed_stream(raw, path, channel=channel, categories=categories)


def jobs_from_feed_stream(
    raw: BinaryIO, where: str, *, channel: str | None, categories: Collection[str] | None
) -> Iterator[tuple[int, UploadJob]]:
    """Each item of the feed read from ``raw`` as ``(line, job)``."""
    reader = _Reader(where)
    slugs = check.DOCUMENTED_CHANNELS if categories is None else categories
    while True:
        chunk = raw.read(1 << 16)
        try:
            reader.parser.Parse(chunk, not chunk)
        except expat.ExpatError as exc:
            raise InvalidArgumentError(
                "feed",
                f"{where} line {exc.lineno}: not well-formed XML ({expat.ErrorString(exc.code)})",
            ) from None
        for item in reader.done:
            yield item.line, _job(item, f"{where} line {item.line}", channel, slugs)
        reader.done.clear()
        if not chunk:
            if not reader.items:
                raise InvalidArgumentError(
                    "feed",
                    f"{where}: no item in the feed (a Media RSS feed's items are RSS "
                    "<item> elements, in no namespace)",
                )
            return


def _job(item: _Item, where: str, channel: str | None, slugs: Collection[str]) -> UploadJob:
    text = item.text
    try:
        if item.url is None:
            raise InvalidArgumentError("url", "an item without a media:content url")
        category = text.get("media:category", "").strip().lower()
        tags = [t.strip() for t in text.get("media:keywords", "").split(",") if t.strip()]
        description = text.get("media:description") or text.get("description")
        optional: dict[str, Any] = {}
        if description:
            optional["description"] = description
        if tags:
            optional["tags"] = tags
        return UploadJob(
            url=item.url,
            key=text.get("guid") or None,
            title=text.get("media:title") or text.get("title") or "video",
            channel=category if category in slugs else (channel or ""),
            # A feed is another's file: its thumbnail is a url, never a local path.
            thumbnail=None
            if item.thumbnail is None
            else check.http_url(item.thumbnail, "thumbnail"),
            subtitles=[SubtitleSpec(lang, url=href) for lang, href in item.subtitles],
            **optional,
        )
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(exc.argument, f"{where}: {exc.message}") from None


async def download_feed(client: Client, url: str, folder: str) -> tuple[str, str | None]:
    """Save the feed at ``url`` (http or https) in ``folder`` under its own file name
    (``.xml`` added where it has neither ``.xml`` nor ``.rss``), fetched as a url source
    is: through the client's source policy, trust and proxy, with no token. The file's
    path and the address the feed came from (``SourcePolicy.origin`` for its items'
    urls; ``None``: not known); a refusal is a ``SourceError``."""
    check.http_url(url, "feed")
    name = os.path.basename(url_file_name(url)) or "feed.xml"
    if not name.lower().endswith((".xml", ".rss")):
        name += ".xml"
    path = os.path.join(folder, name)
    out: IO[bytes] = await asyncio.to_thread(open, path, "wb")
    try:
        async with internals(client).fetch(url) as body:
            async for chunk in body:
                await asyncio.to_thread(out.write, chunk)
    finally:
        await asyncio.to_thread(out.close)
    return path, body.address
