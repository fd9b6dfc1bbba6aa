"""What names a batch's manifest or feed (its origin, as the journal and the origin
tag hold it): a manifest's absolute path; a feed's address without its credentials,
query or fragment, and always a short digest (``?feed-sha256=...``) of its user name
(never its password) and its query's parameters: two feeds at one path that differ in
the query or the user are two origins, and no query value (a signature, a token) nor
user is kept. The parameters a url job's key leaves out as credentials or signatures
(``source_identity``: ``X-Amz-*``, ``X-Goog-*``, ``hdnts``, a signing family's with
its signature) are left out of the digest too: a feed whose signature is renewed, or
whose password changes, stays one feed; the others are sorted.

An earlier release recorded a feed's address alone: a record or an origin tag made
from that form is the same feed's (``same_origin``, ``earlier_form``), so a re-run does
not refuse its own jobs. Today's origins always carry the digest, so that form never
stands for a feed of today's (a feed without a query and the same with one are two)."""

from __future__ import annotations

import hashlib
import re
from typing import Final
from urllib.parse import urlsplit

from .._protocol import url_for_humans
from ._jobs import source_identity

__all__ = ["QUERY_MARK", "earlier_form", "feed_origin", "same_origin"]

QUERY_MARK: Final = "?feed-sha256="
"""What separates a feed's address from its digest in its origin."""


def feed_origin(url: str) -> str:
    """A feed's origin: its address without credentials, query or fragment, and a
    digest of its user name and its query's other parameters, sorted."""
    shown = url_for_humans(url)
    parts = urlsplit(source_identity(url))
    kept = sorted(piece for piece in re.split(r"[&;]", parts.query) if piece)
    user = urlsplit(url).username or ""
    text = f"{user}\n" + "&".join(kept)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{shown}{QUERY_MARK}{digest[:16]}"


def earlier_form(origin: str | None) -> str | None:
    """The origin an earlier release gave the same feed (its address alone);
    ``None`` for an origin that is no feed's."""
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
