"""Episodes and facts frames written by hand, for the graph's tests."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl

from memlake.lake import Lake, conform
from memlake.schemas import EPISODES, FACTS


def episode(agent: str, conversation: str, day: str, entities: list[tuple[str, str]] = (),  # type: ignore[assignment]
            relations: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
            ended: dict[tuple[str, str, str], str] | None = None,
            since: dict[tuple[str, str, str], str] | None = None) -> dict[str, object]:
    """One episode row: the entities (name, type) and relations (source, relation, target) said that day, valid
    from that day unless `since` says otherwise, until what `ended` says."""
    started = datetime.fromisoformat(day).replace(tzinfo=UTC)
    ended = ended or {}
    return {
        "agent_id": agent, "conversation_id": conversation, "conversation_started_at": started,
        "conversation_ended_at": started, "summary": "", "entities": [{"name": n, "type": t} for n, t in entities],
        "relations": [{"source": s, "relation": r, "target": t, "confidence": 0.9,
                       "valid_from": (since or {}).get((s, r, t), day),
                       "valid_until": ended.get((s, r, t))} for s, r, t in relations],
        "fact_candidates": [], "message_ids": [f"{conversation}-m1"],
    }


def episodes(*rows: dict[str, object]) -> pl.DataFrame:
    frame = pl.from_arrow(conform(EPISODES, list(rows)))
    assert isinstance(frame, pl.DataFrame)
    return frame


def fact(agent: str, conversation: str, day: str, subject: str, slot: str | None, value: str,
         status: str = "active") -> dict[str, object]:
    """One fact version row, said that day in that conversation."""
    said = datetime.fromisoformat(day).replace(tzinfo=UTC)
    return {"fact_id": f"f_{subject}_{slot}_{value}", "version": 1, "agent_id": agent, "type": "fact",
            "subject": subject, "slot": slot, "value": value, "content": f"{subject} {slot} {value}",
            "confidence": 0.9, "valid_from": said, "created_at": said, "source_conversation_ids": [conversation],
            "source_message_ids": [f"{conversation}-m1"], "status": status}


def facts(*rows: dict[str, object]) -> pl.DataFrame:
    frame = pl.from_arrow(conform(FACTS, list(rows)))
    assert isinstance(frame, pl.DataFrame)
    return frame


def no_facts() -> pl.DataFrame:
    return Lake.empty(FACTS)


def same_everything(texts: list[str]):  # type: ignore[no-untyped-def]
    """An embedder that finds every name alike (cosine 1): only the guards keep people apart."""
    return np.ones((len(texts), 4), dtype=np.float32) / 2.0


def turns(agent: str, conversation: str, day: str, *said: tuple[str, str], user: str | None = None) -> pl.DataFrame:
    """The turns of one conversation: (speaker, text) in order, one a minute from `day`, all the user's role
    except an "assistant" speaker; with `user`, only that speaker's (a chat between two people, as LoCoMo's)."""
    from datetime import timedelta

    from memlake.schemas import TURNS

    start = datetime.fromisoformat(day).replace(tzinfo=UTC)
    def role(speaker: str) -> str:
        return "assistant" if speaker == "assistant" or user not in (None, speaker) else "user"

    rows = [{"agent_id": agent, "conversation_id": conversation, "message_id": f"{conversation}-m{i}",
             "turn_index": i, "role": role(speaker), "speaker": speaker,
             "content": text, "created_at": start + timedelta(minutes=i), "conversation_started_at": start}
            for i, (speaker, text) in enumerate(said)]
    frame = pl.from_arrow(conform(TURNS, rows))
    assert isinstance(frame, pl.DataFrame)
    return frame
