"""Feeds as batch jobs, read as a stream (one item in memory at a time, linear time).

RSS 2.0 (``<item>``, also RSS 1.0's) and Atom (``<entry>``, 1.0 and 0.3), with Media
RSS in either spelling of its namespace (``http://search.yahoo.com/mrss/``, and
without the trailing slash as Dailymotion writes it) and enclosures (RSS
``<enclosure>``, Atom ``<link rel="enclosure">``). Per item:

- its video: a ``media:content`` (item level or in a ``media:group``) or an enclosure
  with an http(s) url and a video type (``video/*``, ``medium="video"``, or, untyped, a
  video file name); among several, the ``isDefault`` one, else the largest (file size,
  then height; the first of equals). Players (``media:player``, ``text/html``,
  ``application/x-shockwave-flash``), images, audio and urls that are not http(s) are
  not videos: an item with no video is left out as ``skipped``, with its reason;
- its title: ``media:title``, else ``title`` (whitespace collapsed, at most 255
  characters); its description: ``media:description``, else ``description`` (Atom
  ``summary``, else ``content``) as plain text (markup removed, entities decoded, at
  most the platform's 3,000 characters, cut at a word); tags from ``media:keywords``
  (comma-separated; ``media:category`` never gives tags: it names the channel when it
  is one of the platform's categories, else ``channel`` is used); the largest
  ``media:thumbnail``; each ``media:subTitle`` (``href``, ``lang``) a subtitle;
- its key: ``guid`` (Atom ``id``), else ``link``, else none (the video url's own). A
  key a journal cannot hold as it is (longer than 200 characters, a control
  character) is replaced by ``feed-`` and a digest of it: stable, and valid whatever
  the feed's permalinks.

Elements a migration does not use, in any namespace, are ignored (named once, as an
``ignored`` ``LeftOut``). A value that cannot be used (a thumbnail that is not an
http(s) url, a language that is not one) fails its item only.

Bounds, each checked while the bytes stream: a feed of at most ``max_bytes``
(``MAX_FEED_BYTES``, 256 MiB, by default; ``--max-feed-size``); no single XML token (a
tag, a comment) over ``TOKEN_LIMIT`` (1 MiB), no attribute over 8 KiB; an item's text
elements at most ``TEXT_LIMIT`` (64 KiB) each as written; at most ``MAX_MEDIA`` (64)
media elements, ``MAX_THUMBNAILS`` (64) thumbnails and ``MAX_SUBTITLES`` (50) subtitles
per item (an item beyond them fails); elements nested at most ``MAX_DEPTH`` (64) deep;
at most ``MAX_NAMES`` (1,024) distinct element and attribute names, ``MAX_PREFIXES``
(64) namespace prefixes and names of ``MAX_NAME_LENGTH`` (1,024) characters (expat keeps
each name for the parser's life).
The XML is parsed by expat with no DTD: a ``<!DOCTYPE`` (where entity expansion and
external entities live) is refused; an encoding expat cannot read is named. Blank
lines or a byte order mark before ``<?xml`` are tolerated.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import os
import re
import unicodedata
from collections.abc import Callable, Collection, Iterator
from typing import IO, TYPE_CHECKING, Any, BinaryIO
from xml.parsers import expat

from .. import _validate as check
from .._errors import InvalidArgumentError
from .._internals import internals
from .._protocol import url_file_name
from .._resources.video_metadata import MAX_DESCRIPTION
from .._transfer.sources import UNKNOWN_ORIGIN
from ._jobs import MAX_JOB_TAGS, LeftOut, SubtitleSpec, UploadJob, once_each, only_jobs
from ._journal import check_key

if TYPE_CHECKING:
    from .._client import Client

__all__ = [
    "MAX_FEED_BYTES",
    "MAX_NAMES",
    "MAX_NAME_LENGTH",
    "MAX_PREFIXES",
    "MEDIA_RSS",
    "download_feed",
    "feed_entries",
    "jobs_from_feed",
    "jobs_from_feed_stream",
]

MEDIA_RSS = "http://search.yahoo.com/mrss/"
_MEDIA = frozenset({MEDIA_RSS, MEDIA_RSS.rstrip("/")})
_ATOM = frozenset({"http://www.w3.org/2005/Atom", "http://purl.org/atom/ns#"})
_RSS = frozenset({"", "http://purl.org/rss/1.0/"})
_PREFIXES = {
    "http://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
    "http://purl.org/dc/elements/1.1/": "dc",
    "http://purl.org/dc/terms/": "dcterms",
    "http://purl.org/rss/1.0/modules/content/": "content",
    "http://www.youtube.com/xml/schemas/2015": "yt",
    "http://blip.tv/dtd/blip/1.0": "blip",
    **{uri: "atom" for uri in _ATOM},
    **{uri: "media" for uri in _MEDIA},
}
"""Namespaces named by their usual prefix when their elements are listed as ignored."""
_SEP = "\x1f"
MAX_FEED_BYTES = 256 << 20
"""A feed's largest size by default, in bytes (``max_bytes=``, ``--max-feed-size``)."""
TOKEN_LIMIT = 1 << 20
"""Bytes the parser may take without a single event (one tag, comment or declaration):
expat reads a token again from its start for each chunk, so a token is bounded to
keep the work linear."""
_ATTRIBUTE_LIMIT = 8 << 10
"""The longest attribute (a url) a feed may hold, in characters."""
TEXT_LIMIT = 64 << 10
"""Characters an item's text element (a title, a description...) may hold as written
(markup included); an item beyond it fails."""
MAX_MEDIA = 64
"""Media elements (``media:content``, enclosures, players) an item may hold."""
MAX_THUMBNAILS = 64
"""``media:thumbnail`` elements an item may hold."""
MAX_SUBTITLES = 50
"""``media:subTitle`` elements an item may hold."""
MAX_DEPTH = 64
"""Elements open at once anywhere in a feed (the parser's memory grows with the depth);
a feed nested deeper is refused."""
MAX_TITLE = 255
"""The platform's longest title: a feed's longer title is cut."""
MAX_NAMES = 1024
"""Distinct element and attribute names (namespace included) a feed may use: expat
keeps each one for the parser's life (the published feeds use under 100)."""
MAX_PREFIXES = 64
"""Distinct namespace prefixes a feed may declare (expat keeps each one, and each
prefixed name, for the parser's life; the published feeds declare under 12)."""
MAX_NAME_LENGTH = 1024
"""The longest element or attribute name (its namespace included), in characters."""
_MAX_IGNORED = 40
"""Names of ignored elements kept for the note (the rest counted)."""
_CHUNK = 1 << 16
_VIDEO_SUFFIXES = (
    ".mp4", ".m4v", ".mov", ".webm", ".mkv", ".avi", ".flv", ".wmv", ".mpg", ".mpeg",
    ".ogv", ".3gp", ".ts", ".mts", ".m2ts",
)  # fmt: skip
_PLAYERS = ("text/html", "application/x-shockwave-flash")


class _Media:
    """A ``media:content``, enclosure or player of an item, as written."""

    __slots__ = ("default", "height", "kind", "medium", "size", "type", "url")

    def __init__(self, kind: str, attributes: dict[str, str], url: str | None) -> None:
        self.kind = kind  # content, enclosure, player
        self.url = url
        self.type = (attributes.get("type") or "").split(";")[0].strip().lower()
        self.medium = (attributes.get("medium") or "").strip().lower()
        self.default = (attributes.get("isDefault") or "").strip().lower() == "true"
        self.size = _number(attributes.get("fileSize") or attributes.get("length"))
        self.height = _number(attributes.get("height"))

    def what(self) -> str:
        """What it is: ``video``, ``player``, ``image``, ``audio``, ``not http(s)``..."""
        url = self.url or ""
        if self.kind == "player" or self.type in _PLAYERS:
            return "players"
        if not url:
            return "media elements without a url"
        if not url.lower().startswith(("http://", "https://")):
            return "urls that are not http(s)"
        if self.type.startswith("video/") or self.medium == "video":
            return "video"
        if self.type.startswith("image/") or self.medium == "image":
            return "images"
        if self.type.startswith("audio/") or self.medium == "audio":
            return "audio"
        if not self.type and not self.medium and _file_suffix(url).endswith(_VIDEO_SUFFIXES):
            return "video"
        return f"other files ({self.type or self.medium or 'untyped'})"


def _number(text: str | None) -> int:
    try:
        return int((text or "").strip())
    except ValueError:
        return -1


def _file_suffix(url: str) -> str:
    return os.path.basename(url.split("?", 1)[0].split("#", 1)[0]).lower()


class _Item:
    def __init__(self, line: int, kind: str) -> None:
        self.line = line
        self.kind = kind  # "rss" or "atom"
        self.text: dict[str, str] = {}
        self.html: set[str] = set()  # the text fields written as markup
        self.link: str | None = None
        self.media: list[_Media] = []
        self.thumbnails: list[tuple[str, int]] = []  # (url, pixels)
        self.subtitles: list[tuple[str, str]] = []
        self.problem: str | None = None  # a bound passed: the item fails

    def fail(self, why: str) -> None:
        self.problem = self.problem or why


class _Reader:
    """Expat's handlers, collecting each finished item."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.names: dict[str, str] = {}  # pyexpat's table of the names it has seen
        self.parser = expat.ParserCreate(namespace_separator=_SEP, intern=self.names)
        self.parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self.prefixes: set[str | None] = set()
        self.parser.StartNamespaceDeclHandler = self._prefix
        self.parser.StartDoctypeDeclHandler = self._doctype
        self.parser.EntityDeclHandler = self._entity
        self.parser.StartElementHandler = self._start
        self.parser.EndElementHandler = self._end
        self.parser.CharacterDataHandler = self._chars
        self.parser.CommentHandler = self._event
        self.parser.ProcessingInstructionHandler = self._event
        self.parser.XmlDeclHandler = self._event
        self.item: _Item | None = None
        self.depth = 0  # elements open inside the item
        self.groups = 0  # media:group open
        self.field: str | None = None  # the text field being read
        self.field_depth = 0  # elements open inside it (Atom xhtml content)
        self.buffer: list[str] = []
        self.size = 0
        self.done: list[_Item] = []
        self.items = 0
        self.ignored: dict[str, None] = {}
        self.more_ignored = 0
        self.lines_before = 0  # blank lines dropped before the declaration
        self.last_event = 0
        self.open = 0  # elements open, anywhere in the feed

    def line(self) -> int:
        return self.parser.CurrentLineNumber + self.lines_before

    def _at(self) -> str:
        return f"{self.where} line {self.line()}"

    def _event(self, *_: object) -> None:
        self.last_event = self.parser.CurrentByteIndex

    def _doctype(self, *_: object) -> None:
        raise InvalidArgumentError(
            "feed", f"{self._at()}: a DOCTYPE (a DTD, entities) is refused in a feed"
        )

    def _entity(self, *_: object) -> None:
        raise InvalidArgumentError("feed", f"{self._at()}: an entity declaration is refused")

    def _prefix(self, prefix: str | None, _uri: str | None) -> None:
        self.prefixes.add(prefix)
        if len(self.prefixes) > MAX_PREFIXES:
            raise InvalidArgumentError(
                "feed",
                f"{self._at()}: more than {MAX_PREFIXES} distinct namespace prefixes "
                "(MAX_PREFIXES)",
            )

    def _check_names(self, name: str, attributes: dict[str, str]) -> None:
        """The element's and its attributes' names within the bounds on names."""
        if len(self.names) > MAX_NAMES:
            raise InvalidArgumentError(
                "feed",
                f"{self._at()}: more than {MAX_NAMES} distinct element and attribute names "
                "(MAX_NAMES)",
            )
        for each in (name, *attributes):
            if len(each) > MAX_NAME_LENGTH:
                short = each.rpartition(_SEP)[2][:40]
                raise InvalidArgumentError(
                    "feed",
                    f"{self._at()}: the name {short}... is longer than {MAX_NAME_LENGTH} "
                    "characters (MAX_NAME_LENGTH)",
                )

    def _ignore(self, space: str, local: str) -> None:
        name = f"{_PREFIXES.get(space, '{' + space + '}')}:{local}" if space else local
        if name in self.ignored:
            return
        if len(self.ignored) < _MAX_IGNORED:
            self.ignored[name[:80]] = None
        else:
            self.more_ignored += 1

    def _start(self, name: str, attributes: dict[str, str]) -> None:
        self.last_event = self.parser.CurrentByteIndex
        self.open += 1
        if self.open > MAX_DEPTH:
            raise InvalidArgumentError(
                "feed", f"{self._at()}: elements nested deeper than {MAX_DEPTH} levels"
            )
        self._check_names(name, attributes)
        space, _, local = name.rpartition(_SEP)
        for attribute, value in attributes.items():
            if len(value) > _ATTRIBUTE_LIMIT:
                short = attribute.rpartition(_SEP)[2]
                raise InvalidArgumentError(
                    short,
                    f"{self._at()}: the attribute {short} of {local} is longer than "
                    f"{_ATTRIBUTE_LIMIT // 1024} KiB",
                )
        starts = (local == "item" and space in _RSS) or (local == "entry" and space in _ATOM)
        item = self.item
        if item is None:
            if starts:
                self.item = _Item(self.line(), "atom" if local == "entry" else "rss")
                self.items += 1
                self.depth = self.groups = 0
            return  # the channel's own elements
        if starts:
            raise InvalidArgumentError("feed", f"{self._at()}: an item inside an item")
        self.depth += 1
        if self.field is not None:  # markup inside a text (Atom xhtml content)
            self.field_depth += 1
            return
        if space in _MEDIA:
            self._media(item, local, attributes)
        elif item.kind == "rss" and space in _RSS:
            if local in ("title", "description", "guid", "link"):
                self._read(local, html=local == "description")
            elif local == "enclosure":
                self._add(item, _Media("enclosure", attributes, attributes.get("url")))
            else:
                self._ignore(space, local)
        elif item.kind == "atom" and space in _ATOM:
            kind = (attributes.get("type") or "text").lower()
            if local in ("title", "summary", "content", "id"):
                self._read(local, html=kind in ("html", "xhtml", "text/html"))
            elif local == "link":
                rel = attributes.get("rel", "alternate")
                if rel == "enclosure":
                    self._add(item, _Media("enclosure", attributes, attributes.get("href")))
                elif rel == "alternate" and item.link is None:
                    item.link = attributes.get("href")
            else:
                self._ignore(space, local)
        else:
            self._ignore(space, local)

    def _media(self, item: _Item, local: str, attributes: dict[str, str]) -> None:
        if local == "group":
            self.groups += 1
        elif local == "content":
            self._add(item, _Media("content", attributes, attributes.get("url")))
        elif local == "player":
            self._add(item, _Media("player", attributes, attributes.get("url")))
        elif local == "thumbnail" and "url" in attributes:
            if len(item.thumbnails) >= MAX_THUMBNAILS:
                item.fail(f"more than {MAX_THUMBNAILS} thumbnails (at most {MAX_THUMBNAILS})")
                return
            pixels = max(_number(attributes.get("width")), 0) * max(
                _number(attributes.get("height")), 0
            )
            item.thumbnails.append((attributes["url"], pixels))
        elif local == "subTitle":
            if len(item.subtitles) >= MAX_SUBTITLES:
                item.fail(f"subtitles: more than {MAX_SUBTITLES} (at most {MAX_SUBTITLES})")
                return
            lang, href = attributes.get("lang"), attributes.get("href")
            if not lang or not href:
                item.fail("media:subTitle needs href and lang")
                return
            item.subtitles.append((lang, href))
        elif local in ("title", "description", "keywords", "category"):
            kind = (attributes.get("type") or "plain").lower()
            self._read(f"media:{local}", html=kind == "html")
        else:
            self._ignore(MEDIA_RSS, local)

    def _add(self, item: _Item, media: _Media) -> None:
        if len(item.media) >= MAX_MEDIA:
            item.fail(f"more than {MAX_MEDIA} media elements (at most {MAX_MEDIA})")
        else:
            item.media.append(media)

    def _read(self, field: str, *, html: bool) -> None:
        self.field, self.field_depth, self.buffer, self.size = field, 0, [], 0
        if html:
            assert self.item is not None
            self.item.html.add(field)

    def _chars(self, data: str) -> None:
        self.last_event = self.parser.CurrentByteIndex
        if self.field is None or self.item is None:
            return
        self.size += len(data)
        if self.size > TEXT_LIMIT:
            name = self.field.replace("media:", "")
            self.item.fail(f"{name}: longer than {TEXT_LIMIT // 1024} KiB as written")
            self.buffer = []  # nothing more is kept of it
        else:
            self.buffer.append(data)

    def _end(self, name: str) -> None:
        self.last_event = self.parser.CurrentByteIndex
        self.open -= 1
        item = self.item
        if item is None:
            return
        if self.depth == 0:  # the item's own end
            self.done.append(item)
            self.item, self.field = None, None
            return
        self.depth -= 1
        if self.field is not None:
            if self.field_depth:
                self.field_depth -= 1
                return
            if self.size <= TEXT_LIMIT:
                item.text.setdefault(self.field, "".join(self.buffer))
            self.field, self.buffer = None, []
            return
        space, _, local = name.rpartition(_SEP)
        if local == "group" and space in _MEDIA:
            self.groups -= 1


def feed_entries(
    raw: BinaryIO,
    where: str,
    *,
    channel: str | None,
    categories: Collection[str] | None,
    max_bytes: int = MAX_FEED_BYTES,
) -> Iterator[tuple[int, UploadJob | LeftOut]]:
    """Each item of the feed read from ``raw`` as ``(line, job)``, or ``(line,
    LeftOut)`` for an item that gives none; at the end, the elements ignored (one
    ``LeftOut``). A feed that is not XML, holds no item, passes a bound of the whole
    feed (its size, a token) or has a DOCTYPE raises ``InvalidArgumentError`` naming
    the file and the line."""
    max_bytes = check.positive_int(max_bytes, "max_bytes")
    reader = _Reader(where)
    slugs = check.DOCUMENTED_CHANNELS if categories is None else categories
    read = parsed = 0  # bytes read, and given to the parser
    started = False
    while True:
        chunk = raw.read(_CHUNK)
        read += len(chunk)
        if read > max_bytes:
            raise InvalidArgumentError(
                "feed", f"{where}: larger than {_size(max_bytes)} (max_bytes=, --max-feed-size)"
            )
        if not started and chunk:
            # a byte order mark, then blank lines before the declaration: tolerated
            bom = read == len(chunk) and chunk.startswith(b"\xef\xbb\xbf")
            rest = chunk[3 if bom else 0 :].lstrip(b" \t\r\n")
            reader.lines_before += chunk[: len(chunk) - len(rest)].count(b"\n")
            chunk, started = rest, bool(rest)
            if not started:
                continue
        parsed += len(chunk)
        try:
            reader.parser.Parse(chunk, not chunk)
        except expat.ExpatError as exc:
            for item in reader.done:  # the items whole before the fault (a feed cut short)
                yield item.line, _entry(item, where, channel, slugs)
            raise InvalidArgumentError(
                "feed",
                f"{where} line {(exc.lineno or 0) + reader.lines_before}: not well-formed XML "
                f"({expat.ErrorString(exc.code)})",
            ) from None
        except ValueError as exc:
            if isinstance(exc, InvalidArgumentError):
                raise
            # expat takes no multi-byte encoding but UTF-8 and UTF-16 (Shift_JIS, GBK...)
            raise InvalidArgumentError(
                "feed",
                f"{where} line {reader.line()}: its encoding cannot be read ({exc}): "
                f"declared {_declared_encoding(chunk)!r} (give the feed in UTF-8, UTF-16 "
                "or a single-byte encoding)",
            ) from None
        if parsed - reader.last_event > TOKEN_LIMIT and chunk:
            raise InvalidArgumentError(
                "feed",
                f"{where} line {reader.line()}: a single XML token (a tag, a comment...) "
                f"longer than {_size(TOKEN_LIMIT)}",
            )
        for item in reader.done:
            yield item.line, _entry(item, where, channel, slugs)
        reader.done.clear()
        if not chunk:
            if not reader.items:
                raise InvalidArgumentError(
                    "feed",
                    f"{where}: no item in the feed (an RSS <item> or an Atom <entry>)",
                )
            if reader.ignored:
                names = ", ".join(reader.ignored)
                more = f" and {reader.more_ignored} more" if reader.more_ignored else ""
                yield reader.line(), LeftOut(where, "ignored", f"elements not used: {names}{more}")
            return


_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']{1,40})["']""")


def _declared_encoding(chunk: bytes) -> str:
    found = _ENCODING.search(chunk[:200])
    return found.group(1).decode("ascii", "replace") if found else "?"


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


def jobs_from_feed_stream(
    raw: BinaryIO,
    where: str,
    *,
    channel: str | None,
    categories: Collection[str] | None,
    max_bytes: int = MAX_FEED_BYTES,
    left_out: Callable[[LeftOut], object] | None = None,
) -> Iterator[UploadJob]:
    """The jobs of the feed read from ``raw`` (``where`` names it in messages); what
    gives no job handed to ``left_out`` (without it: a failed item raises, a skipped
    one is logged)."""
    entries = feed_entries(raw, where, channel=channel, categories=categories, max_bytes=max_bytes)
    return only_jobs(once_each(where, entries, twice_fails=True), left_out)


def jobs_from_feed(
    path: str | os.PathLike[str],
    *,
    channel: str | None = None,
    categories: Collection[str] | None = None,
    max_bytes: int = MAX_FEED_BYTES,
    left_out: Callable[[LeftOut], object] | None = None,
) -> Iterator[UploadJob]:
    """The jobs of a feed file (blocking reads; run it off the loop), one item at a
    time: see the module's rules. ``left_out(LeftOut)`` is given each item that gives
    no job and the elements ignored; without it a failed item raises
    ``InvalidArgumentError`` and a skipped one is logged."""
    return only_jobs(feed_file_entries(path, channel, categories, max_bytes), left_out)


def feed_file_entries(
    path: str | os.PathLike[str],
    channel: str | None,
    categories: Collection[str] | None,
    max_bytes: int = MAX_FEED_BYTES,
) -> Iterator[UploadJob | LeftOut]:
    """A feed file's jobs and what is left out, in order (blocking reads)."""
    path = os.fspath(path)
    check.positive_int(max_bytes, "max_bytes")

    def entries() -> Iterator[tuple[int, UploadJob | LeftOut]]:
        with open(path, "rb") as raw:
            yield from feed_entries(
                raw, path, channel=channel, categories=categories, max_bytes=max_bytes
            )

    return once_each(path, entries(), twice_fails=True)


_TAG = re.compile(r"<[^<>]*>")
_BREAK = re.compile(r"<\s*(?:br|/p|p|/div|/li|/h\d)\b[^<>]*>", re.IGNORECASE)
_BLANKS = re.compile(r"[^\S\n]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def plain_text(text: str, *, markup: bool) -> str:
    """A feed's text as plain text: markup removed (``markup``), entities decoded,
    control characters and runs of blanks as one space, at most two line breaks in a
    row."""
    if markup:
        text = _TAG.sub("", _BREAK.sub("\n", text))
        text = html.unescape(text)
    text = _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _BLANKS.sub(" ", text)
    text = re.sub(r" ?\n ?", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _cut(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters, cut at a word with an ellipsis."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "\u2026"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _exact_url(url: str, what: str) -> str:
    """An http(s) url as written: a blank or control character around it is refused
    (it would be read as a local path, or as another url)."""
    if url != url.strip() or _CONTROL.search(url):
        raise InvalidArgumentError(what, "has a blank or control character around its url")
    return check.http_url(url, what)


def _video(item: _Item) -> _Media | str:
    """The item's video, or why it has none."""
    videos = [m for m in item.media if m.what() == "video"]
    if not videos:
        kinds = sorted({m.what() for m in item.media})
        return "no video file: " + (" and ".join(kinds) + " only" if kinds else "no media")
    defaults = [m for m in videos if m.default]
    if defaults:
        return defaults[0]
    return max(videos, key=lambda m: (m.size, m.height))  # the first of equals


def _entry(
    item: _Item, where: str, channel: str | None, slugs: Collection[str]
) -> UploadJob | LeftOut:
    text = item.text
    guid = (text.get("guid") or text.get("id") or "").strip()
    title = text.get("media:title") or text.get("title") or ""
    title = _one_line(plain_text(title, markup="media:title" in item.html or "title" in item.html))
    named = guid or title
    at = f"{where} line {item.line}" + (f" ({named[:60]})" if named else "")
    key = _key(guid or (text.get("link") or item.link or "").strip())
    if item.problem is not None:
        return LeftOut(at, "failed", item.problem, key=key)
    video = _video(item)
    if isinstance(video, str):
        return LeftOut(at, "skipped", video, key=key)
    try:
        url = _exact_url(video.url or "", "url")
        optional: dict[str, Any] = {}
        for field in ("media:description", "description", "summary", "content"):
            if text.get(field, "").strip():
                description = plain_text(text[field], markup=field in item.html)
                if description:
                    optional["description"] = _cut(description, MAX_DESCRIPTION)
                break
        tags: list[str] = []
        for tag in text.get("media:keywords", "").split(","):
            tag = _one_line(tag)
            if tag and tag not in tags and len(tags) < MAX_JOB_TAGS:
                tags.append(tag)
        if tags:
            optional["tags"] = tags
        if item.thumbnails:
            best = max(item.thumbnails, key=lambda t: t[1])[0]  # the first of equals
            optional["thumbnail"] = _exact_url(best, "thumbnail")
        category = text.get("media:category", "").strip().lower()
        return UploadJob(
            url=url,
            key=key,
            title=_cut(title, MAX_TITLE) or _title_from(url),
            channel=category if category in slugs else (channel or ""),
            subtitles=[
                SubtitleSpec(lang.strip(), url=_exact_url(href, "subtitles"))
                for lang, href in item.subtitles
            ],
            **optional,
        )
    except InvalidArgumentError as exc:
        return LeftOut(at, "failed", f"{exc.argument}: {exc.message}", key=key)


def _title_from(url: str) -> str:
    name = os.path.splitext(_file_suffix(url))[0]
    return _one_line(name)[:MAX_TITLE] or "video"


def _key(identity: str) -> str | None:
    """The job key of an item's guid (or link): itself when a journal can hold it, else
    ``feed-`` and a digest of it (stable whatever its length)."""
    if not identity:
        return None
    try:
        return check_key(identity)
    except InvalidArgumentError:
        return "feed-" + hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _feed_file_name(url: str) -> str:
    """The file name a feed fetched from ``url`` is saved under (``.xml`` added where
    it has neither ``.xml`` nor ``.rss``); a name no file can have is refused."""
    name = url_file_name(url) or "feed.xml"
    if "\0" in name:
        raise InvalidArgumentError("feed", "its address's file name holds a NUL (%00)")
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in name):
        raise InvalidArgumentError(
            "feed",
            "its address's file name holds a control or format character (%1B, %07, %0A, "
            "U+202E...): no name shown or saved holds one",
        )
    if "/" in name or name in (".", ".."):
        raise InvalidArgumentError(
            "feed", "its address's file name holds a '/' (%2F) or is . or .."
        )
    if not name.lower().endswith((".xml", ".rss")):
        name += ".xml"
    if len(name.encode("utf-8", "surrogateescape")) > 255:
        raise InvalidArgumentError(
            "feed", "its address's file name is longer than 255 bytes, more than a file name holds"
        )
    return name


async def download_feed(
    client: Client, url: str, folder: str, *, max_bytes: int = MAX_FEED_BYTES
) -> tuple[str, str]:
    """Save the feed at ``url`` (http or https) in ``folder`` under its own file name
    (``.xml`` added where it has neither ``.xml`` nor ``.rss``), fetched as a url source
    is: through the client's source policy, trust and proxy, with no token; at most
    ``max_bytes`` (a larger feed is refused and its part removed). The file's path and
    the address the feed came from (``SourcePolicy.origin`` for its items' urls;
    ``"unknown"`` when it is not known here, a feed fetched through a proxy from a name,
    whatever it resolves to here: judged as a public address); a refusal is a ``SourceError``; a
    name no file can have (a NUL, over 255 bytes), an ``InvalidArgumentError``."""
    check.http_url(url, "feed")
    check.positive_int(max_bytes, "max_bytes")
    path = os.path.join(folder, _feed_file_name(url))
    out: IO[bytes] = await asyncio.to_thread(open, path, "wb")
    done = False
    try:
        got = 0
        async with internals(client).fetch(url) as body:
            async for chunk in body:
                got += len(chunk)
                if got > max_bytes:
                    raise InvalidArgumentError(
                        "feed",
                        f"{url_file_name(url) or url}: larger than {_size(max_bytes)} "
                        "(max_bytes=, --max-feed-size)",
                    )
                await asyncio.to_thread(out.write, chunk)
        done = True
    finally:
        await asyncio.to_thread(out.close)
        if not done:
            await asyncio.to_thread(os.unlink, path)
    return path, UNKNOWN_ORIGIN if body.address is None else body.address
