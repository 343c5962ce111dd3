"""`memlake search` on the terminal: the hits, `--json`, its errors, and no in-memory snapshot of the agent."""

import json
from datetime import datetime

import pytest
from typer.testing import CliRunner

from tests.search.helpers import build_home, hash_memory


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One home, built once for the read-only tests of this module (the search tests' home)."""
    return build_home(tmp_path_factory)



def test_cli_search_prints_hits_and_json(home, monkeypatch):
    from pipelines.cli import app

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    runner = CliRunner()
    plain = runner.invoke(app, ["search", "ORD-58213", "--agent", "alice", "-k", "3", "--home", str(home.home)])
    assert plain.exit_code == 0, plain.output
    assert "orders-m0" in plain.output.splitlines()[0]
    as_json = runner.invoke(app, ["search", "ORD-58213", "--agent", "alice", "--json", "--home", str(home.home)])
    first = json.loads(as_json.output.splitlines()[0])
    assert first["message_ids"] == ["orders-m0"] and first["agent_id"] == "alice"
    assert datetime.fromisoformat(first["created_at"]).tzinfo is not None and "T" in first["created_at"]
    for scope in ("episodes", "facts"):  # the terminal reads LanceDB directly: its error, not LanceDB's
        by_role = runner.invoke(app, ["search", "tea", "--agent", "alice", "--scope", scope, "--role", "user",
                                      "--home", str(home.home)])
        assert "a role filter applies to turns" in str(by_role.exception)


def test_cli_search_reads_lancedb_without_loading_the_agents_rows_into_memory(home, monkeypatch):
    """One search per process: a snapshot of the agent's rows would cost more than the search itself."""
    from memlake.vectors import Snapshot
    from pipelines.cli import app

    def refuse(*args, **kwargs):
        raise AssertionError("snapshot loaded")

    monkeypatch.setattr(Snapshot, "load", staticmethod(refuse))
    with pytest.raises(AssertionError, match="snapshot loaded"):  # what a long-lived Memory does
        hash_memory(home).search("ORD-58213", "alice", k=3)
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    found = CliRunner().invoke(app, ["search", "ORD-58213", "--agent", "alice", "-k", "3", "--home", str(home.home)])
    assert found.exit_code == 0, found.output
    assert "orders-m0" in found.output.splitlines()[0]
