"""Consolidation: decay by kind, promote, evict and prune facts; merge and prune episodes; all as of `as_of`.

Every step is a function of the tables, the access log up to `as_of`, and the settings: two sweeps at the
same as_of give the same rows. Nothing is deleted: an evicted or pruned fact gets that status in
`maintenance/fact_status` (reads join it), and a merged or pruned episode an audit row.

- activity: a fact version's last activity is the latest of said (`created_at`), confirmed
  (`last_confirmed_at`), used (the access log's `fact_id@version` rows up to as_of) and ingested (`ingested_at`,
  when this memory first held it, up to as_of: an import of old chats starts fresh), and its use count;
- decay: salience = importance x 0.5 ^ (idle days / the half-life of its type); a user override never decays;
- promote: an active fact that half its words of lie in each of `promote_episodes` episodes that ended within
  `promote_window_days` before as_of keeps its full importance (it is live again) and is flagged promoted;
- evict: an active fact below the salience floor and idle at least `idle_days` is evicted (never an override);
- prune: with a retention, an active fact idle longer is evicted as pruned, and episodes that ended before
  it are marked pruned (default: forever, nothing pruned);
- merge: of two episodes of an agent whose summaries share at least `episode_merge_jaccard` of their words,
  the later is merged into the earlier.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from memlake.maintenance.config import MaintenanceConfig, timed
from memlake.text import content_words, jaccard

DEFAULT_IMPORTANCE = 0.5
PROMOTE_OVERLAP = 0.5  # share of a fact's words an episode must hold to overlap it
STEPS = ("decayed", "promoted", "evicted", "pruned_facts", "merged_episodes", "pruned_episodes")


@dataclass
class Consolidation:
    """A consolidation's verdicts: one row per fact version said by as_of, and the episodes it changed."""

    # agent_id, fact_id, version, base_status (the facts table's), status, flag, salience, last_active_at,
    # use_count, reason
    facts: pl.DataFrame
    episodes: list[dict[str, Any]] = field(default_factory=list)  # agent_id, conversation_id, new_value, reason
    counts: dict[str, int] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)


def consolidate(facts: pl.DataFrame, episodes: pl.DataFrame, uses: pl.DataFrame, as_of: datetime,
                config: MaintenanceConfig) -> Consolidation:
    """Every consolidation step over every agent, as of `as_of`."""
    durations: dict[str, float] = {}
    with timed(durations, "decay"):
        frame = decay(activity(facts, uses, as_of), as_of, config)
    with timed(durations, "promote"):
        frame = promote(frame, episodes, as_of, config)
    with timed(durations, "evict"):
        frame = evict(frame, config)
    recent = episodes.filter(pl.col("conversation_started_at") <= as_of)
    with timed(durations, "merge"):
        merged = merge_episodes(recent, config)
    with timed(durations, "prune"):
        frame = prune_facts(frame, config)
        pruned = prune_episodes(recent, as_of, config, {(e["agent_id"], e["conversation_id"]) for e in merged})
    active_said = (frame["status"] == "active") | (frame["reason"].fill_null("").str.starts_with("evicted"))
    counts = {
        "facts": frame.height,
        "decayed": int((active_said & (frame["salience"] < frame["_importance"])).sum()),
        "promoted": int((frame["flag"] == "promoted").sum()),
        "evicted": int(frame["reason"].fill_null("").str.starts_with("evicted").sum()),
        "pruned_facts": int(frame["reason"].fill_null("").str.starts_with("pruned").sum()),
        "merged_episodes": len(merged),
        "pruned_episodes": len(pruned),
    }
    rows = frame.select("agent_id", "fact_id", "version", "base_status", "status", "flag", "salience",
                        "last_active_at", "use_count", "reason").sort("agent_id", "fact_id", "version")
    return Consolidation(rows, merged + pruned, counts, durations)


def activity(facts: pl.DataFrame, uses: pl.DataFrame, as_of: datetime) -> pl.DataFrame:
    """The fact versions said by `as_of`, with `use_count`, `last_active_at` and `idle_days` (see the module)."""
    said = facts.filter(pl.col("created_at") <= as_of).with_columns(
        (pl.col("fact_id") + "@" + pl.col("version").cast(pl.String)).alias("_object_id"))
    used = uses.select("agent_id", pl.col("object_id").alias("_object_id"), "use_count", "last_used_at")
    confirmed = pl.when(pl.col("last_confirmed_at") <= as_of).then(pl.col("last_confirmed_at"))
    # a fact counts as fresh from when this memory first held it: chats said years ago and imported today are
    # not idle for those years (a sweep now would evict the whole import); before its ingestion, from said
    ingested = pl.when(pl.col("ingested_at") <= as_of).then(pl.col("ingested_at"))
    frame = said.join(used, on=["agent_id", "_object_id"], how="left").with_columns(
        pl.col("use_count").fill_null(0).cast(pl.Int32),
        pl.max_horizontal("created_at", confirmed, "last_used_at", ingested).alias("last_active_at"),
    )
    idle = (pl.lit(as_of) - pl.col("last_active_at")).dt.total_seconds() / 86400.0
    return frame.with_columns(idle.alias("idle_days"), pl.col("status").alias("base_status"),
                              pl.lit(None, dtype=pl.String).alias("flag"),
                              pl.lit(None, dtype=pl.String).alias("reason"))


def decay(frame: pl.DataFrame, as_of: datetime, config: MaintenanceConfig) -> pl.DataFrame:
    """Salience by kind from the last activity; an override keeps its importance."""
    half_life = pl.col("type").replace_strict(config.half_life_days, default=config.half_life(None),
                                              return_dtype=pl.Float64)
    importance = pl.col("importance").fill_null(DEFAULT_IMPORTANCE)
    decayed = importance * pl.lit(0.5).pow(pl.col("idle_days").clip(lower_bound=0) / half_life)
    is_override = pl.col("source_interface") == "override"
    return frame.with_columns(importance.alias("_importance"), half_life.alias("_half_life"),
                              pl.when(is_override).then(importance).otherwise(decayed).alias("salience"))


def promote(frame: pl.DataFrame, episodes: pl.DataFrame, as_of: datetime, config: MaintenanceConfig) -> pl.DataFrame:
    """Active facts that enough recent episodes overlap keep their full importance, flagged promoted."""
    since = as_of - timedelta(days=config.promote_window_days)
    recent = episodes.filter((pl.col("conversation_ended_at") <= as_of) & (pl.col("conversation_ended_at") > since))
    if recent.height == 0 or config.promote_episodes < 1:
        return frame
    episode_words: dict[str, list[set[str]]] = {}
    for row in recent.iter_rows(named=True):
        text = " ".join([row["summary"] or "", *(row["topics"] or []), *(row["decisions"] or [])])
        episode_words.setdefault(row["agent_id"], []).append(content_words(text))
    promoted: dict[tuple[str, int], str] = {}
    for row in frame.filter(pl.col("status") == "active").iter_rows(named=True):
        words = content_words(row["content"])
        if not words:
            continue
        overlapping = sum(1 for ep in episode_words.get(row["agent_id"], [])
                          if len(words & ep) / len(words) >= PROMOTE_OVERLAP)
        if overlapping >= config.promote_episodes:
            promoted[(row["fact_id"], row["version"])] = f"promoted: {overlapping} recent episodes overlap it"
    if not promoted:
        return frame
    keys = pl.DataFrame({"fact_id": [k[0] for k in promoted], "version": [k[1] for k in promoted],
                         "_promoted": list(promoted.values())}, schema_overrides={"version": pl.Int32})
    hit = pl.col("_promoted").is_not_null()
    return frame.join(keys, on=["fact_id", "version"], how="left").with_columns(
        pl.when(hit).then(pl.max_horizontal("salience", "_importance")).otherwise(pl.col("salience")).alias("salience"),
        pl.when(hit).then(pl.lit("promoted")).otherwise(pl.col("flag")).alias("flag"),
        pl.when(hit).then(pl.col("_promoted")).otherwise(pl.col("reason")).alias("reason"),
    ).drop("_promoted")


def _evictable() -> pl.Expr:
    """Active, not a user override, not promoted by this sweep, and no slot's value: where one lives, one's name
    or employer is a state that stays true however long nobody mentions it (only a later value ends it), so
    idleness never hides it; a happening, a preference or a passing remark fades."""
    return ((pl.col("status") == "active") & (pl.col("source_interface") != "override")
            & (pl.col("flag").fill_null("") != "promoted") & pl.col("slot").is_null())


def evict(frame: pl.DataFrame, config: MaintenanceConfig) -> pl.DataFrame:
    """Evict idle facts below the salience floor (hidden from now-reads and the context block, kept in history)."""
    low = _evictable() & (pl.col("salience") < config.salience_floor) & (pl.col("idle_days") >= config.idle_days)
    reason = pl.format("evicted: salience {} below the floor {} after {} idle days (half-life {} days, last active {})",
                       pl.col("salience").round(3), pl.lit(config.salience_floor), pl.col("idle_days").round(0),
                       pl.col("_half_life"), pl.col("last_active_at").dt.date())
    return frame.with_columns(pl.when(low).then(pl.lit("evicted")).otherwise(pl.col("status")).alias("status"),
                              pl.when(low).then(reason).otherwise(pl.col("reason")).alias("reason"))


def prune_facts(frame: pl.DataFrame, config: MaintenanceConfig) -> pl.DataFrame:
    """With a retention, evict (as pruned) active facts idle longer than it."""
    if config.retention_days is None:
        return frame
    old = _evictable() & (pl.col("idle_days") > config.retention_days)
    reason = pl.format("pruned: idle {} days, past the retention of {} days", pl.col("idle_days").round(0),
                       pl.lit(config.retention_days))
    return frame.with_columns(pl.when(old).then(pl.lit("evicted")).otherwise(pl.col("status")).alias("status"),
                              pl.when(old).then(reason).otherwise(pl.col("reason")).alias("reason"))


def merge_episodes(episodes: pl.DataFrame, config: MaintenanceConfig) -> list[dict[str, Any]]:
    """The later of two near-duplicate episodes of an agent, merged into the earlier."""
    merged: list[dict[str, Any]] = []
    ordered = episodes.sort("agent_id", "conversation_started_at", "conversation_id")
    for (agent_id,), rows in ordered.group_by("agent_id", maintain_order=True):
        kept: list[tuple[str, str]] = []
        for conversation_id, summary in rows.select("conversation_id", "summary").iter_rows():
            twin = next(((cid, score) for cid, text in kept
                         if (score := jaccard(text, summary)) >= config.episode_merge_jaccard), None)
            if twin is None:
                kept.append((conversation_id, summary))
                continue
            merged.append({"agent_id": agent_id, "conversation_id": conversation_id, "new_value": "merged",
                           "reason": f"merged into {twin[0]}: summaries share {twin[1]:.2f} of their words"})
    return merged


def prune_episodes(episodes: pl.DataFrame, as_of: datetime, config: MaintenanceConfig,
                   merged: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """With a retention, the episodes (and their transcripts) that ended before it (not deleted: marked)."""
    if config.retention_days is None:
        return []
    cutoff = as_of - timedelta(days=config.retention_days)
    old = episodes.filter(pl.col("conversation_ended_at") < cutoff).sort("agent_id", "conversation_id")
    return [{"agent_id": a, "conversation_id": c, "new_value": "pruned",
             "reason": f"pruned: ended {ended.date()}, past the retention of {config.retention_days:g} days"}
            for a, c, ended in old.select("agent_id", "conversation_id", "conversation_ended_at").iter_rows()
            if (a, c) not in merged]
