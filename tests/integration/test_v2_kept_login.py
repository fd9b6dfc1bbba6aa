"""``vidapi login --api v2 --scope ...`` with a bundle, then the kept login: it keeps
the granted scopes and expands bundles when it is read back, so what the bundle covers
works (against the emulator's v2)."""

from __future__ import annotations

from pathlib import Path

import attrs

import vidapi_async as va
from tests.integration.test_v2_cli import _env, cli
from vidapi_async.emulator import Emulator
from vidapi_async.testing import DEMO_API_KEY

VIDEO = b"\x00\x00\x00\x18ftypmp42" + b"kept-bytes" * 300


async def test_login_with_a_bundle_then_the_kept_login_uses_it(tmp_path: Path) -> None:
    from vidapi_async._auth.kept_login import TokenStore

    login_file = tmp_path / "login.json"
    async with Emulator(probe=False) as emu:
        env = _env(emu, login_file)
        base = ("--api", "v2", "--base-url", emu.v2_base_url, "--client-id", DEMO_API_KEY[0])
        code, _, err = await cli(
            env, "login", *base, "--scope", "bundle.user", "--expect-user", "demo"
        )
        assert code == 0, err
        kept = TokenStore(str(login_file)).load()
        assert kept is not None
        assert kept.scopes_given is True
        assert "video.manage" in kept.scopes  # the granted scopes kept, not those asked
        # a file written before (the bundle's name only) is expanded when read back
        old = attrs.evolve(kept, scopes=("bundle.user",))
        assert {"video.manage", "account.read"} <= old.token().scopes  # type: ignore[operator]
        assert "video.manage" in kept.token().scopes  # type: ignore[operator]
        async with va.Client(auth=kept.provider(), api="v2", base_url=emu.v2_base_url) as client:
            video = await client.upload_video(VIDEO, title="K", channel="news", filename="k.mp4")
            live = await client.create_live_stream(title="L", channel="news")
        assert video.id and live.mode == "live"
