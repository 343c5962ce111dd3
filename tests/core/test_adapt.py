"""Adapting the embedding model to a home's own conversations (`memlake adapt`)."""

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from memlake.adapt import MANIFEST, AdaptParams, QuestionReply, adapt, adapted_name, question_reply_pairs
from memlake.embedding import DEFAULT_MODEL_NAME, SentenceEmbedder
from memlake.lake import conform
from memlake.schemas import TURNS


def turns(rows: list[tuple[str, str, str | None, str, str]]) -> pl.DataFrame:
    """(agent, conversation, speaker, role, content) rows, in turn order within each conversation."""
    index: dict[tuple[str, str], int] = {}
    out = []
    for agent, conversation, speaker, role, content in rows:
        n = index[(agent, conversation)] = index.get((agent, conversation), -1) + 1
        out.append({"agent_id": agent, "conversation_id": conversation, "message_id": f"{conversation}-{n}",
                    "turn_index": n, "role": role, "speaker": speaker, "content": content,
                    "created_at": datetime(2024, 3, 1, tzinfo=UTC)})
    return pl.from_arrow(conform(TURNS, out))


def test_a_question_is_paired_with_the_reply_after_it_and_names_who_replies():
    found = question_reply_pairs(turns([
        ("a", "c1", "Mel", "user", "Hi Caroline! How was your trip to the coast? I missed you."),
        ("a", "c1", "Caroline", "assistant", "It was lovely, we camped by the dunes."),
    ]))
    assert found == [("a", "How was Caroline's trip to the coast?", "Caroline: It was lovely, we camped by the dunes.")]


def test_no_pair_across_conversations_with_the_same_speaker_or_from_a_short_question():
    found = question_reply_pairs(turns([
        ("a", "c1", "Mel", "user", "Where did you park the blue van?"),  # last turn of c1: no reply
        ("a", "c2", "Caroline", "assistant", "By the old mill, as always."),
        ("a", "c2", "Caroline", "assistant", "Did you get the keys from Sam?"),  # the next turn is hers too
        ("a", "c2", "Caroline", "assistant", "I left them on the shelf."),
        ("a", "c2", "Mel", "user", "Really? Thanks!"),  # a two-word question
        ("a", "c2", "Caroline", "assistant", "Any time."),
        ("b", "c3", None, "user", "Can you summarise the report for me?"),  # no speaker: the role names them
        ("b", "c3", None, "assistant", "The report says revenue grew."),
    ]))
    assert found == [("b", "Can Assistant summarise the report for me?", "Assistant: The report says revenue grew.")]


PAIRS = [QuestionReply("priya", *pair) for pair in [
    ("What did Priya name the rescue dog?", "Priya: We called him Biscuit, he loves the sofa."),
    ("Where is Priya going on holiday this summer?", "Priya: Lisbon! I booked the flights last night."),
    ("What instrument is Priya learning?", "Priya: The cello, my teacher is very patient."),
    ("Which team does Priya support?", "Priya: Always Hamburg, even in the bad seasons."),
    ("What did Priya cook for the party?", "Priya: A huge pot of dal and some flatbreads."),
    ("How did Priya get to work today?", "Priya: I cycled, the trains were on strike again."),
    ("What book is Priya reading?", "Priya: A history of the Silk Road, slow but good."),
    ("Why was Priya late on Monday?", "Priya: The boiler broke and I waited for the plumber."),
]]


def margin(model: SentenceEmbedder) -> float:
    """Mean cosine of each question with its reply, less its mean cosine with the other replies."""
    q = model.embed([p.question for p in PAIRS])
    r = model.embed([p.reply for p in PAIRS])
    sims = q @ r.T
    off = (sims.sum(axis=1) - np.diag(sims)) / (len(PAIRS) - 1)
    return float(np.mean(np.diag(sims) - off))


@pytest.mark.model
def test_the_adapted_model_brings_questions_closer_to_their_replies_and_is_made_once(tmp_path):
    params = AdaptParams(epochs=4, batch_size=8, learning_rate=1e-4)
    heard: list[tuple[int, int]] = []
    first = adapt("", PAIRS, tmp_path, params, progress=lambda done, total: heard.append((done, total)))
    assert first.trained and first.pairs == len(PAIRS)
    assert heard == [(n, 4) for n in range(1, 5)]  # one batch of 8 pairs per epoch, each one heard of
    assert json.loads((first.path / MANIFEST).read_text())["base"] == DEFAULT_MODEL_NAME

    before, after = SentenceEmbedder(), SentenceEmbedder(str(first.path))
    assert after.dim == before.dim
    assert margin(after) > margin(before) + 0.05

    heard.clear()
    again = adapt("", PAIRS, tmp_path, params, progress=lambda done, total: heard.append((done, total)))
    assert again.path == first.path and not again.trained and not heard  # same pairs and settings: the same model, kept
    # other pairs or settings make other weights: they get another name, so no index reuses old vectors
    assert adapted_name(DEFAULT_MODEL_NAME, PAIRS[:-1], params) != first.path.name
    assert adapted_name(DEFAULT_MODEL_NAME, PAIRS, AdaptParams(epochs=3, batch_size=8)) != first.path.name


def test_too_few_pairs_is_a_clear_error(tmp_path):
    one_each = [PAIRS[0], QuestionReply("sam", *PAIRS[1][1:])]  # no agent has two: no batch to learn from
    with pytest.raises(ValueError, match="too few"):
        adapt("", one_each, tmp_path)


@pytest.mark.model
def test_memlake_adapt_use_searches_with_the_adapted_model_wherever_the_home_moves(
    settings, run_pipeline, monkeypatch, tmp_path
):
    from typer.testing import CliRunner

    from memlake.api import Memory
    from memlake.schemas import CHUNK_INDEX
    from memlake.vectors import VectorStore
    from pipelines.cli import app
    from tests.conftest import land

    chat = []  # Sam asks Priya each question of PAIRS; she answers
    for _, question, answer in PAIRS:
        for speaker, content in (("Sam", question.replace("Priya", "you")), ("Priya", answer.split(": ", 1)[1])):
            chat.append({"conversation_id": "c1", "message_id": f"m{len(chat)}", "speaker": speaker,
                         "role": "user" if speaker == "Priya" else "assistant", "content": content,
                         "created_at": f"2024-03-01T09:{len(chat):02d}:00Z"})
    land(settings, "priya", "chat.jsonl", "".join(json.dumps(r) + "\n" for r in chat))
    assert run_pipeline().success
    built_with = VectorStore(settings.lancedb_dir).embedder_of(CHUNK_INDEX)
    runner = CliRunner()
    home = ["--home", str(settings.home)]
    settings.home.joinpath("memlake.toml").write_text("# Priya's memory\nrrf_k = 10\n")

    printed = runner.invoke(app, ["adapt", *home, "--epochs", "1"])  # without --use: says how, changes nothing
    assert printed.exit_code == 0, printed.output
    folder = Path(printed.output.split("adapted model: ")[1].split(" (")[0])
    name = f"models/{folder.name}"
    assert folder.parent == settings.models_dir and "8 question-reply pairs" in printed.output
    assert f'embedding_model = "{name}"' in printed.output and "memlake adapt --use" in printed.output
    assert VectorStore(settings.lancedb_dir).embedder_of(CHUNK_INDEX) == built_with

    used = runner.invoke(app, ["adapt", *home, "--epochs", "1", "--use"])
    assert used.exit_code == 0, used.output
    assert "already there, unchanged" in used.output and "rebuilt: " in used.output
    toml = settings.home.joinpath("memlake.toml").read_text()
    assert f'embedding_model = "{name}"' in toml and "# Priya's memory" in toml and "rrf_k = 10" in toml
    assert VectorStore(settings.lancedb_dir).embedder_of(CHUNK_INDEX) == name  # named relative to the home
    question = "Which instrument is Priya learning?"
    found = Memory(settings.home).search(question, "priya", k=3)
    assert set(found["mode"]) == {"hybrid"}  # the index and the query share the adapted model
    assert any("cello" in text for text in found["text"])

    moved = tmp_path / "moved"  # a home copied elsewhere, the old one gone: model and vectors go with it
    shutil.copytree(settings.home, moved)
    shutil.rmtree(settings.home)
    found = Memory(moved).search(question, "priya", k=3)
    assert set(found["mode"]) == {"hybrid"} and any("cello" in text for text in found["text"])
    # adapting again starts from the base model, not from the adapted one: the same pairs, the same model
    again = runner.invoke(app, ["adapt", "--home", str(moved), "--epochs", "1", "--use"])
    assert again.exit_code == 0, again.output
    assert f"adapted model: {moved / name} " in again.output and "nothing to reindex" in again.output
    without_use = runner.invoke(app, ["adapt", "--home", str(moved), "--epochs", "1"])  # no "to use it" for it
    assert "already searches with it" in without_use.output and "memlake adapt --use" not in without_use.output
    nobody = runner.invoke(app, ["adapt", "--home", str(moved), "--agent", "nobody"])
    assert nobody.exit_code == 1 and "no turns of agent 'nobody' here to adapt on" in str(nobody.exception)

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", name)  # the environment would still decide: --use says so
    refused = runner.invoke(app, ["adapt", "--home", str(moved), "--epochs", "1", "--use"])
    assert refused.exit_code == 1 and "MEMLAKE_EMBEDDING_MODEL" in refused.output
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "none")
    refused = runner.invoke(app, ["adapt", "--home", str(moved)])
    assert refused.exit_code == 1 and "no weights to adapt" in refused.output
