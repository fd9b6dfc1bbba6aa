"""The upload host's handlers: single-shot multipart, the chunked protocol, progress,
and the stored files (served with Range support for the player).

Bodies are streamed to disk chunk by chunk in a worker thread; nothing holds a whole
file in memory. Like an nginx-style server it refuses chunked transfer encoding.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import mimetypes
import os
import re
import shutil
from collections.abc import Awaitable, Callable, Mapping
from typing import IO, Any

from aiohttp import web

from ._formdata import (
    FormDataReader,
    Malformed,
    boundary_of,
    format_ranges,
    media_type,
    merge_ranges,
    parse_content_range,
    parse_disposition,
)
from ._platform import PLATFORM, Platform

__all__ = ["routes"]

routes = web.RouteTableDef()
READ_CHUNK = 1024 * 1024


class UploadFailure(Exception):
    """An upload-server error: answered ``{"error": ...}`` in the requested form."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        plain: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.plain = plain
        self.headers = dict(headers or {})

    def response(self) -> web.Response:
        error: Any = self.message if self.plain else {"message": self.message, "code": self.status}
        return web.json_response({"error": error}, status=self.status, headers=self.headers)


def _p(request: web.Request) -> Platform:
    return request.app[PLATFORM]


def _upload(request: web.Request) -> dict[str, Any]:
    platform = _p(request)
    backend = platform.backend
    uuid = request.query.get("uuid", "")
    # The seal is compared as it arrived, escapes and all: the platform hands out its
    # addresses to be used exactly as returned, and a re-encoded one is refused.
    raw_query = request.raw_path.partition("?")[2]
    raw = [p.partition("=")[2] for p in raw_query.split("&") if p.startswith("seal=")]
    seal = raw[0] if len(raw) == 1 else ""
    upload = backend.store.get("upload", uuid)
    if upload is None or not backend.seal_ok(uuid, seal):
        raise UploadFailure(403, "invalid upload url: unknown uuid or bad seal")
    return upload


def _cut_point(platform: Platform, request: web.Request, size: int | None) -> int | None:
    """Where to cut this body off, when the reset fault strikes it."""
    faults = platform.faults
    if not size or not faults.applies(request.method, request.path):
        return None
    return size // 2 if faults.draw(faults.reset_rate) else None


class _Cut(Exception):
    """The reset fault struck: the connection is gone, nothing more to answer."""


def _cut_connection(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()
    raise _Cut


async def _stream_to(
    request: web.Request,
    read: Callable[[int], Awaitable[bytes]],
    f: IO[bytes],
    digest: Any,
    *,
    cut_after: int | None,
    uuid: str,
) -> int:
    """Copy what ``read`` gives (a part's or the request body's) into ``f``; returns the
    bytes written."""
    loop = asyncio.get_running_loop()
    platform = _p(request)
    written = 0

    def write(chunk: bytes) -> None:
        f.write(chunk)
        if digest is not None:
            digest.update(chunk)

    while True:
        try:
            async with asyncio.timeout(platform.body_timeout):
                chunk = await read(READ_CHUNK)
        except TimeoutError:
            # A Content-Length larger than the body: the connection is not held.
            _cut_connection(request)
        if not chunk:
            return written
        await loop.run_in_executor(None, write, chunk)
        written += len(chunk)
        platform.progress[uuid] = platform.progress.get(uuid, 0) + len(chunk)
        if cut_after is not None and written >= cut_after:
            _cut_connection(request)


def _probe(path: str) -> dict[str, str]:
    """Codec, size and timing facts via ffprobe when it is installed, else nothing."""
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        return {}
    import subprocess

    try:
        out = subprocess.run(  # noqa: S603 - fixed program, our own file
            [
                ffprobe,
                "-v",
                "quiet",
                "-print_format",
                "json",
                "-show_format",
                "-show_streams",
                path,
            ],
            capture_output=True,
            timeout=30,
            check=True,
        ).stdout
        info = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    facts: dict[str, str] = {}
    fmt = info.get("format", {})
    if "duration" in fmt:
        # Milliseconds, as the platform's descriptors show ("36920" for 36.92 s).
        facts["duration"] = str(round(float(fmt["duration"]) * 1000))
    if "bit_rate" in fmt:
        facts["bitrate"] = str(fmt["bit_rate"])
    if "format_name" in fmt:
        facts["format"] = str(fmt["format_name"])
    for stream in info.get("streams", []):
        kind = stream.get("codec_type")
        if kind == "video" and "vcodec" not in facts:
            facts["vcodec"] = str(stream.get("codec_name", "")).upper()
            if stream.get("width") and stream.get("height"):
                facts["dimension"] = f"{stream['width']}x{stream['height']}"
        elif kind == "audio" and "acodec" not in facts:
            facts["acodec"] = str(stream.get("codec_name", "")).upper()
    if "vcodec" in facts:
        facts["streamable"] = "Yes"
    return facts


async def _open(path: str, mode: str) -> IO[bytes]:
    """Open in a worker thread; a handler cancelled meanwhile still closes the file."""
    pending = asyncio.get_running_loop().run_in_executor(None, open, path, mode)
    try:
        return await asyncio.shield(pending)
    except asyncio.CancelledError:
        pending.add_done_callback(lambda done: None if done.exception() else done.result().close())
        raise


def _allocate(path: str, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)


def _sha1_file(path: str) -> str:
    digest = hashlib.sha1()  # noqa: S324 - a content id, as the platform's hash field
    with open(path, "rb") as f:
        while chunk := f.read(READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


async def _finish(
    request: web.Request, upload: dict[str, Any], path: str, filename: str, sha1: str | None
) -> dict[str, str]:
    """Store the descriptor of a completely received file and mark the upload done."""
    platform = _p(request)
    loop = asyncio.get_running_loop()
    if sha1 is None:
        sha1 = await loop.run_in_executor(None, _sha1_file, path)
    facts = await loop.run_in_executor(None, _probe, path) if platform.probe else {}
    size = (await loop.run_in_executor(None, os.stat, path)).st_size
    stem, ext = os.path.splitext(os.path.basename(filename) or "file")
    ext = ext.lower() if re.fullmatch(r"\.[A-Za-z0-9]{1,9}", ext) else ""
    stored = f"{upload['id']}{ext}"
    final = os.path.join(platform.files_dir, stored)
    await loop.run_in_executor(None, os.replace, path, final)
    descriptor = {
        "acodec": facts.get("acodec", ""),
        "bitrate": facts.get("bitrate", ""),
        "dimension": facts.get("dimension", ""),
        "duration": facts.get("duration", ""),
        "format": facts.get("format", ext.lstrip(".")),
        "hash": sha1,
        "name": stem,
        "seal": hashlib.sha256(f"{upload['id']}:{sha1}".encode()).hexdigest()[:32],
        "size": str(size),
        "streamable": facts.get("streamable", "No"),
        "vcodec": facts.get("vcodec", ""),
    }
    base = f"{platform.backend.upload_base}/files/{stored}"
    fragment = base64.urlsafe_b64encode(json.dumps(descriptor).encode()).decode().rstrip("=")
    descriptor["url"] = f"{base}#{fragment}"
    record = {"id": base, "path": final, "name": filename, "owner": upload["owner"]}
    record["duration"] = descriptor["duration"]  # a video made of it reads its length
    platform.state.put("file", base, record)
    upload.update(state="done", size=size, received=size, descriptor=descriptor)
    platform.state.put("upload", upload["id"], upload)
    platform.progress.pop(upload["id"], None)
    platform.bump("uploads_completed")
    return descriptor


@routes.post("/upload")
async def upload(request: web.Request) -> web.StreamResponse:
    try:
        return await _upload_handler(request)
    except UploadFailure as failure:
        return failure.response()
    except Malformed as exc:
        return UploadFailure(400, str(exc)).response()
    except _Cut:
        return web.Response(status=500)  # never arrives: the connection was aborted


async def _upload_handler(request: web.Request) -> web.StreamResponse:
    if "chunked" in request.headers.get("Transfer-Encoding", "").lower():
        raise UploadFailure(411, "chunked transfer encoding is refused: send a Content-Length")
    upload = _upload(request)
    platform = _p(request)
    if upload["id"] in platform.busy:
        raise UploadFailure(409, "another request is uploading to this address right now")
    if "Content-Range" in request.headers:
        return await _chunk(request, upload)
    if upload["state"] == "done":
        raise UploadFailure(409, "this upload url was already used")
    if upload["state"] == "uploading":
        raise UploadFailure(409, "a chunked upload to this address is under way")
    if media_type(request.headers.get("Content-Type", "")) != "multipart/form-data":
        raise UploadFailure(400, "missing file", plain=True)
    boundary = boundary_of(request.headers.get("Content-Type", ""))
    platform.busy.add(upload["id"])
    try:
        return await _single_shot(request, upload, boundary)
    finally:
        platform.busy.discard(upload["id"])


async def _single_shot(
    request: web.Request, upload: dict[str, Any], boundary: bytes
) -> web.Response:
    platform = _p(request)
    uuid = upload["id"]
    partial = os.path.join(platform.files_dir, f"{uuid}.part")
    cut = _cut_point(platform, request, request.content_length)
    platform.progress[uuid] = 0
    reader = FormDataReader(request.content.read, boundary)
    filename: str | None = None
    digest = hashlib.sha1()  # noqa: S324 - a content id
    try:
        async for part in reader.parts():
            name = part.disposition.filename
            if part.disposition.name == "file" and name is not None and filename is None:
                filename = name or "file"
                f = await _open(partial, "wb")
                try:
                    await _stream_to(request, _chunks(part), f, digest, cut_after=cut, uuid=uuid)
                finally:
                    f.close()  # not awaited: must run even when the handler is cancelled
        if filename is None:
            raise UploadFailure(400, "missing file", plain=True)
        descriptor = await _finish(request, upload, partial, filename, digest.hexdigest())
    except BaseException:
        _remove(partial)  # synchronous: the handler may be cancelled here
        platform.progress.pop(uuid, None)
        raise
    return web.json_response(descriptor)


def _chunks(part: Any) -> Callable[[int], Awaitable[bytes]]:
    """``read(n)`` over a part's stream of chunks (``b""`` at its end)."""
    stream = part.chunks()

    async def read(_: int) -> bytes:
        return await anext(stream, b"")

    return read


def _filename(request: web.Request) -> str:
    value = request.headers.get("Content-Disposition")
    if value is None:
        return "file"
    return parse_disposition(value).filename or "file"


async def _chunk(request: web.Request, upload: dict[str, Any]) -> web.Response:
    platform = _p(request)
    uuid = upload["id"]
    first, last, total = parse_content_range(request.headers["Content-Range"])
    if upload["state"] == "done":
        if first is None or total == upload["size"]:
            return web.json_response(upload["descriptor"])
        raise UploadFailure(409, "this upload url was already used")
    if upload["state"] == "finishing":
        raise UploadFailure(409, "the upload is being completed")
    path = os.path.join(platform.files_dir, f"{uuid}.part")
    loop = asyncio.get_running_loop()
    if upload["size"] is None:
        if first is None:  # asked what is held before anything was sent
            held = f"*/{total}"
            return web.json_response({"range": held}, status=202, headers={"Range": held})
        filename = _filename(request)
        # Synchronously (a sparse truncate is instant), before any other handler of a
        # parallel chunk can see the size and open the file.
        try:
            _allocate(path, total)
        except OSError as exc:
            _remove(path)
            raise UploadFailure(413, f"cannot hold {total} bytes: {exc.strerror}") from None
        upload.update(size=total, state="uploading", filename=filename)
        platform.state.put("upload", uuid, upload)
    elif upload["size"] != total:
        raise UploadFailure(400, f"Content-Range total {total} differs from {upload['size']}")
    if first is not None and last is not None:
        expected = last - first + 1
        if request.content_length != expected:
            raise UploadFailure(
                400, f"Content-Length {request.content_length} does not match Content-Range"
            )
        cut = _cut_point(platform, request, expected)
        f = await _open(path, "r+b")
        try:
            await loop.run_in_executor(None, f.seek, first)
            written = await _stream_to(
                request, request.content.read, f, None, cut_after=cut, uuid=uuid
            )
        finally:
            f.close()  # not awaited: must run even when the handler is cancelled
        if written != expected:
            raise UploadFailure(400, f"got {written} bytes for a {expected}-byte range")
        upload = platform.state.get("upload", uuid) or upload  # others wrote meanwhile
        upload["ranges"] = merge_ranges([*upload["ranges"], (first, last)])
        upload["received"] = sum(b - a + 1 for a, b in upload["ranges"])
        platform.progress[uuid] = upload["received"]
        platform.state.put("upload", uuid, upload)
    if upload["ranges"] == [[0, total - 1]] and upload["state"] == "uploading":
        # Claimed before the first await: parallel last chunks finish the file once.
        upload["state"] = "finishing"
        platform.state.put("upload", uuid, upload)
        try:
            descriptor = await _finish(request, upload, path, upload.get("filename", "file"), None)
        except BaseException:
            # Never stuck in "finishing": the bytes are still there; asking again retries.
            upload["state"] = "uploading"
            platform.state.put("upload", uuid, upload)
            raise
        return web.json_response(descriptor)
    held = format_ranges(upload["ranges"], total) if upload["ranges"] else f"*/{total}"
    # The body is JSON too: the official SDK decodes every answer as JSON.
    return web.json_response({"range": held}, status=202, headers={"Range": held})


@routes.get("/progress")
async def progress(request: web.Request) -> web.Response:
    platform = _p(request)
    upload = platform.state.get("upload", request.query.get("uuid", ""))
    if upload is None:
        return web.json_response({"error": {"message": "unknown upload", "code": 404}}, status=404)
    state = "uploading" if upload["state"] == "finishing" else upload["state"]
    body: dict[str, Any] = {"state": state}
    if state == "uploading":
        body["size"] = upload["size"]
        body["received"] = platform.progress.get(upload["id"], upload["received"])
    return web.json_response(body)


@routes.get(r"/files/{name:[A-Za-z0-9._-]+}")
async def stored_file(request: web.Request) -> web.StreamResponse:
    platform = _p(request)
    path = os.path.join(platform.files_dir, request.match_info["name"])
    if not await asyncio.get_running_loop().run_in_executor(None, os.path.isfile, path):
        raise web.HTTPNotFound()
    ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
    return web.FileResponse(path, headers={"Content-Type": ctype})
