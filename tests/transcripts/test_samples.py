"""Tests that the shipped sample landing files parse and tell the story data/samples/README.md describes."""

from __future__ import annotations

import runpy
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memlake.parsers import ParsedConversation, ParsedFile, parse_file
from tests.conftest import REPO

SAMPLES = REPO / "data" / "samples"
DEMO = SAMPLES / "demo"

# file -> (format, conversations, visible messages)
EXPECTED = {
    "chatgpt_export.zip": ("chatgpt", 12, 60),
    "claude_export.json": ("claude", 10, 46),
    "notes_chat.jsonl": ("jsonl", 8, 36),
}


@pytest.fixture(scope="module")
def parsed() -> dict[str, ParsedFile]:
    return {name: parse_file(DEMO / name) for name in EXPECTED}


@pytest.fixture(scope="module")
def conversations(parsed: dict[str, ParsedFile]) -> list[ParsedConversation]:
    return [conv for file in parsed.values() for conv in file.conversations]


def user_says(conversations: list[ParsedConversation],
              phrase: str) -> list[tuple[ParsedConversation, datetime]]:
    """The conversations (and message times) where the user says `phrase`."""
    return [(conv, msg.created_at) for conv in conversations for msg in conv.messages
            if msg.role == "user" and phrase in msg.content and msg.created_at is not None]


def test_sample_files_are_exactly_the_expected_ones() -> None:
    assert sorted(p.name for p in DEMO.iterdir()) == sorted(EXPECTED)
    assert (SAMPLES / "README.md").is_file()
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file())
    assert total < 200_000


@pytest.mark.parametrize("name", list(EXPECTED))
def test_counts_per_file(parsed: dict[str, ParsedFile], name: str) -> None:
    fmt, n_conversations, n_messages = EXPECTED[name]
    file = parsed[name]
    assert file.source_format == fmt
    assert file.archive == ("zip" if name.endswith(".zip") else None)
    assert len(file.conversations) == n_conversations
    assert sum(len(c.messages) for c in file.conversations) == n_messages
    for conv in file.conversations:
        assert 4 <= len(conv.messages) <= 12, conv.title
        assert conv.title and conv.agent_id is None  # the folder name is the agent id
        assert all(m.message_id for m in conv.messages)
        assert len({m.message_id for m in conv.messages}) == len(conv.messages)
        times = [m.created_at for m in conv.messages]
        assert all(t is not None and t.tzinfo is UTC for t in times)
        assert times == sorted(times), conv.title  # type: ignore[type-var]


def test_dates_span_january_to_october_2024(conversations: list[ParsedConversation]) -> None:
    starts = sorted(c.started_at for c in conversations if c.started_at is not None)
    assert len(starts) == len(conversations) == 30
    assert (starts[0].year, starts[0].month) == (2024, 1)
    assert (starts[-1].year, starts[-1].month) == (2024, 10)
    assert {s.month for s in starts} == set(range(1, 11))


def test_chatgpt_skips_and_branches(parsed: dict[str, ParsedFile]) -> None:
    conversations = parsed["chatgpt_export.zip"].conversations
    skipped: dict[str, int] = {}
    for conv in conversations:
        for reason, n in conv.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + n
    assert skipped == {"system": 12, "hidden": 1, "empty": 1, "tool_call": 1, "non_text": 1}
    text = " ".join(m.content for c in conversations for m in c.messages)
    assert "satay" not in text  # the question before the edit
    assert "flexible schema" not in text  # the answer before the regeneration
    assert "print(open(" not in text  # the python tool call


def test_claude_thinking_and_tools_are_absent(parsed: dict[str, ParsedFile]) -> None:
    text = " ".join(m.content for c in parsed["claude_export.json"].conversations for m in c.messages)
    assert "Scratchpad" not in text
    assert "Search results:" not in text
    raw = (DEMO / "claude_export.json").read_text(encoding="utf-8")
    assert raw.count('"type": "thinking"') >= 8 and '"type": "tool_use"' in raw


def test_story_facts_are_present(conversations: list[ParsedConversation]) -> None:
    def said_in(phrase: str) -> list[tuple[int, int]]:
        return sorted((t.year, t.month) for _, t in user_says(conversations, phrase))

    assert said_in("My name is Priya") == [(2024, 1)]
    assert said_in("I moved to Lisbon last week") == [(2024, 6)]
    assert said_in("I started a new job at Northwind Labs") == [(2024, 9)]
    assert said_in("We decided to use Postgres instead of MongoDB for Project Heron") == [(2024, 3)]
    assert said_in("Actually, the launch is on March 14, not March 4") == [(2024, 2)]
    assert said_in("The Heron launch is on March 4") == [(2024, 2)]
    assert said_in("I'm going to run the Lisbon half marathon in October") == [(2024, 7)]
    assert said_in("I don't drink coffee, I prefer tea, oolong especially") == [(2024, 1)]
    assert said_in("I don't drink coffee") == [(2024, 1), (2024, 9)]
    assert said_in("Tomás Ruiz is the tech lead") and said_in("Aiko Tanaka")
    assert said_in("My partner Jonas") and said_in("My sister Leela")
    assert said_in("I'm vegetarian and allergic to peanuts")
    assert said_in("I love cycling") and said_in("concise answers with code examples")
    assert said_in("ORD-58213") and said_in("parse_ledger_v2")
    # Berlin before the move, Lisbon after it; Acme before the job change.
    berlin = [t for _, t in user_says(conversations, "I live in Berlin")]
    lisbon = [t for _, t in user_says(conversations, "I live in Lisbon")]
    assert berlin and max(berlin) < datetime(2024, 6, 1, tzinfo=UTC)
    assert lisbon and min(lisbon) > datetime(2024, 6, 1, tzinfo=UTC)
    acme = [t for _, t in user_says(conversations, "Acme Robotics")]
    assert max(t for t in acme if t.month < 9) < datetime(2024, 9, 1, tzinfo=UTC)


def test_generator_reproduces_the_samples(tmp_path: Path) -> None:
    generator = runpy.run_path(str(REPO / "scripts" / "make_samples.py"), run_name="make_samples")
    generator["main"](tmp_path)
    for name in EXPECTED:
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes(), name
