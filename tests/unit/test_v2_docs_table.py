"""The guide's table of operations per dialect (docs/guides/api-v2.md) says what the
dialect module refuses: every operation marked **no** for v2 is in ``v2.UNSUPPORTED``
(and so raises before sending), every one there is marked **no**, and each names an
operation the client has."""

from __future__ import annotations

import re
from pathlib import Path

import vidapi_async as va
from vidapi_async._protocol import _v2 as v2

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "api-v2.md"


def _refused_in_v2() -> tuple[set[str], set[str]]:
    """The operations and the arguments (``name=``) the table marks **no** for v2."""
    text = GUIDE.read_text(encoding="utf-8")
    table = text.split("## Operations per dialect", 1)[1].split("\n\n", 2)[1]
    operations: set[str] = set()
    arguments: set[str] = set()
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        if not cells[2].startswith("**no**"):
            continue
        for name in re.findall(r"`([^`]+)`", cells[0]):
            if name.endswith("="):
                arguments.add(name[:-1])
            elif "(" not in name:
                operations.add(name)
    return operations, arguments


def test_the_table_and_the_dialect_module_agree() -> None:
    operations, arguments = _refused_in_v2()
    assert operations == set(v2.UNSUPPORTED)
    assert arguments - {"extra"} == set(v2.UNSUPPORTED_FIELDS)


def test_each_refused_operation_is_one_the_client_has() -> None:
    client = va.Client(access_token="t", api="v2", base_url="http://127.0.0.1:9")
    for name in v2.UNSUPPORTED:
        target: object = client
        for part in name.split("."):
            target = getattr(target, part)
        assert callable(target), name
