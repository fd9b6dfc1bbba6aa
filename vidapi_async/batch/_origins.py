"""What names a batch's manifest or feed (its origin, as the journal and the origin
tag hold it): a manifest's absolute path; a feed's address without its credentials,
query or fragment, and always a short digest (``?feed-sha256=...``) of its user name
(never its password) and its query's parameters: two feeds at one path that differ in
the query or the user are two origins, and no query value (a signature, a token) nor
user is kept. The parameters a url job's key leaves out as credentials or signatures
(``source_identity``: ``X-Amz-*``, ``X-Goog-*``, ``hdnts``, a signing family's with
its signature) are left out of the digest too: a feed whose signature is renewed, or
whose password changes, stays one feed; the others are sorted.

No released version kept an origin (0.1.0 had none), so no other form is read as a
feed's: an origin is the same only when it is equal (``same_origin``)."""

from __future__ import annotations

import hashlib
import re
from typing import Final
from urllib.parse import urlsplit

from .._protocol import url_for_humans
from ._jobs import source_identity

__all__ = ["QUERY_MARK", "feed_origin", "same_origin"]

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


def same_origin(recorded: str | None, origin: str | None) -> bool:
    """Whether a record's origin is ``origin``: both known, and equal."""
    return origin is not None and recorded == origin
