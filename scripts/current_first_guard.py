"""`python scripts/current_first_guard.py HOME OUT.json tune|held`: the guard rails of issue 37's current-first read
path (docs/decisions.md, 2026-11-29) on a built LoCoMo home (a copy: `memlake bench locomo --home H`), one half:
the default search's turn any@10 and session all@5 per category, and the compact context block at 800 tokens
(evidence share, tokens, how full, and the facts section: how many fact lines share no content word with the
question or its evidence turns)."""

import json
import statistics
import sys
import time
from pathlib import Path

import memlake
from memlake.api import Memory
from memlake.settings import load_settings
from memlake.text import content_words
from memlake_bench import locomo
from memlake_bench.context import block_message_ids

home, out, which = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
print("code:", memlake.__file__, flush=True)
raw, samples, qs = locomo.read_questions(Path("/work/shared/benchmarks/locomo/locomo10.json"), None, "locomo", print)
half = locomo.TUNE if which == "tune" else locomo.HELD
qs = [q for q in qs if q.sample_index in half]
report = {"questions": len(qs), "half": which}
started = time.time()
result = locomo.evaluate(home, "", qs, locomo.word_counts(samples), {"hybrid": locomo.SYSTEMS["hybrid"]}, (), 0)
hybrid = result["systems"]["hybrid"]
report["search_seconds"] = round(time.time() - started, 1)
report["search"] = {"all": {k: hybrid["all"][k] for k in ("n", "turn_any@10", "session_all@5")},
                    **{cat: {k: s[k] for k in ("n", "turn_any@10", "session_all@5")}
                       for cat, s in hybrid["by_category"].items()}}
print(json.dumps(report["search"], indent=1), flush=True)
memory = Memory(settings=load_settings(home))
texts = {}
rows = []
started = time.time()
for q in qs:
    if q.agent_id not in texts:
        turns = memory.turns(q.agent_id)
        texts[q.agent_id] = dict(zip(turns["message_id"].to_list(), turns["content"].to_list(), strict=True))
    block = memory.context(q.question, q.agent_id, mode="compact", budget=800, as_of=q.as_of)
    evidence_ids = set(q.evidence)
    held = block_message_ids(block)
    wanted = content_words(q.question) | {w for e in evidence_ids for w in content_words(texts[q.agent_id].get(e, ""))}
    facts = [line for line in block.provenance if line["kind"] == "fact" and line["section"] != "overrides"]
    unrelated = [line for line in facts if not (content_words(line["text"]) & wanted)]
    rows.append({"evidence": float(bool(held & evidence_ids)),
                 "tokens": block.token_count, "full": block.token_count / block.budget,
                 "facts": len(facts), "unrelated_facts": len(unrelated), "section": block.gate.section})
report["context_seconds"] = round(time.time() - started, 1)
with_facts = [r for r in rows if r["facts"]]
report["context"] = {
    "evidence_any": round(statistics.fmean(r["evidence"] for r in rows), 4),
    "tokens_mean": round(statistics.fmean(r["tokens"] for r in rows), 1),
    "blocks_97pct_full": round(statistics.fmean(r["full"] >= 0.97 for r in rows), 4),
    "blocks_with_facts": len(with_facts),
    "fact_lines": sum(r["facts"] for r in rows),
    "unrelated_fact_lines": sum(r["unrelated_facts"] for r in rows),
    "unrelated_share": round(sum(r["unrelated_facts"] for r in rows) / max(1, sum(r["facts"] for r in rows)), 4),
    "sections": {s: sum(r["section"] == s for r in rows) for s in sorted({r["section"] for r in rows})},
}
print(json.dumps(report["context"], indent=1), flush=True)
out.write_text(json.dumps(report, indent=1))
