"""The package's layers, read from its source with ``ast``: who may import what.

- ``_protocol`` (the sans-io core) imports neither asyncio nor aiohttp;
- only ``_aio`` imports aiohttp (or yarl) at run time, the emulator aside (it is an
  aiohttp.web application); imports for type checking only are fine;
- only ``cli`` imports rich, and nothing outside ``cli`` imports ``cli``;
- the emulator imports nothing of the client;
- no import circles among the package's modules, imports made only for type
  checking included (a circle of annotations is still a circle a reader walks).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

import vidapi_async as va

PACKAGE = Path(va.__file__).parent
ROOT = "vidapi_async"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _runtime_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements outside ``if TYPE_CHECKING:`` blocks."""

    def walk(nodes: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from walk([child])

    yield from walk(tree.body)


def _all_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, those for type checking only included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of a module of the package, parsed once a process (the tests only
    read it; six of them walk every module)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imports_of(name: str, *, typing_too: bool = False) -> set[str]:
    """Absolute names a module imports at run time (modules where a name is one);
    ``typing_too``: the imports for type checking only as well."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    tree = parsed(path)
    for node in (_all_imports if typing_too else _runtime_imports)(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - node.level + 1]
            target = ".".join([*base, node.module] if node.module else base)
        else:
            target = node.module or ""
        for alias in node.names:
            full = f"{target}.{alias.name}"
            out.add(full if full in MODULES else target)
    return out


def offenders(where: str, forbidden: tuple[str, ...], *, exempt: tuple[str, ...] = ()) -> list[str]:
    bad = []
    for name in MODULES:
        if not (name == where or name.startswith(where + ".")) or name.startswith(exempt):
            continue
        for target in imports_of(name):
            if target.split(".")[0] in forbidden or target.startswith(forbidden):
                bad.append(f"{name} imports {target}")
    return bad


def test_the_protocol_core_is_sans_io() -> None:
    assert offenders(f"{ROOT}._protocol", ("asyncio", "aiohttp", "yarl", "concurrent")) == []


def test_only_the_aio_layer_imports_aiohttp() -> None:
    exempt = (f"{ROOT}._aio", f"{ROOT}.emulator")
    assert offenders(ROOT, ("aiohttp", "yarl"), exempt=exempt) == []


def test_only_the_cli_imports_rich_and_nothing_imports_the_cli() -> None:
    assert offenders(ROOT, ("rich",), exempt=(f"{ROOT}.cli",)) == []
    assert offenders(ROOT, (f"{ROOT}.cli",), exempt=(f"{ROOT}.cli",)) == []


def test_the_emulator_imports_nothing_of_the_client() -> None:
    bad = [
        f"{name} imports {target}"
        for name in MODULES
        if name.startswith(f"{ROOT}.emulator")
        for target in imports_of(name)
        if target.startswith(ROOT) and not target.startswith(f"{ROOT}.emulator")
    ]
    assert bad == []


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the package's modules it imports, type-checking
    imports included; a package's ``__init__`` gathering its own modules is no arrow."""
    graph = {
        name: {t for t in imports_of(name, typing_too=True) if t in MODULES and t != name}
        for name in MODULES
    }
    for name, targets in graph.items():
        if MODULES[name].name == "__init__.py":
            graph[name] = {t for t in targets if not t.startswith(name + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles in ``graph``: for each, a path from a module back to itself."""
    found: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                found.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target, [*stack, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_there_are_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_the_circle_finder_sees_a_circle() -> None:
    """Its oracle is not vacuous: a circle through three modules, one of them made by a
    type-checking import, is found; the package's graph has arrows to walk."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    real = import_graph()
    assert (
        f"{ROOT}._dialects.dialect" in real[f"{ROOT}._resources.service"]
    )  # for type checking only
    assert sum(len(targets) for targets in real.values()) > 200


def test_the_layer_rules_can_fail(tmp_path: Path) -> None:
    """The checker itself sees an import where one is (its oracle is not vacuous)."""
    assert f"{ROOT}._aio._transport imports aiohttp" in offenders(f"{ROOT}._aio", ("aiohttp",))
    assert any("imports asyncio" in o for o in offenders(f"{ROOT}._aio", ("asyncio",)))


# --- aiohttp's private attributes: one module, checked for the aiohttp installed ------------

SUPPORTED_AIOHTTP = ("3.14",)


def test_the_installed_aiohttp_is_a_checked_minor_version() -> None:
    """A newer aiohttp still works (``_compat`` falls back to reading the file when an
    attribute moved, and tests/integration/test_upload_wire.py fails if sendfile stops being used);
    this says when ``_compat`` was not yet read against it."""
    minor = ".".join(aiohttp.__version__.split(".")[:2])
    if minor not in SUPPORTED_AIOHTTP:
        pytest.skip(
            f"aiohttp {aiohttp.__version__}: read vidapi_async/_aio/_compat.py against it, "
            "then add it to SUPPORTED_AIOHTTP"
        )
    assert aiohttp.__version__.startswith(SUPPORTED_AIOHTTP)


def test_private_aiohttp_attributes_are_touched_in_one_module_only() -> None:
    bad = [
        f"{path.relative_to(PACKAGE)} reads a connector's _ssl"
        for name, path in MODULES.items()
        if not name.startswith((f"{ROOT}._aio._compat", f"{ROOT}.emulator"))
        and '"_ssl"' in path.read_text(encoding="utf-8")
    ]
    assert bad == []


@pytest.mark.parametrize(
    "given", [False, True, None, "context"], ids=["no-verify", "default", "none", "context"]
)
async def test_a_callers_connector_trust_is_what_compat_reads(given: object) -> None:
    import ssl

    from vidapi_async._aio._compat import connector_ssl

    if given == "context":
        given = ssl.create_default_context()
    connector = aiohttp.TCPConnector(ssl=given)  # type: ignore[arg-type]
    try:
        seen = connector_ssl(connector)
    finally:
        await connector.close()
    expected = given if isinstance(given, ssl.SSLContext) or given is False else True
    assert seen is expected or seen == expected
