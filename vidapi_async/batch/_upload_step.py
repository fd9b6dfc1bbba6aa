"""The upload step (``UploadStep``, a base of ``Pipeline``): an upload address for the
job, a file sent single-shot or chunked, a chunked upload an earlier run recorded
resumed, or the platform asked to fetch a url."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .._errors import (
    FileError,
    VidapiError,
)
from .._models import UploadSession
from .._s3 import is_s3_url
from .._transfer.files import LocalFile
from ._bucket import object_send, object_version
from ._jobs import UploadJob
from ._journal import JobRecord, Stage
from ._pipeline_state import JobRun, PipelineState

__all__ = ["SOURCE_VERSION", "UploadStep", "acts"]

log = logging.getLogger("vidapi_async.batch")


SOURCE_VERSION = "source_etag"
"""Where a record of an object's chunked upload in flight keeps the object's ETag (its
``metadata``, which a job has once done only): a resume needs the same version."""


def acts(run: JobRun) -> bool:
    """Whether the job acts for an account or profile of its own."""
    return run.job.account is not None or run.job.profile is not None


class UploadStep(PipelineState):
    """``Pipeline.upload`` and its helpers."""

    async def upload(self, run: JobRun, *, again: bool = False) -> None:
        """Send the job's file (or have the platform fetch its url); ``again``: after
        the platform lost it, from ``creating`` (a record never moves back)."""
        if not again:
            self.quota_stop(run)
        job, record, local = run.job, run.record, run.local
        assert not isinstance(local, FileError)
        etag: str | None = None  # an object's: the version sent
        if local is None and job.url is not None and is_s3_url(job.url):
            local, etag = await object_version(job.url)  # sent as a file is, by object_send
        watch = self.tally.watch(record.key, job.where, None if local is None else local.size)
        if local is None:
            assert job.url is not None
            uploaded = await self.client.uploads.from_url(
                job.url,
                headers=job.headers,
                upload_session=await self._address(run),
                progress=watch,
                read_size=self.uploads["read_size"],
            )
        else:
            uploaded = await self._send(run, local, watch, again=again, etag=etag)
            if uploaded is None:
                return  # resumed, and recorded
        self.tally.files.pop(record.key, None)  # off the list of uploads in flight
        if not acts(run):  # (the next job's may be another account's: none fetched for it)
            self.spares.ahead(self.waiting())  # the next job's address, during this create
        # Not waited for: the create's step saves 'creating' next, in this loop turn,
        # and waits for it before sending (issue 43: one trip to an SQLite journal less).
        # A crash before that commit uploads again, as one before this write did.
        await self.advance_soon(
            record,
            record.stage if again else Stage.UPLOADED,
            file_url=uploaded.url,
            upload_url=None,
            metadata=None,  # (an object's version, kept while its upload could resume)
        )

    async def _address(self, run: JobRun) -> UploadSession:
        """An upload address for the job: a spare fetched ahead for the client's own
        account, one asked for now by a job of another account (its token's)."""
        if acts(run):
            return await self.client.get_upload_session()
        return await self.spares.take()

    async def _send(
        self,
        run: JobRun,
        local: LocalFile,
        watch: Callable[[int, int], None] | None,
        *,
        again: bool,
        etag: str | None = None,
    ) -> Any:
        """Send a file (checked already: the client does not check it again), chunked
        as the batch says; a chunked upload's address is recorded first, and one
        recorded by an earlier run is resumed (``None``: resumed and recorded). An
        object's (``etag``: the version a HEAD saw) is recorded with its version, and
        resumed only if the object is that version still."""
        record = run.record
        kwargs: dict[str, Any] = {
            "progress": watch,
            "read_size": self.uploads["read_size"],
            "range_size": self.uploads["range_size"],
            "filename": None,
            "upload_session": None,
            "resume": False,
            "chunked": False,
            "workers": self.uploads["workers"],
        }
        chunked = self.uploads["chunked"]
        if chunked if chunked is not None else self.client.uploads.chunks(local.size):
            kwargs["chunked"] = True
            if not again and await self._resumed(record, local, kwargs, run.job, etag):
                return None
            session = await self._address(run)
            await self.advance(
                record,
                record.stage if again else Stage.UPLOADING,
                upload_url=session.upload_url,
                progress_url=session.progress_url,
                **({} if etag is None else {"metadata": {SOURCE_VERSION: etag}}),
            )
            kwargs["upload_session"] = session
        else:
            kwargs["upload_session"] = await self._address(run)
        return await object_send(self.client, run.job, local, kwargs, etag)

    async def _resumed(
        self,
        record: JobRecord,
        local: LocalFile,
        kwargs: dict[str, Any],
        job: UploadJob,
        etag: str | None,
    ) -> bool:
        """Resume the chunked upload an earlier run recorded, if any, if its address
        still takes it and, for an object, if the object is still the version recorded
        with it (else its missing ranges would come from another version): recorded
        ``uploaded`` then."""
        if not (record.stage is Stage.UPLOADING and record.upload_url and record.progress_url):
            return False
        if etag is not None and (record.metadata or {}).get(SOURCE_VERSION) != etag:
            log.info(
                "job %s: its object changed since its upload started; starting over", record.key
            )
            return False
        session = UploadSession(record.upload_url, record.progress_url)
        try:
            uploaded = await object_send(
                self.client,
                job,
                local,
                {**kwargs, "upload_session": session, "resume": True},
                etag,
            )
        except VidapiError as exc:  # the old address is gone or refused
            log.info(
                "job %s: cannot resume its upload (%s); starting over",
                record.key,
                type(exc).__name__,
            )
            return False
        await self.advance(
            record, Stage.UPLOADED, file_url=uploaded.url, upload_url=None, metadata=None
        )
        return True
