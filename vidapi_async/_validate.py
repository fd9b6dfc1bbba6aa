"""Checks on the caller's arguments, done before anything is sent. Pure functions.

Each returns the value to send (normalised where the platform is case-insensitive) or
raises ``InvalidArgumentError`` naming the argument. Messages never echo a password.
"""

from __future__ import annotations

import difflib
import inspect
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Final, TypeVar
from urllib.parse import urlsplit

from ._errors import InsecureURLError, InvalidArgumentError, UnexpectedResponseError

T = TypeVar("T")

_VIDEO_ID = re.compile(r"[A-Za-z0-9]{1,64}")
_CHANNEL = re.compile(r"[a-z][a-z0-9_-]{0,63}")
_FIELD = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*")

# ISO 639-1: every two-letter code. Three-letter codes (ISO 639-2/3, some 7,900 of them)
# are checked by shape only: shipping that table is not worth what it would catch.
ISO_639_1 = frozenset(
    """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu
    cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi
    ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks
    ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl
    nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl
    sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve
    vi vo wa wo xh yi yo za zh zu
    """.split()
)

SUBTITLE_FORMATS = frozenset({"SRT"})


def video_id(value: object, argument: str = "video_id") -> str:
    """A video id: letters and digits only, so it can never change the request path.
    A ``Video`` (any object with a string ``id``) stands for its id: every call that
    takes a video id takes the video too."""
    if type(value) is str and len(value) <= 64 and value.isascii() and value.isalnum():
        # The usual argument (no look for an ``id``: a str has none), checked as
        # _VIDEO_ID would be, without the regex: ASCII letters and digits are exactly
        # the ASCII characters isalnum() accepts, and an empty string is not one.
        return value
    ident = getattr(value, "id", None)
    if not isinstance(value, str) and isinstance(ident, str):
        value = ident
    if not isinstance(value, str):
        raise InvalidArgumentError(argument, f"expected a string, got {type(value).__name__}")
    if not _VIDEO_ID.fullmatch(value):
        raise InvalidArgumentError(
            argument, f"{value!r} is not a video id (letters and digits only, e.g. 'x84sh87')"
        )
    return value


def plain_text(value: str, argument: str, refused: frozenset[str] = frozenset({"Cc", "Cs"})) -> str:
    """``value`` unless it holds a character of a Unicode category in ``refused``:
    by default a control character (a NUL, a newline, an escape) or a lone surrogate
    (from bytes that were not UTF-8), which no form, database or log line carries
    faithfully. The message names the character, never the value (a password)."""
    bad = next((c for c in value if unicodedata.category(c) in refused), None)
    if bad is not None:
        what = "a lone surrogate" if unicodedata.category(bad) == "Cs" else "the character"
        raise InvalidArgumentError(argument, f"has {what} {bad!r}: not allowed")
    return value


MAX_TITLE: Final = 255
"""The platform's limit on a video's title, in characters."""


def title(value: object) -> str:
    """A non-blank title of at most ``MAX_TITLE`` characters, without control
    characters or lone surrogates."""
    if not isinstance(value, str):
        raise InvalidArgumentError("title", f"expected a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidArgumentError("title", "must not be empty")
    if len(value) > MAX_TITLE:
        raise InvalidArgumentError(
            "title", f"{len(value)} characters; the platform takes at most {MAX_TITLE}"
        )
    return plain_text(value, "title")


DOCUMENTED_CHANNELS: Final = (
    "animals", "auto", "creation", "fun", "kids", "lifestyle", "music", "news", "people",
    "school", "shortfilms", "sport", "tech", "travel", "tv", "videogames", "webcam",
)  # fmt: skip
"""The category slugs the platform documents (``GET /channels`` has the live list): a
malformed channel's suggestion is one of these, or none."""


def channel(value: object) -> str:
    """A category slug: lowercase letters, digits, '-' or '_', starting with a letter."""
    if not isinstance(value, str):
        raise InvalidArgumentError("channel", f"expected a string, got {type(value).__name__}")
    if not value:
        raise InvalidArgumentError("channel", "must not be empty (a category slug such as 'news')")
    if not _CHANNEL.fullmatch(value):
        near = difflib.get_close_matches(value.strip().lower(), DOCUMENTED_CHANNELS, 1, 0.75)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise InvalidArgumentError(
            "channel",
            f"{value!r} is not a category slug: lowercase letters, digits, '-' or '_'{hint}",
        )
    return value


def language(value: object) -> str:
    """An ISO 639 language code, two or three letters; returned in lowercase."""
    if not isinstance(value, str):
        raise InvalidArgumentError("language", f"expected a string, got {type(value).__name__}")
    code = value.lower()
    if (len(code) == 2 and code in ISO_639_1) or re.fullmatch(r"[a-z]{3}", code):
        return code
    raise InvalidArgumentError(
        "language", f"{value!r} is not an ISO 639 language code (e.g. 'en', 'fr', 'deu')"
    )


def subtitle_format(value: object) -> str:
    """The subtitle format; ``SRT`` is the only one the platform supports."""
    if not isinstance(value, str) or value.upper() not in SUBTITLE_FORMATS:
        raise InvalidArgumentError(
            "format", f"{value!r} is not supported; the platform accepts only 'SRT'"
        )
    return value.upper()


def password(value: object) -> str | None:
    """A password to set (a non-empty string) or ``None`` to remove it. Never echoed."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(
            "password", f"expected a string or None, got {type(value).__name__}"
        )
    if not value:
        raise InvalidArgumentError(
            "password", "must not be empty; pass None to remove the password"
        )
    return plain_text(value, "password")


def http_url(value: object, argument: str) -> str:
    """An absolute http(s) URL. The message never echoes the value: a url may carry a
    seal, a key or a password."""
    if not isinstance(value, str):
        raise InvalidArgumentError(argument, f"expected a string, got {type(value).__name__}")
    try:
        value.encode()  # a lone surrogate (from bytes that were not UTF-8) cannot be sent
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:  # UnicodeEncodeError too
        raise InvalidArgumentError(argument, "is not a well-formed URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgumentError(argument, "is not an absolute http(s) URL")
    return value


def base_url(value: object) -> str:
    """The API's base URL: an absolute http(s) URL without credentials in it."""
    url = http_url(value, "base_url")
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise InvalidArgumentError(
            "base_url",
            "must not hold a user name or password (user:pw@host): "
            "give credentials with access_token= or auth=",
        )
    if parts.query or parts.fragment:
        raise InvalidArgumentError("base_url", "must not have a query or fragment")
    return url.rstrip("/")


def server_url(value: object, argument: str, *, https_only: bool) -> str:
    """An address the server handed out (an upload or progress url), to be used byte for
    byte: printable ASCII, no spaces; ``https`` when the API itself is reached over it."""
    if not isinstance(value, str) or not value.isascii() or not value.isprintable():
        raise UnexpectedResponseError(f"the server's {argument} is not a usable URL", status=None)
    if " " in value:
        raise UnexpectedResponseError(f"the server's {argument} holds a space", status=None)
    try:
        url = http_url(value, argument)
    except InvalidArgumentError as exc:
        raise UnexpectedResponseError(
            f"the server's {argument} {exc.message}", status=None
        ) from None
    if https_only and urlsplit(url).scheme != "https":
        raise InsecureURLError(
            f"the server's {argument} is http:// while the API is https://: refused, so that "
            "nothing travels in clear (use an http base_url only for a local emulator)",
            status=None,
        )
    return url


def field_names(values: Iterable[str] | str) -> list[str]:
    """Field names for the ``fields`` parameter (dot notation for sub-objects)."""
    return _names([values] if isinstance(values, str) else values, "fields", _FIELD, "field")


_JOINED_FIELDS: dict[tuple[object, ...], str] = {}
"""``fields_value``'s answers so far: a program asks for a few lists of fields, often."""


def fields_value(values: Iterable[str] | str) -> str:
    """The ``fields`` parameter's value: ``field_names`` comma-joined. A list already
    checked is not checked again (a bounded cache keyed by the names)."""
    key = (values,) if isinstance(values, str) else tuple(values)
    try:
        joined = _JOINED_FIELDS.get(key)
    except TypeError:  # an unhashable name: refused just below
        joined = None
    if joined is None:
        joined = ",".join(field_names(key))
        if len(_JOINED_FIELDS) < 256:
            _JOINED_FIELDS[key] = joined
    return joined


def event_names(values: Iterable[str]) -> list[str]:
    """Webhook event names (``video.format.ready``): a list, never one string."""
    if isinstance(values, str):
        raise InvalidArgumentError("events", "expected a list of event names")
    return _names(values, "events", _EVENT, "event")


_EVENT = re.compile(r"[a-z]+(?:\.[a-z_]+)+")


def _names(values: Iterable[str], argument: str, shape: re.Pattern[str], what: str) -> list[str]:
    names = list(values)
    if not names:
        raise InvalidArgumentError(argument, f"name at least one {what}")
    for name in names:
        if not isinstance(name, str) or not shape.fullmatch(name):
            raise InvalidArgumentError(argument, f"{name!r} is not a {what} name")
    return names


def callback(value: T, argument: str) -> T:
    """A plain function (or ``None``), called on the loop and not awaited: an
    ``async def`` one would never run."""
    if value is None:
        return value
    if not callable(value):
        raise InvalidArgumentError(argument, f"expected a function, got {type(value).__name__}")
    if inspect.iscoroutinefunction(value) or inspect.iscoroutinefunction(
        getattr(value, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    ):
        raise InvalidArgumentError(
            argument,
            "must be a plain function: it is called, not awaited, so an async def "
            "callback would never run",
        )
    return value


def positive_int(value: object, argument: str) -> int:
    """A whole number above zero."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidArgumentError(argument, f"expected a whole number above 0, got {value!r}")
    return value


def positive_number(value: object, argument: str) -> float:
    """A finite number of seconds above zero."""
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InvalidArgumentError(argument, f"expected a number above 0, got {value!r}")
    return float(value)


def boolean(value: object, argument: str) -> bool:
    """``True`` or ``False``, and nothing else (no truthy strings or numbers)."""
    if not isinstance(value, bool):
        raise InvalidArgumentError(argument, f"expected True or False, got {value!r}")
    return value


def text(value: object, argument: str, *, blank: bool = True) -> str:
    """A string (a non-blank one unless ``blank``)."""
    if not isinstance(value, str) or (not blank and not value.strip()):
        what = "a string" if blank else "a non-empty string"
        raise InvalidArgumentError(argument, f"expected {what}")
    return value


def is_field_name(value: object) -> bool:
    """Whether ``value`` has the shape of a field name (``a_b`` or ``a.b``)."""
    return isinstance(value, str) and _FIELD.fullmatch(value) is not None
