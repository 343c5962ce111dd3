"""Context block benchmark: how often the assembled block holds a LoCoMo question's evidence turn.

The same home and questions as the LoCoMo retrieval benchmark (`memlake_bench.locomo`). Each question is
asked through `Memory.context`, as of the question's time, in compact mode at 800 tokens and in full mode (its
default budget); a block holds the evidence when a turn line or a fact line names one of the evidence turns'
message ids. Summary lines do not count: an episode cites every message of its conversation, so it would
"hold" any evidence of that session while saying nothing of it. Beside them, in the same run, the baseline a
caller would write without `Memory.context`: the plain `Memory.search` hits, best first, cut to the same 800
tokens by the same assembler and the same token counter (`count_packaged_tokens`).

Per mode: the evidence share (any evidence turn in the block, and every one) over all questions, the
tuning half (conversations 0-4) and the held-back half (5-9); tokens per block, mean and p95; assembly
milliseconds p50 and p95, warm (one block assembled before timing).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from memlake.api import Memory
from memlake.context.assemble import ContextBlock, SectionPlan, assemble
from memlake.context.gate import decide
from memlake.context.lines import hit_lines
from memlake.embedding import count_packaged_tokens
from memlake.settings import load_settings
from memlake_bench.locomo import (
    HELD,
    SEARCH_K,
    TUNE,
    Question,
    built_home,
    percentile,
    read_questions,
    report_head,
)
from memlake_bench.pipeline import HomePipeline

COMPACT_BUDGET = 800


EVIDENCE_KINDS = ("turn", "fact")  # lines that name the messages they say


def block_message_ids(block: ContextBlock) -> set[str]:
    """The message ids the block's turn and fact lines came from (`EVIDENCE_KINDS`)."""
    return {mid for line in block.provenance if line["kind"] in EVIDENCE_KINDS for mid in line["message_ids"]}


def context_block(memory: Memory, q: Question, mode: str, budget: int | None) -> ContextBlock:
    """`Memory.context` as of the question's time."""
    return memory.context(q.question, q.agent_id, mode=mode, budget=budget, as_of=q.as_of)


def block_conversation_ids(block: ContextBlock) -> set[str]:
    """Every conversation id the block's lines came from."""
    return {cid for line in block.provenance for cid in line["conversation_ids"]}


class Asked(Protocol):
    """What a benchmark's question gives a block: its text, its agent and its time."""

    @property
    def question(self) -> str: ...
    @property
    def agent_id(self) -> str: ...
    @property
    def as_of(self) -> datetime: ...


def search_block(memory: Memory, q: Asked, budget: int, until: datetime | None = None, **params: Any
                 ) -> ContextBlock:
    """The baseline: `Memory.search` hits (`params`: search settings, e.g. a BM25 run's), best first, in one
    section cut to `budget` tokens by the same assembler and counter as `Memory.context`, so the two blocks are
    measured alike."""
    # as the LoCoMo benchmark searches: as of the question's time, no `until` (it would drop the last session,
    # said at exactly that time; `Memory.context` sets its `until` to the end of that day)
    hits = memory.search(q.question, q.agent_id, k=SEARCH_K, as_of=q.as_of, until=until, **params)
    plan = SectionPlan("search hits", hit_lines(hits, "turn"))
    return assemble(q.as_of.date(), decide(q.question, "off"), "search", [plan], budget, count_packaged_tokens)


def score_mode(qs: Sequence[Question], make_block: Callable[[Question], ContextBlock]) -> dict[str, Any]:
    """Evidence shares, tokens per block and warm assembly time of one way of making a block."""
    if not qs:
        return {"n": 0}
    make_block(qs[0])  # warm: models, tokenizer and tables loaded before timing
    rows: list[dict[str, Any]] = []
    for q in qs:
        started = time.perf_counter()
        block = make_block(q)
        seconds = time.perf_counter() - started
        inside = block_message_ids(block) & set(q.evidence)
        rows.append({"sample": q.sample_index, "any": float(bool(inside)), "all": float(len(inside) == len(q.evidence)),
                     "tokens": block.token_count, "budget": block.budget, "ms": seconds * 1000.0,
                     "section": block.gate.section})
    return {
        "evidence_in_block": {"all": _shares(rows),
                              "tune_0_4": _shares(r for r in rows if r["sample"] in TUNE),
                              "held_5_9": _shares(r for r in rows if r["sample"] in HELD)},
        "gate_sections": dict(Counter(r["section"] for r in rows).most_common()),
        "budget": rows[0]["budget"],
        "over_budget_blocks": sum(r["tokens"] > r["budget"] for r in rows),
        "tokens_mean": round(statistics.fmean(r["tokens"] for r in rows), 1),
        "tokens_p95": round(percentile([r["tokens"] for r in rows], 95), 1),
        "assembly_ms_p50": round(percentile([r["ms"] for r in rows], 50), 2),
        "assembly_ms_p95": round(percentile([r["ms"] for r in rows], 95), 2),
    }


def _shares(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    picked = list(rows)
    if not picked:
        return {"n": 0}
    return {"n": len(picked), "any": round(statistics.fmean(r["any"] for r in picked), 4),
            "all": round(statistics.fmean(r["all"] for r in picked), 4)}


def evaluate(home: Path, qs: Sequence[Question]) -> dict[str, Any]:
    """The three blocks per question: compact at 800 tokens, full at its default budget, search cut to 800."""
    memory = Memory(settings=load_settings(home))
    return {
        "compact_800": score_mode(qs, lambda q: context_block(memory, q, "compact", COMPACT_BUDGET)),
        "full": score_mode(qs, lambda q: context_block(memory, q, "full", None)),
        "search_top_k_800": score_mode(qs, lambda q: search_block(memory, q, COMPACT_BUDGET)),
    }


def run_context(
    data: Path,
    out: Path | None,
    *,
    home: Path | None = None,
    reuse: bool = False,
    limit: int | None = None,
    model: str = "",
    log: Callable[[str], None] = print,
    pipeline: HomePipeline,
) -> dict[str, Any]:
    """The whole benchmark: build the LoCoMo home (unless `reuse` finds one), ask every question's block,
    write `out` as JSON."""
    raw, samples, qs = read_questions(data, limit, "context", log)
    with tempfile.TemporaryDirectory(prefix="memlake-context-") as tmp:
        target = home or Path(tmp) / "home"
        ingest = built_home(samples, target, model, reuse, pipeline, log)
        modes = evaluate(target, qs)
        settings = load_settings(target)
    report = {
        **report_head("context", data, raw, samples, qs),
        "settings": {"embedding_model": settings.embedding_model, "search_k_baseline": SEARCH_K},
        "ingest": ingest,
        "modes": modes,
    }
    report["markdown"] = render_markdown(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report


_MODE_LABELS = {"compact_800": "`Memory.context` compact, 800 tokens", "full": "`Memory.context` full",
                "search_top_k_800": f"baseline: `Memory.search` top {SEARCH_K} cut to 800 tokens"}


def render_markdown(report: dict[str, Any]) -> str:
    """The benchmark's section of docs/benchmarks.md."""
    rows: list[str] = []
    for name, mode in report["modes"].items():
        if not mode.get("evidence_in_block"):
            continue
        shares = mode["evidence_in_block"]
        rows.append(f"| {_MODE_LABELS.get(name, name)} | {shares['all']['any']:.3f} | "
                    f"{shares['tune_0_4'].get('any', 0):.3f} | {shares['held_5_9'].get('any', 0):.3f} | "
                    f"{shares['all']['all']:.3f} | {mode['tokens_mean']} | {mode['tokens_p95']} | "
                    f"{mode['over_budget_blocks']} | {mode['assembly_ms_p50']} | {mode['assembly_ms_p95']} | "
                    f"{', '.join(f'{k} {v}' for k, v in mode['gate_sections'].items())} |")
    machine = report["machine"]
    return "\n".join([
        "## Context blocks (LoCoMo)",
        "",
        f"Measured {report['date']} with `memlake bench context` on {machine.get('cores')} cores (1-minute load "
        f"{machine.get('load_average_1m')}; above 2 the machine was shared and timings are inflated), "
        f"{report['data']['questions']} questions. Evidence in block: a turn line or a fact line of the block "
        "names an evidence turn's message (summary lines do not count); any = one of the evidence turns, "
        "all = every one. Conversations 0-4 are the half the search was tuned on, 5-9 the held-back half.",
        "",
        "| block | evidence, any | tune 0-4 | held 5-9 | evidence, all | tokens mean | tokens p95 | over budget "
        "| assembly ms p50 | p95 | gate sections |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ])
