"""``vidapi --api v2``: the login with an API key (which says its dialect), the kept
login used by ``upload``, ``--api`` with a token, and a dialect mismatch refused."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.cli_run import vidapi
from vidapi_async.emulator import Emulator
from vidapi_async.testing import DEMO_API_KEY

KEY, SECRET = DEMO_API_KEY


async def cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """``vidapi ARGS`` with ``env`` as its whole environment (in this process)."""
    return await vidapi(*args, env=env, whole_env=True)


def _env(emu: Emulator, login_file: Path) -> dict[str, str]:
    drop = ("VIDAPI_TOKEN", "VIDAPI_API", "VIDAPI_BASE_URL")
    return {
        **{k: v for k, v in os.environ.items() if k not in drop},
        "VIDAPI_CLIENT_SECRET": SECRET,
        "VIDAPI_LOGIN_FILE": str(login_file),
    }


async def logged_in_v2(emu: Emulator, login_file: Path) -> dict[str, str]:
    """``vidapi login --api v2`` with the demo key kept in ``login_file``; the env."""
    env = _env(emu, login_file)
    base = ("--api", "v2", "--base-url", emu.v2_base_url)
    code, _, err = await cli(env, "login", *base, "--client-id", KEY, "--expect-user", "demo")
    assert code == 0, err
    return env


async def test_login_with_an_api_key_then_upload_in_v2(tmp_path: Path) -> None:
    login_file = tmp_path / "login.json"
    src = tmp_path / "c.mp4"
    src.write_bytes(b"\x00\x00\x00\x18ftypmp42" + os.urandom(3000))
    async with Emulator(probe=False) as emu:
        env = _env(emu, login_file)
        base = ("--api", "v2", "--base-url", emu.v2_base_url)
        code, out, err = await cli(env, "login", *base, "--client-id", KEY, "--expect-user", "demo")
        assert code == 0, err
        assert "logged in as demo for API v2" in out
        assert SECRET not in out + err
        assert stat.S_IMODE(login_file.stat().st_mode) == 0o600
        assert json.loads(login_file.read_text())["api"] == "v2"
        code, out, err = await cli(
            env, "--json", "upload", str(src), "--title", "t", "--channel", "news"
        )
        assert code == 0, err  # no --api: the kept login's dialect
        video_id = json.loads(out)["id"]
        assert any(v["id"] == video_id for v in emu.state.all("video"))
        code, _, err = await cli(
            env, "--api", "legacy", "upload", str(src), "--title", "t", "--channel", "news"
        )
        assert code == 2 and "kept login is for the v2 API" in err


async def test_api_v2_with_a_token_on_a_command(tmp_path: Path) -> None:
    async with Emulator(probe=False) as emu:
        from vidapi_async.testing import client_for

        async with client_for(emu, api="v2") as client:
            token = (await client.access_token()).token
        env = {**_env(emu, tmp_path / "none.json"), "VIDAPI_TOKEN": token}
        code, out, err = await cli(env, "api", "--api", "v2", "--base-url", emu.v2_base_url, "/me")
        assert code == 0, err
        assert json.loads(out)["profiles"]
        code, _, err = await cli(env, "--api", "v3", "api", "/me")
        assert code == 2 and "--api" in err


async def test_an_upload_v2_cannot_finish_is_refused_before_a_byte(tmp_path: Path) -> None:
    """``vidapi --api v2 upload --subtitle``: v2 has no subtitle files, so the command is
    refused before the upload (it sent the file and created the video, then refused the
    subtitle: a retry without ``--subtitle`` made a second video)."""
    login_file = tmp_path / "login.json"
    src = tmp_path / "c.mp4"
    src.write_bytes(b"\x00\x00\x00\x18ftypmp42" + os.urandom(3000))
    srt = tmp_path / "en.srt"
    srt.write_text("1\n00:00:00,500 --> 00:00:02,000\nHello\n", encoding="utf-8")
    async with Emulator(probe=False) as emu:
        env = _env(emu, login_file)
        base = ("--api", "v2", "--base-url", emu.v2_base_url)
        code, _, err = await cli(env, "login", *base, "--client-id", KEY, "--expect-user", "demo")
        assert code == 0, err
        code, out, err = await cli(
            env, "upload", str(src), "--title", "t", "--channel", "news", "--subtitle", f"en={srt}"
        )
        assert code == 2, (out, err)
        assert "upload_subtitle" in err and "v2" in err, err
        assert [r for r in emu.requests if r.host == "upload"] == []
        assert emu.videos() == []


async def test_a_v2_batch_job_v2_cannot_finish_fails_before_its_upload(tmp_path: Path) -> None:
    """A job with a subtitle, live or a thumbnail in v2 fails before its upload, the
    others go on."""
    import vidapi_async as va
    from vidapi_async.testing import client_for

    srt = tmp_path / "en.srt"
    srt.write_text("1\n00:00:00,500 --> 00:00:02,000\nHello\n", encoding="utf-8")
    files = []
    for name in ("a.mp4", "b.mp4", "c.mp4", "d.mp4"):
        files.append(tmp_path / name)
        files[-1].write_bytes(os.urandom(2000))
    async with Emulator(probe=False) as emu, client_for(emu, api="v2") as client:
        jobs = [
            va.UploadJob(path=files[0], title="plain", channel="news"),
            va.UploadJob(
                path=files[1],
                title="sub",
                channel="news",
                subtitles=[va.SubtitleSpec(language="en", path=srt)],
            ),
            va.UploadJob(path=files[2], title="live", channel="news", live=True),
            va.UploadJob(path=files[3], title="thumb", channel="news", thumbnail=str(srt)),
        ]
        async with va.BatchUploader(client) as batch:
            results = [r async for r in batch.run(jobs)]
        videos = [v["title"] for v in emu.videos()]
        uploads = [r for r in emu.requests if r.host == "upload"]
    status = {r.job.title: r.status for r in results}
    assert status == {
        "plain": va.JobStatus.DONE,
        "sub": va.JobStatus.FAILED,
        "live": va.JobStatus.FAILED,
        "thumb": va.JobStatus.FAILED,
    }, results
    for r in results:
        if r.status is va.JobStatus.FAILED:
            assert isinstance(r.error, va.UnsupportedOperationError), r.error
    assert videos == ["plain"]
    assert len(uploads) == 1


async def test_vidapi_api_patches_in_v2(tmp_path: Path) -> None:
    """``vidapi --api v2 api -X PATCH PATH -f k=v``: v2 updates with PATCH (raw.patch);
    the command offered only GET, POST and DELETE."""
    login_file = tmp_path / "login.json"
    async with Emulator(probe=False) as emu:
        env = await logged_in_v2(emu, login_file)
        src = tmp_path / "c.mp4"
        src.write_bytes(os.urandom(3000))
        code, out, err = await cli(
            env, "--json", "upload", str(src), "--title", "before", "--channel", "news"
        )
        assert code == 0, err
        video_id = json.loads(out)["id"]
        code, out, err = await cli(
            env, "api", "-X", "PATCH", f"/videos/{video_id}", "-f", "title=after"
        )
        assert code == 0, (out, err)
        [video] = emu.videos()
        assert video["title"] == "after"


async def test_a_kept_v2_login_widens_its_scopes_unless_they_were_given(tmp_path: Path) -> None:
    import vidapi_async as va
    from vidapi_async._auth.kept_login import TokenStore

    async with Emulator(probe=False) as emu:
        for given, widens in (
            ((), True),
            (("--scope", "account.read video.manage video.read"), False),
        ):
            login_file = tmp_path / f"login{len(given)}.json"
            env = _env(emu, login_file)
            base = ("--api", "v2", "--base-url", emu.v2_base_url, "--client-id", KEY)
            code, _, err = await cli(env, "login", *base, *given, "--expect-user", "demo")
            assert code == 0, err
            kept = TokenStore(str(login_file)).load()
            assert kept is not None
            async with va.Client(
                auth=kept.provider(), api="v2", base_url=emu.v2_base_url
            ) as client:
                if widens:
                    live = await client.create_live_stream(title="t", channel="news")
                    assert live.mode == "live"
                else:  # --scope given: a limit, as ApiKey(scopes=...) is
                    with pytest.raises(va.InsufficientScopeError) as refused:
                        await client.create_live_stream(title="t", channel="news")
                    assert refused.value.scope == "live.manage"


async def test_a_token_given_beside_a_kept_v2_login_says_it_speaks_legacy(
    tmp_path: Path,
) -> None:
    """An exported VIDAPI_TOKEN (e.g. ``vidapi serve``'s legacy demo token) wins over a
    kept v2 login, as the tokens guide says; the command says so on stderr, once, and
    does not say it when the dialect is named (``--api``/``VIDAPI_API``)."""
    login_file = tmp_path / "login.json"
    async with Emulator(probe=False) as emu:
        env = await logged_in_v2(emu, login_file)
        legacy = {**env, "VIDAPI_TOKEN": emu.token, "VIDAPI_BASE_URL": emu.base_url}
        code, out, err = await cli(legacy, "api", "/me")
        assert code == 0 and "profiles" not in json.loads(out), err  # legacy's /me
        said = [line for line in err.splitlines() if "kept login" in line]
        assert len(said) == 1 and "legacy API" in said[0] and "v2" in said[0], err
        assert "VIDAPI_TOKEN" in said[0] and emu.token not in err
        code, _, err = await cli({**legacy, "VIDAPI_API": "legacy"}, "api", "/me")
        assert code == 0 and "kept login" not in err, err
        _, _, err = await cli(env, "--token", "tok-abc", "--base-url", emu.base_url, "api", "/me")
        assert "--token" in err and "kept login" in err and "tok-abc" not in err, err
