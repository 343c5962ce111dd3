"""The pure parts of `memlake.agent_export`: which turns an export leaves behind as forgotten, and how the
inputs logs' fact ids and entry ids are re-keyed to the new agent."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from memlake.agent_export import FactIdMap, _new_id, remembered_turns
from memlake.facts.fold import chain_id, slot_of


def day(n: int) -> datetime:
    return datetime(2024, 1, n, tzinfo=UTC)


TURNS = pl.DataFrame({
    "conversation_id": ["c1", "c1", "c2", "c2", "c3"],
    "message_id": ["m1", "m2", "m3", "m4", "m5"],
    "ingested_at": [day(1), day(1), day(1), day(20), day(25)],  # m4: c2 sent again after the forgets
})


def forgets(*entries: tuple[str, str | None, datetime]) -> pl.DataFrame:
    return pl.DataFrame([{"scope": s, "target": t, "written_at": w} for s, t, w in entries],
                        schema={"scope": pl.String, "target": pl.String, "written_at": pl.Datetime("us", "UTC")})


@pytest.mark.parametrize(("entries", "kept"), [
    ((), ["m1", "m2", "m3", "m4", "m5"]),
    ((("conversation", "c1", day(10)),), ["m3", "m4", "m5"]),
    ((("conversation", "c2", day(10)),), ["m1", "m2", "m4", "m5"]),  # what came after the forget stays
    ((("agent", None, day(10)),), ["m4", "m5"]),
    ((("agent", None, day(10)), ("conversation", "c2", day(22))), ["m5"]),
    ((("fact", "f_0123456789abcdef", day(10)),), ["m1", "m2", "m3", "m4", "m5"]),  # a fact keeps its turns
])
def test_an_export_leaves_behind_the_turns_forgotten_after_they_came(
        entries: tuple[tuple[str, str | None, datetime], ...], kept: list[str]) -> None:
    assert remembered_turns(TURNS, forgets(*entries))["message_id"].to_list() == kept


STATEMENTS = [
    ("user", "home_city", "Lisbon", "fact", "The user lives in Lisbon."),
    ("Leela", None, None, "preference", "Leela doesn't like mushrooms."),
    ("user", "pet", "Miso", "fact", "The user has a cat called Miso."),
]


@pytest.mark.parametrize(("subject", "slot", "value", "fact_type", "content"), STATEMENTS)
def test_a_fact_id_is_re_keyed_to_the_same_chain_of_the_new_agent(
        subject: str, slot: str | None, value: str | None, fact_type: str, content: str) -> None:
    ids = FactIdMap("ann", "bo", STATEMENTS)
    key = slot_of(slot, value) if slot else None
    old, new = chain_id("ann", subject, key, fact_type, content), chain_id("bo", subject, key, fact_type, content)
    assert old != new
    assert ids.get(old) == new
    assert ids.get(f"{old}-2") == f"{new}-2"  # a second chain of one key
    assert ids.get(f"{old}@3") == f"{new}@3"  # a version's key, as the access log names it
    assert ids.get(chain_id("ann", subject, None, fact_type, content)) == chain_id("bo", subject, None, fact_type,
                                                                                   content)


def test_a_fact_id_the_export_does_not_describe_is_not_re_keyed() -> None:
    ids = FactIdMap("ann", "bo", STATEMENTS)
    assert ids.get(chain_id("ann", "user", "employer", "fact", "")) is None
    assert ids.get(chain_id("cy", "user", "home_city", "fact", "")) is None  # another agent's id
    assert ids.get(None) is None and ids.get("") is None


def test_entry_ids_are_new_per_agent_and_keep_their_prefix() -> None:
    assert _new_id("o_0123456789abcdef", "bo").startswith("o_")
    assert _new_id("o_0123456789abcdef", "bo") != _new_id("o_0123456789abcdef", "cy")
    assert _new_id("o_0123456789abcdef", "bo") == _new_id("o_0123456789abcdef", "bo")  # the same import, the same
    assert len(_new_id("4f1c2d", "bo")) == 16
