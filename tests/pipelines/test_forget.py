"""`memlake forget` proven by a scanner of every file under the home: a canary said in a conversation is found
before the forget, and nowhere after it, after the next run, and after a rebuild from landing."""

from tests import forget_canary
from tests.conftest import land
from tests.forget_canary import CANARY, cli, conversations_jsonl, gone_everywhere
from tests.forget_scan import files_of, occurrences

home = forget_canary.home  # the fixture: the same canary home as the HTTP tests


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

    gone_everywhere(home, (CANARY, "Sintra", "Initech"), other)
    assert not (home / "landing" / "A").exists()
    assert "Umbrella" in cli("search", "Umbrella", "--agent", "B", home=home)


def test_forget_a_fact_takes_the_message_it_was_read_from_and_the_conversation_is_built_again_without_it(home):
    other = files_of(home, "B")
    employer = [line.split()[0] for line in cli("facts", "--agent", "A", home=home).splitlines() if "Initech" in line]
    assert len(employer) == 1

    said = cli("forget", "--agent", "A", "--fact", employer[0], home=home)

    assert "receipt " in said and "transcripts/turns 1" in said, said  # what each store lost
    gone_everywhere(home, "Initech", other)
    assert occurrences(home, CANARY) == {}  # said in the same message: the message went whole
    assert "Got it." in (home / "landing" / "A" / "export.jsonl").read_text()  # the rest of it is kept
    assert "Got it" in cli("search", "Got it", "--agent", "A", home=home)  # and built again by the run


def test_the_run_after_forgetting_a_fact_builds_its_conversation_again_episode_and_all(home):
    from memlake.api import Memory

    [employer] = [line.split()[0] for line in cli("facts", "--agent", "A", home=home).splitlines() if "Initech" in line]
    cli("forget", "--agent", "A", "--fact", employer, home=home)
    cli("run", home=home)

    memory = Memory(home)
    with_turns = set(memory.sql("SELECT DISTINCT conversation_id FROM transcripts.turns", agent_id="A")
                     ["conversation_id"].to_list())
    assert with_turns and with_turns == set(memory.episodes("A")["conversation_id"].to_list())


def test_forget_by_query_previews_exactly_what_would_go_then_forgets_exactly_those_ids(home):
    other = files_of(home, "B")
    before = occurrences(home, "Initech")

    preview = cli("forget", "--agent", "A", "--query", "Initech", home=home)

    assert "would forget" in preview and "Initech" in preview, preview
    assert occurrences(home, "Initech") == before  # a preview forgets nothing
    command = preview.strip().splitlines()[-1].removeprefix("to forget exactly these: memlake ").split()
    cli(*command, home=home)
    gone_everywhere(home, "Initech", other)
    assert "nothing matches" in cli("forget", "--agent", "A", "--query", "Initech", home=home)


def test_a_fact_said_in_two_conversations_keeps_the_other_and_what_only_the_forgotten_one_gave_goes(settings,
                                                                                                     monkeypatch):
    from memlake.api import Memory
    from memlake.lake import Lake
    from memlake.schemas import PROFILES, RELATIONS

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "A", "chat.jsonl", conversations_jsonl({
        "first": [("user", "I work at Initech. My sister Marta lives in Porto.")],
        "again": [("user", "I work at Initech.")]}, day=1))
    cli("run", home=settings.home)
    memory = Memory(settings.home)

    cli("forget", "--agent", "A", "--conversation", "first", "--yes", home=settings.home)

    def only_the_other_source_is_left(when):
        facts = memory.facts("A", include_history=True)
        assert facts["content"].to_list() == ["The user works at Initech."], when
        assert facts["source_conversation_ids"].to_list() == [["again"]], when  # one source less
        lake = Lake(settings.lake_dir)
        relations = lake.read(RELATIONS)
        assert relations["relation"].to_list() == ["works_at"], when  # sister and home city went
        assert relations["source_conversation_ids"].to_list() == [["again"]], when
        profiles = lake.read(PROFILES)  # every version without the lines built on the forgotten facts
        assert profiles.height and not any("Marta" in text for text in profiles["text"].to_list()), when

    only_the_other_source_is_left("after the forget")
    cli("run", home=settings.home)
    only_the_other_source_is_left("after the next run")
    found = memory.search("Initech", "A", scope="facts")  # its index row, which named the forgotten message, is back
    assert found["text"].str.contains("Initech").any() and found["conversation_id"].to_list() == ["again"]


def test_a_receipt_says_what_each_store_lost_and_the_check_names_a_store_that_still_holds_forgotten_text(home):
    from assets.facts import forgotten_content_absent
    from memlake.api import Memory
    from memlake.erase import forgotten_content_left
    from memlake.settings import load_settings
    from resources.lake import LakeResource

    settings = load_settings(home)
    turns = home / "lake" / "transcripts" / "turns" / "day=2026-03-01" / "data.parquet"
    kept = turns.read_bytes()

    cli("forget", "--agent", "A", "--conversation", "bank", "--yes", home=home)

    receipt = Memory(home).forget_receipts("A").row(0, named=True)
    assert (receipt["scope"], receipt["target"]) == ("conversation", "bank")
    assert receipt["removed"]["transcripts/turns"] == 2 and receipt["removed"]["landing"] == 1
    assert len(receipt["message_ids"]) == 2 and receipt["content_sha256"]
    assert CANARY not in str(receipt)  # ids and hashes, never text
    assert forgotten_content_left(settings) == {}
    assert forgotten_content_absent(lake=LakeResource(home=str(home))).passed

    turns.write_bytes(kept)  # a store that kept the text (a restored backup, a missed table)
    assert forgotten_content_left(settings) == {"transcripts/turns": 2}
    failed = forgotten_content_absent(lake=LakeResource(home=str(home)))
    assert not failed.passed and "transcripts/turns (2)" in failed.description
