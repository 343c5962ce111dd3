"""Graph-assisted retrieval: the sessions a search's first hits share entities with move up; nothing else moves."""

import polars as pl
import pytest

from memlake.graph.hop import hop_scores, lift_by_hop, seed_sessions


def _entities(*named_in: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"name": [f"e{i}" for i in range(len(named_in))], "source_conversation_ids": list(named_in)},
                        schema={"name": pl.String, "source_conversation_ids": pl.List(pl.String)})


def test_a_session_sharing_a_rare_entity_with_the_seeds_scores_and_one_everywhere_links_nothing() -> None:
    graph = _entities(["s1", "s4"], ["s1", "s2", "s3", "s4", "s5", "s6"], ["s2", "s5", "s6"])
    assert hop_scores(graph, ["s1"]) == {"s4": 1.0}  # the speakers' entity in every session says nothing
    scores = hop_scores(graph, ["s1", "s2"])
    assert scores["s4"] == 1.0 and 0 < scores["s5"] == scores["s6"] < 1.0  # the rarer shared entity counts more
    assert hop_scores(graph, []) == {}


def test_the_lift_moves_a_sharing_session_up_and_keeps_every_row() -> None:
    found = pl.DataFrame({"rank": [1, 2, 3, 4], "conversation_id": ["s1", "s2", "s3", "s4"], "text": list("abcd")})
    lifted = lift_by_hop(found, {"s4": 1.0}, weight=0.02)  # rank score 1/64 x 1.02: past 1/63, short of 1/62
    assert lifted["conversation_id"].to_list() == ["s1", "s2", "s4", "s3"]
    assert lifted["rank"].to_list() == [1, 2, 3, 4] and lifted["graph_hop"].to_list() == [0.0, 0.0, 1.0, 0.0]
    assert lift_by_hop(found, {"s4": 1.0}, weight=1.0)["conversation_id"].to_list()[0] == "s4"
    assert lift_by_hop(found, {"s4": 1.0}, weight=0.0)["conversation_id"].to_list() == ["s1", "s2", "s3", "s4"]


def test_the_seeds_are_the_first_distinct_sessions() -> None:
    assert seed_sessions(["s2", "s2", None, "s1", "s3"], 2) == ["s2", "s1"]


@pytest.mark.parametrize(("weight", "seeds", "message"), [
    (-1, None, "graph_hop_weight"), ("x", None, "graph_hop_weight"), (None, 0, "graph_hop_seeds"),
])
def test_a_bad_graph_hop_setting_is_a_clear_error(tmp_path, weight, seeds, message) -> None:  # type: ignore[no-untyped-def]
    from memlake.api import Memory
    from memlake.settings import load_settings

    memory = Memory(settings=load_settings(tmp_path))
    with pytest.raises(ValueError, match=message):
        memory.search("anything", "a1", graph_hop_weight=weight, graph_hop_seeds=seeds)
