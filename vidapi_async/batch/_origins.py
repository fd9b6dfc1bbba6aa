"""What names a batch's manifest or feed (its origin, as the journal and the origin
tag hold it): a manifest's absolute path; a feed's address without its credentials,
and, when it has a query, a short digest of the query (``?query-sha256=...``): two
feeds at one path that differ in the query are two origins, and no query value (a
signature, a token) is kept. Parameters that sign a url for a while (``X-Amz-*``,
``Signature``, ``Expires``...) are left out of the digest: a feed whose signature is
renewed stays one feed.

An earlier release recorded a feed's address without its query: a record or an
origin tag made from that form is the same feed's (``same_origin``, ``earlier_form``),
so a re-run does not refuse its own jobs."""

from __future__ import annotations

import hashlib
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit

from .._protocol import url_for_humans

__all__ = ["QUERY_MARK", "earlier_form", "feed_origin", "same_origin"]

QUERY_MARK: Final = "?query-sha256="
"""What separates a feed's address from its query's digest in its origin."""

_SIGNING_PREFIXES: Final = ("x-amz-", "x-goog-")
_SIGNING: Final = frozenset(
    {"signature", "expires", "key-pair-id", "policy", "awsaccesskeyid", "sig", "se", "st"}
)
"""Query parameters (lowercased) that sign a url for a while, renewed without the
feed changing: not part of its origin."""


def feed_origin(url: str) -> str:
    """A feed's origin: its address without credentials, query or fragment, and a
    digest of the query's other parameters, sorted, when there are any."""
    shown = url_for_humans(url)
    kept = sorted(
        (name, value)
        for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True)
        if not name.lower().startswith(_SIGNING_PREFIXES) and name.lower() not in _SIGNING
    )
    if not kept:
        return shown
    digest = hashlib.sha256(urlencode(kept).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{shown}{QUERY_MARK}{digest[:16]}"


def earlier_form(origin: str | None) -> str | None:
    """The origin an earlier release gave the same feed (its address without the
    query's digest); ``None`` when it is the same as ``origin``."""
    if origin is None or QUERY_MARK not in origin:
        return None
    if not origin.lower().startswith(("http://", "https://")):
        return None
    return origin.rpartition(QUERY_MARK)[0]


def same_origin(recorded: str | None, origin: str | None) -> bool:
    """Whether a record's origin is ``origin``'s: the same, or (recorded by an earlier
    release) its form without the query."""
    if origin is None or recorded is None:
        return False
    return recorded == origin or recorded == earlier_form(origin)
