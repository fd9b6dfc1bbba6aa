"""``vidapi serve --public-host NAME``: the addresses the emulator hands out carry NAME
(the official SDK's own tests want a host name with a dot), while it listens on --host.
Checked with plain aiohttp requests, no code of the client."""

from __future__ import annotations

import asyncio
import re
import sys
from urllib.parse import urlsplit

import aiohttp

from tests.cli_run import vidapi
from vidapi_async.cli._exit import EXIT_USAGE


async def test_serve_hands_out_addresses_with_the_public_host() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vidapi_async.cli", "serve", "--port", "0",
        "--public-host", "vidapi.test",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        banner = ""
        while "Ctrl-C" not in banner:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line, banner
            banner += line.decode()
        api = re.search(r"^API:\s+http://vidapi\.test:(\d+)$", banner, re.M)
        uploads = re.search(r"^Uploads:\s+http://vidapi\.test:(\d+)$", banner, re.M)
        assert api and uploads, banner
        assert "export VIDAPI_EMBED_URL=http://vidapi.test:" in banner
        # API v2 beside it: its root and the demo API key (fresh-user review: neither
        # was said, and a v2 client given the legacy root met bare 404s)
        v2 = re.search(
            r"^API v2:\s+http://vidapi\.test:(\d+)/v2\s+\(API key demo-api-key", banner, re.M
        )
        assert v2 and v2.group(1) == api.group(1), banner
        assert "demo-api-secret" in banner
        # it listens on 127.0.0.1; what it hands out names vidapi.test
        async with aiohttp.ClientSession() as session:
            async with session.get(
                f"http://127.0.0.1:{api.group(1)}/file/upload",
                headers={"Authorization": "Bearer demo-token"},
            ) as answer:
                assert answer.status == 200
                given = await answer.json()
        for key in ("upload_url", "progress_url"):
            where = urlsplit(given[key])
            assert (where.hostname, str(where.port)) == ("vidapi.test", uploads.group(1)), given
    finally:
        proc.terminate()
        await proc.wait()


async def test_a_public_host_that_is_no_host_name_is_a_usage_error() -> None:
    for bad in ("vidapi.test/x", "user@vidapi.test", "a b", "", "x-.test", "x..test"):
        code, out, err = await vidapi("serve", "--public-host", bad)
        assert (code, out) == (EXIT_USAGE, ""), (bad, err)
        assert "--public-host" in err and "not a host name" in err, err
