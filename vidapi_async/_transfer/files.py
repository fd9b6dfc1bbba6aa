"""Local files, checked before anything is sent: blocking helpers, run in worker threads."""

from __future__ import annotations

import os
import stat

from .._errors import FileError
from .srt import parse_srt

__all__ = ["MAX_SRT_BYTES", "LocalFile", "check_srt_file", "inspect_file"]

MAX_SRT_BYTES = 10 * 1024 * 1024


class LocalFile:
    """A checked local file: a regular, readable, non-empty file and its size then."""

    __slots__ = ("path", "size")

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size

    def __repr__(self) -> str:
        return f"LocalFile({self.path!r}, size={self.size})"


def inspect_file(path: str | os.PathLike[str]) -> LocalFile:
    """Check a file can be uploaded (blocking: call it in a worker thread)."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise FileError(name, "no such file" + _missing_hint(name)) from None
    except OSError as exc:
        raise FileError(name, f"cannot read it: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileError(name, "is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise FileError(name, "is not a regular file")
    try:
        with open(name, "rb") as f:
            f.read(1)
    except OSError as exc:
        raise FileError(name, f"cannot read it: {exc.strerror}") from None
    if st.st_size == 0:
        raise FileError(name, "is empty")
    return LocalFile(name, st.st_size)


def check_srt_file(path: str | os.PathLike[str]) -> LocalFile:
    """Check a local subtitle file before anything is sent: a readable file of at most
    ``MAX_SRT_BYTES`` that parses as SRT (blocking: call it in a worker thread)."""
    local = inspect_file(path)
    if local.size > MAX_SRT_BYTES:
        raise FileError(local.path, f"larger than {MAX_SRT_BYTES} bytes: not a subtitle file")
    with open(local.path, "rb") as f:
        parse_srt(f.read(), local.path)
    return local


def _missing_hint(name: str) -> str:
    """What a missing file's name suggests was meant: a web address, or ``~``."""
    if name[:8].lower().startswith(("http://", "https://")):
        return (
            " (a web address: stream it with uploads.from_url(...), or have the platform "
            "fetch it with create_video(url=...))"
        )
    if name.startswith("~"):
        return " (~ is not expanded here: pass Path(...).expanduser())"
    return ""
