"""``upload_file(..., verify_hash=True)``: SHA-1 of what was sent, computed while sending
(in the upload thread, from the bytes that went out), compared with the descriptor's
``hash``; a mismatch warns and never fails (the platform's algorithm is unconfirmed)."""

from __future__ import annotations

import hashlib
import io
import warnings
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_client_wire import TOKEN
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes(), usedforsecurity=False).hexdigest()


def _server(hash_for: dict[str, str]) -> object:
    def handler(seen: Seen) -> Reply:
        if seen.path == "/file/upload":
            base = f"http://{seen.headers['host']}"
            return Reply.json({"upload_url": f"{base}/upload?u=1", "progress_url": f"{base}/p"})
        return Reply.json({"url": "http://x/files/f.mp4#y", "hash": hash_for["value"]})

    return handler


@pytest.mark.parametrize("sendfile", [True, False])
async def test_a_matching_hash_passes_silently(
    emulator: Emulator, tmp_path: Path, sendfile: bool
) -> None:
    src = make_file(tmp_path / "m.mp4", 3 * 1024 * 1024 + 5)
    async with client_for(emulator, sendfile=sendfile, read_size=64 * 1024) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            uploaded = await client.upload_file(src, verify_hash=True)
            streamed = await client.upload_file(io.BytesIO(src.read_bytes()), verify_hash=True)
    assert uploaded.hash == sha1(src)
    assert streamed.hash == uploaded.hash


async def test_a_mismatch_warns_and_still_returns_the_file(tmp_path: Path) -> None:
    src = make_file(tmp_path / "m.mp4", 100_000)
    wrong = {"value": "0" * 40}
    async with WireServer(_server(wrong)) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.warns(va.HashMismatchWarning, match="0000000000") as caught:
            uploaded = await client.upload_file(src, verify_hash=True)
        assert uploaded.url.startswith("http://x/files/")
        assert sha1(src) in str(caught[0].message)
        # Without verify_hash nothing is compared.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            await client.upload_file(src)


async def test_the_hash_is_of_the_last_attempt_only(tmp_path: Path) -> None:
    # A first attempt cut half way, then a whole one: the digest starts afresh.
    src = make_file(tmp_path / "m.mp4", 200_000)
    good = sha1(src)
    answers = iter([True, False])  # the first upload attempt is refused

    def handler(seen: Seen) -> Reply:
        if seen.path == "/upload" and next(answers):
            return Reply(raw=b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n")
        return _server({"value": good})(seen)  # type: ignore[operator,no-any-return]

    retry = va.RetryPolicy(max_attempts=3, base_delay=0.001, random=lambda: 0.5)
    async with WireServer(handler) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=retry) as client:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                await client.upload_file(src, verify_hash=True)
    assert [s.path for s in srv.seen].count("/upload") == 2


async def test_verify_hash_with_the_chunked_protocol_is_refused(
    emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "m.mp4", 1000)
    async with client_for(emulator, chunked_threshold=10) as client:
        with pytest.raises(va.InvalidArgumentError, match="verify_hash"):
            await client.upload_file(src, chunked=True, verify_hash=True)
        with pytest.raises(va.InvalidArgumentError, match="verify_hash"):
            await client.upload_file(src, verify_hash="yes")  # type: ignore[arg-type]
        # A size that would go chunked goes single-shot when verifying.
        uploaded = await client.upload_file(src, verify_hash=True)
    assert uploaded.hash == sha1(src)
    assert not any("Content-Range" in r.headers for r in emulator.requests)
