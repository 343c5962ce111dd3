"""Measure the graph read from LoCoMo's turns alone (no episodes, no facts): build time per 1,000 turns, entities by
type, relation versions per agent, and every relation with the message it was read from, for reading by hand; then
the same build again with the first build's turn readings (graph/turn_reads), as a rerun over unchanged turns.

Run: PYTHONPATH=. python scripts/graph_locomo_measure.py [/work/shared/benchmarks/locomo/locomo10.json]
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import polars as pl

from memlake.graph.build import build_graph
from memlake.graph.reads import named
from memlake.graph.stated import SHOWN_CONFIDENCE
from memlake.lake import Lake, conform
from memlake.nlp import pipeline
from memlake.schemas import EPISODES, FACTS, TURNS
from memlake_bench.locomo import landing_rows


def main(path: str) -> None:
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = []
    for n, sample in enumerate(samples):
        for i, row in enumerate(landing_rows(sample)):
            at = datetime.fromisoformat(row["created_at"])
            rows.append({**row, "agent_id": f"locomo_{n}", "turn_index": i, "created_at": at,
                         "conversation_started_at": at})
    turns = pl.from_arrow(conform(TURNS, rows))
    assert isinstance(turns, pl.DataFrame)
    pipeline()  # loaded before the clock starts
    start = time.perf_counter()
    graph = build_graph(Lake.empty(EPISODES), Lake.empty(FACTS), None, 0.85, turns=turns)
    wall = time.perf_counter() - start
    relations, agents = graph.relations, turns["agent_id"].n_unique()
    shown = relations.filter(pl.col("confidence") >= SHOWN_CONFIDENCE).height
    print(f"turns {turns.height}, agents {agents}, {wall:.1f} s, {wall / turns.height * 1000:.2f} s per 1,000 turns")
    print(f"entities {graph.entities.height}, mentions {graph.mentions.height}, relation versions {relations.height} "
          f"({relations.height / agents:.1f} per agent; shown {shown})")
    start = time.perf_counter()
    again = build_graph(Lake.empty(EPISODES), Lake.empty(FACTS), None, 0.85, turns=turns, turn_reads=graph.turn_reads)
    rerun = time.perf_counter() - start
    same = all(getattr(again, t).equals(getattr(graph, t)) for t in ("entities", "relations", "mentions", "merges"))
    print(f"rerun over the same turns: {rerun:.1f} s ({rerun / turns.height * 1000:.2f} s per 1,000 turns), "
          f"tables equal: {same}")
    print("entities by type", dict(Counter(graph.entities["type"].to_list()).most_common()))
    print("relations", dict(Counter(relations["relation"].to_list()).most_common()))
    said = {(a, m): c for a, m, c in turns.select("agent_id", "message_id", "content").iter_rows()}
    for r in named(relations, graph.entities).iter_rows(named=True):
        quote = [said.get((r["agent_id"], m), "")[:140] for m in r["source_message_ids"]][:1]
        print(r["agent_id"], r["source_name"], r["relation"], r["target_name"], r["confidence"], "|", quote)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/benchmarks/locomo/locomo10.json")
