"""The bytes around a file in a multipart body, and the names of files in headers.
No I/O, no asyncio, no aiohttp."""

from __future__ import annotations

import mimetypes
import secrets
from urllib.parse import quote

__all__ = ["attachment_disposition", "multipart_envelope", "new_boundary"]


def new_boundary() -> str:
    return "vidapi" + secrets.token_hex(16)


_ESCAPED = {c: f"%{c:02X}" for c in (*range(0x20), 0x7F, ord('"'))}


def _quote_filename(name: str) -> str:
    # What browsers send (the HTML form-data encoding): UTF-8 as is, with '"' and CR/LF
    # percent-escaped. RFC 7578 forbids filename* in form-data, and servers that see only
    # an ASCII-escaped name store the escapes (the "missing file" reports). Every other
    # control character is escaped too: HTTP cannot carry them in a header.
    return _text(name).translate(_ESCAPED)


def _text(name: str) -> str:
    """A file name that was not UTF-8 (surrogate-escaped bytes) as text: its odd bytes
    become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def attachment_disposition(filename: str) -> str:
    """``Content-Disposition`` of a raw chunk: ``filename*`` (RFC 6266) for non-ASCII
    names, with an ASCII ``filename`` beside it for servers that know only that."""
    quoted = _quote_filename(filename)
    if quoted.isascii():
        return f'attachment; filename="{quoted}"'
    fallback = quoted.encode("ascii", "replace").decode().replace("?", "_")
    encoded = quote(_text(filename), safe="")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}"


def multipart_envelope(
    boundary: str, field: str, filename: str, content_type: str | None = None
) -> tuple[bytes, bytes]:
    """The bytes before and after the file in a one-part ``multipart/form-data`` body."""
    ctype = content_type or mimetypes.guess_type(filename)[0] or "application/octet-stream"
    head = (
        f"--{boundary}\r\n"
        f'Content-Disposition: form-data; name="{field}"; filename="{_quote_filename(filename)}"'
        f"\r\nContent-Type: {ctype}\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return head, tail
