"""JSON as the CLI prints a server's data: valid JSON whatever the data (``jq`` reads it)
and safe on a terminal (no character a terminal acts on, nor one that reorders or hides
text). No I/O."""

from __future__ import annotations

import json
import math
import re
import secrets
import unicodedata
from typing import Any

__all__ = ["json_text"]

_SAFE = re.compile(r"[^\x7f-\U0010ffff]*")
"""Text with nothing to look at: ASCII below DEL (json escapes C0 controls itself)."""


def _unsafe(char: str) -> bool:
    """A character a terminal acts on or that changes how text around it shows: DEL,
    C1 controls (CSI), format characters (bidirectional overrides, zero-width ones),
    line and paragraph separators, surrogates, private-use and unassigned ones."""
    return unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def _escaped(char: str) -> str:
    code = ord(char)
    if code > 0xFFFF:  # as a JSON escape: a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as JSON text: a number past a double's range written as ``1e999`` (or
    ``-1e999``: JSON has no Infinity; a reader takes the largest double), ``NaN`` as
    ``null``, and every character ``_unsafe`` names written as a ``\\u`` escape (the
    value is the same once read; readable text stays as it is)."""
    marks: dict[str, str] = {}
    nonce = secrets.token_hex(8)

    def finite(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            mark = f"{nonce}{'nan' if math.isnan(value) else 'inf' if value > 0 else 'ninf'}"
            marks[mark] = "null" if math.isnan(value) else "1e999" if value > 0 else "-1e999"
            return mark
        if isinstance(value, dict):
            return {k: finite(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [finite(v) for v in value]
        return value

    text = json.dumps(finite(data), indent=indent, ensure_ascii=False, default=str)
    for mark, number in marks.items():
        text = text.replace(f'"{mark}"', number)
    if _SAFE.fullmatch(text):
        return text
    return "".join(_escaped(c) if c > "\x7e" and _unsafe(c) else c for c in text)
