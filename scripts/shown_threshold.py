"""The `shown_confidence` threshold on development data (LoCoMo 0-4), then the judged samples' shown share.

`dev`: the threshold sweep on LoCoMo samples 0-4 (`memlake_bench.shown.threshold_sweep`), and on RealMem personas
0-4 how many current facts each threshold shows (no judgements there: the count says what an assistant-chat
user would be shown). `judged THRESHOLD`: the held-out judged samples (LoCoMo 5-9, RealMem 5-9), which of their
judged facts are shown at THRESHOLD and the share right, before (every fact) and after (shown ones); run once the
threshold is chosen. `sample THRESHOLD SEED N`: a seeded sample of N facts shown at THRESHOLD from each held-out
half, beside their source messages, into docs/benchmarks/facts_shown_{locomo,realmem}_5_9.jsonl for judging by hand
(judgements already in the files are kept); `scored THRESHOLD`: those files' judged precision, counting a judged
fact no longer shown as stale. Draw the sample once, after the last rule. Writes JSON to stdout.

Usage: python scripts/shown_threshold.py dev | judged 0.7 | sample 0.65 4242 50 | scored 0.65
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime
from pathlib import Path

import polars as pl

from memlake.distill.confidence import shown
from memlake.distill.models import Conversation, Message
from memlake.embedding import SentenceEmbedder
from memlake_bench.distill import locomo_conversations
from memlake_bench.facts import (
    DEV_SAMPLES,
    HELD_OUT_SAMPLES,
    REALMEM_HELD_BACK,
    read_sample,
    sample_precision,
    source_excerpt,
    user_observations,
    write_keeping_judgements,
)
from memlake_bench.realmem import landing_rows, persona_files
from memlake_bench.shown import THRESHOLDS, fold_conversations, judged_shown, threshold_sweep

BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"  # beside the repo, as ../shared
DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks"


def realmem_conversations(picked: range) -> list[Conversation]:
    out = []
    for path in [persona_files(BENCHMARKS / "realmem")[i] for i in picked]:
        by_conversation: dict[str, list[dict]] = {}
        for row in landing_rows(json.loads(path.read_text())["dialogues"]):
            by_conversation.setdefault(row["conversation_id"], []).append(row)
        for conversation_id, turns in by_conversation.items():
            messages = tuple(Message(t["message_id"], t["role"], t["content"], datetime.fromisoformat(t["created_at"]))
                             for t in turns)
            out.append(Conversation(path.stem, conversation_id, None, messages))
    return out


def main(mode: str, threshold: float | None, seed: int = 0, size: int = 0) -> dict:
    samples = json.loads((BENCHMARKS / "locomo" / "locomo10.json").read_text())
    sample_of = {s["sample_id"]: i for i, s in enumerate(samples)}
    if mode == "dev":
        dev = [s for i, s in enumerate(samples) if i in DEV_SAMPLES]
        facts = fold_conversations(locomo_conversations(dev))
        observations = [o for o in user_observations(samples) if o.sample_index in DEV_SAMPLES]
        realmem = fold_conversations(realmem_conversations(range(0, 5)))
        return {"locomo_dev": threshold_sweep(facts, observations, sample_of, SentenceEmbedder()),
                "realmem_dev_shown": {t: realmem.filter(shown(t)).height for t in THRESHOLDS},
                "realmem_dev_current": realmem.height}
    assert threshold is not None
    held = [s for i, s in enumerate(samples) if i in HELD_OUT_SAMPLES]
    locomo_conversations_held = locomo_conversations(held)
    realmem_conversations_held = realmem_conversations(REALMEM_HELD_BACK)
    locomo = fold_conversations(locomo_conversations_held)
    realmem = fold_conversations(realmem_conversations_held)
    if mode in ("sample", "scored"):
        report = {"threshold": threshold}
        for name, facts, conversations in (("locomo", locomo, locomo_conversations_held),
                                           ("realmem", realmem, realmem_conversations_held)):
            path = DOCS / f"facts_shown_{name}_5_9.jsonl"
            shown_facts = facts.filter(shown(threshold))
            if mode == "sample":
                write_shown_sample(path, shown_facts, conversations, seed, size)
            current = {(r["agent_id"], ",".join(r["source_message_ids"] or ()), r["content"])
                       for r in shown_facts.iter_rows(named=True)}
            report[name] = {**sample_precision(path, current), "shown_facts": shown_facts.height}
        return report
    return {"threshold": threshold,
            "locomo_5_9": judged_shown(read_sample(DOCS / "facts_sample.jsonl"), locomo, threshold),
            "realmem_5_9": judged_shown(read_sample(DOCS / "facts_realmem_sample.jsonl"), realmem, threshold),
            "current_facts": {"locomo_5_9": locomo.height, "realmem_5_9": realmem.height},
            "shown_facts": {"locomo_5_9": locomo.filter(shown(threshold)).height,
                            "realmem_5_9": realmem.filter(shown(threshold)).height}}


def write_shown_sample(path: Path, shown_facts: pl.DataFrame, conversations: list[Conversation], seed: int,
                       size: int) -> None:
    """A seeded sample of shown facts beside their source messages (each cut around the sentence the fact came from);
    rows are keyed as the other judged samples are (agent, message ids, content), so `sample_precision` reads them."""
    said = {(c.agent_id, m.message_id): (m.speaker or m.role, m.content) for c in conversations for m in c.messages}
    rows = list(shown_facts.iter_rows(named=True))
    chosen = random.Random(seed).sample(rows, min(size, len(rows)))
    out = []
    for fact in chosen:
        ids = list(fact["source_message_ids"] or ())
        sources = [said.get((fact["agent_id"], m)) for m in ids]
        out.append({"sample": fact["agent_id"], "conversation_id": (fact["source_conversation_ids"] or [""])[0],
                       "message_ids": ids, "type": fact["type"], "subject": fact["subject"], "slot": fact["slot"],
                       "value": fact["value"], "content": fact["content"],
                       "confidence": round(float(fact["confidence"]), 3), "seed": seed,
                       "source": [f"{who}: {source_excerpt(text, fact['content'])}" for who, text in
                                  (s for s in sources if s is not None)],
                       "correct": None, "note": ""})
    write_keeping_judgements(path, out)


if __name__ == "__main__":
    pl.Config.set_tbl_rows(50)
    args = sys.argv[1:]
    print(json.dumps(main(args[0], float(args[1]) if len(args) > 1 else None, *map(int, args[2:4])), indent=1))
