"""A strict-enough SubRip (SRT) check, so a broken file is refused before it is uploaded.

Pure: it takes the file's bytes. A cue is a number line, a timing line
``HH:MM:SS,mmm --> HH:MM:SS,mmm`` (a '.' before the milliseconds is tolerated, as
players do) and one or more text lines, cues separated by blank lines.
"""

from __future__ import annotations

import re

import attrs

from .._errors import SubtitleFileError

__all__ = ["Cue", "parse_srt"]

_TIME = r"(\d{1,2}):([0-5]\d):([0-5]\d)[,.](\d{3})"
_TIMING = re.compile(rf"{_TIME}\s+-->\s+{_TIME}(?:\s+.*)?")


@attrs.frozen
class Cue:
    number: int
    start: float
    end: float
    text: str


def _seconds(h: str, m: str, s: str, ms: str) -> float:
    return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000


def parse_srt(data: bytes, path: str = "<srt>") -> list[Cue]:
    """The cues of an SRT file, or ``SubtitleFileError`` naming the first broken cue."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SubtitleFileError(path, 0, line, "not UTF-8 text") from exc
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    cues: list[Cue] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        ordinal = len(cues) + 1
        start_line = i + 1
        number = lines[i].strip()
        if not number.isdigit():
            raise SubtitleFileError(
                path, ordinal, start_line, f"expected a cue number, got {number!r}"
            )
        if i + 1 >= len(lines) or not (m := _TIMING.fullmatch(lines[i + 1].strip())):
            got = lines[i + 1].strip() if i + 1 < len(lines) else "end of file"
            raise SubtitleFileError(
                path,
                ordinal,
                start_line + 1,
                f"expected 'HH:MM:SS,mmm --> HH:MM:SS,mmm', got {got!r}",
            )
        start, end = _seconds(*m.group(1, 2, 3, 4)), _seconds(*m.group(5, 6, 7, 8))
        if end < start:
            raise SubtitleFileError(path, ordinal, start_line + 1, "the cue ends before it starts")
        j = i + 2
        body: list[str] = []
        while j < len(lines) and lines[j].strip():
            body.append(lines[j])
            j += 1
        if not body:
            raise SubtitleFileError(path, ordinal, start_line + 2, "the cue has no text")
        cues.append(Cue(int(number), start, end, "\n".join(body)))
        i = j
    if not cues:
        raise SubtitleFileError(path, 0, 1, "no cues in the file")
    return cues
