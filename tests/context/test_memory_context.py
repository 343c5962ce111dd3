"""`Memory.context` and `memlake context` on the samples home: current facts first, dated, with their sources."""

import json

import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from pipelines.cli import app
from tests.conftest import land_samples
from tests.pipelines.test_cli import typed


@pytest.fixture
def samples_home(settings, run_pipeline):
    land_samples(settings)
    assert run_pipeline().success
    return settings


def test_where_do_i_live_now_gives_lisbon_first_dated_with_its_sources(samples_home):
    block = Memory(settings=samples_home).context("where do I live now?", "demo")
    lines = [row for row in block.provenance if row["section"] == "facts"]
    assert block.token_count <= 800 == block.budget
    first = lines[0]
    assert "Lisbon" in first["text"] and first["said_at"].startswith("2024-06")
    assert first["conversation_ids"] and first["message_ids"]
    assert '<m said="2024-06-10">The user moved to Lisbon' in block.text
    # the old city is history: not in a block about now
    assert not any("lives in Berlin" in row["text"] for row in lines)


def test_a_question_about_the_past_adds_the_old_city_after_the_current_one(samples_home):
    block = Memory(settings=samples_home).context("where did I live before?", "demo")
    texts = [row["text"] for row in block.provenance]
    berlin = next(at for at, text in enumerate(texts) if "lives in Berlin" in text)
    assert "Lisbon" in texts[0] and berlin == 1
    assert block.provenance[berlin]["until"].startswith("2024-06")


def test_an_override_is_in_every_block_first(samples_home):
    memory = Memory(settings=samples_home)
    memory.remember("demo", "I moved to Porto")
    for question in ("where do I live now?", "hello there", "what did we discussed about bikes?"):
        block = memory.context(question, "demo")
        assert block.sections[0].name == "overrides"
        assert "Porto" in block.provenance[0]["text"], question


def test_memlake_context_prints_the_block_and_its_sources_as_json(samples_home):
    runner = CliRunner()
    shown = runner.invoke(app, ["context", "where do I live now?", "--agent", "demo", "--budget", "200"])
    assert shown.exit_code == 0, shown.output
    assert "Lisbon" in shown.stdout.split("</memory_context>")[0]
    as_json = runner.invoke(app, ["context", "where do I live now?", "--agent", "demo", "--json"])
    block = json.loads(as_json.stdout)
    assert block["token_count"] <= block["budget"] == 800
    facts = next(section for section in block["sections"] if section["name"] == "facts")
    assert "Lisbon" in facts["lines"][0]["text"] and facts["lines"][0]["message_ids"]


@pytest.mark.parametrize(("args", "message"), [
    (["--budget", "0"], "a context budget must be a whole number from 50 to 100,000, got 0"),
    (["--mode", "fuller"], "unknown context mode 'fuller'"),
    (["--gate", "oracle"], "unknown gate mode 'oracle'"),
])
def test_a_bad_context_request_is_one_clear_line(samples_home, monkeypatch, capsys, args, message):
    code, printed = typed(monkeypatch, capsys, "context", "where do I live now?", "--agent", "demo", *args)
    assert code == 2
    assert printed.startswith("error: ") and message in printed
    assert "Traceback" not in printed


def test_as_of_gives_the_block_as_it_was_then_with_no_later_knowledge(samples_home):
    block = Memory(settings=samples_home).context("where do I live now?", "demo", as_of="2024-03-01")
    assert block.text.startswith("Today is 2024-03-01")
    first = block.provenance[0]
    assert "lives in Berlin" in first["text"] and first["until"] is None  # current then: its end was not known
    assert all(row["said_at"] < "2024-03-02" for row in block.provenance)
    assert "Lisbon" not in block.text and "2024-06" not in block.text


def test_full_mode_gives_every_section_in_order_and_a_smaller_budget_cuts_the_last_first(samples_home):
    memory = Memory(settings=samples_home)
    full = memory.context("where do I live now?", "demo", mode="full")
    assert [s.name for s in full.sections] == ["overrides", "profile", "working memory", "summaries",
                                               "key relationships", "matched excerpts", "matched memories",
                                               "matched summaries"]
    assert full.token_count <= full.budget == 17300
    kept = [(row["kind"], row["ref"]) for row in full.provenance]
    assert len(kept) == len(set(kept))  # no memory twice
    texts = [row["text"] for row in full.provenance]
    lisbon = texts.index("The user moved to Lisbon around 2024-06-03.")
    assert full.provenance[lisbon]["section"] == "profile"  # where the user lives now, before any older city
    assert all(at > lisbon for at, text in enumerate(texts) if "Berlin" in text)
    small = memory.context("where do I live now?", "demo", mode="full", budget=500)
    lines = {s.name: len(s.lines) for s in small.sections}
    assert small.token_count <= 500 and lines["profile"] > 0 and lines["matched excerpts"] == 0


def test_an_exact_as_of_includes_what_was_said_at_that_instant(samples_home):
    memory = Memory(settings=samples_home)
    turns = memory.turns("demo")
    said = turns.filter(turns["content"].str.contains("Lisbon") & (turns["role"] == "user")).row(0, named=True)
    block = memory.context("What were my exact words about Lisbon?", "demo", as_of=said["created_at"])
    assert block.gate.section == "transcript"
    assert any(said["message_id"] in row["message_ids"] for row in block.provenance), block.text


def test_a_recall_question_no_fact_matches_gets_the_matched_excerpts(samples_home):
    block = Memory(settings=samples_home).context("Do you remember the KeyError on ORD-58213?", "demo")
    assert block.gate.section == "facts"  # the gate asked for facts; none holds those words
    assert [s.name for s in block.sections if s.lines] == ["excerpts"]
    assert "parse_ledger_v2 crashes with KeyError" in block.text
    assert all(row["kind"] == "turn" and row["message_ids"] for row in block.provenance)


def test_a_name_said_in_past_conversations_asks_for_excerpts_of_them(samples_home):
    block = Memory(settings=samples_home).context("What did Priya say about ORD-58213?", "demo")
    assert (block.gate.section, block.gate.fired) == ("excerpts", "Priya")
    assert "ord-58213" in block.provenance[0]["text"].lower()


def test_a_person_of_past_conversations_is_known_by_the_first_name_too(samples_home):
    block = Memory(settings=samples_home).context("What did Tomás say about the load test?", "demo")
    assert (block.gate.section, block.gate.fired) == ("excerpts", "Tomás")
    assert "Tomás wants the load test done" in block.text




def test_full_mode_gives_the_relations_of_the_people_the_question_names_with_their_sources(samples_home):
    memory = Memory(settings=samples_home)
    block = memory.context("Where does Leela live these days?", "demo", mode="full")
    rows = [row for row in block.provenance if row["section"] == "key relationships" and row["kind"] == "relation"]
    assert sorted(row["text"] for row in rows) == ["Leela lives in Manchester", "user sibling of Leela"]
    for row in rows:  # each cites messages of the conversations it names
        said = {m for c in row["conversation_ids"] for m in memory.turns("demo", c)["message_id"].to_list()}
        assert row["message_ids"] and set(row["message_ids"]) <= said
    assert "Leela lives in Manchester" in block.text


def test_a_facts_block_fills_what_its_budget_leaves_with_the_matched_excerpts(samples_home):
    """The gate's section first, then past turns that match the question in the rest of the budget."""
    block = Memory(settings=samples_home).context("where do I live now?", "demo")
    names = [section.name for section in block.sections if section.lines]
    assert names == ["facts", "excerpts"]
    assert "Lisbon" in block.provenance[0]["text"] and block.token_count <= block.budget
    excerpts = [row for row in block.provenance if row["section"] == "excerpts"]
    assert any("Lisbon" in row["text"] for row in excerpts) and all(row["message_ids"] for row in excerpts)


def test_small_talk_gets_no_excerpts_but_a_message_that_says_something_does(samples_home):
    """No cue fired for either: "thanks, sounds good" keeps the block empty; a message with things to match
    ("the ledger parser ...") gets the past turns that share its words."""
    from memlake.context.gate import decide

    memory = Memory(settings=samples_home)
    small_talk, substantive = "thanks, sounds good", "The ledger parser still crashes on rows from the old import"
    assert decide(small_talk).section == decide(substantive).section == "none"
    assert not [row for row in memory.context(small_talk, "demo").provenance if row["section"] == "excerpts"]
    excerpts = [row for row in memory.context(substantive, "demo").provenance if row["section"] == "excerpts"]
    assert excerpts and "notes-n01" in excerpts[0]["conversation_ids"]

def test_a_name_said_in_a_conversation_a_run_added_is_known_to_the_same_reader(samples_home, run_pipeline):
    """The names said by now are kept by a reader between blocks: a run that adds a speaker ends them."""
    memory = Memory(settings=samples_home)
    question = "What did Zoltan say about the roof?"
    assert memory.context(question, "demo").gate.fired != "Zoltan"
    said = {"conversation_id": "roof", "message_id": "roof-m0", "role": "user", "speaker": "Zoltan",
            "content": "The roof repair starts on Monday.", "created_at": "2024-05-04T08:00:00Z"}
    (samples_home.landing_dir / "demo" / "roof.jsonl").write_text(json.dumps(said) + "\n")
    assert run_pipeline().success
    assert memory.context(question, "demo").gate.fired == "Zoltan"
