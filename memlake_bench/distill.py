"""Distillation benchmark on LoCoMo: offline throughput, model calls per conversation, the cache.

Only each sample's `conversation` goes in (every session is one conversation,
speaker_a the user, the session date on every turn, as in
`memlake_bench.locomo`); `qa`, `observation`, `event_summary` and
`session_summary` are never read. Measured:

- offline distiller throughput: conversations/s and messages/s over the 272
  sessions (median of `rounds` timed passes, single process); each pass starts
  with no parse cached, as a first distillation does, and the English
  pipeline is loaded before the first (its load is reported apart);
- model calls per conversation: the parts `split_conversation` makes at the
  configured context (`core_context_tokens`), for each session and for each
  whole sample taken as one long conversation; the tests count the same calls
  at a local OpenAI-compatible server;
- a second pass over unchanged conversations: distillations and cache hits
  (`memlake.distill.run.distill_pass` with the result cache);
- key dates the offline rules resolved, and how many fall within a year of the
  session they were said in (relative dates resolve against the session date,
  never against today).

`run_distill_benchmark` writes `docs/benchmarks/distill.json`;
`render_distill_section` turns it into the Markdown section of
docs/benchmarks.md.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from memlake.distill.cache import ResultCache
from memlake.distill.models import Conversation, Message
from memlake.distill.offline import OFFLINE_DISTILLER_VERSION, OfflineDistiller, distill_offline
from memlake.distill.prompt import PROMPT_VERSION, split_conversation
from memlake.distill.run import distill_pass
from memlake.lake import Lake
from memlake.nlp import language_model
from memlake.schemas import DISTILL_CACHE, EPISODES, PENDING
from memlake.settings import Settings, load_settings
from memlake_bench.locomo import sessions, turn_content
from memlake_bench.machine import machine


def locomo_conversations(samples: list[dict[str, Any]]) -> list[Conversation]:
    """Every session of every sample as one conversation (speaker_a is the user)."""
    out = []
    for sample in samples:
        speaker_a = sample["conversation"]["speaker_a"]
        for number, when, turns in sessions(sample):
            out.append(
                Conversation(
                    sample["sample_id"],
                    f"session_{number}",
                    None,
                    tuple(
                        Message(t["dia_id"], "user" if t["speaker"] == speaker_a else "assistant",
                                turn_content(t), when, t["speaker"])
                        for t in turns
                    ),
                )
            )
    return out


def whole_samples(conversations: list[Conversation]) -> list[Conversation]:
    """Each sample's sessions joined into one long conversation (the worst case for the context)."""
    by_agent: dict[str, list[Message]] = {}
    for conversation in conversations:
        by_agent.setdefault(conversation.agent_id, []).extend(conversation.messages)
    return [Conversation(agent, "all", None, tuple(messages)) for agent, messages in by_agent.items()]


def _turns_frame(conversations: list[Conversation]) -> pl.DataFrame:
    rows = [
        {"agent_id": c.agent_id, "conversation_id": c.conversation_id, "message_id": m.message_id,
         "turn_index": i, "role": m.role, "speaker": m.speaker, "content": m.content, "created_at": m.created_at,
         "title": c.title, "ingested_at": datetime(2025, 1, 1, tzinfo=UTC), "day": c.started_at.date().isoformat()}
        for c in conversations for i, m in enumerate(c.messages)
    ]
    frame = pl.DataFrame(rows)
    return frame.with_columns(pl.col("turn_index").cast(pl.Int32))


def run_distill_benchmark(
    data: Path,
    out: Path | None = None,
    rounds: int = 3,
    settings: Settings | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Measure, write `out` (JSON) when given, and return the report."""
    settings = settings or load_settings()
    samples = json.loads(Path(data).read_text())
    conversations = locomo_conversations(samples)
    messages = sum(len(c.messages) for c in conversations)
    log(f"distill bench: {len(conversations)} conversations, {messages} messages from {len(samples)} samples")

    start = time.perf_counter()
    language_model.pipeline()  # once per process, whatever it distills
    load_seconds = time.perf_counter() - start
    timings = []
    cpu_timings = []  # the process's CPU time: on a shared machine, less inflated by the load than the wall clock
    results = []
    for _ in range(max(1, rounds)):
        language_model.forget_parses()  # a first distillation finds nothing parsed
        start, cpu_start = time.perf_counter(), time.process_time()
        results = [distill_offline(c) for c in conversations]
        timings.append(time.perf_counter() - start)
        cpu_timings.append(time.process_time() - cpu_start)
    seconds = statistics.median(timings)
    cpu_seconds = statistics.median(cpu_timings)

    candidates = Counter(c.type for r in results for c in r.fact_candidates)
    key_dates = [(conversation.started_at.date(), d.date)
                 for conversation, r in zip(conversations, results, strict=True) for d in r.key_dates]
    near = sum(1 for said, iso in key_dates if abs((_as_day(iso) - said).days) <= 366)

    context = settings.core_context_tokens
    parts = [len(split_conversation(c, context)) for c in conversations]
    whole = [len(split_conversation(c, context)) for c in whole_samples(conversations)]

    rerun = _cache_rerun(conversations, settings.summary_debounce_seconds)

    report: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": {"file": Path(data).name, "samples": len(samples), "conversations": len(conversations),
                 "messages": messages, "unit": "one LoCoMo session = one conversation"},
        "offline": {
            "distiller": OFFLINE_DISTILLER_VERSION,
            "rounds": len(timings),
            "seconds": round(seconds, 4),
            "cpu_seconds": round(cpu_seconds, 4),
            "conversations_per_cpu_second": round(len(conversations) / cpu_seconds, 1),
            "language_model_load_seconds": round(load_seconds, 2),
            "conversations_per_second": round(len(conversations) / seconds, 1),
            "messages_per_second": round(messages / seconds, 1),
            "fact_candidates": sum(candidates.values()),
            "fact_candidates_by_type": dict(sorted(candidates.items())),
            "key_dates": len(key_dates),
            "key_dates_within_a_year_of_the_session": near,
        },
        "model_calls": {
            "prompt_version": PROMPT_VERSION,
            "context_tokens": context,
            "per_conversation_mean": round(float(statistics.mean(parts)), 3),
            "per_conversation_max": max(parts),
            "whole_sample_as_one_conversation_mean": round(statistics.mean(whole), 2),
            "whole_sample_as_one_conversation_max": max(whole),
        },
        "cache_rerun": rerun,
        "machine": machine(),
    }
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
    log(f"offline: {report['offline']['conversations_per_second']} conversations/s "
        f"({report['offline']['conversations_per_cpu_second']} per CPU second); model calls per "
        f"conversation: {report['model_calls']['per_conversation_mean']} (max "
        f"{report['model_calls']['per_conversation_max']}); rerun: {rerun['second_pass_distilled']} distilled, "
        f"{rerun['second_pass_cache_hits']} cache hits")
    return report


def _as_day(iso: str) -> date:
    return date.fromisoformat(iso if len(iso) == 10 else iso + "-01")


def _cache_rerun(conversations: list[Conversation], debounce_seconds: float) -> dict[str, Any]:
    """Two passes over the same conversations through the result cache (in a temporary lake)."""
    frame = _turns_frame(conversations)
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp))
        days = sorted(set(frame["day"].to_list()))
        as_of = datetime(2025, 1, 1, tzinfo=UTC)
        out = {}
        for label in ("first", "second"):
            cache = ResultCache.load(lake, days)
            result = distill_pass(frame, Lake.empty(EPISODES), Lake.empty(PENDING), cache, OfflineDistiller(),
                                  as_of=as_of, debounce_seconds=debounce_seconds, days=days)
            cache.write(lake, result.live)
            out[f"{label}_pass_distilled"] = result.stats.distilled
            out[f"{label}_pass_cache_hits"] = result.stats.cache_hits
        out["cache_rows"] = lake.read(DISTILL_CACHE).height
    return out


def render_distill_section(path: Path) -> str:
    """The Markdown section of docs/benchmarks.md from `distill.json` (empty when it was not run)."""
    if not Path(path).is_file():
        return ""
    r = json.loads(Path(path).read_text())
    o, m, c, d = r["offline"], r["model_calls"], r["cache_rerun"], r["data"]
    by_type = ", ".join(f"{k} {v}" for k, v in o["fact_candidates_by_type"].items())
    return "\n".join([
        "## Distillation (LoCoMo)",
        "",
        f"{d['conversations']} conversations ({d['unit']}), {d['messages']} messages, from {d['file']}; only "
        "`conversation` is read. Run: `memlake bench distill`.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| offline distiller ({o['distiller']}) throughput | **{o['conversations_per_second']} conversations/s** "
        f"({o['messages_per_second']} messages/s; median of {o['rounds']} passes, {o['seconds']} s each"
        + (f"; {o['conversations_per_cpu_second']} per CPU second" if "cpu_seconds" in o else "") + ") |",
        f"| model calls per conversation (context {m['context_tokens']} tokens, prompt {m['prompt_version']}) | "
        f"**{m['per_conversation_mean']}** (max {m['per_conversation_max']}) |",
        f"| ... a whole LoCoMo sample as one conversation | {m['whole_sample_as_one_conversation_mean']} calls "
        f"(max {m['whole_sample_as_one_conversation_max']}), merged into one result |",
        f"| second pass over unchanged conversations | {c['second_pass_distilled']} distilled, "
        f"{c['second_pass_cache_hits']} cache hits (first pass: {c['first_pass_distilled']} distilled) |",
        f"| offline fact candidates | {o['fact_candidates']} ({by_type}) |",
        f"| key dates within a year of the session that said them | {o['key_dates_within_a_year_of_the_session']}"
        f" of {o['key_dates']} |",
        "",
        f"Machine: {r['machine'].get('cpu')}, {r['machine'].get('cores')} cores; generated {r['generated_at']}.",
        "The model path's one call per conversation, zero calls on a rerun and exactly one for a changed "
        "conversation are also asserted at a local OpenAI-compatible server in tests/episodes/test_distill_model.py.",
        "",
    ])
