"""The context block's relevance floor on LoCoMo: evidence in the compact block and its tokens, per floor.

Builds (or reuses) the LoCoMo home of `memlake bench context`, then asks every question's compact block at each
floor and budget; conversations 0-4 (tune) choose the floor, 5-9 (held back) check it. JSON to stdout.

Usage: python scripts/context_floor.py HOME [floor,floor,...] [budget,budget,...] [tune|held|both] [STRIDE]
(STRIDE n: every n-th question, for a quicker look on a busy machine)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memlake.api import Memory
from memlake.settings import load_settings
from memlake_bench.context import block_message_ids
from memlake_bench.in_process import IN_PROCESS
from memlake_bench.locomo import HELD, TUNE, built_home, read_questions

DATA = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "locomo" / "locomo10.json"


def main(home: Path, floors: list[float], budgets: list[int], halves_asked: str = "both", stride: int = 1) -> dict:
    _, samples, qs = read_questions(DATA, None, "context", lambda line: print(line, file=sys.stderr))
    wanted = {"tune": TUNE, "held": HELD, "both": TUNE + HELD}[halves_asked]
    qs = [q for q in qs if q.sample_index in wanted][::stride]
    # raw_rate off: the floor needs the home, not the raw embedder's speed (timing it embeds every text again)
    built_home(samples, home, "", True, IN_PROCESS, lambda line: print(line, file=sys.stderr), raw_rate=False)
    out = {}
    for floor in floors:
        memory = Memory(settings=load_settings(home, context_relevance_floor=floor))
        for budget in budgets:
            halves: dict[str, list[tuple[bool, int]]] = {"tune_0_4": [], "held_5_9": []}
            for q in qs:
                block = memory.context(q.question, q.agent_id, budget=budget, as_of=q.as_of)
                half = "tune_0_4" if q.sample_index in TUNE else "held_5_9" if q.sample_index in HELD else None
                if half:
                    halves[half].append((bool(block_message_ids(block) & set(q.evidence)), block.token_count))
            out[f"floor {floor} budget {budget}"] = {
                half: {"n": len(rows), "evidence_any": round(sum(hit for hit, _ in rows) / len(rows), 4),
                       "tokens_mean": round(sum(t for _, t in rows) / len(rows), 1),
                       "under_90pct_of_budget": round(sum(t < 0.9 * budget for _, t in rows) / len(rows), 4)}
                for half, rows in halves.items() if rows}
            print(json.dumps({f"floor {floor} budget {budget}": out[f"floor {floor} budget {budget}"]}),
                  file=sys.stderr)
    return out


if __name__ == "__main__":
    floors = [float(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "0,0.5,0.7,0.8").split(",")]
    budgets = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "800,400").split(",")]
    print(json.dumps(main(Path(sys.argv[1]), floors, budgets, sys.argv[4] if len(sys.argv) > 4 else "both",
                          int(sys.argv[5]) if len(sys.argv) > 5 else 1), indent=1))
