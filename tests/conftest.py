"""Shared fixtures: the emulator on 127.0.0.1, sample files, and aioresponses made to
work with aiohttp 3.14 (pnuckowski/aioresponses#289)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import types
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse
from aioresponses import aioresponses

import vidapi_async as va
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

from . import examples as example_counts
from .children import SIGNALS_SENT
from .pg import dsn, schema  # noqa: F401 - fixtures for every module (the system lane's)
from .wire import Reply, WireServer

SYSTEM_FIXTURES = frozenset({"dsn", "schema", "built_site", "driver", "site_url", "sdk_path"})
"""Fixtures of the system lane (PostgreSQL, the docs build, a browser, a pip install): a
test that takes one is marked ``system`` or the run stops at collection, naming it."""


EVERYDAY_LANE = "not system"

sys.dont_write_bytecode = False
"""Test modules keep their assertion-rewritten bytecode in ``__pycache__`` even where
``PYTHONDONTWRITEBYTECODE`` is set (many containers set it, this machine's sessions do):
without it each pytest process, every xdist worker included, rewrites and compiles every
test module again, 14 s of CPU a process against 5.6 s (docs/development.md)."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core; the everyday lane one more, since its tests wait
    on subprocesses and sockets more than they use a core (2 cores here: 97 s with two
    workers, 81 to 87 s with three). The system lane keeps one per core: its PostgreSQL
    clusters and browser are heavier."""
    cores = os.cpu_count() or 1
    lane = " ".join(str(config.getoption("markexpr")).split())  # "not  system" too
    return cores + 1 if lane == EVERYDAY_LANE else cores


def pytest_configure(config: pytest.Config) -> None:
    example_counts.everyday = " ".join(str(config.getoption("markexpr")).split()) == EVERYDAY_LANE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    unmarked = [
        item.nodeid
        for item in items
        if SYSTEM_FIXTURES & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("system") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "these tests need PostgreSQL, the docs build, a browser or a pip install but "
            "are not marked @pytest.mark.system (docs/development.md): " + ", ".join(unmarked)
        )


WIRE_REALISTIC = {"segment_bytes": 512, "segment_delay": 0.001}
"""Answers in 512-byte pieces with pauses: what a real network does to large answers.
(The emulator's seals always hold escaped reserved characters.)"""


@pytest.fixture
async def emulator() -> AsyncIterator[Emulator]:
    """Without ffprobe: on the random bytes tests upload it finds nothing, at 0.1 s of CPU
    an upload (most of the everyday lane's time); the facts it reads from a real video
    are tested on their own (test_descriptor_facts_come_from_ffprobe)."""
    async with Emulator(faults=Faults(**WIRE_REALISTIC), probe=False) as emu:
        yield emu


@pytest.fixture
def parent_ignores_signals() -> Iterator[None]:
    """SIGINT and SIGTERM ignored by this process while the test runs, as a background
    shell ignores SIGINT for what it starts: a child the test signals must set its own
    dispositions (``tests.children.default_signals``) or the signal does nothing."""
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in SIGNALS_SENT}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@pytest.fixture
async def client(emulator: Emulator) -> AsyncIterator[va.Client]:
    """A client that never retries: error tests see the first failure."""
    async with client_for(emulator, read_size=64 * 1024, retry=va.NO_RETRY) as c:
        yield c


def fast_retry(attempts: int = 8) -> va.RetryPolicy:
    """Retries without real waiting beyond a millisecond, with a fixed jitter."""
    return va.RetryPolicy(
        max_attempts=attempts, base_delay=0.001, max_delay=0.01, random=lambda: 0.5
    )


def stored_bytes(emulator: Emulator, url: str) -> bytes:
    """The bytes the emulator stored for an uploaded file's url (descriptor or video)."""
    record = emulator.state.get("file", url.split("#", 1)[0])
    assert record is not None, url
    return Path(record["path"]).read_bytes()


@pytest.fixture(params=["loop", "pump"])
def upload_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which way a small upload goes: from the event loop (``_aio._whole``, the default
    for a small file on plain HTTP) or through the upload pump's threads (as larger
    files, TLS and proxies do): a module that uses it runs its tests over both."""
    if request.param == "pump":
        monkeypatch.setattr("vidapi_async._aio._transport.WHOLE_BODY", 0)
    return str(request.param)


def make_file(path: Path, size: int) -> Path:
    """A file of ``size`` random bytes."""
    with open(path, "wb") as f:
        left = size
        while left:
            block = os.urandom(min(left, 1 << 20))
            f.write(block)
            left -= len(block)
    return path


@pytest.fixture
def video_file(tmp_path: Path) -> Path:
    return make_file(tmp_path / "movie.mp4", 300 * 1024 + 17)


@pytest.fixture
async def subtitle_host() -> AsyncIterator[str]:
    """A host serving an SRT file at any path (over http://127.0.0.1): a subtitle url
    the client fetches and carries to the platform."""
    async with WireServer(lambda seen: Reply(200, SRT_BYTES)) as host:
        yield host.url


SRT_BYTES = b"1\n00:00:00,500 --> 00:00:02,000\nHello\n\n"


@pytest.fixture
def srt_file(tmp_path: Path) -> Path:
    path = tmp_path / "en.srt"
    path.write_text(
        "1\n00:00:00,500 --> 00:00:02,000\nHello\n\n2\n00:00:02,500 --> 00:00:04,000\nWorld\n",
        encoding="utf-8",
    )
    return path


class _ShimResponse(ClientResponse):
    """aiohttp 3.14 made ``stream_writer`` a required argument; aioresponses 0.7.9
    does not pass it."""

    def __init__(self, *args: Any, stream_writer: Any = None, **kwargs: Any) -> None:
        super().__init__(
            *args,
            stream_writer=stream_writer or types.SimpleNamespace(output_size=0),
            **kwargs,
        )


class Mocked:
    """aioresponses with the 3.14 shim applied to every mock."""

    def __init__(self, m: aioresponses) -> None:
        self._m = m

    def add(self, url: str, method: str = "GET", **kwargs: Any) -> None:
        kwargs.setdefault("response_class", _ShimResponse)
        self._m.add(url, method=method, **kwargs)

    def get(self, url: str, **kwargs: Any) -> None:
        self.add(url, "GET", **kwargs)

    def post(self, url: str, **kwargs: Any) -> None:
        self.add(url, "POST", **kwargs)

    @property
    def requests(self) -> dict[Any, Any]:
        return self._m.requests  # type: ignore[no-any-return]


@pytest.fixture
def mocked() -> Iterator[Mocked]:
    with aioresponses() as m:
        yield Mocked(m)


# -- the documentation site ------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
PLANTED_TOKEN = "planted-token-0c6a41"  # in the environment of the build: must not leak


def build_site(site: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "VIDAPI_TOKEN": PLANTED_TOKEN,
        "VIDAPI_BASE_URL": "http://127.0.0.1:9/planted",
        "NO_MKDOCS_2_WARNING": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per test run (the browser test serves the same build)."""
    path = tmp_path_factory.mktemp("site")
    built = build_site(path)
    assert built.returncode == 0, built.stdout + built.stderr
    return path
