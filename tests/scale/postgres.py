"""A throwaway PostgreSQL cluster on loopback, from Debian's package: `initdb` into a temporary folder, started
on a free port, stopped and deleted after. The project's set-up installs the package when it is missing (`make
test`); a test that needs it fails, never skips, when it is not there."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER_USER = "postgres"  # Debian's package makes it; the server refuses to run as root


def postgres_bin(program: str) -> str:
    """The path of one of the server's programs: on PATH, or in Debian's versioned folder."""
    found = shutil.which(program) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{program}"),
                                                      reverse=True)), None)
    if found is None:
        raise RuntimeError(f"PostgreSQL's {program} is not installed: `make test` installs Debian's postgresql")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A running cluster for the length of the block; yields its URL (trust login on loopback). Its folder is
    under the system's temporary folder, not pytest's, which the server's user may not enter."""
    with tempfile.TemporaryDirectory(prefix="memlake-postgres-") as name, _cluster(Path(name)) as url:
        yield url


@contextmanager
def _cluster(folder: Path) -> Iterator[str]:
    data, sockets = folder / "data", folder / "sockets"
    sockets.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        server = pwd.getpwnam(SERVER_USER)
        for path in (folder, sockets):
            os.chown(path, server.pw_uid, server.pw_gid)
    port = _free_port()
    subprocess.run(_as_server_user([postgres_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "memlake",
                                    "--no-sync", "-E", "UTF8"]), check=True, capture_output=True)
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(_as_server_user([postgres_bin("pg_ctl"), "-D", str(data), "-o", options, "-l",
                                    str(folder / "server.log"), "-w", "start"]), check=True, capture_output=True)
    try:
        yield f"postgresql://memlake@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_server_user([postgres_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True)
