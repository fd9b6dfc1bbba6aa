"""The package uses procrastinate through its public interface only (issue 29): names it
exports (``procrastinate.__all__``) or documents in its API reference (the modules
``exceptions`` and ``jobs``; ``JobManager``'s methods through ``app.job_manager``), and
never SQL of its own against procrastinate's tables or functions (``procrastinate_*``).
Read from the package's source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vidapi_async as va

procrastinate = pytest.importorskip("procrastinate")

PACKAGE = Path(va.__file__).parent

DOCUMENTED_MODULES = frozenset({"exceptions", "jobs"})
"""procrastinate's modules documented in its API reference, used by the queue."""

USED = {
    "procrastinate": {"App", "PsycopgConnector", "BaseRetryStrategy", "RetryDecision"},
    "procrastinate.exceptions": {"AlreadyEnqueued", "ConnectorException"},
    "procrastinate.jobs": {"Job", "Status"},
}
"""What the queue relies on (vidapi_async/batch/_queue.py's docstring lists it)."""

MANAGER_METHODS = {
    "batch_defer_jobs_async",
    "get_stalled_jobs",
    "finish_job",
    "list_jobs_async",
    "list_queues_async",
    "check_connection_async",
}


def private_uses(source: str) -> list[str]:
    """What ``source`` uses of procrastinate outside its public interface."""
    found: list[str] = []
    public = set(procrastinate.__all__) | DOCUMENTED_MODULES
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root, _, rest = alias.name.partition(".")
                if root == "procrastinate" and rest and rest not in DOCUMENTED_MODULES:
                    found.append(f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            root, _, rest = node.module.partition(".")
            if root != "procrastinate":
                continue
            if rest and rest not in DOCUMENTED_MODULES:
                found.append(f"from {node.module} import ...")
            elif not rest:
                found += [f"from procrastinate import {a.name}" for a in node.names]
                found = [f for f in found if f.rpartition(" ")[2] not in public]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "procrastinate"
            and node.attr not in public
            and not node.attr.startswith("__")
        ):
            found.append(f"procrastinate.{node.attr}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "procrastinate_" in node.value.lower()
        ):
            found.append(f"SQL naming procrastinate's tables: {node.value[:60]!r}")
    return found


def test_the_scan_finds_what_the_queue_did_before() -> None:
    """The scan can fail: the queue's former touches, each found."""
    before = """
from procrastinate import manager
import procrastinate.psycopg_connector
from procrastinate.retry import RetryStrategy
import procrastinate
class PatientJobManager(procrastinate.manager.JobManager): ...
SQL = "update procrastinate_jobs set attempts = attempts - 1"
"""
    assert len(private_uses(before)) == 5, private_uses(before)
    fine = """
import procrastinate
from procrastinate import App, PsycopgConnector
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import Job
class Patient(procrastinate.PsycopgConnector): ...
"""
    assert private_uses(fine) == []


def test_the_package_uses_procrastinate_publicly_only() -> None:
    found = {
        str(path.relative_to(PACKAGE)): uses
        for path in sorted(PACKAGE.rglob("*.py"))
        if (uses := private_uses(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_what_the_queue_relies_on_is_there() -> None:
    """Every name of procrastinate the queue uses exists in the installed release (a
    release that drops one fails here, before any queue test)."""
    import importlib

    for module_name, names in USED.items():
        module = importlib.import_module(module_name)
        assert names <= set(dir(module)), (module_name, names - set(dir(module)))
    assert USED["procrastinate"] <= set(procrastinate.__all__)
    from procrastinate import testing

    app = procrastinate.App(connector=testing.InMemoryConnector())
    for method in MANAGER_METHODS:
        assert callable(getattr(app.job_manager, method)), method


QUEUE_MODULE = "batch/_queue.py"
"""The one module that talks to procrastinate (issue 37)."""

APP_API = frozenset(
    {
        "job_manager",
        "run_worker_async",
        "open_async",
        "close_async",
        "schema_manager",
        *MANAGER_METHODS,
    }
)
"""procrastinate's names reached through an app: used by ``_queue.py`` alone."""


def procrastinate_names(source: str) -> list[str]:
    """Where ``source`` imports procrastinate or reaches an app's procrastinate API."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.startswith("procrastinate")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.partition(".")[0] == "procrastinate":
                found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Attribute) and node.attr in APP_API:
            found.append(f".{node.attr}")
    return found


def test_the_scan_for_procrastinate_names_finds_them() -> None:
    """It can fail: each way the shared queue reached procrastinate before issue 37."""
    before = """
import procrastinate
from procrastinate.jobs import Status
from procrastinate.exceptions import AlreadyEnqueued
async def f(app):
    await app.job_manager.batch_defer_jobs_async([])
    await app.open_async()
    app.run_worker_async(queues=["q"])
"""
    assert len(procrastinate_names(before)) == 7, procrastinate_names(before)
    assert procrastinate_names("from ._queue import defer_jobs\nawait defer_jobs(app)") == []


def test_only_the_queue_module_names_procrastinate() -> None:
    found = {
        str(path.relative_to(PACKAGE)): names
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(PACKAGE)) != QUEUE_MODULE
        and (names := procrastinate_names(path.read_text(encoding="utf-8")))
    }
    assert found == {}
