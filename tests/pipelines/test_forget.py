"""`memlake forget` proven by a scanner of every file under the home: a canary said in a conversation is found
before the forget, and nowhere after it, after the next run, and after a rebuild from landing."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from tests.conftest import land
from tests.forget_scan import files_of, occurrences

CANARY = "QUOKKA-7731-CANARY"


def _jsonl(conversations: dict[str, list[tuple[str, str]]], day: int) -> str:
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
    land(settings, "A", "export.jsonl", _jsonl({
        "bank": [("user", f"My account number is {CANARY} and I work at Initech."), ("assistant", "Got it.")],
        "trip": [("user", "I live in Lisbon and I love hiking in Sintra."), ("assistant", "Lovely.")],
    }, day=1))
    land(settings, "B", "notes.jsonl", _jsonl({
        "b1": [("user", "I work at Umbrella and my dog is called Rex."), ("assistant", "Noted.")],
    }, day=3))
    cli("run", home=settings.home)
    return settings.home


def cli(*args, home):
    result = CliRunner().invoke(app, [*args, "--home", str(home)])
    assert result.exit_code == 0, result.output
    return result.output


def gone_everywhere(home, canary, other_agent_files):
    """The canary is in no file under the home now, after a run, and after a rebuild from landing; the other
    agent's landing files are byte for byte what they were."""
    assert occurrences(home, canary) == {}
    cli("run", home=home)
    assert occurrences(home, canary) == {}
    shutil.rmtree(home / "lake")
    shutil.rmtree(home / "lancedb")
    cli("run", home=home)
    assert occurrences(home, canary) == {}
    assert files_of(home, "B") == other_agent_files


def test_the_scanner_sees_the_canary_in_every_kind_of_store_and_dagster_keeps_no_message_text(home):
    found = occurrences(home, CANARY)
    stores = {name.split("/")[0] + "/" + name.split("/")[1] for name in found}
    assert {"landing/A", "lake/transcripts", "lake/episodes", "lancedb/chunk_index.lance"} <= stores, found
    assert any(name.startswith("lancedb/chunk_index@v") for name in found)  # every version is read as rows
    assert not [name for name in found if name.startswith("dagster_home")], found  # previews hold no text


def test_forget_a_conversation_removes_its_text_from_every_store_and_keeps_the_rest(home):
    other = files_of(home, "B")

    said = cli("forget", "--agent", "A", "--conversation", "bank", "--yes", home=home)

    assert "Initech" in said  # the fact only that conversation supported went with it
    gone_everywhere(home, CANARY, other)
    assert occurrences(home, "Sintra")  # the other conversation of the same file stays, and is found
    assert "Sintra" in cli("search", "hiking Sintra", "--agent", "A", home=home)
    assert list(files_of(home, "A")) == ["export.jsonl"]  # the file was rewritten without the conversation


def test_forget_a_whole_agent_removes_every_file_and_row_of_it_and_no_other(home):
    other = files_of(home, "B")

    cli("forget", "--agent", "A", "--all", "--yes", home=home)

    for text in (CANARY, "Sintra", "Initech"):
        gone_everywhere(home, text, other)
    assert not (home / "landing" / "A").exists()
    assert "Umbrella" in cli("search", "Umbrella", "--agent", "B", home=home)
