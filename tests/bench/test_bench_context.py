"""`memlake bench context` end to end on one LoCoMo conversation (the `--limit 1` smoke run).

Uses the hashing embedder (model "hash") so it stays fast on 2 cores; the real figures come from a run on
the full LoCoMo home with the default model.
"""

import json
from pathlib import Path

import pytest

from memlake.api import Memory
from memlake.settings import load_settings
from memlake_bench.context import block_message_ids, context_block, run_context, search_block
from memlake_bench.in_process import IN_PROCESS
from memlake_bench.locomo import Question, questions, sessions
from tests.conftest import LOCOMO

pytestmark = pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/benchmarks/locomo/locomo10.json not present")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> tuple[Path, Path, dict]:
    """One `--limit 1` run, its home kept: (home, written report, returned report)."""
    home = tmp_path_factory.mktemp("context") / "home"
    out = home.parent / "benchmarks" / "context.json"
    report = run_context(LOCOMO, out, home=home, limit=1, model="hash", log=lambda _: None, pipeline=IN_PROCESS)
    return home, out, report


def test_limit_1_smoke_run_reports_evidence_shares_tokens_and_latency_per_mode(smoke_run):
    _, out, report = smoke_run
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


def last_session_question() -> Question:
    """A question that is the longest turn of sample 0's last session, asked as of that session's time."""
    sample = json.loads(LOCOMO.read_text())[0]
    _, last_date, last_turns = sessions(sample)[-1]
    turn = max(last_turns, key=lambda t: len(t["text"]))
    asked = Question(0, sample["sample_id"], turn["text"], 4, (turn["dia_id"],), (), questions([sample])[0].as_of)
    assert asked.as_of == last_date
    return asked


def test_the_search_baseline_can_hold_a_turn_of_the_last_session(smoke_run):
    """Questions are asked as of the last session's time: its turns were said then and must stay searchable."""
    asked = last_session_question()

    block = search_block(Memory(settings=load_settings(smoke_run[0])), asked, 800)

    assert asked.evidence[0] in block_message_ids(block)


def test_a_full_block_can_hold_a_turn_of_the_last_session(smoke_run):
    """The same for `Memory.context`: a block as of the last session's time still finds what was said in it."""
    asked = last_session_question()

    block = context_block(Memory(settings=load_settings(smoke_run[0])), asked, "full", None)

    assert asked.evidence[0] in {mid for line in block.provenance if line["section"] == "matched excerpts"
                                 for mid in line["message_ids"]}
