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


def parse_journal(text: str) -> JournalSpec:
    """``sqlite:PATH`` or a path ending in ``.sqlite``/``.db``: a file; ``postgresql://``,
    ``postgres://`` or ``key=value`` pairs: a DSN; anything else: ``UsageError`` naming
    the accepted forms (never the text itself: it may hold a password)."""
    if text.startswith("sqlite:") and len(text) > len("sqlite:"):
        return JournalSpec("sqlite", text[len("sqlite:") :])
    if text.startswith(("postgresql://", "postgres://")) or _KEY_VALUE.fullmatch(text):
        return JournalSpec("postgresql", text)
    if text.lower().endswith((".sqlite", ".db")) and text.strip():
        return JournalSpec("sqlite", text)
    raise UsageError(f"--journal: not a journal; give {JOURNAL_FORMS}")


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
