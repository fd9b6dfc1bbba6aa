"""Requests as data: what to send, to whom, with which form, and whether the token may
go with it. No I/O, no asyncio, no aiohttp."""

from __future__ import annotations

import functools
import html
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs

__all__ = [
    "SECRET_FORM_FIELDS",
    "Request",
    "api_path",
    "api_request",
    "form_bool",
    "form_fields",
    "form_value",
    "made_request",
    "origin",
    "plain_get",
    "query_text",
    "redact",
    "redact_data",
    "shown",
    "url_for_humans",
]

Form = tuple[tuple[str, str], ...]

SECRET_FORM_FIELDS = frozenset(
    {"password", "client_secret", "refresh_token", "code", "code_verifier"}
)
"""Form fields whose values never reach a message, even when a server echoes them."""


# Not slotted: one is made per call, and a frozen slotted class sets each of its 11
# fields through object.__setattr__, a frozen dict class writes its __dict__ (issue 43).
@attrs.frozen(slots=False)
class Request:
    """One HTTP request to the API, described as data."""

    method: str
    url: str
    form: Form | None = None
    """Form fields (sent as application/x-www-form-urlencoded), in order."""
    authenticated: bool = True
    """Whether the bearer token goes with it (only ever to the API's own origin)."""
    scope: str | None = None
    """The scope the operation needs, checked before sending when the token's are known."""
    idempotent: bool = True
    """Safe to send twice: reads, and writes that set a value to the same thing."""
    exact_url: bool = False
    """The url is a server's own (a progress address): sent byte for byte."""
    url_origin: tuple[str, str, int | None] | None = attrs.field(default=None, eq=False, repr=False)
    """``origin(url)`` when already known (``api_request``: the base url's), else
    ``None`` and ``headers`` works it out."""
    known_what: str | None = attrs.field(default=None, eq=False, repr=False)
    """``what`` when already known (``api_request``), else worked out from the url."""
    json_body: bytes | None = attrs.field(default=None, repr=False)
    """A JSON body, already encoded (API v2's writes; never with ``form``). Hidden from
    repr: it may hold a video password."""
    body_secrets: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)
    """Values in ``json_body`` that no message may show (a video password)."""

    @property
    def what(self) -> str:
        """``"POST /me/videos"``: how errors and logs name this request."""
        return self.known_what or f"{self.method} {urlsplit(self.url).path}"

    def encoded_form(self) -> bytes | None:
        """The form as ``urlencode`` writes it (``quote_plus``, nothing kept but the
        unreserved characters); plain names and values are not run through it."""
        if self.form is None:
            return None
        return "&".join([f"{_form_quote(k)}={_form_quote(v)}" for k, v in self.form]).encode(
            "ascii"
        )

    def payload(self) -> bytes | None:
        """The body to send: the encoded form, the JSON body, or ``None``."""
        return self.json_body if self.json_body is not None else self.encoded_form()

    def secret_values(self) -> tuple[str, ...]:
        """What an error's message masks besides the token: secret form fields' values
        and ``body_secrets``."""
        form = self.form or ()
        return (*(v for k, v in form if k in SECRET_FORM_FIELDS), *self.body_secrets)

    def headers(self, token: str | None, api_origin: tuple[str, str, int | None]) -> dict[str, str]:
        """The request's headers. The bearer token goes only to the API's own origin
        (scheme, host and port), and only when the request is ``authenticated``."""
        headers = {"Accept": "application/json"}
        if (
            token is not None
            and self.authenticated
            and (self.url_origin or origin(self.url)) == api_origin
        ):
            headers["Authorization"] = f"Bearer {token}"
        if self.form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif self.json_body is not None:
            headers["Content-Type"] = "application/json"
        return headers


def form_bool(value: bool) -> str:
    """The platform's form encoding of a boolean."""
    return "true" if value else "false"


def form_value(value: object, name: str = "value") -> str:
    """One value in the platform's form conventions (query and body alike): booleans
    ``true``/``false``, numbers as written, sequences comma-joined, ``None`` as the empty
    value that means NULL (a form has no NULL). Anything else is a ``TypeError`` naming
    ``name`` (the caller turns it into its own error)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return form_bool(value)
    if isinstance(value, str):
        return _sendable(value, name)
    if isinstance(value, float):
        return repr(float(value))  # a subclass (numpy's) as the number, not its repr
    if isinstance(value, int):
        try:
            return str(int(value))
        except ValueError:  # past sys.get_int_max_str_digits()
            raise TypeError(f"{name}: a number of more than 4300 digits cannot be sent") from None
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return ",".join(form_value(v, name) for v in items)
    raise TypeError(f"{name}: cannot send a {type(value).__name__} in a form")


def form_fields(values: Mapping[str, object] | None, argument: str) -> list[tuple[str, str]]:
    """``values`` as form pairs in order, each encoded by ``form_value``."""
    if values is None:
        return []
    if not isinstance(values, Mapping):
        raise TypeError(f"{argument}: expected a mapping of names to values")
    out = []
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"{argument}: names must be non-empty strings, got {key!r}")
        name = f"{argument}[{key!r}]"
        out.append((_sendable(key, name), form_value(value, name)))
    return out


def _sendable(text: str, name: str) -> str:
    """``text``, which a request can carry only if it encodes as UTF-8: a lone surrogate
    (what Python makes of bytes that are not UTF-8 on a command line) is a ``TypeError``
    naming ``name``, not a ``UnicodeEncodeError`` on the way out."""
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:
            raise TypeError(
                f"{name}: holds bytes that are not UTF-8 (or a lone surrogate), "
                "which a request cannot carry"
            ) from None
    return text


_PATH_TEXT = re.compile(r"(?:[A-Za-z0-9._~/-]|%[0-9A-Fa-f]{2})*")
"""A path as it goes out: unreserved characters, ``/`` and percent-escapes, nothing else
(one character or escape per repeat: a ``+`` inside the ``*`` backtracked exponentially
before a refused character)."""
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_LOOKALIKE_NAMES = ("SOLIDUS", "SLASH", "FULL STOP", "DOT LEADER")


def _lookalike(char: str) -> bool:
    """Whether a non-ASCII character stands for '.', '/' or a backslash (``．``, ``∕``):
    by its compatibility form, or by its name where it has none (``∕`` DIVISION SLASH)."""
    return not char.isascii() and (
        any(c in "./\\" for c in unicodedata.normalize("NFKC", char))
        or any(n in unicodedata.name(char, "") for n in _LOOKALIKE_NAMES)
    )


_DEFAULT_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
"""Unicode's default-ignorable code points: shown as nothing, so dropped or skipped by
whatever compares the text after."""
_SEGMENT_END = re.compile(r"[;?#]")
"""Where a decoded segment ends for a server: its parameters, the query, the fragment."""
_SPLIT_ANYWHERE = re.compile(r"[/\\]|[^\x00-\x7f]")
"""Where a server might split a decoded path: '/', a backslash, and any non-ASCII
character (``¥`` is a backslash on cp932, ``₩`` on cp949; other pages, other signs)."""


def _unprintable(text: str) -> str | None:
    """The first control, format, separator or unassigned character of ``text``."""
    return next((c for c in text if c.isspace() or not c.isprintable()), None)


def api_path(path: object) -> str:
    """A path on the API's base url, for the raw calls, checked as it will be sent so
    that it can only name a path there. It is plain printable ASCII: one leading ``/``,
    then letters, digits, ``-._~/`` and percent-escapes, nothing else (non-ASCII text
    percent-encoded from UTF-8; no scheme, host, query, fragment, backslash, ``;``,
    space or control character). Once its escapes are decoded (as UTF-8) it holds no
    control character, no look-alike of ``.``, ``/`` or a backslash, no invisible
    (default-ignorable) character, no ``.`` or ``..`` between a separator and a
    non-ASCII character or between two (``¥..¥``: a code page's backslash), no escape for a
    second decoding (``%252e``) and no ``.`` or ``..`` segment (nor ``..;``, ``..%3F``,
    ``..%23``), split on ``/`` and backslash as a server that decodes first splits it.
    Raises ``ValueError`` saying why; the path is returned as given."""
    if not isinstance(path, str):
        raise ValueError(f"expected a string, got {type(path).__name__}")
    if any("\ud800" <= c <= "\udfff" for c in path):
        # What yarl drops on the way out ("/.\ud800./" would go out as "/../").
        raise ValueError(
            "holds bytes that are not UTF-8 (or a lone surrogate): give the path as text, "
            "anything beyond ASCII percent-encoded from UTF-8"
        )
    if not path.startswith("/"):
        if ":" in path.split("/", 1)[0]:
            raise ValueError("must be a path such as /me/videos, not a url with a scheme")
        raise ValueError("must start with '/' (a path on the API's base url)")
    if path.startswith("//"):
        raise ValueError("must not start with '//' (that names another host)")
    for char, why in (("?", "a query: give params="), ("#", "a fragment"), ("\\", "a backslash")):
        if char in path:
            raise ValueError(f"must not hold {why}")
    if _unprintable(path) is not None or "\x7f" in path:
        raise ValueError("must not hold spaces or control characters")
    if lookalike := next(filter(_lookalike, path), None):
        raise ValueError(f"must not hold a look-alike of '.', '/' or '\\' (U+{ord(lookalike):04X})")
    if not path.isascii():
        raise ValueError(
            "must be ASCII: percent-encode anything else from UTF-8 "
            "(urllib.parse.quote('/café') gives '/caf%C3%A9')"
        )
    if not _PATH_TEXT.fullmatch(path):
        bad = next(c for c in _ESCAPE.sub("", path) if not re.fullmatch(r"[A-Za-z0-9._~/-]", c))
        if bad == "%":
            raise ValueError("'%' must start an escape such as %2F")
        raise ValueError(
            f"may hold only letters, digits, '-', '.', '_', '~', '/' and escapes: "
            f"percent-encode {bad!r}"
        )
    try:
        decoded = urllib.parse.unquote_to_bytes(path).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("its escapes must encode UTF-8 text (%FF does not)") from None
    if _unprintable(decoded) is not None or "\x7f" in decoded:
        raise ValueError("must not hold control characters, escaped or not (%00-%1F, %7F, %C2%85)")
    if lookalike := next(filter(_lookalike, decoded), None):
        raise ValueError(
            f"must not hold a look-alike of '.', '/' or '\\', escaped (U+{ord(lookalike):04X})"
        )
    if ignorable := _DEFAULT_IGNORABLE.search(decoded):
        raise ValueError(
            f"must not hold an invisible (default-ignorable) character, escaped or not "
            f"(U+{ord(ignorable[0]):04X})"
        )
    # Split as a server that decodes first would: on '/' and '\', escaped or not; what
    # follows ';' (Tomcat's "..;"), '?' or '#' in a segment cut off, as a server that
    # decodes before it splits off the query or fragment reads "/..%3Fx" as "/..?x".
    segments = decoded.replace("\\", "/").split("/")
    if {".", ".."} & {_SEGMENT_END.split(s, maxsplit=1)[0] for s in segments}:
        raise ValueError(
            "must not hold '.' or '..' segments (escaped, or with %2F, %5C, %3B, %3F or %23)"
        )
    if {".", ".."} & set(_SPLIT_ANYWHERE.split(decoded)):
        raise ValueError(
            "must not hold '.' or '..' next to a character beyond ASCII (a server's code "
            "page may read it as a separator: ¥ and ₩ are backslashes on some)"
        )
    if _ESCAPE.search(decoded):
        raise ValueError("must not hold an escaped escape (%25 then two hex digits: %252e)")
    return path


def api_request(
    base_url: str,
    method: str,
    path: str,
    *,
    query: Iterable[tuple[str, str]] = (),
    form: Iterable[tuple[str, str]] | None = None,
    scope: str | None = None,
    idempotent: bool = True,
) -> Request:
    """A request to ``base_url`` + ``path``; the base's own path (``/rest``) is kept."""
    q = query_text(query)
    base, base_origin, base_path = _base_parts(base_url)
    url_origin = what = None
    if _PLAIN_PATH.fullmatch(path):
        # A path that starts with "/" cannot move the url off the base's host, and one
        # without "?", "#" or what urlsplit drops is the url's path after the base's.
        url_origin, what = base_origin, f"{method} {base_path}{path}"
    return made_request(
        method,
        base + path + (f"?{q}" if q else ""),
        None if form is None else tuple(form),
        scope,
        idempotent,
        url_origin,
        what,
    )


def made_request(
    method: str,
    url: str,
    form: Form | None,
    scope: str | None,
    idempotent: bool,
    url_origin: tuple[str, str, int | None] | None,
    what: str | None,
) -> Request:
    """``Request(method, url, form=form, scope=scope, idempotent=idempotent,
    url_origin=url_origin, known_what=what)``, every other field its default: the same
    object, its ``__dict__`` made in one piece rather than by eleven stores through
    attrs' ``__init__`` (one is made per API call; ``test_sansio`` compares both)."""
    made = _new(Request)
    _set(
        made,
        "__dict__",
        {
            "method": method,
            "url": url,
            "form": form,
            "authenticated": True,
            "scope": scope,
            "idempotent": idempotent,
            "exact_url": False,
            "url_origin": url_origin,
            "known_what": what,
            "json_body": None,
            "body_secrets": (),
        },
    )
    return made


def plain_get(base_url: str, path: str, query: str, scope: str | None) -> Request:
    """``api_request(base_url, "GET", path, query=..., scope=scope)`` for a path known
    plain (``/video/<checked id>``) and a query already encoded (``fields=...``): the
    same request, without the checks and quoting ``api_request`` does per call."""
    base, what, template = _plain_get_parts(base_url, scope)
    made = _new(Request)
    # The fields every such read shares, copied from one made once (an update from a
    # dict, its hashes known, is half the cost of a dict written out per call), then
    # the two of this read's own.
    values = made.__dict__
    values.update(template)
    values["url"] = f"{base}{path}?{query}"
    values["known_what"] = what + path
    return made


@functools.lru_cache(maxsize=16)
def _plain_get_parts(base_url: str, scope: str | None) -> tuple[str, str, dict[str, object]]:
    """``plain_get``'s base, the start of its ``what``, and the fields of its request
    that do not depend on the path and query (``url`` and ``known_what`` filled per call)."""
    base, url_origin, base_path = _base_parts(base_url)
    template = made_request("GET", "", None, scope, True, url_origin, "")
    return base, f"GET {base_path}", dict(vars(template))


_new = object.__new__
_set = object.__setattr__


_QUERIES: dict[tuple[tuple[str, str], ...], str] = {}
"""``_query_text``'s answers for queries of plain strings (bounded)."""


def query_text(query: Iterable[tuple[str, str]]) -> str:
    """``query`` as ``urlencode(..., safe=",")`` writes it."""
    # A str subclass (an Enum member) is str() first, as urlencode does, and before the
    # cache: keyed by equality, it would hand it the text of another, equal value.
    return "&".join(
        [
            f"{_quote(k if type(k) is str else str(k))}={_quote(v if type(v) is str else str(v))}"
            for k, v in query
        ]
    )


_PLAIN_PATH = re.compile(r"/[^?#\t\r\n]*")
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~,-]*")
"""What ``quote_plus(..., safe=",")`` leaves as it is."""


_FORM_PLAIN = re.compile(r"[A-Za-z0-9_.~-]*")
"""What ``quote_plus(...)`` (``urlencode``'s default) leaves as it is."""


def _form_quote(text: str) -> str:
    """``text`` as ``urlencode`` writes a form's name or value (``str()`` of a str
    subclass, an Enum member, as it does)."""
    if type(text) is not str:
        text = str(text)
    return text if _FORM_PLAIN.fullmatch(text) else urllib.parse.quote_plus(text)


@functools.lru_cache(maxsize=1024)
def _quote(text: str) -> str:
    """``text`` (a plain str: the caller makes it one) as ``urlencode(..., safe=",")``
    writes it (a query's name or value)."""
    return text if _UNRESERVED.fullmatch(text) else urllib.parse.quote_plus(text, safe=",")


@functools.lru_cache(maxsize=16)
def _base_parts(base_url: str) -> tuple[str, tuple[str, str, int | None], str]:
    """The base url without its trailing ``/``, its origin and its path: worked out
    once per base."""
    base = base_url.rstrip("/")
    return base, origin(base), urlsplit(base).path


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` with default ports made explicit: the bearer token is
    sent only where this equals the API base URL's origin."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def url_for_humans(url: str) -> str:
    """The url without its query, fragment and ``user:password@``: an upload url's seal
    and a source's credentials stay out of messages."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}"


_SECRET_VALUE = re.compile(
    r"\b(" + "|".join(sorted(SECRET_FORM_FIELDS | {"seal"})) + r")=[^&\s\"',;<>]*", re.IGNORECASE
)
"""A secret form field's value as a form echoes it (``password=...``), and any upload
address's seal (``seal=...``), whichever address a server echoes."""
_SHORT_SECRET = 3
"""A secret shorter than this is masked as a word only (not inside other words)."""


def _any_escaping(char: str) -> str:
    """A pattern for ``char`` as it is, percent-encoded from UTF-8 in either case of hex
    (a host may escape any character, unreserved ones too), or ``+`` for a space."""
    escaped = "".join(
        "%" + "".join(f"[{h}{h.upper()}]" if h.isalpha() else h for h in f"{b:02x}")
        for b in char.encode("utf-8", "surrogatepass")
    )
    return f"(?:{re.escape(char)}|{escaped}{'|[+]' if char == ' ' else ''})"


@functools.lru_cache(maxsize=64)
def _secrets_pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for every secret, compared on the decoded form: each of its
    characters as it is or percent-encoded (either case), a space as ``+`` too, and a
    secret holding escapes as written and decoded (escaped once more: ``%252F``)."""
    texts = set(secrets) | {urllib.parse.unquote(s) for s in secrets}
    parts = []
    for secret in sorted(texts, key=len, reverse=True):
        either = "".join(_any_escaping(c) for c in secret)
        if len(secret) < _SHORT_SECRET:
            either = rf"(?<![\w%])(?:{either})(?!\w)"
        parts.append(f"(?:{either})")
    return re.compile("|".join(parts)) if parts else None


def query_values(url: str) -> tuple[str, ...]:
    """Every query value of ``url``, as written and decoded: an upload address's seal
    (and uuid), masked in whatever its host answers."""
    values: list[str] = []
    for part in url.partition("#")[0].partition("?")[2].split("&"):
        value = part.partition("=")[2]
        if value:
            values += [value, urllib.parse.unquote_plus(value)]
    return tuple(dict.fromkeys(values))


_JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_JSON_ESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _json_unescaped(text: str) -> str:
    """``text`` with JSON's backslash escapes read (``\\u0054`` is ``T``; a pair of
    surrogate escapes one character, a lone one U+FFFD)."""
    if "\\" not in text:
        return text
    text = _JSON_ESCAPE.sub(
        lambda m: chr(int(m[1], 16)) if m[1] else _JSON_ESCAPED.get(m[2], m[2]), text
    )
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _html_unescaped(text: str) -> str:
    return html.unescape(text) if "&" in text else text


_READINGS = (str, _json_unescaped, _html_unescaped)
"""Text as it is, and as JSON's and HTML's escapes read."""


def _masked(text: str, pattern: re.Pattern[str] | None) -> str:
    if pattern is not None:
        text = pattern.sub("***", text)
    return _SECRET_VALUE.sub(r"\1=***", text)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret replaced by ``***``, for anything a server echoes:
    in its raw, form-encoded and percent-encoded forms, anywhere; one of fewer than
    three characters where it stands as a word; a secret form field's value
    (``password=...``) and a seal (``seal=...``) whatever it is. The text is also read
    as JSON's and HTML's escapes would be (``\\u0054``, ``&#x2F;``): where that shows
    a secret, what is returned is that reading, masked."""
    given = tuple(s for s in secrets if s)
    pattern = _secrets_pattern(given)
    text = _masked(text, pattern)
    for read in _READINGS[1:]:
        seen = read(text)
        if seen != text and (masked := _masked(seen, pattern)) != seen:
            text = masked
    return _starts_masked(_BEARER.sub(r"\1***", text), given)


_BEARER = re.compile(r"\b(bearer\s+)[A-Za-z0-9._~+/%-]{8,}=*", re.IGNORECASE)
"""A bearer credential as a server echoes its request's header (cut short, maybe)."""
_START = 12
"""Characters of a secret's start that, echoed anywhere, are masked with what follows
of it (a server that cuts an echoed header short, mid-text)."""


def _starts_masked(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with each run that begins a secret (its first ``_START`` characters or
    more) masked: a long secret echoed cut short."""
    for secret in secrets:
        if len(secret) <= _START:
            continue
        start = secret[:_START]
        at = text.find(start)
        while at >= 0:
            end = at + _START
            while end < len(text) and end - at < len(secret) and text[end] == secret[end - at]:
                end += 1
            text = text[:at] + "***" + text[end:]
            at = text.find(start, at + 3)
    return text


def _strings(data: Any) -> Iterable[str]:
    """Every string in decoded JSON, keys too, in order."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, Mapping):
        for k, v in data.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from _strings(v)


def redact_data(data: Any, secrets: Sequence[str | None]) -> Any:
    """Decoded JSON (or headers) with every secret masked in every string, keys too;
    a list or object of scalars inside it whose strings only spell a secret together
    (``list(token)``) becomes ``"***"`` whole."""
    return _redact_data(data, tuple(secrets), top=True)


def _redact_data(data: Any, secrets: tuple[str | None, ...], *, top: bool = False) -> Any:
    if isinstance(data, str):
        return redact(data, secrets)
    if isinstance(data, Mapping):
        data = {_redact_data(k, secrets): _redact_data(v, secrets) for k, v in data.items()}
    elif isinstance(data, list):
        data = [_redact_data(v, secrets) for v in data]
    else:
        return data
    values = data.values() if isinstance(data, Mapping) else data
    if not top and not any(isinstance(v, Mapping | list) for v in values):
        # a container of scalars (each checked once: the cost stays linear)
        strings = list(_strings(data))
        pattern = _secrets_pattern(tuple(s for s in secrets if s))
        if len(strings) > 1 and pattern is not None:
            joined = "".join(strings)
            if any(pattern.search(read(joined)) for read in _READINGS):
                return "***"
    return data


SHOWN_CHARS = 200
"""How much of an answer's text an error message shows."""
MASKED_CHARS = 65536
"""How much of an answer's text is masked to make that (a cut secret's remnant at its
end is masked too)."""


def shown(text: str, secrets: Iterable[str | None], limit: int = SHOWN_CHARS) -> str:
    """``text`` as an error message may show it: masked whole (``redact``), then cut to
    ``limit`` characters, then any start of a secret (four characters or more, escaped
    or not) left at the cut edge masked too."""
    given = tuple(s for s in secrets if s)
    text = redact(text[:MASKED_CHARS], given)[:limit]
    return _escaped(_cut_secret_masked(text, given).strip())


def _escaped(text: str) -> str:
    """``text`` with its control and format characters (an escape sequence, a line
    break that would fake a log line) written as ``\\x1b``-style escapes."""
    return "".join(
        c.encode("unicode_escape").decode("ascii")
        if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")
        else c
        for c in text
    )


def _cut_secret_masked(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with a tail that begins a secret (as written or %-decoded, a dangling
    ``%`` or ``%X`` dropped) replaced by ``***``."""
    starts = {v for s in secrets for v in (s, urllib.parse.unquote(s)) if len(v) > 4}
    if not starts:
        return text
    window = max(map(len, starts)) * 3 + 2
    for cut in range(max(0, len(text) - window), len(text) - 3):
        tail = re.sub(r"%[0-9A-Fa-f]?\Z", "", text[cut:])
        for piece in {tail, urllib.parse.unquote(tail), urllib.parse.unquote_plus(tail)}:
            if len(piece) >= 4 and any(s.startswith(piece) for s in starts):
                return text[:cut] + "***"
    return text


def url_file_name(url: str) -> str:
    """The last segment of a url's path, unescaped and stripped ("" when none)."""
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1]).strip()
