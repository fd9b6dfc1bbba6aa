"""Which proxy a request goes through (pure: the proxy settings are passed in)."""

from __future__ import annotations

import base64
import ipaddress
import urllib.parse
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
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if bypassed(parts.hostname, port, proxies.get("no", "")):
        return None
    return Proxy.parse(chosen)


def bypassed(host: str, port: int, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` sends ``host:port`` direct. Its entries (commas or spaces
    between): ``*``; a name, matching itself and its subdomains (``.example.com``
    too); an IP address or a CIDR block (``10.0.0.0/8``); any of these with ``:port``
    (``[::1]:8443`` for IPv6), matching that port only."""
    host = host.strip("[]").lower().rstrip(".")
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for entry in no_proxy.replace(" ", ",").split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        name, want = _entry(entry)
        if want is not None and want != port:
            continue
        if "/" in name:
            try:
                if ip is not None and ip in ipaddress.ip_network(name, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name = name.lstrip("*").lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _entry(entry: str) -> tuple[str, int | None]:
    """A ``NO_PROXY`` entry as ``(name, port or None)``."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        name, _, port = entry.partition(":")
    else:
        name, port = entry, ""
    return name, int(port) if port.isascii() and port.isdigit() else None
