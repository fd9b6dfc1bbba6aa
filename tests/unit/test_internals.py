"""The batch and the CLI use a client only through its public API and the explicitly
internal ``vidapi_async._internals.internals(client)``: no ``client._x`` (nor
``client._transport._x``) outside the client's own modules, read from the source."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import vidapi_async as va
from vidapi_async._internals import internals
from vidapi_async._limits import RequestRate

PACKAGE = Path(va.__file__).parent
CLIENT_LIKE = re.compile(r"(^|\.)_?(client|transport)$")


def reach_throughs(source: str, name: str) -> list[str]:
    """``x._name`` where ``x`` is a client (or its transport), by the expression's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        if private and CLIENT_LIKE.search(ast.unparse(node.value)):
            found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_batch_and_cli_reach_into_no_client() -> None:
    found = []
    for folder in ("batch", "cli"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            found += reach_throughs(path.read_text(encoding="utf-8"), path.name)
    assert found == []


def test_the_check_can_fail() -> None:
    source = (
        "client._send_file(x)\nself.client._check_category(c)\n"
        "client._transport._rate = 1\nself._client.upload_file(x)\nclient.__class__\n"
    )
    assert sorted(reach_throughs(source, "t.py")) == [
        "t.py:1: client._send_file",
        "t.py:2: self.client._check_category",
        "t.py:3: client._transport",
        "t.py:3: client._transport._rate",
    ]


def test_paced_swaps_the_rate_for_the_block_only() -> None:
    client = va.Client("t", max_requests_per_second=5)
    tools = internals(client)
    own = client._transport.rate
    shared = RequestRate(100)
    with tools.paced(shared):
        assert client._transport.rate is shared
    assert client._transport.rate is own
    with tools.paced(None):
        assert client._transport.rate is own
    assert tools.observer is client._transport.observer
