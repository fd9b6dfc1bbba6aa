"""What a job needs from the disk before it starts: its key, its file checked, its
subtitle files checked; done in a worker thread, for many queued jobs in one trip."""

from __future__ import annotations

import asyncio

import attrs

from .._errors import FileError, SubtitleFileError, UsageError
from .._transfer.files import LocalFile, check_srt_file, inspect_file
from ._jobs import UploadJob, file_key, missing_key, url_key

__all__ = ["Checks", "Prepared", "check_all", "prepare"]


Prepared = tuple[str, LocalFile | FileError | None, dict[str, LocalFile] | UsageError, str | None]
"""What ``prepare`` finds of a job on disk."""


@attrs.define
class Checks:
    """A queued job, and its disk checks once done (``check_all``)."""

    job: UploadJob
    done: asyncio.Future[Prepared]


async def check_all(group: list[Checks]) -> None:
    """The disk checks of ``group``'s jobs in one trip to a worker thread, each handed
    to its job's future. A failure (a bug: ``prepare`` returns the checks' failures)
    is each job's; cancelled (the batch stopped), the jobs' futures are cancelled."""
    try:
        found = await asyncio.to_thread(_prepare_all, [checks.job for checks in group])
    except asyncio.CancelledError:
        for checks in group:
            checks.done.cancel()
        raise
    except Exception as exc:
        for checks in group:
            if not checks.done.done():
                checks.done.set_exception(exc)
                checks.done.exception()  # its worker raises it; not "never retrieved"
        return
    for checks, prepared in zip(group, found, strict=True):
        if not checks.done.done():
            checks.done.set_result(prepared)


def _prepare_all(jobs: list[UploadJob]) -> list[Prepared]:
    """``prepare`` for each job (blocking: in a worker thread)."""
    return [prepare(job) for job in jobs]


def prepare(job: UploadJob) -> Prepared:
    """Everything a job needs from the disk, in one trip to a worker thread (blocking):
    its key, its file checked, its subtitle files checked (or the first broken one),
    and the key of a failure recorded while its file was missing, to forget. The
    checks' failures are returned, not raised: a job the journal says is done needs
    neither. A missing file's job has ``missing_key``: its failure is recorded there,
    and a re-run tries it again."""
    local: LocalFile | FileError | None = None
    stale = None
    if job.path is None:
        key = job.key if job.key is not None else url_key(job.url or "")
    else:
        try:
            local = inspect_file(job.path)
        except FileError as exc:
            local = exc
        if job.key is not None:
            key = job.key
        else:
            try:
                key, stale = file_key(job.path), missing_key(job.path)
            except OSError:
                key = missing_key(job.path)
                if not isinstance(local, FileError):
                    local = FileError(job.where, "no such file")
    subtitles: dict[str, LocalFile] = {}
    for spec in job.subtitles:
        if spec.path is not None:
            try:
                subtitles[spec.language] = check_srt_file(spec.path)
            except FileError as exc:  # named as the job's subtitle, not its video
                named = FileError(exc.path, f"{exc.reason} (the job's {spec.language} subtitle)")
                return key, local, named, stale
            except SubtitleFileError as exc:
                return key, local, exc, stale
    return key, local, subtitles, stale
