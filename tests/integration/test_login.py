"""The authorization-code flow: the authorize page, the code exchange, and ``vidapi
login`` keeping a token in a file only its owner can read."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import urllib.parse
from pathlib import Path

import aiohttp
import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from vidapi_async._auth.providers import authorize_url
from vidapi_async.emulator import Emulator

CLIENT, SECRET = "demo-client", "demo-secret"


async def code_for(emu: Emulator, redirect_uri: str, state: str) -> tuple[str, str]:
    """What a browser does on the authorize page: follow it to the redirect."""
    url = authorize_url(
        emu.base_url,
        client_id=CLIENT,
        redirect_uri=redirect_uri,
        scopes=["manage_videos"],
        state=state,
    )
    async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as resp:
        assert resp.status == 302
        location = resp.headers["Location"]
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    assert location.startswith(redirect_uri)
    return query["code"], query["state"]


def test_the_authorize_url_escapes_what_it_carries() -> None:
    url = authorize_url(
        "https://api.example.com/",
        client_id="id&x",
        redirect_uri="http://127.0.0.1:9/cb?a=1",
        scopes=["manage_videos", "email"],
        state="s t",
    )
    parts = urllib.parse.urlsplit(url)
    assert parts.path == "/oauth/authorize"
    assert dict(urllib.parse.parse_qsl(parts.query)) == {
        "response_type": "code",
        "client_id": "id&x",
        "redirect_uri": "http://127.0.0.1:9/cb?a=1",
        "scope": "manage_videos email",
        "state": "s t",
    }


async def test_a_code_is_exchanged_once_and_only_with_its_redirect() -> None:
    redirect = "http://127.0.0.1:9/callback"
    async with Emulator() as emu:
        code, state = await code_for(emu, redirect, "xyz")
        assert state == "xyz"
        kept: list[va.AccessToken] = []
        auth = va.OAuth.authorization_code(
            CLIENT, SECRET, code=code, redirect_uri=redirect, on_token=kept.append
        )
        async with va.Client(auth=auth, base_url=emu.base_url) as client:
            session = await client.get_upload_session()  # manage_videos granted
            assert session.upload_url
        assert len(kept) == 1 and kept[0].refresh_token
        again = va.OAuth.authorization_code(CLIENT, SECRET, code=code, redirect_uri=redirect)
        async with va.Client(auth=again, base_url=emu.base_url) as client:
            with pytest.raises(va.OAuthError, match=r"invalid_grant|Invalid"):
                await client.access_token()  # single-use
        other, _ = await code_for(emu, redirect, "s")
        wrong = va.OAuth.authorization_code(
            CLIENT, SECRET, code=other, redirect_uri="http://127.0.0.1:9/elsewhere"
        )
        async with va.Client(auth=wrong, base_url=emu.base_url) as client:
            with pytest.raises(va.OAuthError):
                await client.access_token()


async def test_vidapi_login_keeps_a_private_token_the_other_commands_use(
    tmp_path: Path,
) -> None:
    login_file = tmp_path / "cfg" / "login.json"
    async with Emulator() as emu:
        env = _login_env(emu, login_file)
        proc, url = await _start_login(emu, login_file)
        async with aiohttp.ClientSession() as http:
            async with http.get(url, allow_redirects=False) as resp:  # the authorize page
                callback = resp.headers["Location"]
            async with http.get(callback) as resp:  # the browser lands on the CLI
                assert resp.status == 200
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        assert stat.S_IMODE(login_file.stat().st_mode) == 0o600
        assert SECRET not in err.decode()

        async def cli(*args: str) -> tuple[int, str, str]:
            return await vidapi(*args, env=env, whole_env=True)

        src = tmp_path / "c.mp4"
        src.write_bytes(os.urandom(4000))
        code, _, e = await cli("--json", "upload", str(src), "--title", "t", "--channel", "news")
        assert code == 0, e  # no --token, no VIDAPI_TOKEN: the kept login
        login_file.chmod(0o644)
        code, _, e = await cli("--json", "upload", str(src), "--title", "t", "--channel", "news")
        assert code == 2
        assert "can be read by others" in e
        code, _, e = await cli("logout")
        assert code == 0
        assert not login_file.exists()


def _login_env(emu: Emulator, login_file: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k != "VIDAPI_TOKEN"},
        "VIDAPI_BASE_URL": emu.base_url,
        "VIDAPI_CLIENT_SECRET": SECRET,
        "VIDAPI_LOGIN_FILE": str(login_file),
    }


async def _start_login(
    emu: Emulator, login_file: Path, *extra: str
) -> tuple[asyncio.subprocess.Process, str]:
    """``vidapi login --no-browser`` in a child process, and the address it prints."""
    env = _login_env(emu, login_file)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vidapi_async.cli",
        "login",
        "--no-browser",
        "--client-id",
        CLIENT,
        *extra,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert (await asyncio.wait_for(proc.stdout.readline(), 30)).startswith(b"Open this")
    return proc, (await proc.stdout.readline()).decode().strip()


async def _browse(url: str, **query: str) -> str:
    """The authorize page (as ``username``), then the callback: its answer's status."""
    parts = urllib.parse.urlsplit(url)
    q = [*urllib.parse.parse_qsl(parts.query), *query.items()]
    page = parts._replace(query=urllib.parse.urlencode(q)).geturl()
    async with aiohttp.ClientSession() as http:
        async with http.get(page, allow_redirects=False) as resp:
            callback = resp.headers["Location"]
        async with http.get(callback) as resp:
            return f"{resp.status}"


async def test_login_ignores_a_callback_with_a_wrong_state_and_uses_pkce(tmp_path: Path) -> None:
    login_file = tmp_path / "login.json"
    async with Emulator() as emu:
        proc, url = await _start_login(emu, login_file)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        assert query["code_challenge_method"] == "S256"
        assert len(query["code_challenge"]) == 43  # base64url of a SHA-256, unpadded
        redirect = query["redirect_uri"]
        # A local process delivers its own code with a guessed state: ignored.
        forged, _ = await code_for(emu, redirect, "guessed")
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{redirect}?code={forged}&state=guessed") as resp,
        ):
            assert resp.status == 400
        assert await _browse(url) == "200"  # the real browser still completes the login
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        assert "logged in as demo" in out.decode() + err.decode()  # the account is named
        assert login_file.exists()


async def test_a_code_with_a_challenge_needs_its_verifier() -> None:
    redirect = "http://127.0.0.1:9/callback"
    async with Emulator() as emu:
        verifier = "v" * 50
        import base64
        import hashlib

        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        extra = {"code_challenge": challenge.decode().rstrip("="), "code_challenge_method": "S256"}
        for given, ok in ((None, False), ("w" * 50, False), (verifier, True)):
            url = authorize_url(emu.base_url, client_id=CLIENT, redirect_uri=redirect, state="s")
            page = url + "&" + urllib.parse.urlencode(extra)
            async with aiohttp.ClientSession() as http, http.get(page, allow_redirects=False) as r:
                loc = r.headers["Location"]
            code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(loc).query))["code"]
            provider = va.OAuth.authorization_code(
                CLIENT, SECRET, code=code, redirect_uri=redirect, code_verifier=given
            )
            async with va.Client(auth=provider, base_url=emu.base_url, ssl=emu.ssl_context()) as c:
                if ok:
                    assert (await c.access_token()).token
                else:
                    with pytest.raises(va.OAuthError):
                        await c.access_token()


async def test_login_for_another_account_is_refused_with_expect_user(tmp_path: Path) -> None:
    login_file = tmp_path / "login.json"
    async with Emulator() as emu:
        # The victim's authorize address sits in argv: another user completes it with
        # their own account, delivering a code for it with the right state.
        proc, url = await _start_login(emu, login_file, "--expect-user", "demo")
        assert await _browse(url, username="other") == "200"
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode != 0
        assert "other" in err.decode() and "demo" in err.decode()
        assert not login_file.exists()
        # Without --expect-user and without a terminal: kept, and the name is printed.
        proc, url = await _start_login(emu, login_file)
        assert await _browse(url, username="other") == "200"
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        assert "logged in as other" in out.decode() + err.decode()


def test_a_kept_login_owned_by_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vidapi_async._auth.kept_login import StoredLogin, TokenStore

    store = TokenStore(str(tmp_path / "login.json"))
    store.save(
        StoredLogin(
            base_url="https://h",
            client_id="c",
            client_secret="s",
            access_token="t",
            refresh_token=None,
            expires_at=None,
            scopes=(),
        )
    )
    assert store.load() is not None
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)  # as another user would see it
    with pytest.raises(va.UsageError, match="owned by another user"):
        store.load()


async def test_on_a_terminal_the_account_is_confirmed_before_it_is_kept(tmp_path: Path) -> None:
    import pty

    login_file = tmp_path / "login.json"
    async with Emulator() as emu:
        for answer, kept in ((b"n\n", False), (b"y\n", True)):
            leader, follower = pty.openpty()
            try:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "vidapi_async.cli",
                    "login",
                    "--no-browser",
                    "--client-id",
                    CLIENT,
                    env=_login_env(emu, login_file),
                    stdin=follower,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                assert proc.stdout is not None
                assert (await asyncio.wait_for(proc.stdout.readline(), 30)).startswith(b"Open")
                url = (await proc.stdout.readline()).decode().strip()
                assert await _browse(url, username="other") == "200"
                prompt = await asyncio.wait_for(proc.stdout.readuntil(b"[y/N] "), 30)
                assert b"'other'" in prompt
                os.write(leader, answer)
                _, err = await asyncio.wait_for(proc.communicate(), 30)
            finally:
                os.close(leader)
                os.close(follower)
            assert (proc.returncode == 0) is kept, err.decode()
            assert login_file.exists() is kept


async def _send_line(port: int, line: bytes) -> bytes:
    """A raw request to the login listener; its status line."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(line)
        await writer.drain()
        return (await reader.readline()).rstrip()
    finally:
        writer.close()
        await writer.wait_closed()


async def test_the_login_listener_ends_on_an_error_with_its_state_and_answers_a_huge_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from vidapi_async.cli._login import _wait_for_code

    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    waiting = asyncio.create_task(_wait_for_code(0, 20, ready, "RIGHTSTATE"))
    port = int(urllib.parse.urlsplit(await ready).port or 0)
    huge = await _send_line(port, b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")
    assert huge.startswith((b"HTTP/1.1 431", b"HTTP/1.1 400")), huge
    wrong = b"GET /callback?error=access_denied&state=WRONG HTTP/1.1\r\n\r\n"
    assert (await _send_line(port, wrong)).startswith(b"HTTP/1.1 400")
    assert not waiting.done()  # a wrong state ends nothing
    right = b"GET /callback?error=access_denied&error_description=no&state=RIGHTSTATE HTTP/1.1"
    assert (await _send_line(port, right + b"\r\n\r\n")).startswith(b"HTTP/1.1 ")
    with pytest.raises(va.OAuthError, match="access_denied"):
        await waiting
    assert [r for r in caplog.records if r.levelname == "ERROR"] == []
