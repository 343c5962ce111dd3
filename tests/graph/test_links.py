"""Retrieval that uses the graph: the turns naming a question's entities, its first hits' entities and (depth 2)
their neighbours by a stated relation are pulled in as one more candidate list. Chats written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
import polars as pl
import pytest

from memlake.graph.links import GraphLinks
from memlake.lake import Lake, conform
from memlake.schemas import ENTITIES, MENTIONS, RELATIONS, TURNS


def _frame(table, rows):  # type: ignore[no-untyped-def]
    frame = pl.from_arrow(conform(table, rows))
    assert isinstance(frame, pl.DataFrame)
    return frame


AT = datetime(2024, 5, 1, tzinfo=UTC)
# (entity id, name, conversation, turn index) of each mention; six sessions, the speaker named in all of them
SAID = [("e_mia", "Mia", f"s{i}", 0) for i in range(1, 7)] + [
    ("e_shelly", "Shelly", "s1", 1), ("e_shelly", "Shelly", "s4", 0),
    ("e_anna", "Anna", "s2", 1), ("e_google", "Google", "s5", 1),
]


def _links(relations: list[tuple[str, str]] = ()) -> GraphLinks:  # type: ignore[assignment]
    mentions = _frame(MENTIONS, [{"agent_id": "a1", "entity_id": e, "name": n, "type": "person",
                                  "conversation_id": c, "message_id": f"{c}-m{i}", "said_at": AT}
                                 for e, n, c, i in SAID])
    turns = _frame(TURNS, [{"agent_id": "a1", "conversation_id": c, "message_id": f"{c}-m{i}", "turn_index": i,
                            "role": "user", "speaker": "Mia", "content": "", "created_at": AT}
                           for c in [f"s{n}" for n in range(1, 7)] for i in range(3)])
    entities = _frame(ENTITIES, [{"entity_id": e, "agent_id": "a1", "name": n, "type": "person", "aliases": []}
                                 for e, n in {(e, n) for e, n, _, _ in SAID}])
    rel = _frame(RELATIONS, [{"relation_id": f"r{i}", "version": 1, "agent_id": "a1", "source_entity_id": s,
                              "relation": "works_at", "target_entity_id": t, "status": "active"}
                             for i, (s, t) in enumerate(relations)])
    return GraphLinks.build(mentions, turns, entities, rel)


def test_a_question_naming_an_entity_pulls_every_turn_that_names_it_and_the_speakers_pull_nothing() -> None:
    links = _links()
    assert [place for place, _ in links.pulled("what did Mia feed shelly?", [])] == [("s1", 1), ("s4", 0)]
    assert links.pulled("What did Mia do on Sunday?", []) == []  # Mia is named in every session: links all


def test_a_first_hits_entities_pull_at_a_share_and_depth_two_reaches_a_related_entity() -> None:
    links = _links([("e_anna", "e_google")])
    from_seed = dict(links.pulled("where does her sister work?", [("s2", 1)]))
    assert set(from_seed) == {("s2", 1)}  # only Anna's own turn at depth 1
    from_named = dict(links.pulled("Anna", []))
    assert 0 < from_seed[("s2", 1)] < from_named[("s2", 1)]  # a seed's entity pulls less than one asked about
    deeper = dict(links.pulled("where does her sister work?", [("s2", 1)], depth=2))
    assert set(deeper) == {("s2", 1), ("s5", 1)}  # Google, which a relation ties Anna to
    assert deeper[("s5", 1)] < deeper[("s2", 1)]


def test_a_bad_graph_setting_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from memlake.search.params import SearchParams
    from memlake.settings import load_settings

    settings = load_settings(tmp_path)
    for bad, message in (({"graph_weight": -1}, "graph_weight"), ({"graph_depth": 3}, "graph_depth"),
                         ({"graph_seeds": -1}, "graph_seeds"), ({"graph_seeds": 1.5}, "graph_seeds")):
        with pytest.raises(ValueError, match=message):
            SearchParams.from_settings(settings, **bad)


# -- end to end: a home built by the pipeline, searched through Memory ------------------------------------------

FILLER = ["We went hiking near the lake on Saturday.", "I baked sourdough bread again.",
          "Work was busy, lots of meetings.", "Watched the rain all afternoon.", "My back hurts from gardening."]


def _graph_home(tmp_path):  # type: ignore[no-untyped-def]
    from assets import graph as graph_assets
    from memlake.settings import load_settings
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, LakeResource, build_resources
    from tests.conftest import land
    from tests.transcripts.helpers import jsonl, msg

    said = [("s1", "My tortoise Shelly hid under the porch all morning."),
            ("s2", "Today Shelly finally ate dandelion leaves and strawberries."),
            *((f"s{3 + i}", text) for i, text in enumerate(FILLER))]
    settings = load_settings(tmp_path / "home")
    settings.ensure_dirs()
    land(settings, "mia", "chat.jsonl", jsonl(*(msg(c, 0, "user", text, f"2024-05-0{n + 1}")
                                                for n, (c, text) in enumerate(said))))
    resources = {**build_resources(settings), "embedder": HashEmbedderResource()}
    assert run_landing(settings, resources=resources, instance=dg.DagsterInstance.ephemeral()).success
    if not Lake(settings.lake_dir).files(MENTIONS):  # the run plan may leave the graph to a later run
        assert dg.materialize([graph_assets.graph], resources={
            "lake": LakeResource(home=str(settings.home)), "embedder": HashEmbedderResource()}).success
    return settings


def test_a_search_finds_the_turn_naming_its_first_hits_pet_though_it_shares_no_word_with_the_question(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.search.helpers import hash_memory

    memory = hash_memory(_graph_home(tmp_path))
    question = "What does Mia feed her tortoise?"
    plain = memory.search(question, "mia", k=2, graph_weight=0.0)
    pulled = memory.search(question, "mia", k=2, graph_weight=1.0)
    assert "My tortoise Shelly" in plain["text"][0]
    assert not any("dandelion" in t for t in plain["text"].to_list())
    assert "My tortoise Shelly" in pulled["text"][0]
    assert any("dandelion" in t for t in pulled["text"].to_list())
