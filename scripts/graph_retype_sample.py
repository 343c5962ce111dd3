"""A judged sample of graph entities typed again by the checked-out code: LoCoMo's turns read afresh (no episodes,
no facts: the turns are where names are read), each sampled row looked up by its agent and name in the new graph.

A row judged right is still right when the new graph has that name (or the name it was a piece of: "Witcher" of
"The Witcher 3") with the same type. A row judged wrong is right now when the new graph has what the judge's note
says it is (`RIGHT_FOR_WRONG` below: a type, or None for no entity: the name and the name it was cut from are no
entity's). So the figure is the sample's precision had these rows been drawn from the new graph; it is development
data, not a fresh sample (that is drawn after the last rule, `scripts/graph_samples.py --seed N`).

Run: PYTHONPATH=. python scripts/graph_retype_sample.py docs/benchmarks/graph_entities_s5150.jsonl
     [/work/shared/benchmarks/locomo/locomo10.json]
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import polars as pl

from memlake.graph.build import build_graph
from memlake.lake import Lake, conform
from memlake.schemas import EPISODES, FACTS, TURNS
from memlake_bench.locomo import landing_rows

# What the judge's note says a wrongly judged row is: a type, or None (no entity), with the form to look up when
# the name was a cut one ("Pomodoro Technique - 25 minutes": the method, judged no entity). The judged sample's
# notes, read once by hand: this is the sample's answer key, not a rule of the product.
RIGHT_FOR_WRONG: dict[str, tuple[str | None, str]] = {
    "the user's mum": (None, "the user's mum"), "Awesome": (None, "Awesome"), "Woohoo": (None, "Woohoo"),
    "user": (None, "user"), "GO": (None, "GO"), "We`ve": (None, "We`ve"), "Yep John": (None, "Yep John"),
    "Pomodoro Technique - 25 minutes": (None, "Pomodoro Technique"),
    "Perseid": ("event", "Perseid"), "Savana": ("work", "Savana"), "Scout": ("animal", "Scout"),
    "New Horizons": ("work", "New Horizons"), "Spider-Man": ("person", "Spider-Man"), "Mozart": ("person", "Mozart"),
    "Iguodala": ("person", "Iguodala"), "Manchester City": ("organization", "Manchester City"),
    "Karlie": ("person", "Karlie"), "Ferrari": ("tool", "Ferrari"),
}


def turns_of(path: str) -> pl.DataFrame:
    rows = []
    for sample in json.loads(Path(path).read_text(encoding="utf-8")):
        for i, row in enumerate(landing_rows(sample)):
            at = datetime.fromisoformat(row["created_at"])
            rows.append({**row, "agent_id": sample["sample_id"], "turn_index": i, "created_at": at,
                         "conversation_started_at": at})
    frame = pl.from_arrow(conform(TURNS, rows))
    assert isinstance(frame, pl.DataFrame)
    return frame


def types_of(entities: pl.DataFrame, agent: str, form: str, whole: bool = True) -> set[str]:
    """The types of the agent's entities called `form`, or (`whole`) whose name holds it as a piece ("CS" of
    "CS:GO": the name now taken whole)."""
    low = form.lower()
    ours = entities.filter(pl.col("agent_id") == agent)
    exact = {t for n, t in ours.select("name", "type").iter_rows() if n.lower() == low}
    if exact or not whole:
        return exact
    return {t for n, t in ours.select("name", "type").iter_rows() if low in n.lower().split(" ")
                     or low in n.lower().replace(":", " ").split(" ")}


def main(sample_path: str, locomo: str) -> None:
    graph = build_graph(Lake.empty(EPISODES), Lake.empty(FACTS), None, 0.85, turns=turns_of(locomo))
    right = 0
    rows = [json.loads(line) for line in Path(sample_path).read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        judged = row.get("judgement", row.get("correct"))
        wanted, form = (row["type"], row["name"]) if judged else RIGHT_FOR_WRONG[row["name"]]
        found = types_of(graph.entities, row["agent_id"], form, whole=wanted is not None)
        ok = (not found) if wanted is None else wanted in found
        right += ok
        print(f"{'right' if ok else 'WRONG'}  {row['agent_id']} {row['name']!r}: was {row['type']} "
              f"({'judged right' if judged else 'judged wrong'}), wanted {wanted}, now {sorted(found) or 'no entity'}")
    print(f"type precision re-typed: {right} of {len(rows)} ({right / len(rows):.2f})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "/work/shared/benchmarks/locomo/locomo10.json")
