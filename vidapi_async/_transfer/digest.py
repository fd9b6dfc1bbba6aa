"""``upload_file(verify_hash=True)``: the SHA-1 of the bytes sent, computed by the upload
thread from the very buffers it sends (no second read of the file), compared with the
descriptor's ``hash``.

The platform documents ``hash`` as 40 hex characters without naming the algorithm, so a
difference is a warning (``HashMismatchWarning``), never a failure.
"""

from __future__ import annotations

import hashlib
import logging
import warnings

from .._models import UploadedFile

__all__ = ["HashMismatchWarning", "HashSink", "compare_hash"]

log = logging.getLogger("vidapi_async")


class HashMismatchWarning(UserWarning):
    """The upload server's ``hash`` is not the SHA-1 of the bytes sent."""


class HashSink:
    """The SHA-1 of one body's file bytes, fed as they go out and restarted with every
    attempt (so only the attempt that the server answered counts)."""

    def __init__(self) -> None:
        self._sha1 = hashlib.sha1(usedforsecurity=False)

    def restart(self) -> None:
        self._sha1 = hashlib.sha1(usedforsecurity=False)

    def update(self, data: bytes | memoryview) -> None:
        self._sha1.update(data)

    def hexdigest(self) -> str:
        return self._sha1.hexdigest()


def compare_hash(uploaded: UploadedFile, sink: HashSink, name: str) -> None:
    """Warn when the descriptor's ``hash`` differs from what was sent."""
    sent = sink.hexdigest()
    if uploaded.hash is None:
        log.info("upload of %s: the server sent no hash to compare", name)
    elif uploaded.hash.strip().lower() != sent:
        warnings.warn(
            f"upload of {name}: the server's hash {uploaded.hash[:64]!r} is not the SHA-1 "
            f"of the bytes sent ({sent}); the platform does not name its algorithm, so "
            "the file was kept",
            HashMismatchWarning,
            stacklevel=3,
        )
