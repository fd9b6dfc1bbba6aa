"""A batch paced to the account's quota (``BatchUploader(quota=)``, ``--quota``)
against the emulator's rolling window (``Emulator(quota=)``): more videos than one
window allows finish unattended, no job failed, each created once. Windows of half a
second: the tests assert on counts and order, never on how long they took."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from vidapi_async.batch._stages import STEPS, Pipeline
from vidapi_async.cli._main import _parser
from vidapi_async.emulator import OTHER_TOKEN, Emulator
from vidapi_async.testing import client_for


def quota_refusals(emu: Emulator) -> int:
    """Creates sent that made no video (the quota is the only refusal here)."""
    creates = [r for r in emu.requests if r.method == "POST" and r.path == "/me/videos"]
    return len(creates) - len(emu.videos())


def jobs_of(tmp_path: Path, n: int) -> list[va.UploadJob]:
    files = [make_file(tmp_path / f"f{i}.mp4", 3000 + i) for i in range(n)]
    return [va.UploadJob(path=f, title=f.name, channel="news") for f in files]


def most_in_any_window(times: list[float], period: float) -> int:
    times = sorted(times)
    return max(len([t for t in times[i:] if t < start + period]) for i, start in enumerate(times))


async def test_more_videos_than_a_window_allows_finish_paced_with_no_refusal(
    tmp_path: Path,
) -> None:
    jobs = jobs_of(tmp_path, 7)
    async with Emulator(quota="3/0.5s", probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=4, quota="3/0.5s") as batch:
            results = [r async for r in batch.run(jobs)]
        assert [r.status for r in results] == [va.JobStatus.DONE] * 7
        assert quota_refusals(emu) == 0  # paced: the platform never had to refuse
        created = [row["created"] for row in _created(emu)]
        assert len(created) == 7
        assert most_in_any_window(created, 0.5) <= 3
        # the window's fourth create waited for the first to leave it
        assert max(created) - min(created) >= 2 * 0.5


def _created(emu: Emulator) -> list[dict[str, float]]:
    rows = emu.state._db.execute(
        "select created from objects where kind = 'video' order by created"
    ).fetchall()
    return [{"created": float(r[0])} for r in rows]


async def test_a_refusal_while_pacing_waits_and_sends_again(tmp_path: Path) -> None:
    """The batch believes in 3 per window, the platform allows 2: its refusals are
    waited out, never a failure, and no video is made twice."""
    jobs = jobs_of(tmp_path, 6)
    async with Emulator(quota="2/0.5s", probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=3, quota="3/0.5s") as batch:
            results = [r async for r in batch.run(jobs)]
        assert sorted(r.status.value for r in results) == ["done"] * 6
        assert all(r.error is None for r in results)
        assert quota_refusals(emu) >= 1  # the platform did refuse
        assert len(emu.videos()) == 6
        assert len({tuple(v["tags"]) for v in emu.videos()}) == 6


async def test_without_a_quota_a_refusal_still_stops_the_batch(tmp_path: Path) -> None:
    jobs = jobs_of(tmp_path, 5)
    async with Emulator(quota="2/1h", probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=2) as batch:
            results = [r async for r in batch.run(jobs)]
    failed = [r for r in results if r.status is va.JobStatus.FAILED]
    assert len(failed) == 3
    assert all(isinstance(r.error, va.QuotaExceededError) for r in failed)


async def test_a_job_that_fails_before_its_create_gives_its_place_back(tmp_path: Path) -> None:
    good = jobs_of(tmp_path, 2)
    missing = va.UploadJob(path=tmp_path / "gone.mp4", title="gone", channel="news")
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=1, quota="2/1h") as batch:
            results = [r async for r in batch.run([missing, *good])]
    assert [r.status for r in results] == [va.JobStatus.FAILED, *[va.JobStatus.DONE] * 2]


def test_the_quota_wait_is_a_row_of_the_stage_table_before_the_upload() -> None:
    runs = [step.run for step in STEPS]
    assert runs.index(Pipeline.wait_for_quota) < runs.index(Pipeline.upload)
    assert runs.index(Pipeline.check_offered) < runs.index(Pipeline.wait_for_quota)


def test_a_bad_quota_argument_is_refused_before_anything() -> None:
    with pytest.raises(va.InvalidArgumentError, match="quota"):
        va.BatchUploader(client=None, quota="3 per day")  # type: ignore[arg-type]
    with pytest.raises(va.InvalidArgumentError, match="quota"):
        va.BatchUploader(client=None, quota=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "command", [["batch", "x.csv"], ["worker", "--journal", "postgresql://h/db"], ["serve"]]
)
def test_the_commands_read_quota(command: list[str]) -> None:
    args: argparse.Namespace = _parser().parse_args([*command, "--quota", "96/24h"])
    assert args.quota == va.Quota(96, 86400.0)


async def test_the_command_refuses_a_bad_quota_naming_it(tmp_path: Path) -> None:
    code, _out, err = await vidapi("batch", str(tmp_path), "--channel", "news", "--quota", "15")
    assert code == 2
    assert "--quota" in err and "VIDEOS/PERIOD" in err


async def test_vidapi_batch_quota_finishes_a_folder_unattended(tmp_path: Path) -> None:
    folder = tmp_path / "videos"
    folder.mkdir()
    for i in range(5):
        make_file(folder / f"v{i}.mp4", 2000 + i)
    async with Emulator(quota="2/0.5s", probe=False) as emu:
        env = {"VIDAPI_TOKEN": emu.token, "VIDAPI_BASE_URL": emu.base_url}
        code, _out, err = await vidapi(
            "batch",
            str(folder),
            "--channel",
            "news",
            "--journal",
            str(tmp_path / "j.sqlite"),
            "--quota",
            "2/0.5s",
            env=env,
        )
        assert code == 0, err
        assert len(emu.videos()) == 5


async def test_the_emulator_keeps_a_window_per_account(tmp_path: Path) -> None:
    async with Emulator(quota="2/1h", probe=False) as emu:
        for token in (emu.token, OTHER_TOKEN):
            async with client_for(emu, access_token=token) as client:
                for i in range(2):
                    up = await client.upload_file(make_file(tmp_path / f"{token}{i}.mp4", 900))
                    await client.create_video(url=up.url, title="t", channel="news")
                up = await client.upload_file(make_file(tmp_path / f"{token}x.mp4", 900))
                with pytest.raises(va.QuotaExceededError) as info:
                    await client.create_video(url=up.url, title="t", channel="news")
                assert info.value.retry_after is not None
                assert 3500 < info.value.retry_after <= 3600
        assert emu.faults.videos_per_day == 2 and emu.faults.quota_period == 3600


def test_the_emulator_refuses_a_bad_quota() -> None:
    with pytest.raises(ValueError, match="VIDEOS/PERIOD"):
        Emulator(quota="3 a day")
    with pytest.raises(ValueError, match="VIDEOS/PERIOD"):
        Emulator(quota="0/4s")


def test_the_emulator_checks_a_quota_period_set_at_run_time() -> None:
    from vidapi_async.emulator import Faults

    faults = Faults()
    for bad in (0, -1, "4s", True):
        with pytest.raises(ValueError, match="quota_period"):
            faults.update({"quota_period": bad})
    faults.update({"quota_period": 4, "videos_per_day": 3})
    assert (faults.videos_per_day, faults.quota_period) == (3, 4.0)


async def test_the_emulators_reset_keeps_the_quota_it_was_started_with(tmp_path: Path) -> None:
    import aiohttp

    async with Emulator(quota="2/1h", probe=False) as emu:
        emu.faults.error_rate = 0.5
        emu.reset()
        assert (emu.faults.videos_per_day, emu.faults.quota_period) == (2, 3600.0)
        assert emu.faults.error_rate == 0  # the other faults: none
        emu.faults.videos_per_day = None  # changed at run time: the start's back at a reset
        control = {"X-Emulator-Control": emu.control_secret}
        async with (
            aiohttp.ClientSession(headers=control) as s,
            s.post(f"{emu.base_url}/_emulator/reset") as r,
        ):
            assert r.status == 200
        assert (emu.faults.videos_per_day, emu.faults.quota_period) == (2, 3600.0)
        async with client_for(emu) as client:
            for i in range(2):
                up = await client.upload_file(make_file(tmp_path / f"r{i}.mp4", 900))
                await client.create_video(url=up.url, title="t", channel="news")
            up = await client.upload_file(make_file(tmp_path / "r2.mp4", 900))
            with pytest.raises(va.QuotaExceededError):
                await client.create_video(url=up.url, title="t", channel="news")
