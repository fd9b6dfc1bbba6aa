"""Local files, checked before anything is sent: blocking helpers, run in worker threads."""

from __future__ import annotations

import os
import stat

from . import _validate as check
from ._errors import FileError, InvalidArgumentError

__all__ = ["LocalFile", "inspect_file", "read_bytes", "upload_url"]


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
        raise FileError(name, "no such file") from None
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


def upload_url(url: object) -> str:
    """An upload address, checked to be an absolute http(s) URL."""
    if not isinstance(url, str):
        raise InvalidArgumentError("upload_session", "expected an UploadSession")
    return check.http_url(url, "upload_url")


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()
