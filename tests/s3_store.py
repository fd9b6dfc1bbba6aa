"""A real S3 implementation for the tests: moto's server, a process of its own on
127.0.0.1, started once per test session (per xdist worker), and the environment that
points the AWS chain at it (``AWS_ENDPOINT_URL``, a key pair whose secret the tests grep
every output for)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

SECRET = "moto-secret-" + uuid.uuid4().hex
"""The secret access key the tests use: no output may contain it."""
KEY_ID = "AKIAVIDAPITESTS3" + uuid.uuid4().hex[:4].upper()
"""The access key id: no output may contain it either (it is in every signature)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """``python -m moto.server`` on 127.0.0.1; its address while it runs."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/moto-api/", timeout=1):  # noqa: S310
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def store_env(endpoint: str) -> dict[str, str]:
    """The environment of a process that reaches the store through the AWS chain."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }


@pytest.fixture(scope="session", name="moto_endpoint")
def moto_endpoint_fixture() -> Iterator[str]:
    with moto_server() as url:
        yield url


class Store:
    """The bucket side, through boto3 (what a team's tools would use to fill it)."""

    def __init__(self, endpoint: str) -> None:
        import boto3

        self.endpoint = endpoint
        self.s3: Any = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=KEY_ID,
            aws_secret_access_key=SECRET,
            region_name="us-east-1",
        )

    def bucket(self) -> str:
        name = "b-" + uuid.uuid4().hex[:12]
        self.s3.create_bucket(Bucket=name)
        return name

    def put(self, bucket: str, key: str, data: bytes, content_type: str | None = None) -> None:
        extra = {"ContentType": content_type} if content_type else {}
        self.s3.put_object(Bucket=bucket, Key=key, Body=data, **extra)


@pytest.fixture(name="store")
def store_fixture(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    for name, value in store_env(moto_endpoint).items():
        monkeypatch.setenv(name, value)
    s = Store(moto_endpoint)
    yield s
    s.s3.close()


PEAK_CHILD = """
import asyncio, json, sys
import vidapi_async as va

async def main(base_url, token, source, chunked):
    async with va.Client(access_token=token, base_url=base_url) as client:
        up = await client.upload_file(source, chunked=chunked == "chunked")
    return up.size

size = asyncio.run(main(*sys.argv[1:5]))
# VmHWM, not getrusage's ru_maxrss: that one keeps the forking parent's peak across exec
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print(json.dumps({"size": size, "peak_kib": hwm}))
"""
"""A fresh client process that uploads one object and prints its own peak RSS (KiB,
the kernel's high-water mark of this process image)."""


def upload_peak(base_url: str, token: str, source: str, mode: str, env: dict[str, str]) -> int:
    """The peak RSS, in bytes, of a fresh process uploading ``source`` (``mode``:
    ``chunked`` or ``single``), blocking: run it in a thread."""
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_CHILD, base_url, token, source, mode],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-8000:]
    import json

    return int(json.loads(proc.stdout.strip().splitlines()[-1])["peak_kib"]) * 1024
