"""`memlake bench realmem` and `memlake bench ingest`: how RealMem sessions become conversations, which queries
are asked as of when, what the word budget counts; the commands' errors on bad options.

Pure functions on small made-up sessions shaped like RealMem's (the real files are large: the figures come from
runs of the commands themselves).
"""

from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from memlake_bench import ingest, realmem
from memlake_bench.ingest import ratios
from memlake_bench.realmem import held_comparison, landing_rows, queries, session_starts, words_budget_sessions
from pipelines.cli import app


def session(uuid: str, day: str, turns: list[dict]) -> dict:
    return {"session_uuid": uuid, "current_time": f"{day} (Monday)", "dialogue_turns": turns}


def said(speaker: str, content: str, **extra) -> dict:
    return {"speaker": speaker, "content": content, "is_query": False, **extra}


DIALOGUES = [
    session("s1", "2025-12-01", [said("User", "My budget is 20 dollars."), said("Assistant", "Noted.")]),
    session("s2", "2025-12-01", [said("User", "I use WhatsApp for work."), said("Assistant", "Good to know.")]),
    session("s3", "2025-12-03", [
        said("User", "Which tool fits what I told you?", is_query=True),
        said("Assistant", "One under 20 dollars inside WhatsApp.", memory_session_uuids=["s1", "s2", "s3", "s4"]),
    ]),
    session("s4", "2025-12-04", [said("User", "Thanks."), said("Assistant", "Any time.")]),
]


def test_sessions_of_one_day_get_increasing_times_in_file_order():
    assert session_starts(DIALOGUES) == [datetime(2025, 12, 1, 8, 0, tzinfo=UTC),
                                         datetime(2025, 12, 1, 8, 10, tzinfo=UTC),
                                         datetime(2025, 12, 3, 8, 0, tzinfo=UTC),
                                         datetime(2025, 12, 4, 8, 0, tzinfo=UTC)]
    rows = landing_rows(DIALOGUES)
    assert [r["conversation_id"] for r in rows[:3]] == ["s1", "s1", "s2"]
    assert rows[1] == {"conversation_id": "s1", "message_id": "s1:1", "role": "assistant", "content": "Noted.",
                       "created_at": "2025-12-01T08:00:00+00:00"}
    assert "memory_session_uuids" not in str(rows)  # the gold never reaches the pipeline


def test_a_query_is_asked_before_its_own_session_and_scored_on_the_sessions_said_before_it():
    (q,) = queries(3, "ada", DIALOGUES)
    assert (q.persona, q.agent_id, q.question) == (3, "ada", "Which tool fits what I told you?")
    assert q.gold == ("s1", "s2")  # its own session and later ones cannot be found, so they are no gold
    assert q.as_of == datetime(2025, 12, 3, 7, 59, 59, tzinfo=UTC)


def test_the_word_budget_counts_the_returned_text_so_a_short_excerpt_leaves_room_for_more_sessions():
    whole_answer = " ".join(["word"] * 745)
    excerpt = " ".join(["word"] * 90)
    later = "the budget is 20 dollars"
    assert words_budget_sessions([whole_answer, later, later], ["a", "b", "c"], budget=750) == {"a", "b"}
    assert words_budget_sessions([whole_answer, excerpt], ["a", "b"], budget=750) == {"a"}  # b: past 750
    assert words_budget_sessions([excerpt, excerpt, later], ["a", "b", "c"], budget=750) == {"a", "b", "c"}


def test_realmem_personas_do_not_limit_the_locomo_builds_of_bench_ingest():
    assert ingest.selection_of("locomo", None, [5, 6]) == ()
    assert ingest.selection_of("locomo", 2, [5, 6]) == (2,)
    assert ingest.selection_of("realmem", 2, [5, 6]) == (5, 6)


def test_ingest_ratios_are_the_default_chunking_over_todays():
    today = {"turns_per_second_end_to_end": 20.0, "texts_embedded_per_turn": 12.0, "index_bytes": 1000,
             "turns_per_second_whole_run": 10.0, "peak_rss_mb": 500.0, "chunks": 100}
    budget = {**today, "turns_per_second_end_to_end": 50.0, "texts_embedded_per_turn": 4.0, "chunks": 40}
    assert ratios(today, budget)["turns_per_second_end_to_end"] == 2.5
    assert ratios(today, budget)["texts_embedded_per_turn"] == 0.333


def test_bench_ingest_gives_the_graph_build_time_per_1000_turns() -> None:
    assert ingest.graph_seconds_per_1000_turns({"graph": 13.0, "transcripts__turns": 4.0}, 5000) == 2.6
    assert ingest.graph_seconds_per_1000_turns({"graph": 1.0}, 0) is None
    with pytest.raises(RuntimeError, match="graph"):  # a renamed step would silently drop out of the figure
        ingest.graph_seconds_per_1000_turns({"transcripts__turns": 4.0}, 5000)


def test_the_markdown_sections_show_each_run_and_where_memlake_is_not_ahead_of_bm25():
    machine = {"cores": 2, "load_average_1m": 0.5}
    built = {"turns": 100, "turns_per_second_end_to_end": 80.0, "turns_per_second_whole_run": 60.0,
             "texts_embedded_per_turn": 3.1, "index_bytes": 2_500_000, "peak_rss_mb": 900.0,
             "graph_seconds_per_1000_turns": 2.6}
    report = {"date": "2026-11-25", "machine": machine, "load_average_1m_after": 0.7,
              "locomo": {"today": built, "budget": {**built, "turns_per_second_end_to_end": 95.5}}}
    markdown = ingest.render_markdown(report)
    assert "| locomo | budget | 100 | 95.5 | 60.0 | 3.1 | 2.5 | 900.0 | 2.6 |" in markdown
    assert "graph s per 1,000 turns" in markdown
    assert "realmem |" not in markdown  # a dataset not run has no row

    row = {"n": 10, "session_any@5": 0.9, "session_all@5": 0.8, "words750_share": 0.7, "words750_all": 0.6,
           "search800_share": 0.5, "search800_all": 0.4}
    systems = {"hybrid": {"tune_0_4": row, "held_5_9": {**row, "context800_share": 0.6, "context800_all": 0.5}},
               "bm25": {"tune_0_4": row, "held_5_9": {**row, "session_all@5": 0.7, "words750_share": 0.75}}}
    report = {"date": "2026-11-25", "machine": machine, "systems": systems,
              "data": {"queries": 20, "personas": ["a", "b"]}, "held_5_9_memlake_vs_bm25": held_comparison(systems)}
    markdown = realmem.render_markdown(report)
    assert "| hybrid | held_5_9 | 10 | 0.9 | 0.8 | 0.7 |" in markdown
    assert "not ahead on: " in markdown and "words750_share" in markdown.split("not ahead on: ")[1]
    assert "session_all@5" not in markdown.split("not ahead on: ")[1]


def test_bad_bench_options_are_one_line_errors_not_tracebacks(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(app, ["bench", "realmem", "--personas", "zero", "--data", str(tmp_path)])
    assert bad.exit_code == 2 and "--personas takes comma-separated numbers" in bad.output
    empty = runner.invoke(app, ["bench", "realmem", "--personas", "0", "--data", str(tmp_path)])
    assert empty.exit_code == 2 and "no RealMem persona files" in empty.output and "Traceback" not in empty.output
    unknown = runner.invoke(app, ["bench", "ingest", "--datasets", "mnist", "--out", str(tmp_path / "x.json")])
    assert unknown.exit_code == 2 and "unknown dataset mnist" in unknown.output
