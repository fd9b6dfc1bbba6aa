"""Where batch jobs come from on the command line: a folder of files, a CSV or JSON
Lines manifest, or a Media RSS feed (``_feed``).

All are read lazily, one job at a time. A bad row raises ``InvalidArgumentError``
naming the file and the line (the rows before it may already be running: the batch
streams); a column or key the tool does not know is refused before the first job.

CSV columns (a header row is required; a ``path`` or a ``url`` column is needed):

``path, url, headers, title, channel, published, password, live, key, subtitles,
description, tags, language, private, is_created_for_kids, explicit, publish_date,
expiry_date, geoblocking, thumbnail, playlists, account, profile``

JSON Lines (``.jsonl``): one object per line with the same keys; lists as arrays
(``subtitles`` also as an object ``{"en": "subs/en.srt"}``), flags as ``true``/``false``.

- ``path`` relative to the manifest's folder, or absolute; or ``url``, an http(s) file
  streamed through to the platform (one of the two per row);
- ``headers``: the name of an environment variable holding the headers sent to the
  url's source (``Name: value`` lines), never the secret itself;
- ``title`` defaults to the file name without extension; ``channel`` to ``--channel``;
- ``published`` and ``live``: true/false/1/0/yes/no (default true and false);
- ``subtitles``: ``en=subs/en.srt;fr=https://example.com/fr.srt``;
- ``tags``, ``playlists``, ``geoblocking``: separated by ``;`` (``deny;fr;de``);
- ``publish_date``, ``expiry_date``: ISO 8601 with an offset (``2027-01-31T09:00:00+01:00``);
- ``thumbnail``: an image relative to the manifest's folder, or an http(s) url;
- ``account``: the name of an environment variable holding the access token of the
  account that creates the row's video (set when the manifest is read; never the token
  itself); empty: the client's own; ``profile`` (API v2): the profile it goes to.
"""

from __future__ import annotations

import codecs
import csv
import json
import os
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, BinaryIO

from .._errors import InvalidArgumentError, UsageError
from .._protocol import url_file_name
from ._accounts import token_in
from ._jobs import SubtitleSpec, UploadJob, once_each

__all__ = ["folder_entries", "jobs_from_folder", "jobs_from_manifest", "jobs_from_source"]

SKIPPED_SUFFIXES = (
    ".srt",
    ".csv",
    ".sqlite",
    ".sqlite-wal",
    ".sqlite-shm",
    ".json",
    ".jsonl",
    ".xml",
    ".rss",
    ".txt",
    ".lock",
)
MAX_LINE = 1 << 20
"""Characters a manifest's line may hold (csv's own limit is 128 KiB a cell)."""
COLUMNS = (
    "path", "url", "headers", "title", "channel", "published", "password", "live", "key",
    "subtitles", "description", "tags", "language", "private", "is_created_for_kids",
    "explicit", "publish_date", "expiry_date", "geoblocking", "thumbnail", "playlists",
    "account", "profile",
)  # fmt: skip
_LISTS = ("tags", "playlists", "geoblocking")
_DATES = ("publish_date", "expiry_date")
_FLAGS = ("private", "is_created_for_kids", "explicit")


def _bool(value: object, column: str, default: bool | None) -> bool | None:
    if isinstance(value, bool):
        return value
    if value is None:
        return default
    if not isinstance(value, str):
        raise InvalidArgumentError(column, f"expected true or false, got {value!r:.40}")
    text = value.strip().lower()
    if not text:
        return default
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InvalidArgumentError(column, f"expected true or false, got {value!r:.40}")


def _text(value: object, column: str) -> str:
    """A cell as text ("" when absent); a JSON value that is not a string is refused."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidArgumentError(column, f"expected a string, got {type(value).__name__}")
    return value


def _list(value: object, column: str) -> list[str] | None:
    """``a;b;c`` (CSV) or an array of strings (JSON); ``None`` when absent or empty."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        items = [p.strip() for p in value.split(";")]
        return [p for p in items if p]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidArgumentError(column, "expected a list of strings (';' between them in a CSV)")


def _date(value: object, column: str) -> datetime | None:
    text = _text(value, column).strip()
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidArgumentError(
            column, f"{text!r:.40} is not an ISO 8601 date (2027-01-31T09:00:00+01:00)"
        ) from None
    if when.tzinfo is None:
        raise InvalidArgumentError(column, f"{text!r:.40} has no offset (+00:00, Z...)")
    return when


def _target(target: str, base: str) -> tuple[str | None, str | None]:
    """A file relative to ``base`` or an http(s) url: (path, url)."""
    target = target.strip()
    if target.lower().startswith(("http://", "https://")):
        return None, target
    return os.path.join(base, target), None


def _subtitles(value: object, base: str) -> list[SubtitleSpec]:
    pairs: Iterable[tuple[str, str]]
    if isinstance(value, Mapping):
        pairs = [(str(k), _text(v, "subtitles")) for k, v in value.items()]
    else:
        pairs = []
        for item in filter(None, (p.strip() for p in _text(value, "subtitles").split(";"))):
            lang, sep, target = item.partition("=")
            if not sep or not target:
                raise InvalidArgumentError("subtitles", f"expected LANG=FILE, got {item!r}")
            pairs.append((lang, target))
    specs = []
    for lang, target in pairs:
        path, url = _target(target, base)
        specs.append(SubtitleSpec(lang.strip(), path=path, url=url))
    return specs


def job_from_row(
    row: Mapping[str, Any], *, base: str, channel: str | None, where: str
) -> UploadJob:
    """One manifest row (CSV text, or JSON values) as a job: ``InvalidArgumentError``
    naming ``where`` (the file and line) for a bad value, or a name not in ``COLUMNS``."""
    unknown = [name for name in row if name not in COLUMNS]
    if unknown:
        raise InvalidArgumentError(
            str(unknown[0]), f"{where}: unknown column/key {unknown[0]!r}; known: {COLUMNS}"
        )
    try:
        file = _text(row.get("path"), "path").strip()
        url = _text(row.get("url"), "url").strip()
        if not file and not url:
            raise InvalidArgumentError("path", "neither a path nor a url")
        name = file or url_file_name(url)
        thumbnail = _text(row.get("thumbnail"), "thumbnail").strip()
        if thumbnail:
            path, link = _target(thumbnail, base)
            thumbnail = path or link or ""
        optional: dict[str, Any] = {
            "description": row.get("description") or None,
            "language": _text(row.get("language"), "language").strip() or None,
            **{c: _list(row.get(c), c) for c in _LISTS},
            **{c: _date(row.get(c), c) for c in _DATES},
            **{c: _bool(row.get(c), c, None) for c in _FLAGS},
        }
        return UploadJob(
            path=os.path.join(base, file) if file else None,
            url=url or None,
            headers=_headers(_text(row.get("headers"), "headers").strip()),
            title=_text(row.get("title"), "title").strip() or os.path.splitext(name)[0] or "video",
            channel=_text(row.get("channel"), "channel").strip() or (channel or ""),
            published=bool(_bool(row.get("published"), "published", True)),
            password=(_text(row.get("password"), "password") or None),
            live=bool(_bool(row.get("live"), "live", False)),
            key=_text(row.get("key"), "key").strip() or None,
            account=_account(_text(row.get("account"), "account").strip()),
            profile=_text(row.get("profile"), "profile").strip() or None,
            subtitles=_subtitles(row.get("subtitles") or "", base),
            thumbnail=thumbnail or None,
            playlists=optional.pop("playlists") or (),
            is_created_for_kids=bool(optional.pop("is_created_for_kids")),
            **{k: v for k, v in optional.items() if v is not None},
        )
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(exc.argument, f"{where}: {exc.message}") from None


def _account(variable: str) -> str | None:
    """A row's ``account``: the variable's name, once it is known to hold a token."""
    if not variable:
        return None
    token_in(variable)
    return variable


def _headers(variable: str) -> dict[str, str]:
    """The headers held by the environment variable named ``variable`` (``Name: value``
    lines). Messages name the variable, never its value."""
    if not variable:
        return {}
    text = os.environ.get(variable)
    if text is None:
        raise InvalidArgumentError("headers", f"the environment variable {variable} is not set")
    headers = {}
    for n, line in enumerate(filter(str.strip, text.splitlines()), 1):
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(c in name for c in " \t"):
            raise InvalidArgumentError(
                "headers", f"line {n} of ${variable} is not a 'Name: value' header"
            )
        headers[name.strip()] = value.strip()
    return headers


def _decoder(encoding: str) -> Callable[[], codecs.IncrementalDecoder]:
    """The manifest's decoder (UTF-8: with or without Excel's byte order mark)."""
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise InvalidArgumentError("encoding", f"unknown encoding {encoding!r}") from None
    if not getattr(info, "_is_text_encoding", True):  # rot13, hex, base64...
        raise InvalidArgumentError("encoding", f"{encoding!r} is not a text encoding")
    if info.name == "utf-8":
        info = codecs.lookup("utf-8-sig")
    return lambda: info.incrementaldecoder("strict")


def _lines(raw: BinaryIO, path: str, encoding: str) -> Iterator[str]:
    """The manifest's text, one line at a time (ends kept, for ``csv``); bytes that are
    not ``encoding`` raise ``InvalidArgumentError`` naming the file and the line."""
    decoder = _decoder(encoding)()
    line, pending, size = 1, [""], 0  # the line under way, in pieces (linear time)
    for chunk in iter(lambda: raw.read(1 << 16), b""):
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            good = chunk[: exc.start].decode(encoding, errors="replace")
            raise InvalidArgumentError(
                "encoding",
                f"{path} line {line + good.count(chr(10))}: not {encoding} text (byte "
                f"0x{chunk[exc.start]:02x}); give its encoding (--encoding cp1252, latin-1...; "
                "encoding= in Python)",
            ) from None
        first, *done = text.split("\n")
        pending.append(first)
        size += len(first)
        if size > MAX_LINE:
            raise InvalidArgumentError(
                "path", f"{path} line {line}: longer than {MAX_LINE} characters"
            )
        if done:
            *whole, last = done
            yield "".join(pending) + "\n"
            line += 1
            for piece in whole:
                yield piece + "\n"
                line += 1
            pending, size = [last], len(last)
    tail = "".join(pending) + decoder.decode(b"", final=True)
    if tail:
        yield tail


def _no_control(row: dict[str, str | None], where: str) -> None:
    """No cell of a manifest's row holds a control character (a NUL, a newline in a
    title, a bell...)."""
    for column, value in row.items():
        if column is None or value is None:
            continue
        allowed = "\n\r\t" if column == "description" else ""  # a description has lines
        bad = next(
            (c for c in value if unicodedata.category(c) in ("Cc", "Cs") and c not in allowed),
            None,
        )
        if bad is not None:
            raise InvalidArgumentError(
                column, f"{where}: has the control character or lone surrogate {bad!r}"
            )


def _rows(reader: csv.DictReader[str], path: str) -> Iterator[dict[str, str | None]]:
    """``reader``'s rows; a line csv cannot read (a cell over its limit, a line end
    inside an unquoted cell) raises ``InvalidArgumentError`` naming the file and line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InvalidArgumentError(
                "path", f"{path} line {reader.line_num + 1}: not a CSV row csv can read ({exc})"
            ) from None
        yield row


def jobs_from_manifest(
    path: str | os.PathLike[str], *, channel: str | None = None, encoding: str = "utf-8"
) -> Iterator[UploadJob]:
    """The jobs of a CSV manifest (``.jsonl``: JSON Lines), one row at a time.
    ``encoding``: the file's, UTF-8 by default (with or without a byte order mark). A
    row that is bad, that holds a control character or that is another row's job again
    (the same key, or the same file or url without a key) raises
    ``InvalidArgumentError`` naming the file and the line (both lines for a job twice);
    an unknown column or key, naming it and its line."""
    _decoder(encoding)  # an unknown encoding: refused before the file is opened
    path = os.fspath(path)
    rows = _jsonl_rows if path.lower().endswith(".jsonl") else _csv_rows
    return once_each(path, rows(path, channel, encoding))


def _csv_rows(path: str, channel: str | None, encoding: str) -> Iterator[tuple[int, UploadJob]]:
    base = os.path.dirname(os.path.abspath(path))
    with open(path, "rb") as raw:
        reader = csv.DictReader(_lines(raw, path, encoding))
        try:
            header = reader.fieldnames or []
        except csv.Error as exc:
            raise InvalidArgumentError(
                "path", f"{path} line 1: not a CSV header csv can read ({exc})"
            ) from None
        if "path" not in header and "url" not in header:
            raise UsageError(
                f"{path}: the manifest needs a header row with a 'path' or 'url' column"
            )
        twice = sorted({c for c in header if header.count(c) > 1})
        if twice:
            raise UsageError(f"{path}: column(s) named twice: {', '.join(twice)}")
        unknown = [c for c in header if c not in COLUMNS]
        if unknown:
            raise UsageError(
                f"{path} line 1: unknown column(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(COLUMNS)}"
            )
        ended = reader.line_num  # the header's last line
        for row in _rows(reader, path):
            line, ended = ended + 1, reader.line_num  # a row may span lines (quoted)
            where = f"{path} line {line}"
            _no_control(row, where)
            if None in row:
                raise InvalidArgumentError("path", f"{where}: more cells than the header has")
            yield line, job_from_row(row, base=base, channel=channel, where=where)


class _KeyTwice(Exception):
    """A JSON object that names one key twice (json keeps the last one silently)."""


def _once_each_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for key, value in pairs:
        if key in row:
            raise _KeyTwice(f"{key!r} twice in one object (which one is meant?)")
        row[key] = value
    return row


def _jsonl_rows(path: str, channel: str | None, encoding: str) -> Iterator[tuple[int, UploadJob]]:
    base = os.path.dirname(os.path.abspath(path))
    with open(path, "rb") as raw:
        for line, text in enumerate(_lines(raw, path, encoding), 1):
            if not text.strip():
                continue
            where = f"{path} line {line}"
            try:
                row = json.loads(text, object_pairs_hook=_once_each_key)
            except _KeyTwice as exc:
                raise InvalidArgumentError("manifest", f"{where}: {exc}") from None
            except (ValueError, RecursionError) as exc:
                raise InvalidArgumentError("manifest", f"{where}: not JSON ({exc})") from None
            if not isinstance(row, dict):
                raise InvalidArgumentError("manifest", f"{where}: expected a JSON object")
            _no_control({k: v for k, v in row.items() if isinstance(v, str)}, where)
            yield line, job_from_row(row, base=base, channel=channel, where=where)


def check_source(
    source: str | os.PathLike[str],
    *,
    channel: str | None,
    encoding: str = "utf-8",
    categories: Collection[str] | None = None,
) -> int:
    """Read a whole folder or manifest once, checking every row (blocking): the number
    of jobs, or the first bad row's ``InvalidArgumentError``, before anything is run."""
    jobs = jobs_from_source(source, channel=channel, encoding=encoding, categories=categories)
    return sum(1 for _ in jobs)


def folder_entries(folder: str) -> tuple[list[str], list[tuple[str, str]]]:
    """A folder's video files (sorted; not recursive), and what is left out with why
    (blocking: run it off the loop)."""
    videos, skipped = [], []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.startswith("."):
                skipped.append((entry.name, "hidden"))
            elif entry.is_dir():
                skipped.append((entry.name + "/", "a folder (a batch does not go into folders)"))
            elif not entry.is_file():
                skipped.append((entry.name, "not a regular file"))
            elif entry.name.lower().endswith(SKIPPED_SUFFIXES):
                kind = os.path.splitext(entry.name)[1].lower()
                skipped.append((entry.name, f"not a video (a {kind} file)"))
            else:
                videos.append(entry.name)
    return videos, skipped


def jobs_from_folder(folder: str | os.PathLike[str], *, channel: str | None) -> Iterator[UploadJob]:
    """One job per video file in ``folder`` (sorted; not recursive), titled by name:
    ``folder_entries`` says which files, and why the others are left out."""
    folder = os.fspath(folder)
    if not channel:
        raise UsageError("a folder source needs --channel (a CSV manifest can name one per row)")
    for name in folder_entries(folder)[0]:
        yield UploadJob(path=os.path.join(folder, name), title=_title_of(name), channel=channel)


def _title_of(name: str) -> str:
    """A title from a file name: without its extension, its control characters as
    spaces, bytes that were not UTF-8 as U+FFFD (a title is text a form can carry)."""
    text = os.path.splitext(name)[0].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text).strip() or "video"


def jobs_from_source(
    source: str | os.PathLike[str],
    *,
    channel: str | None,
    encoding: str = "utf-8",
    categories: Collection[str] | None = None,
) -> Iterator[UploadJob]:
    """A folder, a ``.csv`` or ``.jsonl`` manifest (read as ``encoding``), or a Media
    RSS feed (``.xml``/``.rss``; ``categories``: the platform's, for its
    ``media:category``)."""
    source = os.fspath(source)
    if os.path.isdir(source):
        return jobs_from_folder(source, channel=channel)
    lower = source.lower()
    if os.path.isfile(source) and lower.endswith((".csv", ".jsonl")):
        return jobs_from_manifest(source, channel=channel, encoding=encoding)
    if os.path.isfile(source) and lower.endswith((".xml", ".rss")):
        from ._feed import jobs_from_feed

        return jobs_from_feed(source, channel=channel, categories=categories)
    raise UsageError(f"{source}: not a folder, a .csv or .jsonl manifest or a .xml/.rss feed")
