"""Adoption knows where a job came from (issue 40, the attack after it): a video carries
the batch's origin tag beside its key tag, so that a new journal never adopts (and
rewrites) another manifest's video with the same key and title, and does adopt its own
video whatever its title became. The emulator's state is the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from tests.integration.test_adopt import posts, video_posts
from vidapi_async.batch._adopt import origin_tag, tag
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def manifest(folder: Path, description: str, size: int) -> Path:
    """A manifest in ``folder`` with one row, key ``1``, titled "Episode 1", its own file."""
    folder.mkdir()
    make_file(folder / "one.mp4", size)
    path = folder / "library.csv"
    path.write_text(
        f"key,path,title,channel,description\n1,one.mp4,Episode 1,news,{description}\n",
        encoding="utf-8",
    )
    return path


async def test_a_new_journal_does_not_rewrite_another_manifests_video(
    emulator: Emulator, tmp_path: Path
) -> None:
    """The attack: manifests A and B both hold key ``1`` with the same title; A runs
    with its journal, then B with a new one: B adopted A's video and rewrote it."""
    a = manifest(tmp_path / "a", "from A", 4000)
    b = manifest(tmp_path / "b", "from B", 5000)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, _, err = await vidapi("batch", str(a), "--journal", str(tmp_path / "a.sqlite"), env=env)
    assert code == 0, err
    [made] = emulator.videos()
    before, edits = posts(emulator), video_posts(emulator)
    code, out, err = await vidapi(
        "--json", "batch", str(b), "--journal", str(tmp_path / "b.sqlite"), env=env
    )
    assert code == 6, (out, err)  # refused, naming why
    [result] = json.loads(out)
    assert result["status"] == "failed"
    said = result["error"]
    assert "'1'" in said and made["id"] in said and str(b) in said, said
    assert str(tmp_path / "b" / "one.mp4") in said, said
    # A's video untouched, nothing uploaded, created or updated for B
    assert posts(emulator) == before and video_posts(emulator) == edits
    [after] = emulator.videos()
    assert (after["id"], after["description"], after["tags"]) == (
        made["id"],
        "from A",
        made["tags"],
    )
    # and A's own new journal still adopts it
    code, out, err = await vidapi(
        "--json", "batch", str(a), "--journal", str(tmp_path / "a2.sqlite"), env=env
    )
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)] == ["adopted"]
    assert posts(emulator) == before


@pytest.mark.parametrize("where", ["platform", "manifest"])
async def test_a_title_edited_since_is_adopted_not_made_twice(tmp_path: Path, where: str) -> None:
    """A title edited on the platform or in the manifest after the migration, then a
    new journal: the job made a second video (two videos carrying its tag)."""
    path = make_file(tmp_path / "a.mp4", 4000)
    job = va.UploadJob(path=path, title="Old title", channel="news", key="k1")
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, journal=tmp_path / "first.sqlite") as batch:
            [first] = [r async for r in batch.run([job], origin="/lib/library.csv")]
        assert first.status is va.JobStatus.DONE
        if where == "platform":
            assert first.video_id is not None
            await client.update_video(first.video_id, title="Edited on the platform")
        else:
            job = va.UploadJob(path=path, title="New title", channel="news", key="k1")
        before = posts(emu)
        async with va.BatchUploader(client, journal=tmp_path / "second.sqlite") as batch:
            [again] = [r async for r in batch.run([job], origin="/lib/library.csv")]
        assert again.status is va.JobStatus.ADOPTED, again
        assert again.video_id == first.video_id
        assert posts(emu) == before  # no upload, no create
        [video] = emu.videos()
        assert video["title"] == job.title  # the difference sent as the usual update
        assert video["tags"][-2:] == [origin_tag("/lib/library.csv"), tag("k1")]


async def test_the_origin_tag_is_kept_through_updates(tmp_path: Path) -> None:
    path = make_file(tmp_path / "a.mp4", 4000)
    journal = tmp_path / "j.sqlite"
    mine = [origin_tag("feed-a"), tag("k1")]
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        for tags in (["a"], ["b", "c"], None):
            job = va.UploadJob(path=path, title="T", channel="news", key="k1", tags=tags)
            async with va.BatchUploader(client, journal=journal) as batch:
                [r async for r in batch.run([job], origin="feed-a")]
            [video] = emu.videos()
            assert video["tags"] == [*(tags or []), *mine]


async def test_a_video_of_an_earlier_release_is_adopted_by_its_title(tmp_path: Path) -> None:
    """A video made before the origin tag (its key tag only): adopted when its title is
    the job's, as before; not adopted (a video of its own) when it is not."""
    path = make_file(tmp_path / "a.mp4", 4000)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        owner = (await client.account.me(fields=("id",))).id
        old = {
            key: emu.backend.create_video(
                owner,
                {
                    "title": "Episode 1",
                    "channel": "news",
                    "mode": "live",  # (no file needed)
                    "is_created_for_kids": "false",
                    "tags": f"x,{tag(key)}",
                },
            )["id"]
            for key in ("k1", "k2")
        }
        jobs = [
            va.UploadJob(path=path, title="Episode 1", channel="news", key="k1", tags=["y"]),
            va.UploadJob(path=path, title="Another", channel="news", key="k2"),
        ]
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            results = {r.key: r async for r in batch.run(jobs, origin="library.csv")}
        assert (results["k1"].status, results["k1"].video_id) == (va.JobStatus.ADOPTED, old["k1"])
        assert results["k2"].status is va.JobStatus.DONE
        assert results["k2"].video_id not in old.values()
        videos = {v["id"]: v for v in emu.videos()}
        assert len(videos) == 3 and videos[old["k2"]]["tags"] == ["x", tag("k2")]  # untouched
        # an update of its tags gives it the job's: from now on it is known as this
        # manifest's, whatever its title
        assert videos[old["k1"]]["tags"] == ["y", origin_tag("library.csv"), tag("k1")]


def test_a_user_tag_cannot_pose_as_an_origin_tag() -> None:
    with pytest.raises(va.InvalidArgumentError, match="vidapi"):
        va.UploadJob(path="a.mp4", title="T", channel="news", tags=[origin_tag("x")])


def test_a_job_leaves_room_for_both_bookkeeping_tags() -> None:
    va.UploadJob(path="a.mp4", title="T", channel="news", tags=[f"t{i}" for i in range(148)])
    with pytest.raises(va.InvalidArgumentError, match="148"):
        va.UploadJob(path="a.mp4", title="T", channel="news", tags=[f"t{i}" for i in range(149)])


async def test_the_video_of_the_jobs_origin_comes_before_one_found_by_title(
    tmp_path: Path,
) -> None:
    """Two videos with the job's key tag: an earlier release's with the job's title, and
    one made from the job's origin, retitled since: the latter is the job's."""
    path = make_file(tmp_path / "a.mp4", 4000)
    async with Emulator(probe=False) as emu, client_for(emu, retry=va.NO_RETRY) as client:
        owner = (await client.account.me(fields=("id",))).id
        made = [
            emu.backend.create_video(
                owner,
                {
                    "title": title,
                    "channel": "news",
                    "mode": "live",  # (no file needed)
                    "is_created_for_kids": "false",
                    "tags": ",".join(tags),
                },
            )["id"]
            for title, tags in (
                ("Episode 1", [tag("k1")]),
                ("Retitled", [origin_tag("feed-a") or "", tag("k1")]),
            )
        ]
        job = va.UploadJob(path=path, title="Episode 1", channel="news", key="k1")
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite") as batch:
            [result] = [r async for r in batch.run([job], origin="feed-a")]
        assert (result.status, result.video_id) == (va.JobStatus.ADOPTED, made[1])
        assert {v["id"]: v["title"] for v in emu.videos()} == {
            made[0]: "Episode 1",
            made[1]: "Episode 1",
        }


async def test_two_feeds_with_the_same_guid_and_title_make_no_shared_video(
    emulator: Emulator, tmp_path: Path
) -> None:
    """The attack as feeds: ``a/feed.rss`` and ``b/feed.rss`` (one file name) both hold
    guid ``1`` titled "1", each naming its own file; B, with a new journal, took A's."""
    from tests.integration.test_feed_origin import DATA, rss
    from tests.wire import Reply, WireServer

    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    async with WireServer(lambda seen: Reply(200, DATA)) as media:
        outcomes = []
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            feed = tmp_path / name / "feed.rss"
            feed.write_text(rss(("1", f"{media.url}/{name}.mp4")), encoding="utf-8")
            journal = str(tmp_path / f"{name}.sqlite")
            code, out, _ = await vidapi(
                "--json", "batch", str(feed), "--channel", "news", "--journal", journal, env=env
            )
            outcomes.append((code, json.loads(out)[0]["status"]))
    assert outcomes == [(0, "done"), (6, "failed")]
    [video] = emulator.videos()
    assert video["tags"] == [origin_tag(str(tmp_path / "a" / "feed.rss")), tag("1")]
