"""The `shown_confidence` threshold on development data (LoCoMo 0-4), then the judged samples' shown share.

`dev`: the threshold sweep on LoCoMo samples 0-4 (`memlake.bench.shown.threshold_sweep`), and on RealMem personas
0-4 how many current facts each threshold shows (no judgements there: the count says what an assistant-chat
user would be shown). `judged THRESHOLD`: the held-out judged samples (LoCoMo 5-9, RealMem 5-9), which of their
judged facts are shown at THRESHOLD and the share right, before (every fact) and after (shown ones); run once the
threshold is chosen. Writes JSON to stdout.

Usage: python scripts/shown_threshold.py dev | judged 0.7
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import polars as pl

from memlake.bench.distill import locomo_conversations
from memlake.bench.facts import DEV_SAMPLES, HELD_OUT_SAMPLES, REALMEM_HELD_BACK, read_sample, user_observations
from memlake.bench.realmem import landing_rows, persona_files
from memlake.bench.shown import THRESHOLDS, fold_conversations, judged_shown, threshold_sweep
from memlake.distill.models import Conversation, Message
from memlake.embedding import SentenceEmbedder
from memlake.facts.confidence import shown

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


def main(mode: str, threshold: float | None) -> dict:
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
    locomo = fold_conversations(locomo_conversations(held))
    realmem = fold_conversations(realmem_conversations(REALMEM_HELD_BACK))
    return {"threshold": threshold,
            "locomo_5_9": judged_shown(read_sample(DOCS / "facts_sample.jsonl"), locomo, threshold),
            "realmem_5_9": judged_shown(read_sample(DOCS / "facts_realmem_sample.jsonl"), realmem, threshold),
            "current_facts": {"locomo_5_9": locomo.height, "realmem_5_9": realmem.height},
            "shown_facts": {"locomo_5_9": locomo.filter(shown(threshold)).height,
                            "realmem_5_9": realmem.filter(shown(threshold)).height}}


if __name__ == "__main__":
    pl.Config.set_tbl_rows(50)
    print(json.dumps(main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else None), indent=1))
