"""Settings as plain values, free of aiohttp: timeouts, upload sizes, the progress
callback's shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

__all__ = [
    "DEFAULT_CHUNKED_THRESHOLD",
    "DEFAULT_RANGE_SIZE",
    "DEFAULT_READ_SIZE",
    "ProgressCallback",
    "Timeouts",
]

DEFAULT_CHUNKED_THRESHOLD: Final = 64 * 1024 * 1024
"""Files this large or larger go through the chunked (resumable) protocol by default."""
DEFAULT_READ_SIZE: Final = 1024 * 1024
"""Bytes read from disk (or sendfile'd) at a time while a body is sent."""
DEFAULT_RANGE_SIZE: Final = 4 * 1024 * 1024
"""Bytes per request of the chunked protocol (the platform's SDKs use 4 to 8 MiB)."""

ProgressCallback = Callable[[int, int], Any]
"""``progress(sent, total)``: file bytes handed to the connection so far (chunked:
acknowledged by the server), and the total."""


@attrs.frozen(cache_hash=True)
class Timeouts:
    """Timeouts in seconds (``None``: no limit).

    API calls are small and get a total limit. Uploads get none: a 20 GB file takes as
    long as it takes; they are bounded instead by ``connect`` and by ``upload_read``.
    """

    connect: float | None = 30.0
    """Establishing a connection, for every request."""
    api_total: float | None = 120.0
    """A whole API call, from sending to the last byte of the answer."""
    api_read: float | None = 60.0
    """Silence between bytes of an API answer."""
    upload_read: float | None = 600.0
    """The upload server's whole answer, from the last byte sent to the last byte
    received (its processing time included): a server that trickles its answer cannot
    hold the upload longer. Also the longest silence while sending."""
    source_idle: float | None = 60.0
    """``upload_from_url``: the longest wait for the next byte of a source (its answer's
    head included)."""
    source_total: float | None = 6 * 3600.0
    """``upload_from_url``: the longest time to read a whole source, from the first
    request to its last byte (a source that trickles cannot hold an upload longer)."""
