"""A throwaway S3-compatible server on loopback: `moto_server` (PyPI's `moto[server]`, a dev dependency the
project's set-up installs) started on a free port, stopped after. Nothing it holds outlives the block. The scale
tests and `memlake bench scale --storage-samples` use it: it is loopback, not a network, so what it measures is
the object-store path's own cost (requests, copies, no local page cache), not a real store's latency."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow.fs as pafs

ACCESS_KEY = "memlake-test-key"
SECRET_KEY = "memlake-test-secret-not-for-logs"
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _moto_server() -> list[str]:
    """This interpreter's moto (a `moto_server` on PATH may be another Python's, of another version)."""
    if importlib.util.find_spec("moto") is None:
        raise RuntimeError("moto is not installed: `make install` installs the dev extras (moto[server])")
    return [sys.executable, "-m", "moto.server"]


@contextmanager
def throwaway_s3() -> Iterator[str]:
    """A running S3-compatible server for the length of the block; yields its endpoint URL (http, loopback)."""
    port = _free_port()
    server = subprocess.Popen([*_moto_server(), "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start on port {port}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def bucket_filesystem(endpoint: str) -> pafs.S3FileSystem:
    """A client of the server with the throwaway keys (bucket creation allowed)."""
    return pafs.S3FileSystem(endpoint_override=endpoint.split("://", 1)[1], scheme="http", access_key=ACCESS_KEY,
                             secret_key=SECRET_KEY, region=REGION, allow_bucket_creation=True)


def store_environment(endpoint: str) -> dict[str, str]:
    """The standard variables that point a home's object store at the server, with the throwaway keys."""
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION}
