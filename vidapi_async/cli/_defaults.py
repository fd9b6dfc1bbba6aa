"""The library's defaults that the command's parser shows in its help, written here so
that ``vidapi --help`` and a usage error need no more than this package's light modules
(the client, its dialects and aiohttp are imported by the commands that use them).
``tests/integration/test_cli_startup.py`` checks each equals the library's own."""

from __future__ import annotations

__all__ = ["DEFAULT_BASE_URL", "DIALECTS", "MAX_FEED_BYTES", "V2_BASE_URL", "V2_DEFAULT_SCOPES"]

DEFAULT_BASE_URL = "https://api.dailymotion.com"
"""``vidapi_async.DEFAULT_BASE_URL``: the legacy API's root."""
V2_BASE_URL = "https://api.dailymotion.com/v2"
"""API v2's root (``_protocol._v2.DEFAULT_BASE_URL``)."""
V2_DEFAULT_SCOPES = ("account.read", "video.read", "video.manage")
"""The scopes an API key's token asks for by default (``_protocol._v2.DEFAULT_SCOPES``)."""
DIALECTS = ("legacy", "v2")
"""The dialects a client speaks (``_dialect.DIALECTS``)."""
MAX_FEED_BYTES = 256 << 20
"""The largest feed read or fetched by default (``batch._feed.MAX_FEED_BYTES``)."""
