"""The lint sweep: stale facts, redundancy, orphan episodes and contradictions, as of `as_of`.

- stale: an active fact idle (not said, confirmed or used) longer than `stale_half_lives` of its type's half-life;
- redundant: an active fact that says what an earlier active fact of its subject says (Jaccard >=
  `duplicate_jaccard`, or cosine >= `duplicate_cosine` with an embedder): the later is flagged;
- orphan episodes: an episode whose conversation has no turns left;
- contradictions: candidate pairs within one agent's subject, by embedding similarity (cosine >=
  `contradiction_cosine`; without an embedder Jaccard >= `contradict_jaccard`) or a shared slot, plus the
  pairs the offline rules find; the rules judge always, the core model when configured (a pair either finds
  contradicting is one). A contradiction becomes a `contradict` edge (`maintenance/fact_edges`, newer to older)
  and flags both sides conflicting ("conflicting: …" in reads); under the `supersede` policy the older side is
  superseded. A fact no judge paired is not touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from memlake.maintenance.config import MaintenanceConfig, timed
from memlake.maintenance.consolidate import activity
from memlake.maintenance.judge import ModelJudge, Verdict, offline_verdicts
from memlake.text import jaccard

Embed = Callable[[list[str]], np.ndarray]
NEIGHBOURS = 5  # most similar facts per fact taken as contradiction candidates


@dataclass
class Lint:
    """A lint sweep's verdicts: one row per fact version said by as_of, and the episodes it flagged."""

    facts: pl.DataFrame  # agent_id, fact_id, version, status, flag, last_active_at, use_count, reason, related
    episodes: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    contradictions: list[Verdict] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)
    edges: list[dict[str, Any]] = field(default_factory=list)  # one `contradict` edge per judged contradiction


def lint(facts: pl.DataFrame, episodes: pl.DataFrame, conversations_with_turns: set[tuple[str, str]],
         uses: pl.DataFrame, as_of: datetime, config: MaintenanceConfig, embed: Embed | None = None,
         model_judge: ModelJudge | None = None) -> Lint:
    """Every lint step over every agent, as of `as_of`."""
    durations: dict[str, float] = {}
    frame = activity(facts, uses, as_of)
    active = frame.filter(pl.col("status") == "active")
    notes: dict[str, tuple[str, str, list[str]]] = {}  # fact key -> (flag, reason, related fact ids)
    with timed(durations, "stale"):
        stale = stale_facts(active, config)
    for key, reason in stale.items():
        notes[key] = ("stale", reason, [])
    with timed(durations, "embed"):
        vectors = _vectors(active, embed)
    with timed(durations, "redundancy"):
        redundant = redundant_facts(active, vectors, config)
    for key, (reason, other) in redundant.items():
        notes[key] = ("redundant", reason, [other])
    with timed(durations, "contradictions"):
        contradictions = judge_contradictions(active, vectors, config, model_judge)
        candidates = _candidate_count(active, vectors, config)
    by_key = {f"{r['fact_id']}@{r['version']}": r for r in active.iter_rows(named=True)}
    superseded: dict[str, str] = {}
    edges = [contradict_edge(verdict, by_key) for verdict in contradictions]
    for verdict in contradictions:
        for mine, other in ((verdict.a, verdict.b), (verdict.b, verdict.a)):
            related = notes[mine][2] if mine in notes and notes[mine][0] == "conflicting" else []
            reason = notes[mine][1] if related else (
                f"conflicting: with \"{by_key[other]['content']}\" ({verdict.judge}: {verdict.reason})")
            notes[mine] = ("conflicting", reason, [*related, other.split("@")[0]])
        if config.contradiction_policy == "supersede":
            older = min((verdict.a, verdict.b), key=lambda k: (by_key[k]["created_at"], k))
            newer = verdict.b if older == verdict.a else verdict.a
            superseded.setdefault(older, f"superseded: contradicted by the newer \"{by_key[newer]['content']}\"")
    rows = frame.with_columns(
        (pl.col("fact_id") + "@" + pl.col("version").cast(pl.String)).alias("_key")
    ).with_columns(
        pl.col("_key").replace_strict({k: v[0] for k, v in notes.items()}, default=None, return_dtype=pl.String)
        .alias("flag"),
        pl.col("_key").replace_strict({**{k: v[1] for k, v in notes.items()}, **superseded}, default=None,
                                      return_dtype=pl.String).alias("reason"),
        pl.col("_key").replace_strict({k: v[2] for k, v in notes.items()}, default=None,
                                      return_dtype=pl.List(pl.String)).alias("related_fact_ids"),
        pl.when(pl.col("_key").is_in(list(superseded))).then(pl.lit("superseded")).otherwise(pl.col("status"))
        .alias("status"),
        pl.lit(None, dtype=pl.Float64).alias("salience"),
    )
    with timed(durations, "orphans"):
        orphans = orphan_episodes(episodes.filter(pl.col("conversation_started_at") <= as_of),
                                  conversations_with_turns)
    counts = {
        "facts": frame.height,
        "stale": len(stale),
        "redundant": len(redundant),
        "orphan_episodes": len(orphans),
        "contradiction_candidates": candidates,
        "contradictions": len(contradictions),
        "conflicting_facts": sum(1 for flag, _r, _o in notes.values() if flag == "conflicting"),
        "superseded": len(superseded),
    }
    out = rows.select("agent_id", "fact_id", "version", "base_status", "status", "flag", "salience",
                      "last_active_at", "use_count", "reason", "related_fact_ids")
    out = out.sort("agent_id", "fact_id", "version")
    return Lint(out, orphans, counts, contradictions, durations, edges)


def contradict_edge(verdict: Verdict, by_key: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A judged contradiction as an edge from the newer version (said later) to the older."""
    older, newer = sorted((by_key[verdict.a], by_key[verdict.b]), key=lambda r: (r["created_at"], _key(r)))
    return {"agent_id": newer["agent_id"], "edge_type": "contradict", "from_fact_id": newer["fact_id"],
            "from_version": newer["version"], "to_fact_id": older["fact_id"], "to_version": older["version"],
            "judge": verdict.judge, "reason": verdict.reason}


def orphan_episodes(episodes: pl.DataFrame, conversations_with_turns: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """Episodes whose conversation has no turns left (flagged, not removed)."""
    return [{"agent_id": a, "conversation_id": c, "new_value": "orphan",
             "reason": "orphan: its conversation has no turns in transcripts/turns"}
            for a, c in episodes.select("agent_id", "conversation_id").sort("agent_id", "conversation_id").iter_rows()
            if (a, c) not in conversations_with_turns]


def _vectors(active: pl.DataFrame, embed: Embed | None) -> dict[str, np.ndarray]:
    """fact key -> unit vector of its content (empty without an embedder)."""
    if embed is None or active.height == 0:
        return {}
    texts = active["content"].fill_null("").to_list()
    raw = np.asarray(embed(texts), dtype=np.float32)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    matrix = (raw / np.where(norms == 0, 1, norms)).astype(np.float32)
    keys = (active["fact_id"] + "@" + active["version"].cast(pl.String)).to_list()
    return dict(zip(keys, matrix, strict=True))


def stale_facts(active: pl.DataFrame, config: MaintenanceConfig) -> dict[str, str]:
    """fact key -> why it is stale."""
    out = {}
    for row in active.iter_rows(named=True):
        limit = config.half_life(row["type"]) * config.stale_half_lives
        if row["source_interface"] != "override" and row["idle_days"] > limit:
            out[f"{row['fact_id']}@{row['version']}"] = (
                f"stale: idle {row['idle_days']:.0f} days (over {limit:g} for a {row['type']}), "
                f"last active {row['last_active_at'].date()}")
    return out


def _subjects(active: pl.DataFrame) -> list[list[dict[str, Any]]]:
    """One agent's subject's active facts per group, oldest said first."""
    keyed = active.with_columns(pl.col("subject").fill_null("").str.to_lowercase().alias("_subject"))
    return [rows.sort("created_at", "fact_id", "version").to_dicts()
            for _k, rows in keyed.group_by("agent_id", "_subject", maintain_order=True)]


def _key(row: dict[str, Any]) -> str:
    return f"{row['fact_id']}@{row['version']}"


def redundant_facts(active: pl.DataFrame, vectors: dict[str, np.ndarray],
                    config: MaintenanceConfig) -> dict[str, tuple[str, str]]:
    """fact key -> (why it is redundant, the earlier fact's id)."""
    out: dict[str, tuple[str, str]] = {}
    for group in _subjects(active):
        for i, later in enumerate(group):
            for earlier in group[:i]:
                if later["fact_id"] == earlier["fact_id"]:
                    continue
                score = jaccard(later["content"], earlier["content"])
                cosine = _cosine(vectors, later, earlier)
                if score >= config.duplicate_jaccard or (cosine is not None and cosine >= config.duplicate_cosine):
                    out[_key(later)] = (f"redundant: says what \"{earlier['content']}\" says (Jaccard {score:.2f}"
                                        + (f", cosine {cosine:.2f})" if cosine is not None else ")"),
                                        earlier["fact_id"])
                    break
    return out


def _cosine(vectors: dict[str, np.ndarray], a: dict[str, Any], b: dict[str, Any]) -> float | None:
    va, vb = vectors.get(_key(a)), vectors.get(_key(b))
    return None if va is None or vb is None else float(va @ vb)


def candidate_pairs(group: list[dict[str, Any]], vectors: dict[str, np.ndarray],
                    config: MaintenanceConfig) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Similar pairs of one subject's facts: a shared slot, or each fact's `NEIGHBOURS` most similar above the
    threshold (cosine with an embedder, else Jaccard)."""
    pairs: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
    for i, fact in enumerate(group):
        scored = []
        for j, other in enumerate(group):
            if i == j or fact["fact_id"] == other["fact_id"]:
                continue
            if fact.get("slot") and fact.get("slot") == other.get("slot"):
                scored.append((2.0, j))
                continue
            cosine = _cosine(vectors, fact, other)
            score = cosine if cosine is not None else jaccard(fact["content"], other["content"])
            if score >= (config.contradiction_cosine if cosine is not None else config.contradict_jaccard):
                scored.append((score, j))
        for _score, j in sorted(scored, key=lambda s: (-s[0], s[1]))[:NEIGHBOURS]:
            a, b = sorted((fact, group[j]), key=_key)
            pairs[(_key(a), _key(b))] = (a, b)
    return [pairs[k] for k in sorted(pairs)]


def _candidate_count(active: pl.DataFrame, vectors: dict[str, np.ndarray], config: MaintenanceConfig) -> int:
    return sum(len(candidate_pairs(group, vectors, config)) for group in _subjects(active))


def judge_contradictions(active: pl.DataFrame, vectors: dict[str, np.ndarray], config: MaintenanceConfig,
                         model_judge: ModelJudge | None) -> list[Verdict]:
    """The contradicting pairs: the offline rules' always; the model's among the candidates and the rules'
    pairs when a model is configured (its verdict wins for a pair it answered)."""
    found: dict[tuple[str, str], Verdict] = {}
    for group in _subjects(active):
        rules = offline_verdicts(group)
        for verdict in rules:
            found[(verdict.a, verdict.b)] = verdict
        if model_judge is None:
            continue
        by_key = {_key(f): f for f in group}
        pairs = {(_key(a), _key(b)): (a, b) for a, b in candidate_pairs(group, vectors, config)}
        for verdict in rules:
            pairs.setdefault((verdict.a, verdict.b), (by_key[verdict.a], by_key[verdict.b]))
        for verdict in model_judge.judge([pairs[k] for k in sorted(pairs)]):
            rule = found.get((verdict.a, verdict.b))
            if verdict.contradicts and rule is not None:  # both judges agree: keep both reasons
                found[(verdict.a, verdict.b)] = Verdict(verdict.a, verdict.b, True,
                                                        f"{rule.reason}; {verdict.judge}: {verdict.reason}",
                                                        f"{rule.judge}+{verdict.judge}")
            elif verdict.contradicts:
                found[(verdict.a, verdict.b)] = verdict
    return sorted((v for v in found.values() if v.contradicts), key=lambda v: (v.a, v.b))
