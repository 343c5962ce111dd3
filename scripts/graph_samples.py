"""The graph of built homes, measured, and seeded samples of its entities and shown relations for judging by hand.

Each home is one a pipeline run built (the LoCoMo home of `memlake_bench.locomo.built_home`, the shipped samples'
home of `memlake ingest-samples` + `memlake run`); its graph is built again here from its lake's episodes, facts
and turns by the code checked out (`build_home_graph`, its turns read afresh), so a rule changed since the home was
built is what is measured. Prints, per home: entities by type, names typed more than one way, relation versions
per agent (all and shown). With `--entities` / `--relations`, writes a seeded sample of entities (each with its
type and the sentences that name it) and of shown relations (each with the sentence it was read from), UNJUDGED:
judging is a person's, not this script's.

Run: PYTHONPATH=. python scripts/graph_samples.py HOME [HOME ...] [--seed 5150] [--entities OUT.jsonl]
     [--relations OUT.jsonl] [--size 50]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from memlake.chunks import SENTENCE_END
from memlake.embedding import configured_embedder
from memlake.graph.build import Graph, build_home_graph
from memlake.graph.picture import shown_relations
from memlake.graph.reads import named
from memlake.lake import Lake
from memlake.schemas import EPISODES, FACTS, TURNS
from memlake.settings import load_settings

EVIDENCE_SENTENCES = 3  # per entity: enough to judge its type


def build(home: Path) -> tuple[Graph, dict[tuple[str, str], str], float]:
    """The home's graph built by this checkout, the text of every message by (agent, message id), the seconds."""
    settings = load_settings(home)
    lake = Lake.of(settings)
    embedder = configured_embedder(settings)
    turns = lake.read(TURNS)
    start = time.perf_counter()
    graph = build_home_graph(settings, lake.read(EPISODES), lake.read(FACTS),
                             embedder.embed if embedder is not None else None, turns)
    said = {(a, m): c or "" for a, m, c in turns.select("agent_id", "message_id", "content").iter_rows()}
    return graph, said, time.perf_counter() - start


def report(name: str, graph: Graph, turns: int, seconds: float) -> None:
    relations, entities = graph.relations, graph.entities
    agents = max(1, entities["agent_id"].n_unique())
    shown = shown_relations(relations)
    print(f"== {name}: {turns} turns, graph built in {seconds:.1f} s")
    print(f"entities {entities.height} over {agents} agents; by type {dict(Counter(entities['type']).most_common())}")
    print(f"relation versions {relations.height} ({relations.height / agents:.1f} per agent), shown "
          f"{shown.height} ({shown.height / agents:.1f} per agent)")
    print(f"relations by kind {dict(Counter(relations['relation']).most_common())}")
    twice = (entities.with_columns(key=pl.col("name").str.to_lowercase()).group_by("agent_id", "key")
             .agg(pl.col("type").unique().sort()).filter(pl.col("type").list.len() > 1))
    print(f"names typed more than one way in an agent: {twice.height}")
    for agent, key, types in twice.head(20).iter_rows():
        print(f"  {agent} {key!r}: {types}")


def sentences_naming(text: str, name: str) -> list[str]:
    """The sentences of `text` that hold `name` (as a word), else the text's start."""
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
    found = [s.strip() for s in SENTENCE_END.split(text) if pattern.search(s)]
    return found or [text.strip()[:200]]


def entity_rows(home: str, graph: Graph, said: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    rows = []
    mentions = graph.mentions.group_by("entity_id").agg(pl.col("message_id"), pl.col("name"))
    cited = {e: list(zip(ms, ns, strict=True)) for e, ms, ns in mentions.iter_rows()}
    for e in graph.entities.sort("agent_id", "entity_id").iter_rows(named=True):
        evidence: list[str] = []
        for message, form in cited.get(e["entity_id"], []):
            for sentence in sentences_naming(said.get((e["agent_id"], message), ""), form):
                if sentence and sentence not in evidence:
                    evidence.append(sentence)
        rows.append({"home": home, "agent_id": e["agent_id"], "entity_id": e["entity_id"], "name": e["name"],
                     "type": e["type"], "aliases": e["aliases"], "mention_count": e["mention_count"],
                     "evidence": evidence[:EVIDENCE_SENTENCES]})
    return rows


def relation_rows(home: str, graph: Graph, said: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    rows = []
    shown = shown_relations(graph.relations)
    for r in named(shown, graph.entities).sort("agent_id", "relation_id", "version").iter_rows(named=True):
        quotes = [said.get((r["agent_id"], m), "") for m in r["source_message_ids"]]
        rows.append({"home": home, "agent_id": r["agent_id"], "relation_id": r["relation_id"],
                     "version": r["version"], "source": r["source_name"], "relation": r["relation"],
                     "target": r["target_name"], "confidence": r["confidence"],
                     "source_message_ids": r["source_message_ids"], "said": [q for q in quotes if q][:2]})
    return rows


def write_sample(rows: list[dict[str, Any]], size: int, seed: int, out: Path) -> None:
    picked = random.Random(seed).sample(rows, min(size, len(rows)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps({**row, "seed": seed, "judgement": None}, ensure_ascii=False, default=str)
                           + "\n" for row in picked), encoding="utf-8")
    print(f"wrote {len(picked)} of {len(rows)} to {out} (seed {seed}, unjudged)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homes", nargs="+", type=Path)
    parser.add_argument("--seed", type=int, default=5150)
    parser.add_argument("--size", type=int, default=50)
    parser.add_argument("--entities", type=Path)
    parser.add_argument("--relations", type=Path)
    args = parser.parse_args()
    entities: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    for home in args.homes:
        graph, said, seconds = build(home)
        report(home.name, graph, len(said), seconds)
        entities += entity_rows(home.name, graph, said)
        relations += relation_rows(home.name, graph, said)
    if args.entities:
        write_sample(entities, args.size, args.seed, args.entities)
    if args.relations:
        write_sample(relations, args.size, args.seed, args.relations)


if __name__ == "__main__":
    main()
