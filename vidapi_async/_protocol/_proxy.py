"""Which proxy a request goes through (pure: the proxy settings are passed in)."""

from __future__ import annotations

import base64
import urllib.parse
import urllib.request
from collections.abc import Mapping

import attrs

__all__ = ["Proxy", "proxy_for"]


@attrs.frozen
class Proxy:
    """An HTTP proxy: where to connect, and the ``Proxy-Authorization`` it wants."""

    url: str = attrs.field(repr=False)
    """As given (it may hold credentials: hidden from repr)."""
    host: str
    port: int
    authorization: str | None = attrs.field(default=None, repr=False)

    @classmethod
    def parse(cls, url: str) -> Proxy:
        """``http://[user:password@]host[:port]``; ``ValueError`` otherwise."""
        parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("a proxy is an http://host:port address")
        auth = None
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        return cls(url, parts.hostname, parts.port or 80, auth)


def proxy_for(url: str, proxies: Mapping[str, str]) -> Proxy | None:
    """The proxy for ``url`` from settings shaped as ``urllib.request.getproxies()``
    returns them (``{"https": ..., "http": ..., "no": "host,.domain"}``), or ``None``."""
    parts = urllib.parse.urlsplit(url)
    chosen = proxies.get(parts.scheme)
    if not chosen or not parts.hostname:
        return None
    if urllib.request.proxy_bypass_environment(parts.hostname, proxies):  # type: ignore[attr-defined]
        return None
    return Proxy.parse(chosen)
