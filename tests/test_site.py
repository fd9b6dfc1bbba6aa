"""The documentation site: built strictly, and complete: every public name has a
reference entry, every command of `vidapi` a section with every option, and nothing of
the building machine's environment (a token) lands in a page."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import vidapi_async
import vidapi_async.embed
import vidapi_async.emulator
import vidapi_async.testing
import vidapi_async.webhooks

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


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("site")
    built = build_site(path)
    assert built.returncode == 0, built.stdout + built.stderr
    return path


def inventory(site: Path) -> set[str]:
    """The names in the site's objects.inv (what mkdocstrings rendered)."""
    data = (site / "objects.inv").read_bytes()
    body = data.split(b"zlib.\n", 1)[1]
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines()}


@pytest.mark.parametrize(
    "module",
    [
        vidapi_async,
        vidapi_async.embed,
        vidapi_async.webhooks,
        vidapi_async.testing,
        vidapi_async.emulator,
    ],
    ids=lambda m: m.__name__,
)
def test_every_public_name_has_a_reference_entry(site: Path, module: object) -> None:
    names = inventory(site)
    prefix = getattr(module, "__name__")  # noqa: B009 - the module object, typed loosely
    missing = [n for n in getattr(module, "__all__") if f"{prefix}.{n}" not in names]  # noqa: B009
    assert missing == []


def test_the_client_page_has_its_calls(site: Path) -> None:
    names = inventory(site)
    for call in ("upload_video", "upload_file", "wait_until_ready", "paginate", "set_webhook"):
        assert f"vidapi_async.Client.{call}" in names, call


def commands() -> dict[str, argparse.ArgumentParser]:
    from vidapi_async.cli._main import _parser

    [sub] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_command_and_option_is_in_the_cli_reference(site: Path) -> None:
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    found = commands()
    assert {"upload", "batch", "worker", "status", "serve", "login", "api"} <= found.keys()
    for name, parser in found.items():
        assert f"<code>vidapi {name}</code>" in page, name
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue  # -h: every command has it
            for option in action.option_strings:
                assert f"<code>{option}</code>" in page, (name, option)
    for code in range(7):
        assert f"<td>{code}</td>" in page
    assert PLANTED_TOKEN not in page
    assert "127.0.0.1:9/planted" not in page  # defaults come from a clean environment
