"""What users write about a video, checked once into one typed value.

``VideoMetadata.checked`` (pure: no I/O, no client) is used by ``upload_video``,
``create_video``, ``update_video`` and ``create_live_stream``: each typed argument is
checked before anything is sent (a typed ``InvalidArgumentError`` naming it) and kept
normalised (a language lowered, tags stripped, dates as UNIX seconds). Each dialect
encodes the value its own way: the legacy API as form text
(``_protocol._legacy.metadata_form``), API v2 as JSON (``_protocol._v2``). An argument
left ``NOT_GIVEN`` is not sent at all (an update changes only what it names).
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import attrs

from .. import _validate as check
from .._errors import InvalidArgumentError
from .._protocol._legacy import metadata_form
from .._sentinel import NotGiven

__all__ = [
    "DATE_RANGE",
    "MAX_DESCRIPTION",
    "MAX_TAGS",
    "MAX_TAG_LENGTH",
    "METADATA_NAMES",
    "RESERVED_TAG_PREFIXES",
    "VideoMetadata",
    "check_tag_room",
    "extra_form",
    "own_tag",
    "video_form",
]

MAX_DESCRIPTION: Final = 3000
"""The platform's limit on a description, in characters."""
MAX_TAGS: Final = 150
"""The most tags one video takes here (the platform's own limit is unpublished: a
choice, docs/guides/decisions.md)."""
MAX_TAG_LENGTH: Final = 100
"""The longest tag, in characters (a choice, as ``MAX_TAGS``)."""
RESERVED_TAG_PREFIXES: Final = ("vidapi-", "vidapih-")
"""The prefixes of the tags a batch marks its videos with (which job made which
video): a tag of the user's may not start with one, in any case."""
DATE_RANGE: Final = (
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
)
"""The dates sent (``publish_date``, ``expiry_date``): UNIX seconds from 0, and a
four-digit year in API v2's ISO 8601 (a choice, docs/guides/decisions.md)."""
_SECOND: Final = timedelta(seconds=1)
_TAG_REFUSED: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""In a tag: control, format (zero-width), line and paragraph separator characters,
and lone surrogates."""

METADATA_NAMES: Final = (
    "title",
    "channel",
    "description",
    "tags",
    "language",
    "published",
    "private",
    "is_created_for_kids",
    "explicit",
    "publish_date",
    "expiry_date",
    "geoblocking",
    "thumbnail_url",
)
"""The typed metadata, in the order it is sent."""

_COUNTRY = re.compile(r"[A-Za-z]{2}")
_GEO_KEYWORDS = ("allow", "deny")


@attrs.frozen
class VideoMetadata:
    """A video's metadata, checked: ``values`` holds each argument given, in
    ``METADATA_NAMES`` order, normalised (text as sent, tags and geoblocking as tuples
    of strings, dates as UNIX seconds, flags as ``bool``; ``None`` clears a date or
    geoblocking). Built once per operation; each dialect encodes it."""

    values: Mapping[str, object]

    @classmethod
    def checked(cls, **given: object) -> VideoMetadata:
        """The metadata among ``given`` (names of ``METADATA_NAMES``), or
        ``InvalidArgumentError`` for the first bad one. Each operation lists the
        metadata in its own signature, for type checkers and editors; every value is
        checked here again at run time. A name absent or ``NOT_GIVEN`` is not sent."""
        return cls(
            {
                name: _CHECKS[name](given[name], name)
                for name in METADATA_NAMES
                if name in given and not isinstance(given[name], NotGiven)
            }
        )

    @property
    def tags(self) -> tuple[str, ...]:
        """The tags given (none: empty)."""
        tags = self.values.get("tags", ())
        return tags if isinstance(tags, tuple) else ()

    def __bool__(self) -> bool:
        return bool(self.values)


def video_form(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The metadata among ``arguments`` (names of ``METADATA_NAMES``) checked, as the
    legacy API's form pairs, or ``InvalidArgumentError`` for the first bad one."""
    given = {name: arguments[name] for name in METADATA_NAMES if name in arguments}
    return metadata_form(VideoMetadata.checked(**given).values)


def check_tag_room(metadata: VideoMetadata, dedupe_tag: str | None) -> None:
    """The ``MAX_TAGS`` limit with ``dedupe_tag`` counted (it is sent as one more tag
    unless it is among the tags already): ``InvalidArgumentError`` naming both,
    before anything is sent."""
    if dedupe_tag is None:
        return
    tags = [t for t in metadata.tags if t]
    if dedupe_tag not in tags and len(tags) + 1 > MAX_TAGS:
        raise InvalidArgumentError(
            "tags",
            f"{len(tags)} tags and the dedupe_tag make {len(tags) + 1}; at most {MAX_TAGS} "
            f"are sent (give at most {MAX_TAGS - 1} with a dedupe_tag)",
        )


def extra_form(
    extra: Mapping[str, str] | None, given: Iterable[tuple[str, str]], argument: str = "extra"
) -> list[tuple[str, str]]:
    """Raw form text (``extra=``) as pairs: strings only, no name the call sets itself
    (in ``given``: a typed argument, or a field of the call's own such as ``url`` and
    ``password``), and no typed field's name at all (``METADATA_NAMES``: each is given
    as its argument and checked, never as unchecked text), in any case or spacing."""
    if extra is None:
        return []
    if not isinstance(extra, Mapping):
        raise InvalidArgumentError(argument, "expected a mapping of field names to form text")
    named = {name for name, _ in given}
    out = []
    for key, value in extra.items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise InvalidArgumentError(argument, "keys and values must be strings")
        name = key.strip().casefold()
        if name in named:
            raise InvalidArgumentError(
                argument,
                f"{key!r} is given twice: the call sets it itself (give it as its "
                f"argument), not in {argument}",
            )
        if name in METADATA_NAMES:
            raise InvalidArgumentError(
                argument,
                f"{key!r} names the typed field {name!r}: give it as its argument "
                f"({name}=, checked), not as form text in {argument}",
            )
        out.append((key, value))
    return out


def _description(value: object, _: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError("description", f"expected a string, got {type(value).__name__}")
    if len(value) > MAX_DESCRIPTION:
        raise InvalidArgumentError(
            "description", f"{len(value)} characters; the platform takes at most {MAX_DESCRIPTION}"
        )
    # line breaks and tabs are text in a description; any other control character is not
    check.plain_text(value.translate(_LINE_BREAKS), "description")
    return value


_LINE_BREAKS: Final = str.maketrans("\n\r\t", "   ")


_OWN_TAGS: ContextVar[frozenset[str]] = ContextVar("vidapi_own_tags", default=frozenset())
"""The bookkeeping tags the batch itself is sending in this task (``own_tag``)."""


@contextlib.contextmanager
def own_tag(*tags: str | None) -> Iterator[None]:
    """While the block runs, ``tags`` (the job's own bookkeeping tags, its key's and
    its origin's, sent with its create or kept in the tags of an update the batch
    sends; ``None`` is none) pass the reserved-prefix check: the batch sends them, not
    a user's metadata; any other tag in the prefixes is still refused."""
    token = _OWN_TAGS.set(frozenset(t for t in tags if t is not None))
    try:
        yield
    finally:
        _OWN_TAGS.reset(token)


def _not_reserved(tag: str) -> None:
    if tag in _OWN_TAGS.get():
        return
    folded = _folded(tag)
    for prefix in RESERVED_TAG_PREFIXES:
        if folded.startswith(prefix):
            raise InvalidArgumentError(
                "tags",
                f"the tag {tag!r:.60} starts with {prefix!r} (in any case, script or "
                "hyphen), which the batch keeps for the tags that mark the video a job "
                "made: choose another tag",
            )


def _folded(text: str) -> str:
    """``text`` as the reserved prefixes are compared with it: compatibility forms
    folded (fullwidth letters, roman numerals), case folded (``İ``, ``ı`` as ``i``),
    accents dropped, and every dash (``‐``, ``‑``, ``−``, ``－``...) a ``-``."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(
        "-" if c in _MORE_DASHES or unicodedata.category(c) == "Pd" else c
        for c in text.replace("\u0131", "i")
        if unicodedata.category(c) != "Mn"
    )


_MORE_DASHES: Final = frozenset("\u2212\u2043\ufe63\uff0d")
"""Dashes outside the Unicode dash punctuation class (minus signs, a hyphen bullet)."""


def _tags(value: object, _: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidArgumentError(
            "tags", f"expected a sequence of strings such as ['cats', 'funny'], got {value!r:.60}"
        )
    if len(value) > MAX_TAGS:
        raise InvalidArgumentError("tags", f"{len(value)} tags; at most {MAX_TAGS} are sent")
    out = []
    for tag in value:
        if not isinstance(tag, str) or not tag.strip():
            raise InvalidArgumentError("tags", f"each tag is a non-empty string, got {tag!r:.60}")
        if "," in tag:
            raise InvalidArgumentError("tags", f"a tag cannot hold a comma: {tag!r:.60}")
        check.plain_text(tag, "tags", _TAG_REFUSED)
        _not_reserved(tag.strip())
        if len(tag.strip()) > MAX_TAG_LENGTH:
            raise InvalidArgumentError(
                "tags", f"a tag of {len(tag.strip())} characters; at most {MAX_TAG_LENGTH}"
            )
        out.append(tag.strip())
    return tuple(out)


def _language(value: object, _: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError("language", f"expected a string, got {type(value).__name__}")
    if not (value.isascii() and value.isalpha()) or value.lower() not in check.ISO_639_1:
        raise InvalidArgumentError(
            "language", f"{value!r:.20} is not an ISO 639-1 code (two letters, e.g. 'en', 'fr')"
        )
    return value.lower()


def _unix_seconds(value: object, name: str) -> int:
    if not isinstance(value, datetime):
        raise InvalidArgumentError(name, f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgumentError(
            name, "a naive datetime is ambiguous: give its time zone (tzinfo=timezone.utc)"
        )
    low, high = DATE_RANGE
    try:
        inside = low <= value <= high
    except OverflowError:  # the offset takes it past year 9999 (or before year 1)
        inside = False
    if not inside:
        raise InvalidArgumentError(
            name, f"{value.isoformat()} is outside {low:%Y-%m-%d} to {high:%Y-%m-%d} (UTC)"
        )
    return (value - low) // _SECOND  # whole seconds, floored (exact, no float)


def _geo(value: object, _: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidArgumentError(
            "geoblocking", f"expected a sequence such as ('deny', 'fr', 'de'), got {value!r:.60}"
        )
    items = list(value)
    if items and isinstance(items[0], str) and items[0].lower() in _GEO_KEYWORDS:
        head, countries = [items[0].lower()], items[1:]
    else:
        head, countries = [], items
    if not countries:
        raise InvalidArgumentError("geoblocking", "name at least one country (ISO 3166-1 alpha-2)")
    for code in countries:
        if not isinstance(code, str) or not _COUNTRY.fullmatch(code):
            raise InvalidArgumentError(
                "geoblocking",
                f"{code!r:.20} is not an ISO 3166-1 alpha-2 country code (e.g. 'fr');"
                " only the first item may be 'allow' or 'deny'",
            )
    return (*head, *(c.lower() for c in countries))


def _flag(value: object, name: str) -> bool:
    return check.boolean(value, name)


def _or_clear(read: Callable[[object, str], object]) -> Callable[[object, str], object]:
    """``read``, with ``None`` kept: the value that clears the field."""
    return lambda value, name: None if value is None else read(value, name)


_CHECKS: Final[dict[str, Callable[[object, str], object]]] = {
    "title": lambda value, _: check.title(value),
    "channel": lambda value, _: check.channel(value),
    "description": _description,
    "tags": _tags,
    "language": _language,
    "published": _flag,
    "private": _flag,
    "is_created_for_kids": _flag,
    "explicit": _flag,
    "publish_date": _or_clear(_unix_seconds),
    "expiry_date": _or_clear(_unix_seconds),
    "geoblocking": _or_clear(_geo),
    "thumbnail_url": check.http_url,
}
"""How each metadata value is checked and normalised (``METADATA_NAMES``' order is the
order sent)."""
