"""From chat to facts: the user's own slots as a stranger's trial export told them (issue 23): an ending said as an
idiom, a move told by its day ahead, the earlier home."""

from __future__ import annotations

import polars as pl

from memlake.facts.fold import fold
from memlake.facts.reads import fact_history, select_facts
from tests.facts.said_offline import at, said_offline


def current(result, day: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    now = select_facts(result.facts, as_of=at(day), edges=result.edges)
    return {row["slot"]: row["value"] for row in now.iter_rows(named=True) if row["slot"] and row["subject"] == "user"}


def current_contents(result, day: str) -> list[str]:  # type: ignore[no-untyped-def]
    return select_facts(result.facts, as_of=at(day), edges=result.edges)["content"].to_list()


def test_an_employer_said_to_be_behind_the_user_is_no_longer_current() -> None:
    result = fold([*said_offline("I'm a data analyst at Kestrel Insurance.", "2026-03-10"),
                   *said_offline("Kestrel is behind me now, I'm taking the summer off.", "2026-07-20")])
    assert "employer" not in current(result, "2026-07-21")
    assert current(result, "2026-05-01")["employer"] == "Kestrel Insurance"
    assert not any("behind" in c for c in current_contents(result, "2026-07-21"))


def test_the_trials_job_change_ends_with_the_new_employer_and_no_literal_idiom() -> None:
    result = fold([
        *said_offline("Hi! Quick intro since I'll be using you a lot: I'm Rowan, I'm a data analyst at Kestrel "
                      "Insurance in Bristol.", "2026-03-10"),
        *said_offline("Big news: I accepted Halvard's offer! I started there last Monday as a senior analyst, so "
                      "Kestrel is behind me.", "2026-07-20")])
    now = current(result, "2026-07-21")
    assert (now["employer"], now["job_title"], now["name"]) == ("Halvard", "senior analyst", "Rowan")
    assert not any("behind the user" in c for c in result.facts["content"].to_list())


def test_a_state_the_user_is_done_with_is_no_longer_current() -> None:
    result = fold([*said_offline("I play five-a-side football every Tuesday.", "2026-03-10"),
                   *said_offline("I've moved on from five-a-side football, my knee can't take it.", "2026-06-01")])
    assert not any("every Tuesday" in c for c in current_contents(result, "2026-06-02"))
    assert any("every Tuesday" in c for c in current_contents(result, "2026-05-01"))
    assert result.facts.filter(pl.col("content").str.contains("every Tuesday"))["valid_until"].to_list() == [
        at("2026-06-01")]


def test_a_move_planned_for_a_day_is_carried_out_that_day() -> None:
    """The trial: Bristol the city of work (a guess), then a flat in Bath with its move day, then "living in Bath"
    months later: Bath is home from the move day (as known since the plan), with Bristol before it in history."""
    result = fold([
        *said_offline("Hi! Quick intro since I'll be using you a lot: I'm Rowan, I'm a data analyst at Kestrel "
                      "Insurance in Bristol.", "2026-03-10"),
        *said_offline("And we've signed for a flat in Bath, the move is on 1 August.", "2026-07-20"),
        *said_offline("We've been living in Bath for two months now and I love the walk along the canal.",
                      "2026-10-05")])
    assert current(result, "2026-07-31")["home_city"] == "Bristol"
    assert current(result, "2026-09-01")["home_city"] == "Bath"
    assert current(result, "2026-10-06")["home_city"] == "Bath"
    assert any("plans to move to Bath" in c for c in current_contents(result, "2026-07-21"))
    assert not any("plans to move to Bath" in c for c in current_contents(result, "2026-08-02"))
    bath = result.facts.filter(pl.col("value") == "Bath").row(0, named=True)
    history = fact_history(result.facts, result.edges, bath["fact_id"])
    assert history.filter(pl.col("slot") == "home_city")["value"].to_list() == ["Bristol", "Bath"]
