"""The aiohttp layer: the only part of the client that imports aiohttp at run time (a
test enforces it). The transport, the file bodies, and the one module that touches
aiohttp's private attributes."""

from ._bodies import FileBody, SendBudget
from ._transport import RawResponse, Transport, api_timeout, translate, upload_timeout

__all__ = [
    "FileBody",
    "RawResponse",
    "SendBudget",
    "Transport",
    "api_timeout",
    "translate",
    "upload_timeout",
]
