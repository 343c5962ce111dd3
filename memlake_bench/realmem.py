"""RealMem retrieval benchmark: gold sessions of long-answer chats, found by memlake and by BM25 in the same run.

Data: ../shared/benchmarks/realmem/ (its README says how to score; nothing is copied into the repo). One agent
per persona (file, sorted by name), one conversation per session; a session carries only a date, so the
sessions of one day get increasing times in file order, ten minutes apart from 08:00. Each query turn is asked
as of one second before its own session starts (`until` that moment too), so that session and every later one
are out of reach; its gold is the answer's `memory_session_uuids` said before it (3 of 2,319 gold sessions are
the query's own session and cannot be found; a query left with none is not asked).

Per query and system (memlake's default `hybrid`, and `bm25`: the LoCoMo benchmark's full-text baseline over the
same turn chunks):
- session any/all@k: the distinct conversations of the hits, first k;
- evidence inside 750 words: the share of gold sessions with a hit inside the first 750 words of returned text
  (the words of each hit's `text`, in rank order: a hit through a long answer's passage costs the passage);
- evidence inside 800 tokens: the share of gold sessions a block line comes from; memlake's block is
  `Memory.context` (compact, 800 tokens), beside it for both systems the search hits cut to 800 tokens by the
  same assembler (`memlake_bench.context.search_block`).
Personas 0-4 are the tuning half, 5-9 are reported apart.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memlake.api import Memory
from memlake.schemas import agent_folder
from memlake.settings import load_settings
from memlake_bench.context import COMPACT_BUDGET, block_conversation_ids, search_block
from memlake_bench.locomo import SEARCH_K, SYSTEMS, build_landed, first_unique
from memlake_bench.machine import machine
from memlake_bench.markdown import markdown_table
from memlake_bench.pipeline import HomePipeline

SESSION_KS = (1, 3, 5, 10)
BUDGET_WORDS = 750
TUNE = tuple(range(0, 5))
HELD = tuple(range(5, 10))
FIRST_SESSION = timedelta(hours=8)
SESSION_GAP = timedelta(minutes=10)
BENCH_SYSTEMS = {"hybrid": SYSTEMS["hybrid"], "bm25": SYSTEMS["bm25"]}


def persona_files(data: Path) -> list[Path]:
    """The personas, sorted by file name: 0-4 tune, 5-9 held back."""
    files = sorted(data.glob("*_dialogues_256k.json"))
    if not files:
        raise FileNotFoundError(f"no RealMem persona files (*_dialogues_256k.json) in {data}")
    return files


def agent_of(path: Path) -> str:
    return path.name.removesuffix("_dialogues_256k.json")


def session_starts(dialogues: Sequence[dict[str, Any]]) -> list[datetime]:
    """Each session's start: its date ("2025-12-25 (Thursday)") at 08:00, ten minutes more for each earlier
    session of the same day in the file."""
    starts: list[datetime] = []
    per_day: dict[datetime, int] = {}
    for session in dialogues:
        day = datetime.strptime(session["current_time"].split()[0], "%Y-%m-%d").replace(tzinfo=UTC)
        per_day[day] = per_day.get(day, -1) + 1
        starts.append(day + FIRST_SESSION + per_day[day] * SESSION_GAP)
    return starts


def landing_rows(dialogues: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Generic JSONL rows of one persona: a conversation per session, its turns at the session's start."""
    rows = []
    for session, start in zip(dialogues, session_starts(dialogues), strict=True):
        for index, turn in enumerate(session["dialogue_turns"]):
            rows.append({
                "conversation_id": session["session_uuid"],
                "message_id": f"{session['session_uuid']}:{index}",
                "role": "user" if turn["speaker"] == "User" else "assistant",
                "content": turn["content"],
                "created_at": start.isoformat(),
            })
    return rows


def write_landing(personas: Sequence[tuple[str, list[dict[str, Any]]]], landing_dir: Path) -> None:
    for agent_id, dialogues in personas:
        path = agent_folder(landing_dir, agent_id) / "realmem.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in landing_rows(dialogues)))


@dataclass(frozen=True)
class Query:
    persona: int  # index in file-name order
    agent_id: str
    question: str
    gold: tuple[str, ...]  # session uuids said before the query's session
    as_of: datetime  # one second before the query's session starts


def queries(persona: int, agent_id: str, dialogues: Sequence[dict[str, Any]]) -> list[Query]:
    out = []
    starts = session_starts(dialogues)
    for session, start in zip(dialogues, starts, strict=True):
        turns = session["dialogue_turns"]
        earlier = {s["session_uuid"] for s, began in zip(dialogues, starts, strict=True) if began < start}
        for turn, answer in zip(turns, [*turns[1:], None], strict=True):
            if not turn.get("is_query") or answer is None:
                continue
            gold = tuple(u for u in dict.fromkeys(answer.get("memory_session_uuids") or []) if u in earlier)
            if gold:
                out.append(Query(persona, agent_id, turn["content"], gold, start - timedelta(seconds=1)))
    return out


def read_personas(data: Path, picked: Sequence[int] | None) -> tuple[str, list[tuple[int, str, list[Any]]]]:
    """The digest of the picked persona files and (index, agent id, sessions) of each."""
    files = persona_files(data)
    indexes = list(picked) if picked else list(range(len(files)))
    unknown = [i for i in indexes if not 0 <= i < len(files)]
    if unknown:
        raise ValueError(f"no persona {unknown}: there are {len(files)} (0-{len(files) - 1})")
    digest = hashlib.sha256()
    out = []
    for i in indexes:
        raw = files[i].read_bytes()
        digest.update(raw)
        out.append((i, agent_of(files[i]), json.loads(raw)["dialogues"]))
    return digest.hexdigest(), out


# -- scoring ----------------------------------------------------------------------------------


def words_budget_sessions(texts: Iterable[str], conversations: Iterable[str], budget: int = BUDGET_WORDS) -> set[str]:
    """The conversations of the hits whose text lies wholly inside the first `budget` words of returned text."""
    used, covered = 0, set()
    for text, conversation in zip(texts, conversations, strict=True):
        used += len(text.split())
        if used > budget:
            break
        covered.add(conversation)
    return covered


def shares(gold: Sequence[str], found: set[str]) -> tuple[float, float]:
    """(share of the gold sessions found, 1 if all were)."""
    inside = len(set(gold) & found)
    return inside / len(gold), float(inside == len(gold))


def score_query(memory: Memory, q: Query, system: str, overrides: dict[str, Any]) -> dict[str, float]:
    hits = memory.search(q.question, q.agent_id, k=SEARCH_K, as_of=q.as_of, until=q.as_of, **overrides)
    conversations = hits["conversation_id"].to_list()
    row: dict[str, float] = {}
    for k in SESSION_KS:
        top = set(first_unique(conversations, k))
        row[f"session_any@{k}"] = float(bool(top & set(q.gold)))
        row[f"session_all@{k}"] = float(set(q.gold) <= top)
    row["words750_share"], row["words750_all"] = shares(
        q.gold, words_budget_sessions(hits["text"].to_list(), conversations))
    block = search_block(memory, q, COMPACT_BUDGET, until=q.as_of, **overrides)
    row["search800_share"], row["search800_all"] = shares(q.gold, block_conversation_ids(block))
    if system == "hybrid":
        block = memory.context(q.question, q.agent_id, mode="compact", budget=COMPACT_BUDGET, as_of=q.as_of)
        row["context800_share"], row["context800_all"] = shares(q.gold, block_conversation_ids(block))
    return row


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"n": 0}
    keys = [k for k in rows[0] if k != "persona"]
    return {"n": len(rows), **{k: round(statistics.fmean(r[k] for r in rows), 4) for k in keys}}


def evaluate(home: Path, qs: Sequence[Query], log: Callable[[str], None]) -> dict[str, Any]:
    memory = Memory(settings=load_settings(home))
    results: dict[str, Any] = {}
    for system, overrides in BENCH_SYSTEMS.items():
        rows = []
        for n, q in enumerate(qs, start=1):
            rows.append({"persona": q.persona, **score_query(memory, q, system, overrides)})
            if n % 200 == 0:
                log(f"{system}: {n}/{len(qs)} queries")
        results[system] = {
            "overrides": json.loads(json.dumps(overrides, default=list)),
            "all": summary(rows),
            "tune_0_4": summary([r for r in rows if r["persona"] in TUNE]),
            "held_5_9": summary([r for r in rows if r["persona"] in HELD]),
        }
    return results


def held_comparison(systems: dict[str, Any]) -> dict[str, Any]:
    """On personas 5-9, memlake's figure beside BM25's for each measure (its context block beside BM25's hits
    cut to the same 800 tokens)."""
    ours, theirs = systems["hybrid"]["held_5_9"], systems["bm25"]["held_5_9"]
    if not ours.get("n"):
        return {}
    pairs = {k: (ours[k], theirs[k]) for k in theirs if k != "n"}
    pairs |= {f"context800_vs_search800_{part}": (ours[f"context800_{part}"], theirs[f"search800_{part}"])
              for part in ("share", "all")}
    return {k: {"memlake": a, "bm25": b, "ahead": a > b} for k, (a, b) in pairs.items()}


def run_realmem(
    data: Path,
    out: Path | None,
    *,
    personas: Sequence[int] | None = None,
    model: str = "",
    home: Path | None = None,
    reuse: bool = False,
    log: Callable[[str], None] = print,
    pipeline: HomePipeline,
) -> dict[str, Any]:
    """The whole benchmark: land the personas and build (unless `reuse` finds `home` built), ask every query,
    write `out` as JSON."""
    digest, picked = read_personas(data, personas)
    qs = [q for index, agent, dialogues in picked for q in queries(index, agent, dialogues)]
    log(f"realmem: {len(picked)} persona(s), {len(qs)} queries")
    with tempfile.TemporaryDirectory(prefix="memlake-realmem-") as tmp:
        target = home or Path(tmp) / "home"
        if reuse and (target / "lancedb").is_dir():
            log(f"reusing {target}")
            ingest = json.loads((target / "ingest.json").read_text()) if (target / "ingest.json").is_file() else {}
        else:
            ingest = build_landed(target, model, pipeline,
                                  lambda landing: write_landing([(a, d) for _, a, d in picked], landing),
                                  raw_rate=False)
            (target / "ingest.json").write_text(json.dumps(ingest))
            log(f"ingest: {ingest}")
        systems = evaluate(target, qs, log)
        settings = load_settings(target)
    report = {
        "benchmark": "realmem",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "data": {"folder": str(data), "sha256_of_files": digest, "personas": [a for _, a, _ in picked],
                 "persona_indexes": [i for i, _, _ in picked], "queries": len(qs)},
        "settings": {k: getattr(settings, k) for k in ("embedding_model", "chunk_long_turn_words",
                                                       "chunk_long_turn_keys", "chunk_long_turn_tokens",
                                                       "chunk_window_size")},
        "ingest": ingest,
        "systems": systems,
        "held_5_9_memlake_vs_bm25": held_comparison(systems),
    }
    report["markdown"] = render_markdown(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report


MARKDOWN_MEASURES = ("session_any@5", "session_all@5", "words750_share", "context800_share", "search800_share")


def render_markdown(report: dict[str, Any]) -> str:
    """The Markdown section of docs/benchmarks.md (kept in realmem.json, as benchmarks beside locomo do)."""
    machine_ = report["machine"]
    lines = ["## RealMem retrieval (long answers)", "",
             f"Run: `memlake bench realmem`, {report['date']}, {report['data']['queries']} queries over "
             f"{len(report['data']['personas'])} personas; personas 0-4 tune, 5-9 held back; BM25 over the same "
             f"turn chunks in the same run. Load {machine_.get('load_average_1m')}.", ""]
    systems = report["systems"]
    present = [m for m in MARKDOWN_MEASURES
               if any(m in system.get(half, {}) for system in systems.values() for half in ("tune_0_4", "held_5_9"))]
    rows = [[name, half, row["n"], *(row.get(m) for m in present)]
            for name, system in systems.items() for half in ("tune_0_4", "held_5_9")
            if (row := system.get(half, {})).get("n")]
    lines.append(markdown_table(["system", "half", "n", *present], rows))
    held = report.get("held_5_9_memlake_vs_bm25") or {}
    behind = sorted(k for k, v in held.items() if not v["ahead"])
    if held:
        lines += ["", f"Personas 5-9, memlake ahead of BM25 on {len(held) - len(behind)} of {len(held)} measures"
                  + (f"; not ahead on: {', '.join(behind)}." if behind else ".")]
    return "\n".join(lines + [""])
