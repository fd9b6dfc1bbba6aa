"""The documentation site: built strictly, and complete: every public name has a
reference entry, every command of `vidapi` a section with every option, and nothing of
the building machine's environment (a token) lands in a page."""

from __future__ import annotations

import argparse
import re
import zlib
from pathlib import Path

import pytest

import vidapi_async
import vidapi_async.embed
import vidapi_async.emulator
import vidapi_async.testing
import vidapi_async.webhooks
from tests.conftest import PLANTED_TOKEN

pytestmark = pytest.mark.system  # the site built with mkdocs


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
def test_every_public_name_has_a_reference_entry(built_site: Path, module: object) -> None:
    names = inventory(built_site)
    prefix = getattr(module, "__name__")  # noqa: B009 - the module object, typed loosely
    missing = [n for n in getattr(module, "__all__") if f"{prefix}.{n}" not in names]  # noqa: B009
    assert missing == []


def test_the_client_page_has_its_calls(built_site: Path) -> None:
    names = inventory(built_site)
    for call in ("upload_video", "upload_file", "wait_until_ready", "paginate", "set_webhook"):
        assert f"vidapi_async.Client.{call}" in names, call


def commands() -> dict[str, argparse.ArgumentParser]:
    from vidapi_async.cli._main import _parser

    [sub] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_command_and_option_is_in_the_cli_reference(built_site: Path) -> None:
    page = (built_site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
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


def test_no_sphinx_roles_show_in_the_reference(built_site: Path) -> None:
    """Docstrings are rendered as Markdown: a :class: role would show as text."""
    shown = [
        page.relative_to(built_site).as_posix()
        for page in (built_site / "reference").rglob("*.html")
        if re.search(r":(class|func|meth|attr|mod):", page.read_text(encoding="utf-8"))
    ]
    assert shown == []


def test_the_batch_page_shows_the_jobs_constructor_signatures(built_site: Path) -> None:
    # scripts/griffe_attrs.py: the __init__ attrs writes, not attrs.field(converter=...)
    page = (built_site / "reference" / "batch" / "index.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", page)
    assert "converter=" not in text and "attrs.field(" not in text
    assert re.search(r"UploadJob\(\s*\*,\s*path:\s*str \| os\.PathLike\[str\] \| None", text)
    assert re.search(r"tags:\s*Sequence\[str\] \| None\s*=\s*None", text)
