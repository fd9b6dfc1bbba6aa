"""The one place that touches aiohttp's private attributes, so that an aiohttp release
that moves them costs one module (``tests/test_layers.py`` checks them for the aiohttp
installed; supported: the 3.14 series).

Uploads are sent outside aiohttp (``_pump``); with a caller's session they must honour
the trust its connector was given, which aiohttp keeps in ``TCPConnector._ssl``. Where
it is missing, the default trust applies (the system's CAs), never less.
"""

from __future__ import annotations

import ssl

__all__ = ["connector_ssl"]


def connector_ssl(connector: object) -> ssl.SSLContext | bool | None:
    """The trust a caller's ``TCPConnector(ssl=...)`` was given (``None``: the default),
    so that uploads sent outside aiohttp honour it."""
    value = getattr(connector, "_ssl", None)
    return value if isinstance(value, ssl.SSLContext | bool) else None
