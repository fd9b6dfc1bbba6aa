"""Where batch jobs come from on the command line: a folder of files, a CSV or JSON
Lines manifest, or a Media RSS feed (``_feed``).

All are read lazily, one job at a time. A row whose value cannot be used (an
``ftp://`` url, a bad date, a title too long, the same job twice) is left out as
failed, naming the file, the line and the reason (``LeftOut``: handed to
``left_out``, or without it raised as ``InvalidArgumentError``; the rows before it may
already be running: the batch streams); a column or key the tool does not know is
refused before the first job.

Another tool's export (Kaltura's bulk-upload CSV, YouTube's bulk spreadsheet) is read
through ``columns``: a mapping of our field to its column (``{"title": "Name"}``;
``--map title=Name``). With a map only the mapped columns are read (a column named
``title`` too is read only through ``--map title=title``: another tool's ``channel``
is not our category); every other column is ignored (named once, as an ``ignored``
``LeftOut``); a map naming a column the file lacks, or a field we do not have, is
refused before anything is read. Lines starting with ``#`` before
the header are comments, and a header starting with ``*`` (Kaltura's field
definition line) has it dropped; after such a header, ``#`` lines are comments too, each
reported as ``skipped`` with its line (a row whose first cell starts with ``#`` is never
lost without a word; quoted, it is a row).
``list_separator`` (``;`` by default; ``--list-separator``) separates ``tags``,
``playlists`` and ``geoblocking`` (YouTube's spreadsheets use ``|``, Kaltura's tags
``,``).

CSV columns (a header row is required; a ``path`` or a ``url`` column is needed):

``path, url, headers, title, channel, published, password, live, key, subtitles,
description, tags, language, private, is_created_for_kids, explicit, publish_date,
expiry_date, geoblocking, thumbnail, playlists, account, profile``

JSON Lines (``.jsonl``): one object per line with the same keys; lists as arrays
(``subtitles`` also as an object ``{"en": "subs/en.srt"}`` or an array of
``"LANG=FILE"`` strings), flags as ``true``/``false``.

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
  account that creates the row's video, ``VIDAPI_<NAME>_TOKEN`` (set when the
  manifest is read; never the token itself); empty: the client's own; ``profile``
  (API v2): the profile it goes to.
"""

from __future__ import annotations

import codecs
import collections
import csv
import json
import mimetypes
import os
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, BinaryIO

from .._errors import AccountError, InvalidArgumentError, UsageError
from .._protocol import url_file_name
from .._s3 import VIDEO_SUFFIXES, VIDEO_TYPES, is_s3_url
from ._accounts import token_in
from ._jobs import LeftOut, SubtitleSpec, UploadJob, once_each, only_jobs

__all__ = [
    "folder_entries",
    "jobs_from_folder",
    "jobs_from_manifest",
    "jobs_from_source",
    "manifest_entries",
    "source_entries",
]

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
NOT_VIDEO_SUFFIXES = frozenset(
    {
        ".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".heic", ".svg",
        ".ico", ".log", ".md", ".nfo", ".pdf", ".doc", ".docx", ".odt", ".rtf", ".xls",
        ".xlsx", ".ods", ".ppt", ".pptx", ".html", ".htm", ".yaml", ".yml", ".ini", ".vtt",
        ".ass", ".ssa", ".sub", ".mp3", ".wav", ".aac", ".flac", ".m4a", ".ogg", ".oga",
        ".opus", ".wma", ".aif", ".aiff", ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz",
        ".7z", ".rar", ".py", ".sh", ".exe", ".dmg", ".iso", ".ds_store", ".part", ".tmp",
    }
)  # fmt: skip
"""Extensions a folder batch leaves out as not video (besides ``SKIPPED_SUFFIXES``,
and those the system's table of types names as another kind than video)."""
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


def _list(value: object, column: str, separator: str = ";") -> list[str] | None:
    """``a;b;c`` (CSV) or an array of strings (JSON); ``None`` when absent or empty."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        items = [p.strip() for p in value.split(separator)]
        return [p for p in items if p]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidArgumentError(
        column, f"expected a list of strings ({separator!r} between them in a CSV)"
    )


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
    scheme = _SCHEME.match(target)
    if scheme is not None:
        raise InvalidArgumentError(
            "url", f"{scheme[1]}:// is not taken: give an http(s) url or a local file"
        )
    return os.path.join(base, target), None


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def _subtitles(value: object, base: str) -> list[SubtitleSpec]:
    pairs: Iterable[tuple[str, str]]
    if isinstance(value, Mapping):
        pairs = [(str(k), _text(v, "subtitles")) for k, v in value.items()]
    else:
        if isinstance(value, list):  # JSON: ["en=subs/en.srt", "fr=https://..."]
            items = [_text(v, "subtitles").strip() for v in value]
        else:
            items = [p.strip() for p in _text(value, "subtitles").split(";")]
        pairs = []
        for item in filter(None, items):
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
    row: Mapping[str, Any],
    *,
    base: str,
    channel: str | None,
    where: str,
    list_separator: str = ";",
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
        if url and not is_s3_url(url):
            _target(url, base)  # an ftp:// url: refused, not taken for a file
        if thumbnail:
            path, link = _target(thumbnail, base)
            thumbnail = path or link or ""
        optional: dict[str, Any] = {
            "description": row.get("description") or None,
            "language": _text(row.get("language"), "language").strip() or None,
            **{c: _list(row.get(c), c, list_separator) for c in _LISTS},
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
    except AccountError as exc:  # its own type kept (the variable's name, if one)
        raise type(exc)(f"{where}: {exc.message}", variable=exc.variable) from None
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(exc.argument, f"{where}: {exc.message}") from None


def _account(variable: str) -> str | None:
    """A row's ``account``: the variable's name (``VIDAPI_<NAME>_TOKEN``), once it is
    known to hold a token (``token_in``: a name an account may not have is refused
    before anything is read)."""
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


def _lines(
    raw: BinaryIO, path: str, encoding: str, long_lines: list[int] | None = None
) -> Iterator[str]:
    """The manifest's text, one line at a time (ends kept, for ``csv``); bytes that are
    not ``encoding`` raise ``InvalidArgumentError`` naming the file and the line. A line
    over ``MAX_LINE`` characters raises too, or, given ``long_lines``, is passed over
    (its number appended there, an empty line given in its place)."""
    decoder = _decoder(encoding)()
    line, pending, size = 1, [""], 0  # the line under way, in pieces (linear time)
    skipping = False  # the rest of an over-long line is dropped as it comes
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
        if not skipping:
            pending.append(first)
            size += len(first)
        if size > MAX_LINE:
            if long_lines is None:
                raise InvalidArgumentError(
                    "path", f"{path} line {line}: longer than {MAX_LINE} characters"
                )
            long_lines.append(line)
            skipping, pending, size = True, [], 0
        if done:
            *whole, last = done
            yield "\n" if skipping else "".join(pending) + "\n"
            skipping = False
            line += 1
            for piece in whole:
                yield piece + "\n"
                line += 1
            pending, size = [last], len(last)
    tail = "".join(pending) + decoder.decode(b"", final=True)
    if skipping:
        yield "\n"
    elif tail:
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


def _rows(
    reader: csv.DictReader[str], path: str, lines: _Lines
) -> Iterator[dict[str, str | None] | tuple[int, InvalidArgumentError]]:
    """``reader``'s rows; a line csv cannot read (a cell over its limit, a line end
    inside an unquoted cell) raises ``InvalidArgumentError`` naming the file and line,
    or, where the next row's start is certain (a row of one line whose quotes close),
    is given as ``(line, error)``: its row fails alone."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            whole, line = lines.whole_line(), lines.row_start()
            if not whole:
                raise InvalidArgumentError(
                    "path", f"{path} line {line}: not a CSV row csv can read ({exc})"
                ) from None
            yield line, InvalidArgumentError("manifest", f"not a CSV row csv can read ({exc})")
            continue
        yield row


def jobs_from_manifest(
    path: str | os.PathLike[str],
    *,
    channel: str | None = None,
    encoding: str = "utf-8",
    columns: Mapping[str, str] | None = None,
    list_separator: str = ";",
    left_out: Callable[[LeftOut], object] | None = None,
) -> Iterator[UploadJob]:
    """The jobs of a CSV manifest (``.jsonl``: JSON Lines), one row at a time.
    ``encoding``: the file's, UTF-8 by default (with or without a byte order mark);
    ``columns``: our field -> the file's column, for another tool's export;
    ``list_separator``: between the items of ``tags``, ``playlists`` and
    ``geoblocking``. A row that is bad, that holds a control character or that is
    another row's job again (the same key, or the same file or url without a key) is
    left out as failed: handed to ``left_out``, or without it raised as
    ``InvalidArgumentError`` naming the file and the line (both lines for a job twice);
    an unknown column or key raises, naming it and its line."""
    return only_jobs(
        manifest_entries(
            path,
            channel=channel,
            encoding=encoding,
            columns=columns,
            list_separator=list_separator,
        ),
        left_out,
    )


def manifest_entries(
    path: str | os.PathLike[str],
    *,
    channel: str | None = None,
    encoding: str = "utf-8",
    columns: Mapping[str, str] | None = None,
    list_separator: str = ";",
) -> Iterator[UploadJob | LeftOut]:
    """A manifest's jobs and what is left out (failed rows, ignored columns), in order."""
    _decoder(encoding)  # an unknown encoding: refused before the file is opened
    _check_map(columns)
    if not isinstance(list_separator, str) or not list_separator:
        raise UsageError("--list-separator: give a separator (a character such as ';' or '|')")
    path = os.fspath(path)
    rows = _jsonl_rows if path.lower().endswith(".jsonl") else _csv_rows
    return once_each(path, rows(path, channel, encoding, columns, list_separator))


def _check_map(columns: Mapping[str, str] | None) -> None:
    if columns is None:
        return
    for field, column in columns.items():
        if field not in COLUMNS:
            raise UsageError(
                f"--map {field}={column}: no field {field!r}; the fields are {', '.join(COLUMNS)}"
            )
        if not isinstance(column, str) or not column:
            raise UsageError(f"--map {field}=: give the column that holds {field}")


def _mapping(
    header: list[str], columns: Mapping[str, str] | None, path: str, line: int = 1
) -> tuple[dict[str, list[str]], list[str]]:
    """The fields each column of ``header`` (on file line ``line``) gives, and the
    columns ignored."""
    if columns is None:
        unknown = [c for c in header if c not in COLUMNS]
        if unknown:
            raise UsageError(
                f"{path} line {line}: unknown column(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(COLUMNS)} (another tool's columns: --map FIELD=COLUMN)"
            )
        return {c: [c] for c in header}, []
    missing = [c for c in columns.values() if c not in header]
    if missing:
        raise UsageError(
            f"{path}: --map names column(s) the file lacks: {', '.join(map(repr, missing))}; "
            f"its columns: {', '.join(header)}"
        )
    fields: dict[str, list[str]] = {}
    for field, column in columns.items():
        fields.setdefault(column, []).append(field)
    return fields, [c for c in header if c not in fields]


class _Lines:
    """A CSV manifest's lines for ``csv``, comments left out (``#`` lines before the
    header, and after a Kaltura ``*`` header: those in ``dropped``, by line, to be
    reported), with the file line each row starts on. With ``mapped`` (the columns a
    map names), a ``#`` line before the header that holds them all is the header:
    Kaltura's older bulk CSV names its fields so (``#Name,Description,Tags,URL``)."""

    def __init__(self, lines: Iterator[str], mapped: Collection[str] = ()) -> None:
        self._lines = lines
        self._mapped = frozenset(mapped)
        self._number = 0
        self._taken: collections.deque[int] = collections.deque()
        self._header = False
        self._comments = True
        self.dropped: list[int] = []  # '#' lines after a '*' header, not yet reported
        self._last = ""  # the line given last (a reference, not a copy)

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        while True:
            text = next(self._lines)
            self._number += 1
            if self._comments and text.startswith("#"):
                if not self._header and self._names_the_map(text[1:]):
                    self._header = True  # Kaltura's older header: '#' lines after it
                    text = text[1:]  # are comments, reported as a '*' header's are
                    self._taken.append(self._number)
                    self._last = text
                    return text
                if self._header:
                    self.dropped.append(self._number)
                continue
            if not self._header:
                self._header = True
                if text.startswith("*"):
                    text = text[1:]
                else:
                    self._comments = False
            if self._taken or text.strip():  # a blank line between rows is no row's
                self._taken.append(self._number)
            self._last = text
            return text

    def _names_the_map(self, text: str) -> bool:
        if not self._mapped:
            return False
        try:
            cells = next(csv.reader([text]), [])
        except csv.Error:
            return False
        return self._mapped <= {cell.strip() for cell in cells}

    def whole_line(self) -> bool:
        """Whether the row csv is reading is one line whose quotes all close: csv
        stopping in it, the next line starts a row."""
        return len(self._taken) == 1 and self._last.count('"') % 2 == 0

    def row_start(self) -> int:
        """The file line the row csv just read starts on (its lines are forgotten)."""
        first = self._taken[0] if self._taken else self._number
        self._taken.clear()
        return first


def _failed(
    line: int, where: str, exc: InvalidArgumentError, key: object = None
) -> tuple[int, LeftOut]:
    reason = exc.message.removeprefix(f"{where}: ")
    if not reason.startswith(exc.argument):
        reason = f"{exc.argument}: {reason}"
    known = key.strip() if isinstance(key, str) and key.strip() else None
    return line, LeftOut(where, "failed", reason, argument=exc.argument, key=known)


def _key_cell(cells: Mapping[str, Any], fields: Mapping[str, list[str]]) -> object:
    """A CSV row's ``key`` cell (through the map), ``None`` without one."""
    return next((cells.get(c) for c, names in fields.items() if "key" in names), None)


def _csv_rows(
    path: str,
    channel: str | None,
    encoding: str,
    columns: Mapping[str, str] | None,
    separator: str,
) -> Iterator[tuple[int, UploadJob | LeftOut]]:
    base = os.path.dirname(os.path.abspath(path))
    with open(path, "rb") as raw:
        lines = _Lines(_lines(raw, path, encoding), (columns or {}).values())
        reader = csv.DictReader(lines)
        try:
            header = reader.fieldnames or []
        except csv.Error as exc:
            raise InvalidArgumentError(
                "path", f"{path} line 1: not a CSV header csv can read ({exc})"
            ) from None
        header_line = lines.row_start()  # after any comment lines
        header = list(header)
        twice = sorted({c for c in header if header.count(c) > 1})
        if twice:
            raise UsageError(f"{path}: column(s) named twice: {', '.join(twice)}")
        fields, ignored = _mapping(header, columns, path, header_line)
        given = {f for names in fields.values() for f in names}
        if "path" not in given and "url" not in given:
            raise UsageError(
                f"{path}: the manifest needs a header row with a 'path' or 'url' column"
                + (" (or --map path=COLUMN / url=COLUMN)" if columns is not None else "")
            )
        if ignored:
            yield 1, LeftOut(path, "ignored", f"columns not mapped: {', '.join(ignored)}")
        for cells in _rows(reader, path, lines):
            yield from _comments_after_header(lines, path)
            if isinstance(cells, tuple):  # a row csv could not read: it fails alone
                line, error = cells
                yield _failed(line, f"{path} line {line}", error)
                continue
            line = lines.row_start()
            where = f"{path} line {line}"
            try:
                if None in cells:
                    raise InvalidArgumentError("row", "more cells than the header has")
                row = {f: cells[c] for c, names in fields.items() for f in names}
                _no_control(row, where)
                job = job_from_row(
                    row, base=base, channel=channel, where=where, list_separator=separator
                )
            except InvalidArgumentError as exc:
                yield _failed(line, where, exc, _key_cell(cells, fields))
                continue
            yield line, job
        yield from _comments_after_header(lines, path)


def _comments_after_header(lines: _Lines, path: str) -> Iterator[tuple[int, LeftOut]]:
    """The ``#`` lines read as comments after a Kaltura ``*`` header, each reported."""
    for line in lines.dropped:
        yield (
            line,
            LeftOut(
                f"{path} line {line}",
                "skipped",
                "starts with '#' after the '*' header: read as a comment (quote its first "
                'cell, "#...", to make it a row)',
            ),
        )
    lines.dropped.clear()


class _UnknownKey(InvalidArgumentError):
    """A JSON Lines key the tool does not know (without a map): the whole file stops."""


class _KeyTwice(Exception):
    """A JSON object that names one key twice (json keeps the last one silently)."""


def _once_each_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for key, value in pairs:
        if key in row:
            raise _KeyTwice(f"{key!r} twice in one object (which one is meant?)")
        row[key] = value
    return row


def _jsonl_rows(
    path: str,
    channel: str | None,
    encoding: str,
    columns: Mapping[str, str] | None,
    separator: str,
) -> Iterator[tuple[int, UploadJob | LeftOut]]:
    base = os.path.dirname(os.path.abspath(path))
    ignored: dict[str, None] = {}
    line = 0
    long_lines: list[int] = []  # lines over MAX_LINE: each fails alone
    with open(path, "rb") as raw:
        for line, text in enumerate(_lines(raw, path, encoding, long_lines), 1):
            where = f"{path} line {line}"
            if long_lines and long_lines[-1] == line:
                too_long = InvalidArgumentError("manifest", f"longer than {MAX_LINE} characters")
                yield _failed(line, where, too_long)
                continue
            if not text.strip():
                continue
            row: Any = None  # this line's (none while it does not parse)
            try:
                try:
                    row = json.loads(text, object_pairs_hook=_once_each_key)
                except _KeyTwice as exc:
                    raise InvalidArgumentError("manifest", str(exc)) from None
                except (ValueError, RecursionError) as exc:
                    raise InvalidArgumentError("manifest", f"not JSON ({exc})") from None
                if not isinstance(row, dict):
                    raise InvalidArgumentError("manifest", "expected a JSON object")
                if columns is None:
                    unknown = next((k for k in row if k not in COLUMNS), None)
                    if unknown is not None:  # the file's problem, not the row's: it stops
                        raise _UnknownKey(
                            unknown, f"{where}: unknown column/key {unknown!r}; known: {COLUMNS}"
                        )
                else:
                    row, left = _mapped_object(row, columns)
                    ignored.update((k, None) for k in left[: max(0, 40 - len(ignored))])
                _no_control({k: v for k, v in row.items() if isinstance(v, str)}, where)
                job = job_from_row(
                    row, base=base, channel=channel, where=where, list_separator=separator
                )
            except _UnknownKey:
                raise
            except InvalidArgumentError as exc:
                yield _failed(line, where, exc, row.get("key") if isinstance(row, dict) else None)
                continue
            yield line, job
    if ignored:
        yield line, LeftOut(path, "ignored", f"keys not mapped: {', '.join(ignored)}")


def _mapped_object(
    row: dict[str, Any], columns: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """A JSON Lines object's keys through ``columns`` (a key it lacks: a field not
    given), and its keys ignored."""
    mapped = {field: row[key] for field, key in columns.items() if key in row}
    taken = set(columns.values())
    return mapped, [key for key in row if key not in taken]


def check_source(source: str | os.PathLike[str], *, channel: str | None, **options: Any) -> int:
    """Read a whole folder or manifest once (blocking): the number of jobs, or the
    first problem of the whole (an unknown column, bytes that are not the encoding)
    before anything is run; rows that fail are not counted. ``options``: those of
    ``jobs_from_source`` (``encoding``, ``columns``...)."""
    entries = source_entries(source, channel=channel, **options)
    return sum(1 for e in entries if not isinstance(e, LeftOut))


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
            elif (why := _not_video(entry.name)) is not None:
                skipped.append((entry.name, why))
            else:
                videos.append(entry.name)
    return videos, skipped


def _not_video(name: str) -> str | None:
    """Why a folder's file is not taken as a video, or ``None``: a video extension is
    one; an extension known as another kind (``NOT_VIDEO_SUFFIXES``, or a type the
    system's table gives that is not video) is not; no extension, or one nobody
    knows, is tried (the platform judges)."""
    suffix = os.path.splitext(name)[1].lower()
    if not suffix or suffix in VIDEO_SUFFIXES:
        return None
    kind = (mimetypes.guess_type(name)[0] or "").lower()
    if kind.startswith("video/") or kind in VIDEO_TYPES:
        return None
    if suffix in NOT_VIDEO_SUFFIXES or kind:
        return f"not a video (a {suffix} file{', ' + kind if kind else ''})"
    return None


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
    columns: Mapping[str, str] | None = None,
    list_separator: str = ";",
    max_feed_bytes: int | None = None,
    left_out: Callable[[LeftOut], object] | None = None,
) -> Iterator[UploadJob]:
    """A folder, a ``.csv`` or ``.jsonl`` manifest (read as ``encoding``, its columns
    through ``columns``, its lists split at ``list_separator``), or a feed
    (``.xml``/``.rss``; ``categories``: the platform's, for its ``media:category``; at
    most ``max_feed_bytes``). Each row or item that gives no job, and what the source
    holds that is not used, goes to ``left_out``; without it a failed row or item
    raises ``InvalidArgumentError``."""
    entries = source_entries(
        source,
        channel=channel,
        encoding=encoding,
        categories=categories,
        columns=columns,
        list_separator=list_separator,
        max_feed_bytes=max_feed_bytes,
    )
    return only_jobs(entries, left_out)


def source_entries(
    source: str | os.PathLike[str],
    *,
    channel: str | None,
    encoding: str = "utf-8",
    categories: Collection[str] | None = None,
    columns: Mapping[str, str] | None = None,
    list_separator: str = ";",
    max_feed_bytes: int | None = None,
) -> Iterator[UploadJob | LeftOut]:
    """``jobs_from_source``'s jobs and what is left out, in order (blocking reads)."""
    source = os.fspath(source)
    if os.path.isdir(source):
        return iter(jobs_from_folder(source, channel=channel))
    if not os.path.lexists(source):
        raise UsageError(f"{source}: no such file or folder")
    lower = source.lower()
    if os.path.isfile(source) and lower.endswith((".csv", ".jsonl")):
        return manifest_entries(
            source,
            channel=channel,
            encoding=encoding,
            columns=columns,
            list_separator=list_separator,
        )
    if os.path.isfile(source) and lower.endswith((".xml", ".rss")):
        from ._feed import MAX_FEED_BYTES, feed_file_entries

        return feed_file_entries(
            source,
            channel,
            categories,
            MAX_FEED_BYTES if max_feed_bytes is None else max_feed_bytes,
        )
    raise UsageError(f"{source}: not a folder, a .csv or .jsonl manifest or a .xml/.rss feed")
