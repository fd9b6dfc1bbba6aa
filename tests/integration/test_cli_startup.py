"""What a start imports: ``import vidapi_async`` loads its names when first used (the
package's module ``__getattr__``), and ``vidapi --help`` or a usage error imports
neither aiohttp nor the client nor the batch wing (issue 43). Each check runs in a fresh
interpreter: this one has imported everything already."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from vidapi_async._dialects import dialect as _dialect
from vidapi_async._dialects import legacy as _dialect_legacy
from vidapi_async._protocol import _v2
from vidapi_async.batch._feed import MAX_FEED_BYTES
from vidapi_async.cli import _defaults

HEAVY = ("aiohttp", "attrs", "cattrs", "vidapi_async._client", "vidapi_async.batch", "rich")


def _loaded_after(code: str) -> dict[str, bool]:
    """Which of ``HEAVY`` a fresh interpreter has imported after running ``code``."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", probe], capture_output=True, text=True, check=True
    )
    loaded: dict[str, bool] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_import_loads_nothing_heavy_until_a_name_is_used() -> None:
    assert not any(_loaded_after("import vidapi_async").values())
    errors = _loaded_after("from vidapi_async import VidapiError, UsageError")
    assert not any(errors.values()), errors
    client = _loaded_after("import vidapi_async\nvidapi_async.Client")
    assert client["aiohttp"] and client["vidapi_async._client"]


def test_every_public_name_resolves_in_a_fresh_interpreter() -> None:
    code = (
        "import vidapi_async as va\n"
        "missing = [n for n in va.__all__ if getattr(va, n, None) is None]\n"
        "assert not missing, missing\n"
        "from vidapi_async import *\n"
        "assert set(va.__all__) - {'__version__'} <= set(dir(va))\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr


def test_a_name_not_in_the_package_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Clinet"):
        va.Clinet  # type: ignore[attr-defined]  # noqa: B018


def test_type_checkers_see_every_name_where_the_package_loads_it() -> None:
    """The imports under ``TYPE_CHECKING`` (what mypy and editors read) and the table the
    module ``__getattr__`` loads from name the same module for each public name."""
    tree = ast.parse(Path(va.__file__).read_text(encoding="utf-8"))
    static: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom):
                    static.update({a.name: str(imp.module) for a in imp.names})
    lazy = {name: module for module, names in va._WHERE.items() for name in names}
    assert static == lazy
    assert set(lazy) == set(va.__all__) - {"__version__"}


def test_help_and_a_usage_error_import_neither_the_client_nor_aiohttp() -> None:
    help_run = (
        "import contextlib, io\n"
        "from vidapi_async.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert 'upload' in out.getvalue() and 'https://api.dailymotion.com' in out.getvalue()"
    )
    assert not any(_loaded_after(help_run).values())
    usage = help_run.replace("['--help']", "['upload', 'a.mp4', '--title', 't']").replace(
        "redirect_stdout", "redirect_stderr"
    )
    usage = usage.replace("'https://api.dailymotion.com' in", "'--channel' in")
    assert not any(_loaded_after(usage).values())


def test_the_commands_defaults_are_the_librarys() -> None:
    assert _defaults.DEFAULT_BASE_URL == va.DEFAULT_BASE_URL == _dialect_legacy.DEFAULT_BASE_URL
    assert _defaults.V2_BASE_URL == _v2.DEFAULT_BASE_URL
    assert _defaults.V2_DEFAULT_SCOPES == _v2.DEFAULT_SCOPES
    assert _defaults.DIALECTS == _dialect.DIALECTS
    assert _defaults.MAX_FEED_BYTES == MAX_FEED_BYTES
