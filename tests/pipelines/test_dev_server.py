"""`make dev` serves the Dagster UI on loopback; its GraphQL endpoint lists memlake's assets."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

QUERY = '{ assetNodes { assetKey { path } } }'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": QUERY}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


@contextmanager
def dev_server(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen]]:
    """`memlake dev` on a free loopback port for a home in tmp_path, its output in tmp_path/dev.log; the whole
    process group (webserver, daemon, code server) is ended afterwards."""
    port = free_port()
    memlake = Path(sys.executable).with_name("memlake")
    env = {**os.environ, "MEMLAKE_HOME": str(tmp_path / "home")}
    env.pop("DAGSTER_HOME", None)
    log = open(tmp_path / "dev.log", "wb")  # noqa: SIM115 - the server writes to it until the finally block
    server = subprocess.Popen(
        [str(memlake), "dev", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield port, server
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        log.close()


def asset_keys_served(port: int, server: subprocess.Popen, seconds: float) -> set[str]:
    """The asset keys the server's GraphQL lists, once it answers (empty if it did not within `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and server.poll() is None:
        try:
            nodes = graphql(port)["data"]["assetNodes"]
            keys = {"/".join(n["assetKey"]["path"]) for n in nodes}
            if keys:
                return keys
        except (urllib.error.URLError, ConnectionError, KeyError, TypeError, TimeoutError):
            pass
        time.sleep(1)
    return set()


def test_dev_server_lists_asset_keys_over_graphql(tmp_path):
    with dev_server(tmp_path) as (port, server):
        keys = asset_keys_served(port, server, 180)
        assert {"transcripts/landing_manifest", "transcripts/turns"} <= keys, (tmp_path / "dev.log").read_text()[-3000:]
        assert (tmp_path / "home" / "dagster_home" / "dagster.yaml").read_text().count("enabled: false") == 1
        assert "Warning" not in (tmp_path / "dev.log").read_text()  # a clean start says nothing to be ignored


def test_the_uis_automation_pill_says_on_as_the_automation_sensor_is(settings):
    """The UI's "Auto-materialize off" pill (on every asset group's page) reads Dagster's pre-sensor pause flag,
    which a new instance has set; memlake's automation is a sensor that flag does not stop, on by default, so the
    pill said off while the sensor launched runs (issue 40). A home's instance says what is true."""
    from tests.pipelines.test_definitions import _graphql, home_instance

    instance = home_instance(settings)  # what `memlake dev` opens: the home's instance, memlake's dagster.yaml
    answer = _graphql(instance, "query { instance { autoMaterializePaused } }")
    assert answer["instance"]["autoMaterializePaused"] is False
