"""The mapping report of a batch: one row per job (key, source, status, video id, page
and embed addresses, error), written as each job ends and flushed at once, so that a
run killed at any instant leaves a valid report of what it finished."""

from __future__ import annotations

import asyncio
import csv
import errno
import io
import json
import logging
import os
import stat
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TYPE_CHECKING

from .._errors import InvalidArgumentError, VidapiError
from ._jobs import JobResult, JobStatus, LeftOut

if TYPE_CHECKING:
    from .._client import Client

log = logging.getLogger("vidapi_async.batch")

__all__ = ["REPORT_COLUMNS", "JobReport", "Links", "ReportWriter", "report_kind"]

REPORT_COLUMNS = ("key", "source", "status", "video_id", "url", "embed_url", "error")
"""A report's columns (CSV) or keys (JSON Lines), in order."""


def report_kind(path: str, argument: str = "report") -> str:
    """A report's kind by its name (``.csv`` or ``.jsonl``); any other is an
    ``InvalidArgumentError`` naming ``argument``, before anything is done."""
    kind = os.path.splitext(path)[1].lower()
    if kind not in (".csv", ".jsonl"):
        raise InvalidArgumentError(argument, f"{path}: a report is a .csv or a .jsonl file")
    return kind


class ReportWriter:
    """A ``.csv`` or ``.jsonl`` report, written on its own thread (the event loop never
    waits on the disk). The file is started anew by each run; a re-run reports every
    job again (a skipped one with its video id), so its report is complete."""

    def __init__(
        self, path: str | os.PathLike[str], *, not_over: Mapping[str, str] | None = None
    ) -> None:
        self.path = os.fspath(path)
        self._not_over = dict(not_over or {})
        """Files the report must not be (what each is, by path): the journal, the
        manifest."""
        self._csv = report_kind(self.path) == ".csv"
        self._file: IO[str] | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vidapi-report")
        self._closed = False

    def _refuse(self, why: str) -> InvalidArgumentError:
        return InvalidArgumentError("report", f"{self.path}: {why}")

    def _open(self) -> None:
        # A symbolic link is not followed (its target would be truncated), and a file
        # is emptied only when it is nobody else's: a report of a run before, or empty.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        link = self._refuse("is a symbolic link; a report is written to a plain file")
        if os.path.islink(self.path):  # where the system has no O_NOFOLLOW
            raise link
        try:
            fd = os.open(self.path, flags, 0o600)  # the owner's only, as the journal
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise link from None
            raise self._refuse(f"cannot write it ({exc.strerror})") from None
        try:
            self._claim(fd)
            if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:  # a report of an earlier run
                os.fchmod(fd, 0o600)
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
        except BaseException:
            os.close(fd)
            raise
        self._file = open(fd, "w", encoding="utf-8", newline="")  # noqa: SIM115
        if self._csv:
            self._line(REPORT_COLUMNS)

    def _claim(self, fd: int) -> None:
        """Refuse the file open as ``fd`` where it is one of ``not_over`` or holds
        something other than a report (its first line is not a report's)."""
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise self._refuse("is not a regular file")
        for other, what in self._not_over.items():
            try:
                if os.path.samestat(status, os.stat(other)):
                    raise self._refuse(f"is the {what} ({other}); write the report elsewhere")
            except OSError:
                continue  # not there (yet): not this file
        first = os.read(fd, 64 << 10).split(b"\n", 1)[0].rstrip(b"\r")
        if first and not _report_header(first, csv_=self._csv):
            raise self._refuse(
                "exists and is not a report (its first line is not a report's header); "
                "remove it or write the report elsewhere"
            )

    def _line(self, values: tuple[str, ...]) -> None:
        assert self._file is not None
        buffer = io.StringIO()
        # A cell holding a CR is quoted (csv quotes only the line end it writes, LF).
        if any("\r" in v for v in values):
            csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL).writerow(values)
        else:
            csv.writer(buffer, lineterminator="\n").writerow(values)
        self._file.write(buffer.getvalue())
        self._file.flush()

    def _write(self, row: dict[str, str | None]) -> None:
        assert self._file is not None
        if self._csv:
            self._line(tuple(_inert(row[c] or "") for c in REPORT_COLUMNS))
        else:
            self._file.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._file.flush()

    def _close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    async def open(self) -> None:
        """Create (or truncate) the file; ``InvalidArgumentError`` if it cannot be."""
        await asyncio.get_running_loop().run_in_executor(self._thread, self._open)

    async def write(self, row: dict[str, str | None]) -> None:
        """Append one row (``REPORT_COLUMNS``' keys) and flush it."""
        await asyncio.get_running_loop().run_in_executor(self._thread, self._write, row)

    async def close(self) -> None:
        """Close the file (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.get_running_loop().run_in_executor(self._thread, self._close)
        finally:
            self._thread.shutdown(wait=True)


def _report_header(line: bytes, *, csv_: bool) -> bool:
    """Whether ``line`` is the first line of a report of ours."""
    if csv_:
        return line == ",".join(REPORT_COLUMNS).encode()
    try:
        row = json.loads(line)
    except ValueError:
        return False
    return isinstance(row, dict) and tuple(row) == REPORT_COLUMNS


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _inert(cell: str) -> str:
    """``cell`` as a spreadsheet shows it and never runs it: a leading ``'`` before a
    cell it would read as a formula (OWASP's advice on CSV injection)."""
    return "'" + cell if cell.startswith(_FORMULA) else cell


class Links:
    """Videos' page and embed addresses for report rows. The first public video's are
    asked of the API (``GET /video/<id>``); where both hold its id once, as a path
    segment, the others' are written from them with no request (a report then costs a
    pipeline about nothing). A private video's page may be its private id's: always
    asked. ``None`` without a client or a video, or when the API does not give them
    (said at WARNING)."""

    def __init__(self, client: Client | None) -> None:
        self._client = client
        self._forms: tuple[tuple[str, str], tuple[str, str]] | None = None

    async def of(
        self, video_id: str | None, key: str, *, private: bool = False
    ) -> tuple[str | None, str | None]:
        """The page and embed addresses of ``video_id`` (job ``key``)."""
        if self._client is None or video_id is None:
            return None, None
        if self._forms is not None and not private:
            (p1, p2), (e1, e2) = self._forms
            return f"{p1}/{video_id}{p2}", f"{e1}/{video_id}{e2}"
        try:
            video = await self._client.get_video(video_id, ("id", "url", "embed_url"))
        except VidapiError as exc:
            log.warning("job %s: no addresses for the report (%s)", key, type(exc).__name__)
            return None, None
        if not private and video.url and video.embed_url:
            forms = [_around(link, video_id) for link in (video.url, video.embed_url)]
            if forms[0] is not None and forms[1] is not None:
                self._forms = (forms[0], forms[1])
        return video.url, video.embed_url


def _around(link: str, video_id: str) -> tuple[str, str] | None:
    """``link`` split around its one ``/<video_id>`` segment, or ``None``."""
    if link.count(video_id) != 1:
        return None
    before, found, after = link.partition(f"/{video_id}")
    if not found or (after and after[0] not in "/?#"):
        return None
    return before, after


class JobReport:
    """A batch's report (``BatchUploader(report=...)``): one row per job as it ends,
    with its page and embed addresses."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        client: Client,
        journal: str | os.PathLike[str] | object = None,
    ) -> None:
        journal_file = (
            os.fspath(journal)
            if isinstance(journal, str | os.PathLike)
            and not os.fspath(journal).startswith(("postgresql://", "postgres://"))
            else None
        )
        self.writer = ReportWriter(
            path, not_over={} if journal_file is None else {journal_file: "journal"}
        )
        """The file written (never the batch's journal file)."""
        self._links = Links(client)

    async def row(self, result: JobResult) -> None:
        """The row of a job that ended, written and flushed."""
        video_id = None if result.status is JobStatus.LOST else result.video_id
        page, embed = await self._links.of(video_id, result.key, private=bool(result.job.private))
        await self.writer.write(
            {
                "key": result.key,
                "source": result.job.where,
                "status": result.status.value,
                "video_id": result.video_id,
                "url": page,
                "embed_url": embed,
                "error": None if result.error is None else str(result.error),
            }
        )

    async def left_out(self, left: LeftOut) -> None:
        """The row of a manifest row or feed item that gave no job (failed or skipped,
        with its reason); what is ``ignored`` has none."""
        if left.status == "ignored":
            return
        await self.writer.write(
            {
                "key": left.key,
                "source": left.where,
                "status": left.status,
                "video_id": None,
                "url": None,
                "embed_url": None,
                "error": left.reason,
            }
        )
