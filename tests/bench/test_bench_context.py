"""`memlake bench context` end to end on one LoCoMo conversation (the `--limit 1` smoke run).

Uses the hashing embedder (model "hash") so it stays fast on 2 cores; the real figures come from a run on
the full LoCoMo home with the default model.
"""

import json

import pytest

from memlake.bench.context import run_context
from pipelines.runs import IN_PROCESS
from tests.conftest import LOCOMO

pytestmark = pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/benchmarks/locomo/locomo10.json not present")


def test_limit_1_smoke_run_reports_evidence_shares_tokens_and_latency_per_mode(tmp_path):
    out = tmp_path / "benchmarks" / "context.json"
    report = run_context(LOCOMO, out, limit=1, model="hash", log=lambda _: None, pipeline=IN_PROCESS)

    saved = json.loads(out.read_text())
    assert saved == json.loads(json.dumps(report, default=str))
    assert saved["benchmark"] == "context" and saved["data"]["samples"] == 1 and saved["data"]["questions"] > 100
    assert set(saved["modes"]) == {"compact_800", "full", "search_top_k_800"}
    for name, mode in saved["modes"].items():
        shares = mode["evidence_in_block"]
        assert shares["all"]["n"] == shares["tune_0_4"]["n"] == saved["data"]["questions"]  # sample 0 is tuning
        assert shares["held_5_9"] == {"n": 0}
        assert 0.0 <= shares["all"]["all"] <= shares["all"]["any"] <= 1.0, name
        assert mode["over_budget_blocks"] == 0 and 0 < mode["tokens_mean"] <= mode["tokens_p95"] <= mode["budget"]
        assert 0 < mode["assembly_ms_p50"] <= mode["assembly_ms_p95"]
    assert saved["modes"]["compact_800"]["budget"] == saved["modes"]["search_top_k_800"]["budget"] == 800
    assert saved["modes"]["full"]["budget"] > 800
    # the baseline fills its 800 tokens with turns, so even hashed vectors and BM25 find evidence for some
    assert saved["modes"]["search_top_k_800"]["evidence_in_block"]["all"]["any"] > 0.3
    assert saved["modes"]["search_top_k_800"]["tokens_mean"] > 400
