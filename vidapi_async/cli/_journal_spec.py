"""What ``--journal`` names: a SQLite file or a PostgreSQL DSN (one parser for every
command that takes it)."""

from __future__ import annotations

import argparse
import re
from typing import NamedTuple

from .._errors import UsageError

__all__ = ["DSN_FORMS", "JOURNAL_FORMS", "JournalSpec", "dsn_arg", "journal_arg", "parse_journal"]

DSN_FORMS = "a PostgreSQL DSN (postgresql://USER@HOST:PORT/DB or 'host=HOST dbname=DB ...')"
JOURNAL_FORMS = f"sqlite:PATH, a file ending in .sqlite or .db, or {DSN_FORMS}"
_KEY_VALUE = re.compile(r"\s*(?:[A-Za-z_]+\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']+)\s*)+")


class JournalSpec(NamedTuple):
    """What ``--journal`` names: ``kind`` is ``"sqlite"`` (``where`` a file path) or
    ``"postgresql"`` (``where`` a DSN)."""

    kind: str
    where: str


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# a path part with both ``@`` and ``:`` (``user:password@host``, ``user@host:port``):
# a URL's credentials, never taken for a file name
_CREDENTIALS = re.compile(r"(?:^|/)[^/]*(?:@[^/]*:|:[^/]*@)")


def parse_journal(text: str) -> JournalSpec:
    """``sqlite:PATH`` or a path ending in ``.sqlite``/``.db``: a file; a
    ``postgresql://`` or ``postgres://`` URL (scheme in any case) or ``key=value`` pairs:
    a DSN; any other ``scheme://``, a path holding URL-like credentials
    (``user:pw@host``, ``user@host:port``) or anything else: ``UsageError`` naming the
    accepted forms (never the text itself: it may hold a password)."""
    path = None
    scheme = _SCHEME.match(text)
    if text.startswith("sqlite:") and len(text) > len("sqlite:"):
        path = text[len("sqlite:") :]
    elif scheme is not None:
        if scheme[1].lower() in ("postgresql", "postgres"):  # libpq wants lower case
            return JournalSpec("postgresql", scheme[1].lower() + text[scheme.end(1) :])
    elif _KEY_VALUE.fullmatch(text):
        return JournalSpec("postgresql", text)
    elif text.lower().endswith((".sqlite", ".db")) and text.strip():
        path = text
    if path is None or "://" in path or _CREDENTIALS.search(path):
        raise UsageError(f"--journal: not a journal; give {JOURNAL_FORMS}")
    return JournalSpec("sqlite", path)


def journal_arg(text: str) -> JournalSpec:
    """``parse_journal`` for argparse: a bad spec is a usage error (exit 2)."""
    try:
        return parse_journal(text)
    except UsageError:
        raise argparse.ArgumentTypeError(f"not a journal; give {JOURNAL_FORMS}") from None


def dsn_arg(text: str) -> JournalSpec:
    """A journal that must be PostgreSQL (``vidapi worker``'s shared queue): anything
    else is a usage error naming the DSN forms only (a file cannot be shared)."""
    try:
        spec = parse_journal(text)
    except UsageError:
        spec = None
    if spec is None or spec.kind != "postgresql":
        raise argparse.ArgumentTypeError(
            f"not a shared queue; give {DSN_FORMS} (a file journal is for one host's "
            "'vidapi batch')"
        )
    return spec
