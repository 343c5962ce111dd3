"""Fact candidates from `episodes/episodes`, dated by when the user said them.

A candidate's `created_at` is the time of the latest user message it cites
(joined from `transcripts/turns` by message id), else the end of its
conversation; never the time it was ingested or distilled. Candidates that
cite only messages of other roles are dropped: facts come from the user.
A candidate's `confidence` is the prior of its reading (`memlake.distill.confidence.reading_prior`): the
episode's distiller, the rule family, and whether the conversation is a chat with an assistant.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from memlake.distill.confidence import reading_prior
from memlake.distill.offline.assistant_chat import replies_from_an_assistant
from memlake.facts.fold import Candidate
from memlake.moments import as_utc_if_moment
from memlake.schemas import FACT_TYPES


@dataclass
class CandidateBatch:
    """The dated candidates of some episodes, and what was dropped and why."""

    candidates: list[Candidate] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def message_index(turns: pl.DataFrame) -> dict[tuple[str, str, str], tuple[str, datetime, datetime | None]]:
    """(agent, conversation, message) -> (role, created_at, ingested_at)."""
    if turns.height == 0:
        return {}
    columns = turns.select("agent_id", "conversation_id", "message_id", "role", "created_at", "ingested_at")
    return {(a, c, m): (role, created, ingested) for a, c, m, role, created, ingested in columns.iter_rows()}


def assistant_chats(turns: pl.DataFrame) -> set[tuple[str, str]]:
    """The (agent, conversation) pairs of `turns` that are chats with an assistant (`replies_from_an_assistant`)."""
    if turns.height == 0:
        return set()
    chats: set[tuple[str, str]] = set()
    for (agent_id, conversation_id), messages in turns.group_by("agent_id", "conversation_id"):
        speakers = messages.select("role", "speaker").rows()
        users = {speaker for role, speaker in speakers if role == "user"}
        if replies_from_an_assistant([(role, speaker) for role, speaker in speakers if role != "user"], users):
            chats.add((str(agent_id), str(conversation_id)))
    return chats


def candidates_from_episodes(episodes: pl.DataFrame, turns: pl.DataFrame) -> CandidateBatch:
    """Every fact candidate of `episodes`, as dated fold inputs."""
    batch = CandidateBatch()
    messages = message_index(turns)
    with_an_assistant = assistant_chats(turns)
    if episodes.height == 0:
        return batch
    for episode in episodes.iter_rows(named=True):
        agent_id, conversation_id = episode["agent_id"], episode["conversation_id"]
        fallback_time = episode.get("conversation_ended_at") or episode.get("conversation_started_at")
        assistant_chat = (agent_id, conversation_id) in with_an_assistant
        for raw in episode.get("fact_candidates") or []:
            content = " ".join(str(raw.get("content") or "").split())
            if not content:
                batch.skipped["no content"] += 1
                continue
            fact_type = str(raw.get("type") or "").strip().lower()
            if fact_type not in FACT_TYPES:
                batch.skipped["unknown type"] += 1
                continue
            cited = [m for m in (raw.get("message_ids") or []) if m]
            known = [(m, messages[(agent_id, conversation_id, m)]) for m in cited
                     if (agent_id, conversation_id, m) in messages]
            user = [(m, info) for m, info in known if info[0] == "user"]
            if known and not user:
                batch.skipped["not said by the user"] += 1
                continue
            if user:
                message_ids = tuple(m for m, _ in user)
                created_at = max(info[1] for _, info in user)
                ingested = [info[2] for _, info in user if info[2] is not None]
                ingested_at = min(ingested) if ingested else episode.get("ingested_at")
            else:
                if fallback_time is None:
                    batch.skipped["no time"] += 1
                    continue
                message_ids = tuple(cited)
                created_at = fallback_time
                ingested_at = episode.get("ingested_at")
            batch.candidates.append(
                Candidate(
                    agent_id=agent_id,
                    type=fact_type,
                    subject=str(raw.get("subject") or "user"),
                    slot=(raw.get("slot") or None),
                    value=raw.get("value"),
                    content=content,
                    created_at=created_at,
                    confidence=reading_prior(raw.get("confidence"), distiller=episode.get("distiller"),
                                             slot=raw.get("slot"), subject=raw.get("subject"),
                                             tags=raw.get("tags") or (), assistant_chat=assistant_chat),
                    importance=float(raw["importance"]) if raw.get("importance") is not None else 0.5,
                    tags=tuple(raw.get("tags") or ()),
                    valid_from=as_utc_if_moment(raw.get("valid_from")),
                    valid_until=as_utc_if_moment(raw.get("valid_until")),
                    ingested_at=ingested_at,
                    conversation_id=conversation_id,
                    message_ids=message_ids,
                )
            )
    return batch
