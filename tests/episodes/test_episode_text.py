"""What an episode shows where it is rendered (its search text, and so the context block's episodes section):
the title once, then the summary."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline
from memlake.index_rows import episode_index_rows

SAID = datetime(2024, 4, 8, 9, 0, tzinfo=UTC)


def episode_row(title: str, summary: str) -> dict:
    return {"agent_id": "demo", "conversation_id": "c1", "title": title, "summary": summary, "topics": ["lisbon"],
            "decisions": [], "action_items": [], "message_ids": ["m1"], "conversation_started_at": SAID,
            "salience": 0.5, "day": "2024-04-08"}


def test_an_offline_episode_shows_its_title_once():
    conversation = Conversation("demo", "c1", "Lisbon trip", (
        Message("m1", "user", "My partner Jonas and I are spending a long weekend in Lisbon next month.", SAID),
        Message("m2", "assistant", "Lisbon is lovely in spring.", SAID),
    ))
    summary = distill_offline(conversation).summary
    text = episode_index_rows(pl.DataFrame([episode_row("Lisbon trip", summary)]))["text"][0]
    assert text.count("Lisbon trip") == 1, text
    assert "Jonas" in text and "Topics: lisbon" in text


def test_a_summary_that_does_not_open_with_the_title_gets_the_title_before_it():
    text = episode_index_rows(pl.DataFrame([episode_row("Lisbon trip", "They planned a weekend away.")]))["text"][0]
    assert text.startswith("Lisbon trip\nThey planned a weekend away.")
