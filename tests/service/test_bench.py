"""`memlake bench serve` on a small home: every call answered over HTTP (no errors), at each client count, with
the in-process figures beside."""

from __future__ import annotations

import json

import pytest

from service import bench
from tests.search.helpers import build_home


def test_bench_serve_reports_latency_and_no_errors(tmp_path_factory, tmp_path, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    settings = build_home(tmp_path_factory)
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")  # the server process reads it too
    monkeypatch.setattr(bench, "CLIENTS", (1, 3))
    out = tmp_path / "serve.json"
    report = bench.run_serve_bench(settings.home, out, rounds=1, log=lambda line: None)
    assert json.loads(out.read_text()) == report
    assert set(report["http"]) == {"search@1", "search@3", "context@1", "context@3"}
    for result in report["http"].values():
        assert result["errors"] == 0 and result["n"] == report["calls"] and result["p95_ms"] >= result["p50_ms"] > 0
    assert report["in_process"]["search"]["n"] == report["calls"]
