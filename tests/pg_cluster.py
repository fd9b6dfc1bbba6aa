"""A throwaway PostgreSQL cluster for tests that stop and restart the server: ``initdb``
and ``pg_ctl`` from the machine's PostgreSQL binaries, in a temporary folder, on a free
port of 127.0.0.1 (never the shared server). PostgreSQL refuses to run as root: as root,
the cluster runs as the ``postgres`` OS user, in a folder it owns."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

INSTALL = "scripts/install-test-system-deps (installs the postgresql package)"


def _bin_dir() -> str | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: [int(x) for x in p.split("/")[4].split(".") if x.isdigit()],
    )
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    def __init__(self, bin_dir: str, folder: str, port: int, user: str | None) -> None:
        self.bin_dir, self.folder, self.port, self._user = bin_dir, folder, port, user
        self.dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        cmd = [os.path.join(self.bin_dir, tool), *args]
        if self._user is not None:
            cmd = ["runuser", "-u", self._user, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", self.data, "-o", opts, "-l", self.log, "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def data(self) -> str:
        return os.path.join(self.folder, "data")

    @property
    def log(self) -> str:
        return os.path.join(self.folder, "server.log")


@contextmanager
def pg_cluster() -> Iterator[Cluster]:
    """A running cluster (user ``postgres``, trust authentication), removed after."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip(f"no PostgreSQL server binaries (initdb, pg_ctl): run {INSTALL}")
    user = None
    folder = tempfile.mkdtemp(prefix="vidapi-pg-")
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(folder)
            pytest.skip(f"running as root and no 'postgres' OS user to run a cluster: {INSTALL}")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        os.chmod(folder, 0o700)
        user = "postgres"
    cluster = Cluster(bin_dir, folder, _free_port(), user)
    try:
        cluster._run("initdb", "-D", cluster.data, "-A", "trust", "-U", "postgres", "-E", "UTF8")
        cluster.start()
        try:
            yield cluster
        finally:
            with contextlib.suppress(subprocess.CalledProcessError):  # stopped already
                cluster.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
