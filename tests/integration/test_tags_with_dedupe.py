"""The client's 150-tag limit counts the dedupe tag: 150 tags with ``dedupe_tag`` are
refused before anything is sent (both dialects), and a batch job (whose video always
carries its dedupe tag) with 150 tags is refused when it is made, before its upload."""

from __future__ import annotations

import pytest

import vidapi_async as va
from tests.wire import Reply, Seen, WireServer
from vidapi_async.batch import UploadJob

TAGS = [f"t{i}" for i in range(150)]


async def create(client: va.Client, tags: list[str]) -> None:
    await client.create_video(
        url="https://files.example/f.mp4", title="T", channel="news", tags=tags, dedupe_tag="job-1"
    )


def anything(seen: Seen) -> Reply:
    return Reply.json({"error": {"code": "INVALID_PARAMETER", "message": "no"}}, status=400)


@pytest.mark.parametrize("api", ["legacy", "v2"])
async def test_150_tags_and_a_dedupe_tag_are_refused_before_sending(api: str) -> None:
    async with WireServer(anything) as srv:
        base = f"{srv.url}/v2" if api == "v2" else srv.url
        profile = {"profile_id": "p1"} if api == "v2" else {}
        async with va.Client(access_token="t0", api=api, base_url=base, **profile) as client:
            with pytest.raises(va.InvalidArgumentError) as info:
                await create(client, TAGS)
            assert info.value.argument == "tags" and "dedupe_tag" in str(info.value)
            # 149 and the dedupe tag, or 150 holding it already, are within the limit
            for tags in (TAGS[:149], [*TAGS[:149], "job-1"]):
                with pytest.raises(va.APIError):
                    await create(client, tags)
    assert len(srv.seen) == 2


def test_a_batch_job_with_149_tags_is_refused_when_made() -> None:
    """Its video also carries the batch's key tag and origin tag (issue 40)."""
    for tags in (TAGS, TAGS[:149]):
        with pytest.raises(va.InvalidArgumentError) as info:
            UploadJob(url="https://src.example/a.mp4", title="T", channel="news", tags=tags)
        assert info.value.argument == "tags"
    UploadJob(url="https://src.example/a.mp4", title="T", channel="news", tags=TAGS[:148])
