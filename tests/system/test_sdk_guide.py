"""The testing guide's recipe for the official SDK's own tests: its ``config.py`` block,
as written, points the SDK at the emulator's token and authorize endpoints with the demo
credentials, and the SDK logs in, reads ``/me`` and builds an authorization address
with it. (The SDK's test file itself is not shipped in its package: the guide says where
it is, and what it measured.)"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.integration.test_docs import doc_block
from tests.system.test_official_sdk import sdk_path
from vidapi_async.emulator import Emulator

pytestmark = pytest.mark.system

__all__ = ["sdk_path"]  # the fixture, installed once per session

AS_THE_SUITE_DOES = """
import json
import config
import dailymotion

scope = ["manage_videos", "manage_playlists", "userinfo"]
d = dailymotion.Dailymotion(
    api_base_url=config.BASE_URL,
    oauth_authorize_endpoint_url=config.OAUTH_AUTHORIZE_URL,
    oauth_token_endpoint_url=config.OAUTH_TOKEN_URL,
)
d.set_grant_type("password", api_key=config.CLIENT_ID, api_secret=config.CLIENT_SECRET,
                 scope=scope, info={"username": config.USERNAME, "password": config.PASSWORD})
token = d.get_access_token()
me = d.get("/me/?fields=fullname")
a = dailymotion.Dailymotion(api_base_url=config.BASE_URL,
                            oauth_authorize_endpoint_url=config.OAUTH_AUTHORIZE_URL)
a.set_grant_type("authorization", api_key=config.CLIENT_ID, api_secret=config.CLIENT_SECRET,
                 scope=scope, info={"redirect_uri": config.REDIRECT_URI})
print(json.dumps({"token": token, "me": me, "authorize": a.get_authorization_url(
    redirect_uri=config.REDIRECT_URI, scope=scope), "video": config.VIDEO_PATH}))
"""


async def test_the_guides_config_points_the_sdk_at_the_emulator(
    sdk_path: Path, emulator: Emulator, tmp_path: Path
) -> None:
    (tmp_path / "config.py").write_text(doc_block("sdk-config"), encoding="utf-8")
    (tmp_path / "check.py").write_text(AS_THE_SUITE_DOES, encoding="utf-8")
    env = {
        **os.environ,
        "VIDAPI_BASE_URL": emulator.base_url,
        "PYTHONPATH": str(sdk_path),
        "PYTHONWARNINGS": "ignore",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "check.py",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-2000:]
    said = json.loads(out.decode().strip().splitlines()[-1])
    assert said["me"] == {"fullname": "Demo User"}
    assert said["authorize"].startswith(f"{emulator.base_url}/oauth/authorize?")
    assert said["video"] == "vidapi-sample.webm"  # what the guide's own line writes
    tokens = [r for r in emulator.requests if r.path == "/oauth/token"]
    assert tokens and all(r.method == "POST" for r in tokens)
