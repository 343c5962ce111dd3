"""LoCoMo retrieval benchmark: recall of evidence turns and sessions, through the real pipeline.

Only each sample's `conversation` goes in: every session becomes one
conversation of a generic JSONL landing file (one agent per sample, `dia_id` as
message_id, the session date as created_at, image captions appended to the
text). `qa`, `observation`, `event_summary` and `session_summary` never reach
the pipeline. Questions of categories 1-4 are asked through `Memory.search`
with `as_of` = the sample's last session date.

Scores per question (see ../shared/benchmarks/locomo/README.md):
- turn recall@k: result message ids in rank order, repeats removed, first k;
  `any` = at least one evidence turn among them, `all` = every one;
- session recall@k: the same over conversation ids;
- budget recall: evidence turns whose text lies inside the first 750 words of
  returned text (hit text only, and hits plus their window context).
Conversations 0-4 are the tuning half, 5-9 the held-back half.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from memlake import adapt as model_adaptation
from memlake.api import Memory
from memlake.chunks import turn_text
from memlake.embedding import configured_embedder, has_weights
from memlake.lake import Lake
from memlake.schemas import CHUNKS, agent_folder
from memlake.settings import load_settings
from memlake_bench.machine import machine, python_speed_ms
from memlake_bench.pipeline import HomePipeline, home_with_model

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MULTI_HOP = 1
KS = (1, 3, 5, 10, 20, 30, 40)  # past 20: how much context the targets would need
# Sessions are ranked by the distinct conversations among the SEARCH_K turn rows; those rows name fewer
# than 20 conversations for ~97 % of the questions (fewer than 10 for ~3 %), so deeper session ranks are
# not measured rather than cut short.
SESSION_KS = (1, 3, 5, 10)
BUDGET_WORDS = 750
TUNE = tuple(range(0, 5))
HELD = tuple(range(5, 10))
SEARCH_K = 40  # rows asked for: one distinct turn each, enough for recall@40 and the 750-word budget
_EVIDENCE_ID = re.compile(r"^D:?(\d+):0*(\d+)$")


# -- data -> landing ------------------------------------------------------------------------


def session_date(text: str) -> datetime:
    """`1:56 pm on 8 May, 2023` as UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def sessions(sample: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    """(number, date, turns) of each session that has turns (extra date keys are ignored)."""
    conversation = sample["conversation"]
    out = []
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list) and turns:
            number = int(match.group(1))
            out.append((number, session_date(conversation[f"session_{number}_date_time"]), turns))
    return sorted(out, key=lambda s: s[0])


def turn_content(turn: dict[str, Any]) -> str:
    caption = turn.get("blip_caption")
    return f"{turn['text']} [shares {caption}]" if caption else turn["text"]


def conversation_id(number: int) -> str:
    return f"session_{number}"


def landing_rows(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """Generic JSONL rows of one sample: speaker_a is the `user`, speaker_b the `assistant`."""
    speaker_a = sample["conversation"]["speaker_a"]
    rows = []
    for number, date, turns in sessions(sample):
        for turn in turns:
            rows.append(
                {
                    "conversation_id": conversation_id(number),
                    "message_id": turn["dia_id"],
                    "role": "user" if turn["speaker"] == speaker_a else "assistant",
                    "speaker": turn["speaker"],
                    "content": turn_content(turn),
                    "created_at": date.isoformat(),
                }
            )
    return rows


def write_landing(samples: Sequence[dict[str, Any]], landing_dir: Path) -> list[Path]:
    paths = []
    for sample in samples:
        path = agent_folder(landing_dir, sample["sample_id"]) / "locomo.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in landing_rows(sample)))
        paths.append(path)
    return paths


# -- questions and scoring -------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    sample_index: int
    agent_id: str
    question: str
    category: int
    evidence: tuple[str, ...]  # turn ids (dia_id), normalised, known
    sessions: tuple[str, ...]  # conversation ids of the evidence
    as_of: datetime


def normalise_evidence(raw: Iterable[str], known: set[str]) -> tuple[str, ...]:
    """Split on `;` and whitespace, normalise `D:11:26` / `D30:05`, drop ids the sample lacks."""
    out: list[str] = []
    for item in raw:
        for token in re.split(r"[;\s]+", str(item)):
            match = _EVIDENCE_ID.match(token.strip())
            if match:
                dia = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia in known and dia not in out:
                    out.append(dia)
    return tuple(out)


def questions(samples: Sequence[dict[str, Any]], offset: int = 0) -> list[Question]:
    out = []
    for index, sample in enumerate(samples, start=offset):
        all_sessions = sessions(sample)
        known = {t["dia_id"] for _, _, turns in all_sessions for t in turns}
        last = max(date for _, date, _ in all_sessions)
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = normalise_evidence(qa.get("evidence") or [], known)
            if not evidence:
                continue
            session_ids = tuple(dict.fromkeys(conversation_id(int(e[1:].split(":")[0])) for e in evidence))
            out.append(
                Question(index, sample["sample_id"], qa["question"], qa["category"], evidence, session_ids, last)
            )
    return out


def first_unique(values: Iterable[str], k: int) -> list[str]:
    return list(dict.fromkeys(values))[:k]


@dataclass
class Scores:
    """Per-question hits, averaged on demand."""
    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, q: Question, ranked_ids: list[str], ranked_sessions: list[str], measures: dict[str, float]) -> None:
        row: dict[str, Any] = {"sample": q.sample_index, "category": q.category, "n_evidence": len(q.evidence)}
        gold, gold_sessions = set(q.evidence), set(q.sessions)
        for k in KS:
            top = set(first_unique(ranked_ids, k))
            row[f"turn_any@{k}"] = float(bool(top & gold))
            row[f"turn_all@{k}"] = float(gold <= top)
        for k in SESSION_KS:
            top_s = set(first_unique(ranked_sessions, k))
            row[f"session_any@{k}"] = float(bool(top_s & gold_sessions))
            row[f"session_all@{k}"] = float(gold_sessions <= top_s)
        row.update(measures)
        self.rows.append(row)

    def summary(self, where: Callable[[dict[str, Any]], bool] = lambda r: True) -> dict[str, Any]:
        rows = [r for r in self.rows if where(r)]
        if not rows:
            return {"n": 0}
        keys = [k for k in rows[0] if k not in ("sample", "category", "n_evidence")]
        return {"n": len(rows), **{k: round(statistics.fmean(r[k] for r in rows), 4) for k in keys}}

    def report(self) -> dict[str, Any]:
        return {
            "all": self.summary(),
            "tune_0_4": self.summary(lambda r: r["sample"] in TUNE),
            "held_5_9": self.summary(lambda r: r["sample"] in HELD),
            "multi_evidence": self.summary(lambda r: r["n_evidence"] > 1),
            "by_category": {f"{c} {name}": self.summary(_category(c)) for c, name in CATEGORIES.items()},
            # evidence across sessions, where a graph hop may help: on each half
            "multi_hop_tune_0_4": self.summary(lambda r: r["category"] == MULTI_HOP and r["sample"] in TUNE),
            "multi_hop_held_5_9": self.summary(lambda r: r["category"] == MULTI_HOP and r["sample"] in HELD),
        }


def _category(category: int) -> Callable[[dict[str, Any]], bool]:
    return lambda row: row["category"] == category


def budget_scores(q: Question, frame: Any, words: dict[tuple[str, str], int]) -> dict[str, float]:
    """Evidence turns inside the first BUDGET_WORDS words of returned text: hits only, and hits + context."""
    out = {}
    for label, column in (("budget", "message_ids"), ("budget_ctx", "context_message_ids")):
        used, seen, covered = 0, set(), set()
        for ids in frame[column].to_list():
            for mid in ids or []:
                if mid in seen:
                    continue
                seen.add(mid)
                cost = words.get((q.agent_id, mid), 0)
                if used + cost > BUDGET_WORDS:
                    used = BUDGET_WORDS + 1
                    break
                used += cost
                covered.add(mid)
            if used > BUDGET_WORDS:
                break
        gold = set(q.evidence)
        out[f"{label}_recall"] = len(gold & covered) / len(gold)
        out[f"{label}_all"] = float(gold <= covered)
    return out


def context_words(q: Question, ranked_ids: list[str], words: dict[tuple[str, str], int]) -> dict[str, float]:
    """Words of returned text in the first k distinct turns, for each k: what a larger k costs a prompt."""
    ranked = first_unique(ranked_ids, max(KS))
    return {f"words@{k}": float(sum(words.get((q.agent_id, mid), 0) for mid in ranked[:k])) for k in KS}


# -- running -------------------------------------------------------------------------------


# turn chunks only (no sentence keys), no session or window lifts, no boosts, no MMR
_TURNS_ALONE: dict[str, Any] = {"sentence_keys": False, "question_keys": False, "session_weight": 0.0,
                                "window_weight": 0.0,
                                "recency_weight": 0.0, "importance_weight": 0.0, "access_weight": 0.0,
                                "mmr_lambda": 1.0, "same_conversation_decay": 1.0}
# the graph hop's weight and seeds the tuning half chose (docs/benchmarks/graph_entities.md): of weights 0.05-2
# and 1 or 3 seeds, the best multi-hop session recall_all@5 on conversations 0-4 with the least loss elsewhere there
GRAPH_HOP_WEIGHT = 0.1
GRAPH_HOP_SEEDS = 1
# the graph list's weight and seeds the tuning half chose (docs/decisions.md, 2026-11-28 s12-graph): of weights
# 0.25-2, seeds 0, 1, 3 and 10, depth 1 or 2, the best multi-hop session all@5 on 0-4 with turn any@10 not lower
GRAPH_LIST = {"graph_weight": 0.5, "graph_seeds": 10, "graph_depth": 1}

SYSTEMS: dict[str, dict[str, Any]] = {
    # the default configuration (settings)
    "hybrid": {},
    # baselines: one list each
    "bm25": {"lists": ("text",), **_TURNS_ALONE},
    "vector": {"lists": ("vector",), **_TURNS_ALONE},
    # the same two lists before any tuning: textbook RRF (k 60, rank only), no neighbour or mention lift
    # either; beside `hybrid` it shows whether what was tuned on 0-4 holds on 5-9
    "untuned_rrf": {"rrf_k": 60, "text_score_power": 0.0, "vector_score_power": 0.0, "neighbor_weight": 0.0,
                    "mention_weight": 0.0, **_TURNS_ALONE},
    # the default without the session lift: what the lift buys, on both halves
    "hybrid_no_session_lift": {"session_weight": 0.0},
    # the default with the graph's second hop (memlake.graph.hop), at the weight tuned on 0-4
    "hybrid_graph_hop": {"graph_hop_weight": GRAPH_HOP_WEIGHT, "graph_hop_seeds": GRAPH_HOP_SEEDS},
    # the default with the graph's candidate list (memlake.graph.links), at the weight and seeds tuned on 0-4
    "hybrid_graph_list": GRAPH_LIST,
}

SWEEPS: list[tuple[str, dict[str, Any]]] = [
    *((f"mmr_lambda={lam}", {"mmr_lambda": lam}) for lam in (1.0, 0.9, 0.7, 0.5)),
    *((f"session_weight={w}", {"session_weight": w}) for w in (0.0, 0.5, 1.0)),
    *((f"window_weight={w}", {"window_weight": w}) for w in (0.0, 0.5)),
    ("sentence_keys=False", {"sentence_keys": False}),
    ("question_keys=False", {"question_keys": False}),
    *((f"question_weight={w}", {"question_weight": w}) for w in (0.7, 0.8, 1.0)),
    *((f"neighbor_weight={w}", {"neighbor_weight": w}) for w in (0.0, 0.5)),
    *((f"mention_weight={w}", {"mention_weight": w}) for w in (0.0, 0.5)),
    *((f"recency_weight={w}", {"recency_weight": w}) for w in (0.0, 0.3)),
    ("rrf_k=60", {"rrf_k": 60}),
    ("plain RRF (score_power=0)", {"text_score_power": 0.0, "vector_score_power": 0.0}),
]


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


# Steps from landing to a searchable chunk index (the run also builds episodes, facts, ... downstream).
# A check's step key is its asset's step key + "_" + the check's name.
TRANSCRIPT_PATH = ("transcripts__landing_manifest", "transcripts__turns", "transcripts__turns_turns_expectations",
                   "transcripts__chunks", "search__chunk_index")


def build(samples: Sequence[dict[str, Any]], home: Path, model: str, pipeline: HomePipeline,
          raw_rate: bool = True) -> dict[str, Any]:
    """Land the samples and run the pipeline into `home`; ingest throughput vs the raw embedder (`raw_rate`)."""
    return build_landed(home, model, pipeline, lambda landing: write_landing(samples, landing), raw_rate)


def build_landed(home: Path, model: str, pipeline: HomePipeline, write: Callable[[Path], Any],
                 raw_rate: bool = True) -> dict[str, Any]:
    """`write` the landing files into `home`'s landing folder and run the pipeline: ingest throughput, and with
    `raw_rate` the raw embedder's on the same texts (they are embedded again for it)."""
    settings = home_with_model(home, model)
    settings.ensure_dirs()
    write(settings.landing_dir)
    embedder = configured_embedder(settings)  # loaded before timing
    if embedder is None:
        raise RuntimeError(f"embedding model {model!r} not loadable")
    started = time.perf_counter()
    outcome = pipeline.land(settings)
    wall = time.perf_counter() - started
    if not outcome.success:
        raise RuntimeError(f"pipeline failed: {outcome.detail}")
    metadata = outcome.chunk_index
    embedded = int(metadata.get("embedded", 0))
    steps = outcome.step_seconds
    missing = [k for k in TRANSCRIPT_PATH if k not in steps]
    if missing:  # a renamed step would silently drop out of the ingest rate
        raise RuntimeError(f"steps {missing} not in the run; steps were {sorted(steps)}")
    path_seconds = sum(steps[k] for k in TRANSCRIPT_PATH)
    chunks = Lake.of(settings).read(CHUNKS)
    if not raw_rate:
        return ingest_figures(embedder.name, chunks, embedded, wall, path_seconds, steps, metadata)
    texts = chunks.filter(chunks["kind"] != "session")["embed_text"].to_list()
    started = time.perf_counter()
    embedder.embed(texts)
    raw_seconds = time.perf_counter() - started
    raw = len(texts) / raw_seconds
    return {
        **ingest_figures(embedder.name, chunks, embedded, wall, path_seconds, steps, metadata),
        "raw_embedder_texts_per_second": round(raw, 1),
        "end_to_end_vs_raw": round((embedded / path_seconds) / raw, 3) if path_seconds else None,
    }


def ingest_figures(model: str, chunks: Any, embedded: int, wall: float, path_seconds: float,
                   steps: dict[str, float], metadata: dict[str, float]) -> dict[str, Any]:
    """What a build of a home did: its chunks, the texts it embedded, and how long each part took."""
    return {
        "model": model,
        "turns": int((chunks["kind"] == "turn").sum()),
        "chunks": chunks.height,
        "chunks_by_kind": dict(chunks.group_by("kind").len().rows()),
        "embedded_texts": embedded,
        "run_seconds_all_layers": round(wall, 2),
        "transcript_path_seconds": round(path_seconds, 2),
        "chunk_index_step_seconds": round(steps.get("search__chunk_index", float("nan")), 2),
        "embed_seconds_in_index": round(metadata["embed_seconds"], 2) if "embed_seconds" in metadata else None,
        "end_to_end_texts_per_second": round(embedded / path_seconds, 1) if path_seconds else None,
        "whole_run_texts_per_second": round(embedded / wall, 1),
        "step_seconds": {k: round(v, 2) for k, v in sorted(steps.items(), key=lambda kv: -kv[1])},
    }


def read_questions(data: Path, limit: int | None, benchmark: str, log: Callable[[str], None],
                   ) -> tuple[bytes, list[dict[str, Any]], list[Question]]:
    """The file's bytes (for its hash), its first `limit` samples and their questions."""
    raw = data.read_bytes()
    samples = json.loads(raw)[: limit or None]
    qs = questions(samples)
    log(f"{benchmark}: {len(samples)} sample(s), {len(qs)} questions (categories 1-4)")
    return raw, samples, qs


def report_head(benchmark: str, data: Path, raw: bytes, samples: Sequence[dict[str, Any]],
                qs: Sequence[Question]) -> dict[str, Any]:
    """What every LoCoMo report starts with: which benchmark, when, on what machine and which data."""
    return {
        "benchmark": benchmark,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "data": {"file": data.name, "sha256": hashlib.sha256(raw).hexdigest(), "samples": len(samples),
                 "questions": len(qs)},
    }


def built_home(samples: Sequence[dict[str, Any]], home: Path, model: str, reuse: bool, pipeline: HomePipeline,
               log: Callable[[str], None], raw_rate: bool = True) -> dict[str, Any]:
    """The ingest figures of `home`: the ones saved when it was built, if `reuse` finds it built, else those
    of building it now (saved beside it for a later `reuse`). Without `raw_rate` the build skips embedding
    every text a second time to time the raw embedder (a caller that only reads the home saves that half)."""
    if reuse and (home / "lancedb").is_dir():
        log(f"reusing {home}")
        return json.loads((home / "ingest.json").read_text()) if (home / "ingest.json").is_file() else {}
    ingest = build(samples, home, model, pipeline, raw_rate)
    (home / "ingest.json").write_text(json.dumps(ingest))
    log(f"ingest: {ingest}")
    return ingest


def evaluate(
    home: Path,
    model: str,
    qs: Sequence[Question],
    word_counts: dict[tuple[str, str], int],
    systems: dict[str, dict[str, Any]],
    sweeps: Sequence[tuple[str, dict[str, Any]]] = (),
    latency_queries: int = 300,
) -> dict[str, Any]:
    """Recall of each system over `qs`; latency of the default one; the sweeps on the tuning half."""
    settings = load_settings(home, embedding_model=model)
    memory = Memory(settings=settings)
    embedder = memory._embedder if hasattr(memory, "_embedder") else None
    if embedder is None:

        embedder = configured_embedder(settings)
    vectors = embedder.embed([q.question for q in qs]) if embedder is not None else None

    def run(q: Question, i: int, overrides: dict[str, Any]) -> Any:
        return memory.search(
            q.question, q.agent_id, k=SEARCH_K, as_of=q.as_of, embedder=embedder,
            query_vector=vectors[i] if vectors is not None else None, **overrides,
        )

    def score(overrides: dict[str, Any], subset: Iterable[int]) -> Scores:
        scores = Scores()
        for i in subset:
            q = qs[i]
            frame = run(q, i, overrides)
            ids = [m for ids in frame["message_ids"].to_list() for m in ids]
            measures = budget_scores(q, frame, word_counts) | context_words(q, ids, word_counts)
            scores.add(q, ids, frame["conversation_id"].to_list(), measures)
        return scores

    everything = range(len(qs))
    results: dict[str, Any] = {"systems": {}, "sweeps": []}
    for name, overrides in systems.items():
        results["systems"][name] = {"overrides": _jsonable(overrides), **score(overrides, everything).report()}
    tune = [i for i, q in enumerate(qs) if q.sample_index in TUNE]
    for label, overrides in sweeps:
        summary = score(overrides, tune).report()
        results["sweeps"].append(
            {"setting": label, "tune_0_4": summary["tune_0_4"], "multi_evidence": summary["multi_evidence"]}
        )
    if latency_queries:
        results["latency"] = latency(memory, embedder, qs, latency_queries)
    return results


# the adapted model's systems: its default configuration, without the session lift, and its vector list alone
ADAPTED_SYSTEMS = {
    "hybrid_adapted": SYSTEMS["hybrid"],
    "hybrid_adapted_no_session_lift": SYSTEMS["hybrid_no_session_lift"],
    "vector_adapted": SYSTEMS["vector"],
}
ADAPTED_INDEX = "adapted_index.json"  # in the adapted home: which adapter its index was built with


def evaluate_adapted(
    samples: Sequence[dict[str, Any]], home: Path, model: str, qs: Sequence[Question],
    pipeline: HomePipeline, log: Callable[[str], None] = print, reuse: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model adapted (`memlake.adapt`) on the question-reply pairs of conversations 0-4's
    turns, no labels, then the same questions over an index it built from a copy of the lake:
    on 5-9 neither the adapter nor any setting saw the text or the answers.

    With `reuse`, an index this adapter built in an earlier run is searched as it is: embedding
    the same texts again in other batches moves vectors in their last bits, and with them a few
    near-tie questions, so a rerun would not compare like with like."""

    tune_agents = [samples[i]["sample_id"] for i in TUNE if i < len(samples)]
    pairs, _ = model_adaptation.home_pairs(home / "lake", tune_agents)
    adapted = model_adaptation.adapt(model, pairs, home / "models")
    log(f"adapted on {len(pairs)} question-reply pairs of {tune_agents} in {adapted.seconds:.0f} s: {adapted.path}")
    adapted_home = home / "adapted"
    marker = adapted_home / ADAPTED_INDEX
    built = json.loads(marker.read_text()) if reuse and marker.is_file() else {}
    index_reused = built.get("model") == adapted.path.name
    if index_reused:
        reindex_seconds = built["reindex_seconds"]
        log(f"reusing the index {adapted.path.name} built in {adapted_home}")
    else:
        shutil.rmtree(adapted_home, ignore_errors=True)
        shutil.copytree(home / "lake", adapted_home / "lake")
        settings = home_with_model(adapted_home, str(adapted.path))
        settings.ensure_dirs()
        started = time.perf_counter()
        outcome = pipeline.reindex(settings)
        if not outcome.success:
            raise RuntimeError(f"reindex with the adapted model failed: {outcome.detail}")
        reindex_seconds = round(time.perf_counter() - started, 1)
        marker.write_text(json.dumps({"model": adapted.path.name, "reindex_seconds": reindex_seconds}))
    results = evaluate(adapted_home, str(adapted.path), qs, word_counts(samples), ADAPTED_SYSTEMS, (), 0)
    adaptation = {
        "trained_on": tune_agents, "pairs": len(pairs),
        # None: the home had this adapter already (same base, pairs and settings), so nothing was trained
        "train_seconds": round(adapted.seconds, 1) if adapted.trained else None,
        "reindex_seconds": reindex_seconds, "index_reused": index_reused, "model": adapted.path.name,
    }
    return adaptation, results["systems"]


def latency(memory: Any, embedder: Any, qs: Sequence[Question], n: int = 300) -> dict[str, Any]:
    """Search latency with the query embedding (Memory.search end to end) and without it."""
    picked = list(qs)[:: max(1, len(qs) // n)][:n]
    with_embedding, without, embed_only, vectors = [], [], [], []
    speed_before = python_speed_ms()
    # Three passes, not one interleaved loop: torch's threads keep spinning for a while after an
    # embedding, and a search timed right after one would count that contention as its own.
    for q in picked:
        started = time.perf_counter()
        vectors.append(embedder.embed([q.question])[0])
        embed_only.append(time.perf_counter() - started)
    for q, vector in zip(picked, vectors, strict=True):
        started = time.perf_counter()
        memory.search(q.question, q.agent_id, k=10, as_of=q.as_of, embedder=embedder, query_vector=vector)
        without.append(time.perf_counter() - started)
    for q in picked:
        started = time.perf_counter()
        memory.search(q.question, q.agent_id, k=10, as_of=q.as_of, embedder=embedder)
        with_embedding.append(time.perf_counter() - started)
    ms = 1000.0
    return {
        "queries": len(picked),
        "k": 10,
        "search_ms_p50": round(percentile(without, 50) * ms, 2),
        "search_ms_p95": round(percentile(without, 95) * ms, 2),
        "query_embedding_ms_p50": round(percentile(embed_only, 50) * ms, 2),
        "query_embedding_ms_p95": round(percentile(embed_only, 95) * ms, 2),
        "with_embedding_ms_p50": round(percentile(with_embedding, 50) * ms, 2),
        "with_embedding_ms_p95": round(percentile(with_embedding, 95) * ms, 2),
        "python_speed_ms": [speed_before, python_speed_ms()],  # the machine's speed around these passes
    }


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=list))


def word_counts(samples: Sequence[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """Words of each turn's indexed text (what a hit returns), by (agent, dia_id)."""
    out = {}
    for sample in samples:
        for _, date, turns in sessions(sample):
            for turn in turns:
                text = turn_text(turn["speaker"], None, turn_content(turn), date)
                out[(sample["sample_id"], turn["dia_id"])] = len(text.split())
    return out


def run_locomo(
    data: Path,
    out: Path | None,
    *,
    limit: int | None = None,
    model: str = "",
    home: Path | None = None,
    reuse: bool = False,
    sweeps: bool = True,
    adapted: bool = True,
    latency_queries: int = 300,
    log: Callable[[str], None] = print,
    pipeline: HomePipeline,
) -> dict[str, Any]:
    """The whole benchmark: build (unless `reuse`), evaluate, write `out` as JSON. With `adapted`
    (and a model with weights), also the default model adapted on conversations 0-4 (see
    `evaluate_adapted`)."""
    raw, samples, qs = read_questions(data, limit, "locomo", log)
    with tempfile.TemporaryDirectory(prefix="memlake-locomo-") as tmp:
        target = home or Path(tmp) / "home"
        ingest = built_home(samples, target, model, reuse, pipeline, log)
        results = evaluate(
            target, model, qs, word_counts(samples), SYSTEMS, SWEEPS if sweeps else (), latency_queries
        )
        if adapted and has_weights(model):
            adaptation, systems = evaluate_adapted(samples, target, model, qs, pipeline, log, reuse=reuse)
            results["adaptation"] = adaptation
            results["systems"] |= systems

    settings = load_settings(target, embedding_model=model)
    report = {
        **report_head("locomo", data, raw, samples, qs),
        "settings": {
            key: getattr(settings, key)
            for key in ("embedding_model", "rrf_k", "search_candidates", "search_session_weight",
                        "search_window_weight", "search_neighbor_weight", "search_mention_weight",
                        "search_recency_weight", "recency_half_life_days", "search_graph_hop_weight",
                        "search_graph_hop_seeds", "search_graph_weight", "search_graph_seeds", "search_graph_depth",
                        "mmr_lambda", "window_turns", "chunk_window_size", "chunk_sentences",
                        "chunk_questions", "search_question_weight")
        },
        "ingest": ingest,
        **results,
    }
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report
