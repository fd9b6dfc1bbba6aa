"""RetryPolicy and how the client retries, against the emulator's faults."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import fast_retry, make_file
from vidapi_async._retry import retryable
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def test_backoff_is_full_jitter_capped() -> None:
    policy = va.RetryPolicy(base_delay=1.0, max_delay=5.0, random=lambda: 0.5)
    assert [policy.backoff(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 2.5, 2.5]
    assert va.RetryPolicy(random=lambda: 0.0).backoff(3) == 0.0


def test_retry_after_wins_and_the_total_budget_is_kept() -> None:
    now = [0.0]
    policy = va.RetryPolicy(max_total=10.0, clock=lambda: now[0], random=lambda: 0.5)
    limited = va.RateLimitedError("slow", status=429, retry_after=7.0)
    assert policy.delay(limited, 1, 0.0, idempotent=False) == 7.0
    now[0] = 5.0
    assert policy.delay(limited, 1, 0.0, idempotent=False) is None  # 5 + 7 > 10
    assert policy.delay(limited, 4, 0.0, idempotent=True) is None  # attempts used up


@pytest.mark.parametrize(
    ("exc", "idempotent", "expected"),
    [
        (va.ConnectError("x", method="POST", url="u"), False, True),
        (va.RateLimitedError("x", status=429), False, True),
        (va.ServerError("x", status=500), False, False),
        (va.ServerError("x", status=500), True, True),
        (va.ConnectionLostError("x", method="POST", url="u"), False, False),
        (va.RequestTimeoutError("x", method="GET", url="u"), True, True),
        (va.NotFoundError("x", status=404), True, False),
        (va.InvalidParameterError("x", status=400), True, False),
        (va.UploadRejectedError("x", status=503), True, True),
        (va.UploadRejectedError("missing file", status=400), True, False),
    ],
)
def test_what_is_retryable(exc: Exception, idempotent: bool, expected: bool) -> None:
    assert retryable(exc, idempotent=idempotent) is expected


async def test_reads_are_retried_and_attempts_counted(emulator: Emulator) -> None:
    emulator.faults.update({"error_rate": 1.0, "error_statuses": [503]})
    async with client_for(emulator, retry=fast_retry(3)) as client:
        with pytest.raises(va.ServerError) as info:
            await client.get_upload_session()
    assert info.value.attempts == 3
    assert len([r for r in emulator.requests if r.path == "/file/upload"]) == 3


async def test_a_create_is_not_resent_after_an_unknown_outcome(
    emulator: Emulator, video_file: Path
) -> None:
    async with client_for(emulator, retry=fast_retry()) as client:
        uploaded = await client.upload_file(video_file)
        emulator.faults.drop_response_rate = 1.0
        with pytest.raises(va.ConnectionLostError):
            await client.create_video(url=uploaded.url, title="t", channel="news")
    assert len(emulator.videos()) == 1  # it did happen; and only once


async def test_dedupe_tag_adopts_the_video_an_unknown_outcome_created(
    emulator: Emulator, video_file: Path
) -> None:
    async with client_for(emulator, retry=fast_retry()) as client:
        uploaded = await client.upload_file(video_file)
        # the create's answer is lost; the lookup after it goes through
        emulator.faults.update({"drop_response_rate": 1.0, "methods": ["POST"]})
        video = await client.create_video(
            url=uploaded.url, title="t", channel="news", dedupe_tag="job-123"
        )
    [stored] = emulator.videos()
    assert video.id == stored["id"]
    assert stored["tags"] == ["job-123"]
    creates = [r for r in emulator.requests if r.method == "POST" and r.path == "/me/videos"]
    assert len(creates) == 1  # never sent twice


async def test_uploads_retry_with_a_fresh_address_and_rebuilt_body(
    emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "flaky.mp4", 2 << 20)
    emulator.faults.update({"reset_rate": 1.0})
    async with client_for(emulator, retry=fast_retry(4)) as client:
        first = await client.get_upload_session()
        with pytest.raises(va.TransportError) as info:
            await client.upload_file(src, upload_session=first)
        assert info.value.attempts == 4
        addresses = [r.query.get("uuid") for r in emulator.requests if r.path == "/upload"]
        assert len(set(addresses)) == 4  # a fresh upload address for every retry
        emulator.faults.update({"reset_rate": 0.5, "seed": 3})
        uploaded = await client.upload_file(src)
    stored = emulator.state.get("file", uploaded.url.split("#")[0])
    assert stored is not None
    assert (
        hashlib.sha256(Path(stored["path"]).read_bytes()).digest()
        == hashlib.sha256(src.read_bytes()).digest()
    )


async def test_429_with_retry_after_is_waited_for(emulator: Emulator) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        emulator.faults.rate_limit_rate = 0.0

    emulator.faults.update({"rate_limit_rate": 1.0, "retry_after": 2.5})
    policy = va.RetryPolicy(sleep=sleep, random=lambda: 0.5)
    async with client_for(emulator, retry=policy) as client:
        await client.get_upload_session()
    assert waits == [2.5]


async def test_dedupe_tag_adopts_its_own_video_not_an_older_one_with_the_tag(
    emulator: Emulator, video_file: Path
) -> None:
    """An older video carries the tag (another title: a batch job's video of an earlier
    release, which its job did not adopt): after a lost answer, the lookup took the
    oldest video with the tag, not the one the create made."""
    async with client_for(emulator, retry=fast_retry()) as client:
        owner = (await client.account.me(fields=("id",))).id
        older = emulator.backend.create_video(
            owner,
            {
                "title": "another",
                "channel": "news",
                "mode": "live",  # (no file needed)
                "is_created_for_kids": "false",
                "tags": "job-123",
            },
        )
        uploaded = await client.upload_file(video_file)
        emulator.faults.update({"drop_response_rate": 1.0, "methods": ["POST"]})
        video = await client.create_video(
            url=uploaded.url, title="t", channel="news", dedupe_tag="job-123"
        )
    made = {v["title"]: v["id"] for v in emulator.videos()}
    assert made == {"another": older["id"], "t": video.id}
