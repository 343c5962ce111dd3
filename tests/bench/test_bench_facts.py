"""`memlake bench facts`: which LoCoMo observations count, how a fact matches one, the blind set's halves."""


from memlake.distill.models import FactCandidate
from memlake.embedding import HashEmbedder
from memlake_bench.facts import (
    MATCH_THRESHOLD,
    Extracted,
    Observation,
    blind_half,
    blind_rows,
    blind_scores,
    expected_matches,
    match_observations,
    user_observations,
)

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                      {"speaker": "Melanie", "dia_id": "D1:2", "text": "I painted a lake sunrise."}],
    },
    "observation": {"session_1_observation": {
        "Caroline": [["Caroline attended a support group.", "D1:1"], ["Caroline likes tea.", "D9:9"]],
        "Melanie": [["Melanie painted a lake sunrise.", "D1:2"]],
    }},
}


def fact(content: str, message_id: str, subject: str = "user") -> FactCandidate:
    return FactCandidate(type="event", subject=subject, value=content, content=content, message_ids=[message_id])


def test_only_observations_about_the_user_with_a_known_turn_count_and_the_name_reads_the_user():
    assert user_observations([SAMPLE]) == [Observation(0, "session_1", "the user attended a support group.",
                                                       ("D1:1",))]


def test_a_fact_matches_an_observation_only_from_the_same_turn_and_with_similar_text():
    embedder = HashEmbedder()
    observation = Observation(0, "session_1", "the user attended a support group.", ("D1:1",))
    same = Extracted(0, "session_1", fact("the user attended a support group.", "D1:1"))
    other_turn = Extracted(0, "session_1", fact("the user attended a support group.", "D1:3"))
    other_text = Extracted(0, "session_1", fact("Quarterly revenue forecasts were revised upward.", "D1:1"))
    assert match_observations([observation], [other_turn, other_text], embedder) == (set(), set())
    assert match_observations([observation], [other_turn, same], embedder) == ({0}, {1})
    assert 0 < MATCH_THRESHOLD < 1


def test_the_blind_set_has_over_100_statements_split_by_id_into_two_halves_with_assistant_turns():
    rows = blind_rows()
    assert len([r for r in rows if r["role"] == "user"]) >= 100
    assert {r["half"] for r in rows} == {"dev", "sealed"}
    assert all(r["half"] == blind_half(r["id"]) for r in rows)
    assert {blind_half(r["id"]) for r in rows if r["role"] == "assistant"} == {"dev", "sealed"}


def test_an_expected_fact_needs_its_subject_slot_and_every_value_word():
    expected = {"type": "fact", "subject": "Leo", "slot": "home_city", "value": "singapore"}
    leo = FactCandidate(type="fact", subject="Leo", slot="home_city", value="Singapore",
                        content="Leo lives in Singapore.", message_ids=["m1"])
    assert expected_matches(leo, expected)
    assert not expected_matches(leo.model_copy(update={"subject": "user"}), expected)
    assert not expected_matches(leo.model_copy(update={"slot": None}), expected)


def test_blind_scores_count_precision_and_recall_over_one_half():
    scores = blind_scores(blind_rows(), "dev", distill=lambda conversation: _no_facts())
    assert scores["extracted_facts"] == 0 and scores["recall"] == 0.0 and scores["precision"] is None
    assert scores["statements"] == len([r for r in blind_rows() if r["half"] == "dev"])


def _no_facts():
    from memlake.distill.models import DistilledSession

    return DistilledSession(summary="-", fact_candidates=[], salience=0.0)




def test_the_judged_sample_says_how_many_of_its_facts_the_distiller_no_longer_makes(tmp_path):
    import json

    from memlake_bench.facts import render_facts_markdown, sample_precision

    path = tmp_path / "facts_sample.jsonl"
    rows = [{"sample": "conv-x", "message_ids": ["D1:1"], "content": "The user went to a support group.",
             "correct": True},
            {"sample": "conv-x", "message_ids": ["D1:3"], "content": "The user is something cool happened.",
             "correct": False}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sample = sample_precision(path, current={("conv-x", "D1:1", "The user went to a support group.")})
    scores = {"observation_recall": 0.5, "observations_matched": 1, "observations_about_user": 2,
              "facts_matched_share": 1.0, "facts": 1}
    report = {"distiller": "d", "match_threshold": MATCH_THRESHOLD, "embedding_model": "m",
              "locomo": {"development": scores, "held_out": scores}, "blind": {}, "held_out_sample": sample}
    markdown = render_facts_markdown(report)
    assert "**1 of 1 correct (1.0)**; 1 sampled facts the distiller no longer makes are left out (stale)." in markdown


def _realmem_folder(tmp_path):
    """Ten persona files in file-name order, each one chat where the user says one thing about themselves."""
    import json

    folder = tmp_path / "realmem"
    folder.mkdir()
    for i in range(10):
        said = f"I run a bakery in town number {i}. " + "The weather was mild and the streets were quiet. " * 12
        session = {"session_uuid": f"s{i}", "current_time": "2025-12-01 (Monday)", "dialogue_turns": [
            {"speaker": "User", "content": said}, {"speaker": "Assistant", "content": "Noted."}]}
        (folder / f"P{i}_dialogues_256k.json").write_text(json.dumps({"dialogues": [session]}))
    return folder


def test_the_realmem_sample_draws_from_held_back_personas_and_keeps_its_judgements(tmp_path):
    import json

    from memlake_bench.facts import realmem_sample_report

    folder = _realmem_folder(tmp_path)
    path = tmp_path / "facts_realmem_sample.jsonl"
    first = realmem_sample_report(path, folder, 3)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 3 and first["judged"] == 0
    assert {r["sample"] for r in rows} <= {f"P{i}_dialogues_256k" for i in range(5, 10)}
    assert all("bakery" in r["source"][0] and len(r["source"][0]) <= 402 and r["correct"] is None for r in rows)
    rows[0]["correct"], rows[0]["note"] = False, "wrong for this test"
    rows[1]["correct"] = True
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    again = realmem_sample_report(path, folder, 3)
    kept = [json.loads(line) for line in path.read_text().splitlines()]
    assert kept[0]["note"] == "wrong for this test" and (again["correct"], again["judged"]) == (1, 2)


def test_a_bad_realmem_sample_option_is_a_one_line_error(tmp_path):
    from typer.testing import CliRunner

    from pipelines.cli import app

    locomo = tmp_path / "locomo10.json"
    locomo.write_text("[]")
    out = str(tmp_path / "facts.json")
    missing = CliRunner().invoke(app, ["bench", "facts", "--data", str(locomo), "--out", out, "--realmem-sample", "5",
                                       "--realmem-data", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no RealMem folder" in missing.output and "Traceback" not in missing.output
    negative = CliRunner().invoke(app, ["bench", "facts", "--data", str(locomo), "--out", out,
                                        "--realmem-sample", "-1"])
    assert negative.exit_code == 2 and "--realmem-sample takes a count" in negative.output


# -- blind set 4 (issue 37 part 5): written before issue 37's rules; its sealed half is scored once, at the end --


def _blind_4():
    from memlake_bench.facts import BLIND_SET_4

    return blind_rows(BLIND_SET_4)


def test_blind_set_4_has_150_statements_with_every_slot_and_type_in_both_halves():
    from memlake.distill.models import SLOTS
    from memlake.schemas import FACT_TYPES

    rows = _blind_4()
    assert len(rows) >= 150 and len({r["id"] for r in rows}) == len(rows)
    for half in ("dev", "sealed"):
        expected = [e for r in rows if r["half"] == half for e in r["expected"]]
        assert {e["slot"] for e in expected} - {None} == set(SLOTS), half
        assert {e["type"] for e in expected} == set(FACT_TYPES), half
        in_half = [r for r in rows if r["half"] == half]
        assert any(not r["expected"] for r in in_half), f"{half}: statements that must give no fact"
        assert any("turns" in r for r in in_half), f"{half}: changes told in steps"
        assert any(len(r.get("text", "")) > 150 and r["expected"] for r in in_half), f"{half}: assistant-chat style"
        assert any(e["subject"] != "user" for e in expected), f"{half}: facts about other people"


def test_blind_set_4_halves_are_its_seeded_random_split_and_every_expected_fact_is_valid():
    from memlake.distill.models import SLOTS
    from memlake.schemas import FACT_TYPES
    from memlake_bench.facts import BLIND_4_SEED, stratified_halves

    rows = _blind_4()
    assert {r["id"]: r["half"] for r in rows} == stratified_halves(rows, BLIND_4_SEED)
    for row in rows:
        turns = row.get("turns") or [{"role": row["role"], "text": row["text"]}]
        assert all(t["role"] in ("user", "assistant") and t["text"].strip() for t in turns), row["id"]
        for e in row["expected"]:
            assert set(e) <= {"type", "subject", "slot", "value", "turn"}, row["id"]
            assert e["type"] in FACT_TYPES and (e["slot"] is None or e["slot"] in SLOTS), row["id"]
            assert e["subject"].strip() and e["value"].strip() and e["value"] == e["value"].lower(), row["id"]
            turn = e.get("turn")
            assert turn is None or ("turns" in row and turns[turn]["role"] == "user"), row["id"]


def test_a_change_told_in_steps_is_scored_from_the_turn_that_tells_it():
    from memlake.distill.models import DistilledSession
    from memlake_bench.facts import blind_scores

    row = {"id": "s1", "half": "dev", "turns": [{"role": "user", "text": "I live in Leeds."},
                                                 {"role": "user", "text": "Got the keys to our flat in York today."}],
           "expected": [{"type": "fact", "subject": "user", "slot": "home_city", "value": "leeds", "turn": 0},
                        {"type": "fact", "subject": "user", "slot": "home_city", "value": "york", "turn": 1}]}

    def read_each_turn(conversation):
        assert [m.message_id for m in conversation.messages] == ["s1-0", "s1-1"]
        assert conversation.messages[0].created_at < conversation.messages[1].created_at
        facts = [FactCandidate(type="fact", subject="user", slot="home_city", value=city,
                               content=f"The user lives in {city}.", message_ids=[m.message_id])
                 for city, m in zip(("Leeds", "York"), conversation.messages, strict=True)]
        return DistilledSession(summary="-", fact_candidates=facts, salience=0.0)

    def all_from_the_first_turn(conversation):
        session = read_each_turn(conversation)
        for f in session.fact_candidates:
            f.message_ids = ["s1-0"]
        return session

    right = blind_scores([row], "dev", distill=read_each_turn)
    assert (right["precision"], right["recall"]) == (1.0, 1.0)
    wrong_turn = blind_scores([row], "dev", distill=all_from_the_first_turn)
    assert (wrong_turn["precision"], wrong_turn["recall"]) == (0.5, 0.5)


def test_the_bench_scores_blind_set_4s_dev_half_and_its_sealed_half_only_when_asked():
    from memlake_bench.facts import blind_report

    report = blind_report(distill=lambda conversation: _no_facts())
    assert set(report["blind_4"]) == {"dev"} and set(report["blind"]) == {"dev"}
    dev = report["blind_4"]["dev"]
    assert dev["statements"] == len([r for r in _blind_4() if r["half"] == "dev"]) and dev["recall"] == 0.0
    asked = blind_report(sealed_4=True, distill=lambda conversation: _no_facts())
    assert set(asked["blind_4"]) == {"dev", "sealed"} and set(asked["blind"]) == {"dev"}
    assert "misses" not in asked["blind_4"]["sealed"]


def test_the_bench_facts_help_says_the_sealed_half_of_blind_set_4_is_scored_only_when_asked():
    from typer.testing import CliRunner

    from pipelines.cli import app

    result = CliRunner().invoke(app, ["bench", "facts", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0 and "--blind-4-sealed" in result.output
