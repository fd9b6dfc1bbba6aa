"""``update_video(..., publish_date=None)`` and ``geoblocking=None`` clear the field in
API v2 as in the legacy API (the client guide's promise): a PATCH with ``null``. Before,
v2 left them out (the date stayed; ``geoblocking=None`` alone was "nothing to change")."""

from __future__ import annotations

from datetime import UTC, datetime

from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def test_none_clears_a_date_and_geoblocking_in_v2(emulator: Emulator) -> None:
    when = datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC)
    async with client_for(emulator, api="v2") as client:
        video = await client.upload_video(
            b"\x00" * 2000,
            title="t",
            channel="news",
            publish_date=when,
            geoblocking=("deny", "fr"),
        )
        fields = ["publish_date", "geoblocking"]
        before = await client.get_video(video.id, fields)
        assert before.publish_date == when and before.geoblocking == ["deny", "fr"]
        await client.update_video(video.id, title="t2", publish_date=None)
        await client.update_video(video.id, geoblocking=None)
        after = await client.get_video(video.id, [*fields, "title"])
    assert (after.title, after.publish_date, after.geoblocking) == ("t2", None, None)
