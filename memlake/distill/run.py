"""One distillation pass over some days of turns: episodes, pending conversations and new cache entries.

For each conversation in the turns of the days:

1. its result is in the cache (same prompt version, distiller and content
   hash) -> the episode comes from the cache, no call;
2. it is not idle long enough yet -> pending (debounce), its previous episode
   (if any) stays;
3. there is no distiller (no endpoint, offline distiller off) -> pending;
4. otherwise one distillation (one model call per part): success -> episode
   and cache entry; failure -> pending with the reason, previous episode kept.

With `agent_id` / `conversation_id` only those conversations are worked on;
every other conversation keeps its episode and pending rows as they were.
`force` skips the cache lookup for the conversations worked on.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import polars as pl

from memlake.distill.cache import ResultCache, cache_key, content_hash
from memlake.distill.models import CircuitOpen, Conversation, DistilledSession, DistillError, Message, Usage
from memlake.distill.pending import NO_DISTILLER, NOT_SELECTED, debounce_reason, is_due, pending_row
from memlake.lake import Lake
from memlake.schemas import EPISODES, PENDING

log = logging.getLogger(__name__)


class Distiller(Protocol):
    """The core model or the offline rules: a name, a prompt version and `distill`."""

    usage: Usage

    @property
    def name(self) -> str: ...

    @property
    def prompt_version(self) -> str | None: ...

    def distill(self, conversation: Conversation) -> DistilledSession: ...


@dataclass
class DistillStats:
    """What a pass did."""

    conversations: int = 0
    worked_on: int = 0
    cache_hits: int = 0
    distilled: int = 0
    failed: int = 0
    pending_left: int = 0
    pending_reasons: Counter[str] = field(default_factory=Counter)
    dropped_candidates: int = 0
    usage: Usage = field(default_factory=Usage)

    def as_metadata(self) -> dict[str, Any]:
        return {
            "conversations": self.conversations,
            "worked_on": self.worked_on,
            "model_calls": self.usage.calls,
            "model_requests": self.usage.requests,
            "cache_hits": self.cache_hits,
            "distilled": self.distilled,
            "failed": self.failed,
            "pending_left": self.pending_left,
            "pending_reasons": dict(self.pending_reasons),
            "token_usage": self.usage.as_dict(),
        }


@dataclass
class DistillPass:
    """The rows a pass produced, by day."""

    episodes: dict[str, list[dict[str, Any]]]
    pending: dict[str, list[dict[str, Any]]]
    live: dict[str, set[tuple[str, str]]]  # day -> conversations in its turns
    stats: DistillStats


@dataclass(frozen=True)
class TurnsConversation:
    """A conversation of the turns table, with what the pass needs besides its messages."""

    day: str
    conversation: Conversation
    ingested_at: datetime | None

    @property
    def key(self) -> tuple[str, str]:
        return (self.conversation.agent_id, self.conversation.conversation_id)


def conversations_from_turns(turns: pl.DataFrame) -> list[TurnsConversation]:
    """The conversations of a turns frame (with its `day` column), messages in turn order."""
    if turns.height == 0:
        return []
    out = []
    ordered = turns.sort("day", "agent_id", "conversation_id", "turn_index")
    for (day, agent_id, conversation_id), group in ordered.group_by(
        ["day", "agent_id", "conversation_id"], maintain_order=True
    ):
        messages = tuple(
            Message(r["message_id"], r["role"], r["content"] or "", r["created_at"], r["speaker"])
            for r in group.iter_rows(named=True)
        )
        title = next((t for t in group["title"].to_list() if t), None)
        out.append(
            TurnsConversation(
                str(day),
                Conversation(str(agent_id), str(conversation_id), title, messages),
                group["ingested_at"].max(),  # type: ignore[arg-type]
            )
        )
    return out


def episode_row(item: TurnsConversation, session: DistilledSession, content: str, distiller: str,
                prompt_version: str | None) -> dict[str, Any]:
    conversation = item.conversation
    data = session.model_dump()
    return {
        "agent_id": conversation.agent_id,
        "conversation_id": conversation.conversation_id,
        "title": conversation.title,
        "conversation_started_at": conversation.started_at,
        "conversation_ended_at": conversation.ended_at,
        **{k: data[k] for k in ("summary", "topics", "decisions", "action_items", "key_dates", "entities",
                                "relations", "fact_candidates", "salience")},
        "message_ids": [m.message_id for m in conversation.messages],
        "content_hash": content,
        "distiller": distiller,
        "prompt_version": prompt_version,
        "ingested_at": item.ingested_at,
    }


def _by_key(frame: pl.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["agent_id"], r["conversation_id"]): r for r in frame.iter_rows(named=True)}


def distill_pass(
    turns: pl.DataFrame,
    previous_episodes: pl.DataFrame,
    previous_pending: pl.DataFrame,
    cache: ResultCache,
    distiller: Distiller | None,
    *,
    as_of: datetime,
    debounce_seconds: float,
    agent_id: str | None = None,
    conversation_id: str | None = None,
    force: bool = False,
    days: Iterable[str] | None = None,
) -> DistillPass:
    """Episodes and pending rows for every day of `turns` (and every day in `days`, even if empty)."""
    old_episodes = _by_key(previous_episodes)
    old_pending = _by_key(previous_pending)
    stats = DistillStats()
    episodes: dict[str, list[dict[str, Any]]] = {d: [] for d in (days or [])}
    pending: dict[str, list[dict[str, Any]]] = {d: [] for d in (days or [])}
    live: dict[str, set[tuple[str, str]]] = {d: set() for d in (days or [])}
    usage_before = distiller.usage.as_dict() if distiller else {}

    for item in conversations_from_turns(turns):
        conversation = item.conversation
        stats.conversations += 1
        episodes.setdefault(item.day, [])
        pending.setdefault(item.day, [])
        live.setdefault(item.day, set()).add(item.key)
        old_episode, old_pend = old_episodes.get(item.key), old_pending.get(item.key)
        selected = (agent_id is None or conversation.agent_id == agent_id) and (
            conversation_id is None or conversation.conversation_id == conversation_id
        )
        if not selected:
            if old_episode:
                episodes[item.day].append(old_episode)
            if old_pend:
                pending[item.day].append(old_pend)
            elif not old_episode:  # never seen: it waits for a run that selects it
                pending[item.day].append(pending_row(conversation.agent_id, conversation.conversation_id,
                                                     content_hash(conversation), NOT_SELECTED, as_of))
                stats.pending_reasons[NOT_SELECTED] += 1
            continue
        stats.worked_on += 1
        content = content_hash(conversation)

        def wait(reason: str, attempted: bool = False, item: TurnsConversation = item,
                 old_episode: dict[str, Any] | None = old_episode, old_pend: dict[str, Any] | None = old_pend,
                 content: str = content) -> None:
            if old_episode:
                episodes[item.day].append(old_episode)
            pending[item.day].append(pending_row(item.conversation.agent_id, item.conversation.conversation_id,
                                                 content, reason, as_of, old_pend, attempted))
            stats.pending_reasons[reason.split(":")[0]] += 1

        if distiller is None:
            wait(NO_DISTILLER)
            continue
        key = cache_key(distiller.prompt_version, distiller.name, content)
        cached = None if force else cache.get(key)
        if cached is not None:
            stats.cache_hits += 1
            episodes[item.day].append(episode_row(item, cached, content, distiller.name, distiller.prompt_version))
            continue
        if not force and not is_due(conversation.ended_at, as_of, debounce_seconds):
            wait(debounce_reason(conversation.ended_at, as_of, debounce_seconds))
            continue
        before = distiller.usage.as_dict()
        try:
            session = distiller.distill(conversation)
        except CircuitOpen as exc:  # opened by this conversation's own failed tries, or already open
            wait(exc.reason, attempted=distiller.usage.requests > before.get("requests", 0))
            continue
        except DistillError as exc:
            stats.failed += 1
            wait(f"core model failed: {exc.reason}", attempted=True)
            continue
        except Exception as exc:  # a bug in a distiller must not lose the conversation
            log.exception("distiller %s failed on %s", distiller.name, item.key)
            stats.failed += 1
            wait(f"distiller error: {type(exc).__name__}: {exc}"[:300], attempted=True)
            continue
        session, dropped = session.restricted_to(conversation.message_roles)
        stats.dropped_candidates += dropped
        stats.distilled += 1
        after = distiller.usage.as_dict()
        spent = {k: after[k] - before.get(k, 0) for k in after}
        cache.put(key, item.day, conversation, content, distiller.name, distiller.prompt_version, session, as_of,
                  spent)
        episodes[item.day].append(episode_row(item, session, content, distiller.name, distiller.prompt_version))

    for rows in pending.values():
        stats.pending_left += len(rows)
    if distiller is not None:
        after = distiller.usage.as_dict()
        stats.usage = Usage(**{k: after[k] - usage_before.get(k, 0) for k in after if k != "total_tokens"})
    for day in episodes:
        episodes[day].sort(key=lambda r: (r["agent_id"], r["conversation_started_at"], r["conversation_id"]))
        pending[day].sort(key=lambda r: (r["agent_id"], r["conversation_id"]))
    return DistillPass(episodes, pending, live, stats)


def write_pass(lake: Lake, result: DistillPass, cache: ResultCache, days: Iterable[str]) -> list[str]:
    """Write the cache, then episodes and pending, a day at a time (atomic partition swaps).

    A day with no rows gets no file unless it had one that must now be emptied.
    Returns the days whose episodes or pending partition was written.
    """
    existing = {EPISODES.path: set(lake.partitions(EPISODES)), PENDING.path: set(lake.partitions(PENDING))}
    cache.write(lake, result.live)
    written = []
    for day in days:
        for table, rows in ((EPISODES, result.episodes.get(day, [])), (PENDING, result.pending.get(day, []))):
            if rows or day in existing[table.path]:
                lake.write_partition(table, day, rows)
                written.append(day)
    return sorted(set(written))
