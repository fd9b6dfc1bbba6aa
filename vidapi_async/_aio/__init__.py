"""The I/O layer: the only part of the client that imports aiohttp at run time (a test
enforces it). The transport for API calls (aiohttp), the upload pump (a blocking socket
in a worker thread per upload, off the event loop), and the one module that touches
aiohttp's private attributes."""

from ._pump import Connection, FileRegion, UploadPump
from ._transport import RawResponse, Transport, api_timeout, sent_headers, translate

__all__ = [
    "Connection",
    "FileRegion",
    "RawResponse",
    "Transport",
    "UploadPump",
    "api_timeout",
    "sent_headers",
    "translate",
]
