"""Where batch jobs come from on the command line: a folder of files or a CSV manifest.

Both are read lazily, one job at a time. A bad row raises ``InvalidArgumentError``
naming the file and the line (the rows before it may already be running: the batch
streams).

CSV columns (a header row is required; only ``path`` is always needed):

``path, url, headers, title, channel, published, password, live, key, subtitles``

- ``path`` relative to the manifest's folder, or absolute; or ``url``, an http(s) file
  streamed through to the platform (one of the two per row);
- ``headers``: the name of an environment variable holding the headers sent to the
  url's source (``Name: value`` lines), never the secret itself;
- ``title`` defaults to the file name without extension; ``channel`` to ``--channel``;
- ``published`` and ``live``: true/false/1/0/yes/no (default true and false);
- ``subtitles``: ``en=subs/en.srt;fr=https://example.com/fr.srt``.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import os
import unicodedata
from collections.abc import Callable, Iterator
from typing import BinaryIO

from .._errors import InvalidArgumentError, UsageError
from .._protocol import url_file_name, url_for_humans
from ._jobs import SubtitleSpec, UploadJob, url_key

__all__ = ["folder_entries", "jobs_from_folder", "jobs_from_manifest", "jobs_from_source"]

SKIPPED_SUFFIXES = (
    ".srt",
    ".csv",
    ".sqlite",
    ".sqlite-wal",
    ".sqlite-shm",
    ".json",
    ".txt",
    ".lock",
)
MAX_LINE = 1 << 20
"""Characters a manifest's line may hold (csv's own limit is 128 KiB a cell)."""
COLUMNS = (
    "path", "url", "headers", "title", "channel", "published", "password", "live", "key",
    "subtitles",
)  # fmt: skip


def _bool(value: str, column: str, default: bool) -> bool:
    text = value.strip().lower()
    if not text:
        return default
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InvalidArgumentError(column, f"expected true or false, got {value!r}")


def _subtitles(value: str, base: str) -> list[SubtitleSpec]:
    specs = []
    for item in filter(None, (p.strip() for p in value.split(";"))):
        lang, sep, target = item.partition("=")
        if not sep or not target:
            raise InvalidArgumentError("subtitles", f"expected LANG=FILE, got {item!r}")
        if target.startswith(("http://", "https://")):
            specs.append(SubtitleSpec(lang.strip(), url=target.strip()))
        else:
            specs.append(SubtitleSpec(lang.strip(), path=os.path.join(base, target.strip())))
    return specs


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
        bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cs")), None)
        if bad is not None:
            raise InvalidArgumentError(
                column, f"{where}: has the control character or lone surrogate {bad!r}"
            )


def _identity(job: UploadJob) -> tuple[str, str]:
    """What makes two rows one job (the key given, else the file or the url), and how
    a message names it (a url without its query, which may hold a signature)."""
    if job.key is not None:
        return f"key\0{job.key}", f"key {job.key!r}"
    if job.path is not None:
        real = os.path.realpath(job.path)
        return f"file\0{real}", f"file {real}"
    return f"url\0{url_key(job.url or '')}", f"url {url_for_humans(job.url or '')}"


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
    path: str, *, channel: str | None = None, encoding: str = "utf-8"
) -> Iterator[UploadJob]:
    """The jobs of a CSV manifest, one row at a time. ``encoding``: the file's, UTF-8
    by default (with or without a byte order mark). A row that is bad, that holds a
    control character or that is another row's job again (the same key, or the same
    file or url without a key) raises ``InvalidArgumentError`` naming the file and the
    line (both lines for a job twice)."""
    _decoder(encoding)  # an unknown encoding: refused before the file is opened
    base = os.path.dirname(os.path.abspath(path))
    seen: dict[bytes, int] = {}  # a digest of each job's identity -> its line
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
            raise UsageError(f"{path}: unknown column(s) {', '.join(unknown)}; known: {COLUMNS}")
        ended = reader.line_num  # the header's last line
        for row in _rows(reader, path):
            line, ended = ended + 1, reader.line_num  # a row may span lines (quoted)
            where = f"{path} line {line}"
            _no_control(row, where)
            file = (row.get("path") or "").strip()
            url = (row.get("url") or "").strip()
            if not file and not url:
                raise InvalidArgumentError("path", f"{where}: neither a path nor a url")
            name = file or url_file_name(url)
            try:
                job = UploadJob(
                    path=os.path.join(base, file) if file else None,
                    url=url or None,
                    headers=_headers((row.get("headers") or "").strip()),
                    title=(row.get("title") or "").strip() or os.path.splitext(name)[0] or "video",
                    channel=(row.get("channel") or "").strip() or (channel or ""),
                    published=_bool(row.get("published") or "", "published", True),
                    password=(row.get("password") or None),
                    live=_bool(row.get("live") or "", "live", False),
                    key=(row.get("key") or "").strip() or None,
                    subtitles=_subtitles(row.get("subtitles") or "", base),
                )
            except InvalidArgumentError as exc:
                raise InvalidArgumentError(exc.argument, f"{where}: {exc.message}") from None
            identity, shown = _identity(job)
            digest = hashlib.blake2b(
                identity.encode("utf-8", "surrogateescape"), digest_size=12
            ).digest()
            first = seen.setdefault(digest, line)
            if first != line:
                raise InvalidArgumentError(
                    "key",
                    f"{path} line {first} and line {line}: the same job twice "
                    f"({shown}); one spec per job: remove a row, or give "
                    "each its own key",
                )
            yield job


def check_source(source: str, *, channel: str | None, encoding: str = "utf-8") -> int:
    """Read a whole folder or manifest once, checking every row (blocking): the number
    of jobs, or the first bad row's ``InvalidArgumentError``, before anything is run."""
    return sum(1 for _ in jobs_from_source(source, channel=channel, encoding=encoding))


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


def jobs_from_folder(folder: str, *, channel: str | None) -> Iterator[UploadJob]:
    """One job per video file in ``folder`` (sorted; not recursive), titled by name:
    ``folder_entries`` says which files, and why the others are left out."""
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
    source: str, *, channel: str | None, encoding: str = "utf-8"
) -> Iterator[UploadJob]:
    """A folder or a ``.csv`` manifest (read as ``encoding``)."""
    if os.path.isdir(source):
        return jobs_from_folder(source, channel=channel)
    if os.path.isfile(source) and source.lower().endswith(".csv"):
        return jobs_from_manifest(source, channel=channel, encoding=encoding)
    raise UsageError(f"{source}: not a folder or a .csv manifest")
