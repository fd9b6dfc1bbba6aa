"""The upload server's own parsing of what clients send, written from the RFCs and
sharing nothing with the client: ``multipart/form-data`` bodies read as a stream
(RFC 7578 / RFC 2046), ``Content-Disposition`` values (RFC 6266 grammar, ``filename*``
from RFC 8187), ``Content-Range`` and the ``Range`` lists of the chunked protocol.

Every malformed input raises ``Malformed`` (a 400 for the handler), never anything else.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from urllib.parse import unquote_to_bytes

__all__ = [
    "MAX_FILE_SIZE",
    "Disposition",
    "FormDataReader",
    "Malformed",
    "format_ranges",
    "merge_ranges",
    "parse_content_range",
    "parse_disposition",
]

MAX_FILE_SIZE = 64 * 1024**3
"""The largest file the platform takes (premium accounts: 64 GB)."""

MAX_HEADER_BYTES = 16 * 1024
"""A part's headers; more is refused rather than buffered."""


class Malformed(Exception):
    """The client sent something that does not parse; the message says what."""


# --- Content-Disposition -------------------------------------------------------------------

_TCHARS = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = r'"(?:[^"\\\x00-\x08\x0a-\x1f\x7f]|\\[\x09\x20-\x7e\x80-\xff])*"'
_PARAM = re.compile(rf"\s*;\s*({_TCHARS})\s*=\s*({_TCHARS}|{_QUOTED})", re.S)
_TYPE = re.compile(rf"\s*({_TCHARS})")
_EXT_VALUE = re.compile(
    r"(UTF-8|ISO-8859-1)'[A-Za-z0-9-]*'((?:%[0-9A-Fa-f]{2}|[!#$&+.^_`|~0-9A-Za-z-])*)", re.I
)


class Disposition:
    """A parsed ``Content-Disposition``: its type and parameters (names lowercased)."""

    def __init__(self, kind: str, params: dict[str, str]) -> None:
        self.kind = kind
        self.params = params

    @property
    def name(self) -> str | None:
        return self.params.get("name")

    @property
    def filename(self) -> str | None:
        """``filename*`` when present (RFC 6266 prefers it), else ``filename``."""
        if "filename*" in self.params:
            return _ext_value(self.params["filename*"])
        return self.params.get("filename")


def parse_disposition(value: str) -> Disposition:
    """Parse by the grammar, so that ``filename*=`` inside a quoted ``filename`` stays
    part of that name and is not taken for a parameter."""
    m = _TYPE.match(value)
    if not m:
        raise Malformed("Content-Disposition has no type")
    kind, pos, params = m.group(1).lower(), m.end(), {}
    while pos < len(value.rstrip()):
        p = _PARAM.match(value, pos)
        if not p:
            raise Malformed("Content-Disposition does not parse")
        key, raw = p.group(1).lower(), p.group(2)
        if key in params:
            raise Malformed(f"Content-Disposition repeats {key}")
        if raw.startswith('"'):
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1], flags=re.S)
        params[key] = raw
        pos = p.end()
    for key in ("name", "filename"):
        if key in params and _has_control(params[key]):
            raise Malformed(f"{key} holds a control character")
    if "filename*" in params:
        _ext_value(params["filename*"])  # checked now, not when first read
    return Disposition(kind, params)


def _ext_value(raw: str) -> str:
    m = _EXT_VALUE.fullmatch(raw)
    if not m:
        raise Malformed("filename* is not charset'language'value")
    data = unquote_to_bytes(m.group(2))
    try:
        text = data.decode("utf-8" if m.group(1).upper() == "UTF-8" else "latin-1")
    except UnicodeDecodeError:
        raise Malformed("filename* is not valid UTF-8") from None
    if _has_control(text):
        raise Malformed("filename* holds a control character")
    return text


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


# --- multipart/form-data -------------------------------------------------------------------

_BOUNDARY = re.compile(r"""boundary=(?:"([^"]{1,70})"|([0-9A-Za-z'()+_,./:=?-]{1,70}))""")


def media_type(content_type: str) -> str:
    """``type/subtype`` of a Content-Type value, lowercased, parameters left out (a
    string split: aiohttp's ``request.content_type`` parses with the ``email`` package,
    a fifth of the emulator's time per upload)."""
    return content_type.split(";", 1)[0].strip().lower()


def boundary_of(content_type: str) -> bytes:
    """The boundary of a ``multipart/form-data`` Content-Type."""
    if media_type(content_type) != "multipart/form-data":
        raise Malformed("expected multipart/form-data")
    m = _BOUNDARY.search(content_type)
    if not m:
        raise Malformed("multipart/form-data without a boundary")
    return (m.group(1) or m.group(2)).encode("ascii")


class Part:
    """One part: its headers (names lowercased) and a stream of its body."""

    def __init__(self, headers: dict[str, str], reader: FormDataReader) -> None:
        self.headers = headers
        self._reader = reader
        disposition = headers.get("content-disposition")
        if disposition is None:
            raise Malformed("a part has no Content-Disposition")
        self.disposition = parse_disposition(disposition)
        if self.disposition.kind != "form-data" or self.disposition.name is None:
            raise Malformed("a part is not form-data with a name")

    def chunks(self) -> AsyncIterator[bytes]:
        return self._reader._body()


class FormDataReader:
    """Streams a form-data body from ``read(n)`` (which returns ``b""`` at the end).

    Memory stays within one read plus the delimiter, whatever the parts' sizes.
    """

    def __init__(self, read: Callable[[int], Awaitable[bytes]], boundary: bytes) -> None:
        self._read = read
        self._dash = b"--" + boundary
        self._delim = b"\r\n" + self._dash
        self._buf = bytearray()
        self._eof = False
        self._body_done = True

    async def _more(self) -> None:
        if self._eof:
            raise Malformed("the body ended before the closing boundary")
        chunk = await self._read(256 * 1024)
        if chunk:
            self._buf += chunk
        else:
            self._eof = True

    async def parts(self) -> AsyncIterator[Part]:
        # Preamble: anything up to the first delimiter line.
        while True:
            if self._buf.startswith(self._dash):
                del self._buf[: len(self._dash)]
                break
            idx = self._buf.find(self._delim)
            if idx >= 0:
                del self._buf[: idx + len(self._delim)]
                break
            if len(self._buf) > MAX_HEADER_BYTES:
                raise Malformed("no boundary where one was expected")
            await self._more()
        while await self._after_delimiter():
            part = Part(await self._headers(), self)
            self._body_done = False
            yield part
            async for _ in self._body():  # what the consumer left unread
                pass

    async def _after_delimiter(self) -> bool:
        """After a delimiter: ``--`` ends the body, CRLF (after padding) starts a part."""
        while len(self._buf) < 2 or (b"\n" not in self._buf and self._buf[:2] != b"--"):
            if len(self._buf) > 1024:
                raise Malformed("garbage after a boundary")
            await self._more()
        if self._buf[:2] == b"--":
            return False
        line_end = self._buf.find(b"\r\n")
        if line_end < 0 or self._buf[:line_end].strip(b" \t"):
            raise Malformed("garbage after a boundary")
        del self._buf[: line_end + 2]
        return True

    async def _headers(self) -> dict[str, str]:
        while (end := self._buf.find(b"\r\n\r\n")) < 0 and not self._buf.startswith(b"\r\n"):
            if len(self._buf) > MAX_HEADER_BYTES:
                raise Malformed("a part's headers are too long")
            await self._more()
        if self._buf.startswith(b"\r\n"):
            raise Malformed("a part without headers")
        raw = bytes(self._buf[:end])
        del self._buf[: end + 4]
        headers: dict[str, str] = {}
        for line in raw.split(b"\r\n"):
            name, sep, value = line.partition(b":")
            if not sep or not name.strip():
                raise Malformed("a part header does not parse")
            # RFC 7578: header values are UTF-8 in practice (browsers send names so).
            try:
                headers[name.strip().decode("ascii").lower()] = value.strip().decode("utf-8")
            except UnicodeDecodeError:
                raise Malformed("a part header is not UTF-8") from None
        return headers

    async def _body(self) -> AsyncIterator[bytes]:
        """The current part's bytes, up to the next delimiter (consumed); nothing once
        the part has been read to its end."""
        keep = len(self._delim) - 1
        while not self._body_done:
            idx = self._buf.find(self._delim)
            if idx >= 0:
                out = bytes(self._buf[:idx])
                del self._buf[: idx + len(self._delim)]
                self._body_done = True
                if out:
                    yield out
                return
            if len(self._buf) > keep:
                out = bytes(self._buf[: len(self._buf) - keep])
                del self._buf[: len(out)]
                yield out
            await self._more()


# --- Content-Range and Range ---------------------------------------------------------------

_CONTENT_RANGE = re.compile(r"bytes (?:([0-9]{1,20})-([0-9]{1,20})|\*)/([0-9]{1,20})")


def parse_content_range(value: str) -> tuple[int | None, int | None, int]:
    """``bytes FIRST-LAST/TOTAL``, or ``bytes */TOTAL`` (what do you hold?)."""
    m = _CONTENT_RANGE.fullmatch(value.strip())
    if not m:
        raise Malformed(f"bad Content-Range {value[:60]!r}")
    total = int(m.group(3))
    if not 0 < total <= MAX_FILE_SIZE:
        raise Malformed(f"Content-Range total must be 1 to {MAX_FILE_SIZE} bytes")
    if m.group(1) is None:
        return None, None, total
    first, last = int(m.group(1)), int(m.group(2))
    if first > last or last >= total:
        raise Malformed(f"Content-Range {value[:60]!r} is out of bounds")
    return first, last, total


def merge_ranges(ranges: Iterable[tuple[int, int] | list[int]]) -> list[list[int]]:
    """Inclusive byte ranges, sorted, with overlapping and touching ones joined."""
    out: list[list[int]] = []
    for first, last in sorted((int(r[0]), int(r[1])) for r in ranges):
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return out


def format_ranges(ranges: list[list[int]], total: int) -> str:
    """``a-b,c-d/TOTAL``: the platform's ``Range`` header, what the server holds."""
    return ",".join(f"{a}-{b}" for a, b in ranges) + f"/{total}"
