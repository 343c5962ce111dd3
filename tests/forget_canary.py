"""The canary home that forget is proven on, from the CLI (tests/pipelines/test_forget.py) and over HTTP
(tests/service/test_forget_http.py): agent A says a canary in one conversation of a file that holds another,
agent B has its own file; `gone_everywhere` is the proof, by the scanner of every file (tests/forget_scan.py)."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from tests.conftest import land
from tests.forget_scan import files_of, occurrences

CANARY = "QUOKKA-7731-CANARY"


def conversations_jsonl(conversations: dict[str, list[tuple[str, str]]], day: int) -> str:
    lines = []
    for n, (conversation_id, messages) in enumerate(conversations.items()):
        for m, (role, content) in enumerate(messages):
            lines.append(json.dumps({"conversation_id": conversation_id, "role": role, "content": content,
                                     "created_at": f"2026-03-{day + n:02d}T10:00:{m:02d}Z"}))
    return "\n".join(lines) + "\n"


@pytest.fixture
def home(settings, monkeypatch):
    """Agent A: one file holding a conversation with the canary and another without; agent B: its own file."""
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "A", "export.jsonl", conversations_jsonl({
        "bank": [("user", f"My account number is {CANARY} and I work at Initech."), ("assistant", "Got it.")],
        "trip": [("user", "I live in Lisbon and I love hiking in Sintra."), ("assistant", "Lovely.")],
    }, day=1))
    land(settings, "B", "notes.jsonl", conversations_jsonl({
        "b1": [("user", "I work at Umbrella and my dog is called Rex."), ("assistant", "Noted.")],
    }, day=3))
    cli("run", home=settings.home)
    return settings.home


def cli(*args, home):
    result = CliRunner().invoke(app, [*args, "--home", str(home)])
    assert result.exit_code == 0, result.output
    return result.output


def gone_everywhere(home, canaries, other_agent_files):
    """The canary (or each of several) is in no file under the home now, after a run, and after a rebuild from
    landing; the other agent's landing files are byte for byte what they were."""
    canaries = (canaries,) if isinstance(canaries, str) else canaries

    def left():
        return {canary: found for canary in canaries if (found := occurrences(home, canary))}

    assert left() == {}, "after the forget"
    cli("run", home=home)
    assert left() == {}, "after the next run"
    shutil.rmtree(home / "lake")
    shutil.rmtree(home / "lancedb")
    cli("run", home=home)
    assert left() == {}, "after a rebuild from landing"
    assert files_of(home, "B") == other_agent_files
