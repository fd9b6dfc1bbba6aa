"""Client-wide request rate and upload bandwidth: tested by their effect at the server.

Only lower bounds on time are asserted (a limiter can only make things slower), so a
slow machine cannot make these fail; a limiter that does not limit does."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

import vidapi_async as va
from tests.conftest import stored_bytes
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def test_requests_start_no_faster_than_the_rate(emulator: Emulator) -> None:
    async with client_for(emulator) as client:
        uploaded = await client.upload_file(os.urandom(5000))
        video = await client.create_video(url=uploaded.url, title="t", channel="news")
    before = len(emulator.requests)
    async with client_for(emulator, max_requests_per_second=20) as client:
        started = time.monotonic()
        await asyncio.gather(*(client.get_video(video.id) for _ in range(10)))
        elapsed = time.monotonic() - started
    arrivals = sorted(r.at for r in emulator.requests[before:] if r.host == "api")
    assert len(arrivals) == 10
    assert elapsed >= 9 / 20  # the tenth could not start before 9 intervals had passed
    # and at the server they came spread out, not in one burst (loose: scheduling jitter)
    assert arrivals[-1] - arrivals[0] >= 9 / 20 / 2


async def test_uploads_share_the_bandwidth(emulator: Emulator) -> None:
    data = [os.urandom(600_000), os.urandom(600_000)]
    async with client_for(emulator, max_bandwidth=1_000_000) as client:
        started = time.monotonic()
        uploaded = await asyncio.gather(*(client.upload_file(d) for d in data))
        elapsed = time.monotonic() - started
    # 1.2 MB at 1 MB/s: at least 1.2 s less the first piece (1/20 s), whatever the load
    assert elapsed >= 1.2 - 0.05 - 0.02
    for blob, up in zip(data, uploaded, strict=True):
        assert stored_bytes(emulator, up.url) == blob


async def test_cancelling_a_paced_upload_returns_at_once(emulator: Emulator) -> None:
    async with client_for(emulator, max_bandwidth=20_000) as client:  # 50 s for 1 MB
        task = asyncio.create_task(client.upload_file(os.urandom(1_000_000)))
        while not [r for r in emulator.requests if r.host == "upload"]:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_bandwidth": 0}, "max_bandwidth"),
        ({"max_bandwidth": 1.5}, "max_bandwidth"),
        ({"max_requests_per_second": 0}, "max_requests_per_second"),
        ({"max_requests_per_second": float("inf")}, "max_requests_per_second"),
    ],
)
def test_limits_are_checked(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(va.InvalidArgumentError, match=name):
        va.Client("t", **kwargs)  # type: ignore[arg-type]
