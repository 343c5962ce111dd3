"""The LoCoMo benchmark end to end on one conversation (the `--limit 1` smoke run), and the report.

Uses the hashing embedder (model "hash") so it stays fast on 2 cores; the real
numbers come from `make bench` with the default model.
"""

import json

import pytest

from memlake_bench.in_process import IN_PROCESS
from memlake_bench.locomo import KS, landing_rows, normalise_evidence, questions, run_locomo, session_date
from memlake_bench.render import render
from tests.conftest import LOCOMO

pytestmark = pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/benchmarks/locomo/locomo10.json not present")


def test_evidence_ids_are_split_normalised_and_unknown_ones_dropped():
    known = {"D8:6", "D9:17", "D11:26", "D30:5", "D9:1", "D4:4"}
    assert normalise_evidence(["D8:6; D9:17", "D:11:26", "D", "D30:05", "D9:1 D4:4 D4:6", "D10:19"], known) == (
        "D8:6", "D9:17", "D11:26", "D30:5", "D9:1", "D4:4",
    )


def test_only_the_conversation_reaches_landing():
    sample = json.loads(LOCOMO.read_text())[0]
    rows = landing_rows(sample)
    assert len(rows) == 419 and {r["conversation_id"] for r in rows} == {f"session_{n}" for n in range(1, 20)}
    assert rows[0] == {"conversation_id": "session_1", "message_id": "D1:1", "role": "user", "speaker": "Caroline",
                       "content": "Hey Mel! Good to see you! How have you been?",
                       "created_at": session_date("1:56 pm on 8 May, 2023").isoformat()}
    assert {r["role"] for r in rows if r["speaker"] == "Melanie"} == {"assistant"}
    assert any("[shares a photo of" in r["content"] for r in rows)
    text = json.dumps(rows)
    for leaked in ("adversarial_answer", "session_summary", "observation", "Adoption agencies"):
        assert leaked not in text  # qa answers, summaries and observations never go in
    assert {q.category for q in questions([sample])} <= {1, 2, 3, 4}


def test_limit_1_smoke_run_writes_results_and_the_report(tmp_path):
    out = tmp_path / "benchmarks" / "locomo.json"
    report = run_locomo(LOCOMO, out, limit=1, model="hash", sweeps=False, latency_queries=20, log=lambda _: None,
                        pipeline=IN_PROCESS)

    saved = json.loads(out.read_text())
    assert saved["data"]["samples"] == 1 and saved["data"]["questions"] == report["data"]["questions"] > 100
    assert set(saved["systems"]) == {"hybrid", "bm25", "vector", "untuned_rrf", "hybrid_no_session_lift",
                                     "hybrid_graph_hop", "hybrid_graph_list"}
    for system in saved["systems"].values():
        for k in KS:
            assert 0.0 <= system["all"][f"turn_any@{k}"] <= 1.0
            assert system["all"][f"turn_all@{k}"] <= system["all"][f"turn_any@{k}"]
        assert system["all"]["turn_any@40"] >= system["all"]["turn_any@20"] >= system["all"]["turn_any@1"]
        assert system["all"]["words@40"] > system["all"]["words@10"] > 0  # what a larger k costs in text
        assert "session_all@20" not in system["all"]  # deeper than the rows asked for name conversations
        assert set(system["by_category"]) == {"1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"}
    assert saved["systems"]["bm25"]["all"]["turn_any@10"] > 0.3  # the lexical baseline works even with hashing
    assert saved["ingest"]["embedded_texts"] > 419
    assert saved["latency"]["queries"] == 20
    assert all(speed > 0 for speed in saved["latency"]["python_speed_ms"])  # the machine's speed, before and after

    markdown = render(out.parent)
    assert "## LoCoMo retrieval" in markdown and "| hybrid |" in markdown and "Machine:" in markdown
    assert "### What k the targets would need" in markdown
    # the graph-assisted row, with multi-hop session recall_all@5 on both halves (sample 0 is in the tuning half)
    graph_hop = markdown.split("### Graph-assisted retrieval", 1)[1].split("\n### ", 1)[0]
    assert "| hybrid_graph_hop |" in graph_hop and "| hybrid |" in graph_hop and "multi-hop session all@5" in graph_hop
    assert "| hybrid_graph_list |" in graph_hop
    assert "| python_speed_ms | " in markdown and " → " in markdown

    # a run with a model the project does not ship is shown beside, under its own heading
    other = {**saved, "settings": {**saved["settings"], "embedding_model": "/somewhere/larger-model"}}
    (out.parent / "locomo-larger-model.json").write_text(json.dumps(other))
    markdown = render(out.parent)
    section = markdown.split("## LoCoMo with another embedding model: `larger-model`", 1)[1]
    assert "| hybrid |" in section.split("\n## ", 1)[0] and "| query_embedding_ms_p50 |" in section


def test_the_benchmarks_adapter_learns_from_the_tuning_conversations_only(tmp_path, monkeypatch):
    """The held-back figures of `hybrid_adapted` are honest only if the adapter never read 5-9's chats."""
    import polars as pl

    import memlake.adapt
    from memlake.lake import Lake
    from memlake_bench.locomo import TUNE, evaluate_adapted

    samples = json.loads(LOCOMO.read_text())
    rows = []
    for sample in samples:
        index: dict[str, int] = {}
        for row in landing_rows(sample):
            index[row["conversation_id"]] = index.get(row["conversation_id"], -1) + 1
            rows.append({**row, "agent_id": sample["sample_id"], "turn_index": index[row["conversation_id"]]})
    every_turn = pl.DataFrame(rows)
    learned_from = []

    class Stop(Exception):
        pass

    def adapt(model, pairs, models_dir, *args, **kwargs):
        learned_from.extend(pairs)
        raise Stop  # what it learns from is the point; no need to train

    monkeypatch.setattr(memlake.adapt, "adapt", adapt)
    monkeypatch.setattr(Lake, "read", lambda self, table: every_turn)
    with pytest.raises(Stop):
        evaluate_adapted(samples, tmp_path, "", questions(samples), IN_PROCESS, log=lambda _: None)
    tuning = {samples[i]["sample_id"] for i in TUNE}
    assert {pair.agent_id for pair in learned_from} == tuning and len(learned_from) > 500
    said = {agent: set(turns["content"].to_list()) for (agent,), turns in every_turn.group_by("agent_id")}
    assert all(pair.reply.split(": ", 1)[-1] in said[pair.agent_id] for pair in learned_from)  # replies as said
    held_back = set().union(*(text for agent, text in said.items() if agent not in tuning))
    assert not any(pair.reply.split(": ", 1)[-1] in held_back for pair in learned_from)


def test_a_reused_benchmark_home_searches_the_adapted_index_it_built_before(tmp_path, monkeypatch):
    """Embedding the same texts again moves a few near-tie questions, so `--reuse` must not re-embed; but an
    index another adapter built is no index for this one."""
    import memlake.adapt
    import memlake_bench.locomo as locomo
    from memlake.adapt import Adapted
    from memlake_bench.pipeline import HomeRun

    samples = json.loads(LOCOMO.read_text())[:1]
    (tmp_path / "lake").mkdir()
    adapter = {"name": "adapted-aaaa"}
    monkeypatch.setattr(memlake.adapt, "home_pairs", lambda lake, agents: ([], 0))
    monkeypatch.setattr(memlake.adapt, "adapt", lambda model, pairs, models_dir, *a, **k: Adapted(
        path=models_dir / adapter["name"], pairs=0, trained=False, seconds=0.0))
    reindexed = []

    class Pipeline:
        def reindex(self, settings):
            reindexed.append(settings.embedding_model)
            return HomeRun(success=True)

    monkeypatch.setattr(locomo, "evaluate", lambda home, model, *a, **k: {"systems": {"searched": model}})

    def run(reuse: bool) -> dict:
        adaptation, systems = locomo.evaluate_adapted(samples, tmp_path, "", [], Pipeline(), lambda _: None,
                                                      reuse=reuse)
        assert systems == {"searched": str(tmp_path / "models" / adapter["name"])}
        return adaptation

    assert run(reuse=True)["index_reused"] is False  # nothing built yet
    assert run(reuse=True)["index_reused"] is True and len(reindexed) == 1
    assert run(reuse=False)["index_reused"] is False and len(reindexed) == 2  # a fresh run embeds again
    adapter["name"] = "adapted-bbbb"  # other pairs or settings: another adapter
    assert run(reuse=True)["index_reused"] is False and reindexed[-1].endswith("adapted-bbbb")
