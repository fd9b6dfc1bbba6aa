"""A prefix of an S3-compatible bucket as a batch's source, and a job whose ``url`` is an
object (``s3://bucket/key``): the ``s3`` extra.

``jobs_from_bucket("s3://bucket/prefix/")`` lists every object under the prefix (nested
keys too, in key order) and makes each video a job keyed by its ``s3://`` name (a name
longer than a journal key holds: a digest of it, as for a url); the others are passed
to ``skipped``. Video: a video extension (``.mp4``, ``.mov``, ``.mkv``, ...), or,
without one, a ``video/*`` Content-Type (a HEAD asks). The CLI writes these jobs to a
temporary JSON Lines manifest and runs that, so a bucket batch is a manifest batch.
"""

from __future__ import annotations

import asyncio
import json
import os
import posixpath
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs

from .._client import Client
from .._errors import InvalidArgumentError, UsageError
from .._internals import internals
from .._models import UploadedFile
from .._s3 import SCHEME, S3Object, is_s3_url, list_prefix, object_info, s3_client
from .._transfer.files import LocalFile
from ._jobs import UploadJob
from ._journal import MAX_KEY_LENGTH

__all__ = ["jobs_from_bucket", "object_send", "object_version", "write_bucket_manifest"]


def split_prefix(url: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` as ``(bucket, prefix)`` (the prefix may be empty)."""
    if not is_s3_url(url):
        raise InvalidArgumentError("source", "expected s3://BUCKET/PREFIX")
    bucket, _, prefix = url[len(SCHEME) :].partition("/")
    if not bucket:
        raise InvalidArgumentError("source", "expected s3://BUCKET/PREFIX: no bucket")
    return bucket, prefix


def _title(key: str) -> str:
    text = posixpath.splitext(posixpath.basename(key))[0]
    return "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text).strip() or "video"


async def jobs_from_bucket(
    url: str,
    *,
    channel: str | None,
    skipped: Callable[[str, str], None] = lambda name, why: None,
) -> AsyncIterator[UploadJob]:
    """One job per video object under ``s3://bucket/prefix`` (nested too), titled by its
    name, keyed by its ``s3://`` name; each other object goes to ``skipped(name, why)``."""
    if not channel:
        raise UsageError("a bucket source needs --channel (a manifest can name one per row)")
    bucket, prefix = split_prefix(url)
    async for obj in list_prefix(bucket, prefix, skipped):
        name = obj.url
        try:
            job = UploadJob(
                url=name,
                title=_title(obj.key),
                channel=channel,
                key=name if len(name) <= MAX_KEY_LENGTH else None,
            )
        except InvalidArgumentError as exc:  # a name no key or title can hold
            skipped(name.encode("unicode_escape").decode(), exc.message)
            continue
        yield job


async def write_bucket_manifest(
    url: str, folder: str, *, channel: str | None, skipped: Callable[[str, str], None]
) -> str:
    """The jobs of ``jobs_from_bucket`` as a JSON Lines manifest in ``folder`` (written
    off the loop, a thousand rows at a time); its path."""
    path = os.path.join(folder, "bucket.jsonl")
    rows: list[str] = []

    def write(lines: list[str], mode: str) -> None:
        with open(path, mode, encoding="utf-8") as f:
            f.writelines(lines)

    await asyncio.to_thread(write, [], "w")
    async for job in jobs_from_bucket(url, channel=channel, skipped=skipped):
        row: dict[str, Any] = {"url": job.url, "title": job.title, "channel": job.channel}
        if job.key is not None:
            row["key"] = job.key
        rows.append(json.dumps(row, ensure_ascii=False) + "\n")
        if len(rows) >= 1000:
            await asyncio.to_thread(write, rows, "a")
            rows = []
    await asyncio.to_thread(write, rows, "a")
    return path


async def object_version(url: str) -> tuple[LocalFile, str]:
    """An object job's size, as the ``LocalFile`` the batch plans with, and the ETag of
    the version it sends (a HEAD)."""
    obj = S3Object.from_url(url, "url")
    async with s3_client() as client:
        info = await object_info(client, obj)
    return LocalFile(url, info.size), info.etag


async def object_send(
    client: Client,
    job: UploadJob,
    local: LocalFile,
    options: dict[str, Any],
    etag: str | None = None,
) -> UploadedFile:
    """Send a job's file, or its object (``client.uploads.file``, which reads it: the
    version ``etag`` names, ``FileChangedError`` if the object is another now)."""
    if job.url is not None and is_s3_url(job.url):
        obj = S3Object.from_url(job.url, "url")
        return await client.uploads.file(attrs.evolve(obj, etag=etag), **options)
    return await internals(client).send_file(local, **options)
