"""`memlake bench serve` on a small home: every call answered over HTTP (no errors), at each client count, each
query asked once, with the in-process figures beside and a pipeline run going meanwhile; and its section of
docs/benchmarks.md."""

from __future__ import annotations

import json

import pytest

from memlake_bench import serve
from memlake_bench.render import render
from tests.search.helpers import build_home


def test_bench_serve_reports_latency_and_no_errors_while_a_pipeline_runs(tmp_path_factory, tmp_path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    settings = build_home(tmp_path_factory)
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")  # the server and the pipeline processes read it too
    monkeypatch.setattr(serve, "CLIENTS", (1, 3))
    asked: list[tuple[str, str, str]] = []
    batches: list[list[tuple[str, str]]] = []
    over_http = serve._over_http

    def recording(url, token, kind, calls, clients):  # type: ignore[no-untyped-def]
        asked.extend((kind, agent, query) for agent, query in calls)
        batches.append(list(calls))
        return over_http(url, token, kind, calls, clients)

    monkeypatch.setattr(serve, "_over_http", recording)
    out = tmp_path / "serve.json"
    report = serve.run_serve_bench(settings.home, out, calls_per_run=4, log=lambda line: None)
    assert json.loads(out.read_text()) == report
    assert set(report["http"]) == {"search@1", "search@3", "context@1", "context@3"}
    for result in report["http"].values():
        assert result["errors"] == 0 and result["n"] == report["calls_per_run"] > 0
        assert result["p95_ms"] >= result["p50_ms"] > 0
    assert report["errors"] == 0 and report["in_process"]["search"]["n"] == report["calls_per_run"]
    # the warm-up calls aside, no query asked twice, not even as another kind: a server remembers the questions it
    # embedded, so a context call would find its question's vector left by a search
    warm = set(batches[0])
    measured = [(agent, query) for kind, agent, query in asked if (agent, query) not in warm and kind != serve.FLOOR]
    assert len(measured) == len(set(measured))
    # the floor: the search questions of each client count embedded alone, in a server of its own, all answered
    assert set(report["floor"]) == {f"{serve.FLOOR}@1", f"{serve.FLOOR}@3"}
    for result in report["floor"].values():
        assert result["errors"] == 0 and result["n"] == report["calls_per_run"] and result["p50_ms"] > 0
    floor_asked = [(agent, query) for kind, agent, query in asked if kind == serve.FLOOR]
    searched = [(agent, query) for kind, agent, query in asked if kind == "search" and (agent, query) not in warm]
    assert set(searched) <= set(floor_asked)
    # every agent warmed, each question sent several times per worker: a request reaches whichever worker takes it
    assert {agent for agent, _ in warm} == {agent for _, agent, _ in asked}
    assert len(batches[0]) == len(warm) * serve.WARM_ROUNDS * report["server_workers"]
    assert report["pipeline"]["runs_started"] >= 1 and report["pipeline"]["runs_failed"] == 0
    assert report["queries"] == "first words of user turns"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "serve.json").write_text(out.read_text())
    section = render(tmp_path / "docs")
    assert "## memlake serve: latency through HTTP" in section and "| search | 3 |" in section
    assert f"| floor: {serve.FLOOR} | 8 |" not in section and f"| floor: {serve.FLOOR} | 3 |" in section
