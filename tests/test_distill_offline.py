"""The offline distiller: dates resolved against when they were said, precision of the rules, the sample data."""

import json
import re
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlake.distill.dates import find_dates
from memlake.distill.models import Conversation, DistilledSession, Message
from memlake.distill.offline import OfflineDistiller, distill_offline
from memlake.distill.run import conversations_from_turns
from memlake.lake import Lake, conform
from memlake.landing import manifest_frame, update_manifest
from memlake.schemas import LANDING_MANIFEST, TURNS
from memlake.settings import load_settings
from memlake.transcripts import build_turns
from tests.conftest import SAMPLES

EXPECTED = Path(__file__).parent / "expected" / "offline_candidates_samples.json"
COMPARED = ("conversation_id", "message_ids", "type", "subject", "slot", "value", "valid_from", "valid_until",
            "content")
SAID = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)  # a Monday


def one(text: str, role: str = "user", said: datetime = SAID) -> DistilledSession:
    return distill_offline(Conversation("a", "c", None, (Message("m1", role, text, said),)))


# --- dates ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I moved to Lisbon last week", "2023-05-01"),
        ("we met yesterday", "2023-05-07"),
        ("see you tomorrow", "2023-05-09"),
        ("it was two weeks ago", "2023-04-24"),
        ("in 3 days", "2023-05-11"),
        ("next month", "2023-06"),
        ("last month", "2023-04"),
        ("on Thursday I have an exam", "2023-05-11"),
        ("last Friday", "2023-05-05"),
        ("this weekend", "2023-05-13"),
        ("by the end of next week", "2023-05-19"),
        ("the launch is on March 14", "2023-03-14"),
        ("on 14 March 2021", "2021-03-14"),
        ("at the end of August", "2023-08-31"),
        ("I'm going to visit Japan in April", "2024-04"),
        ("I went to Japan in April", "2023-04"),
        ("on 2022-11-30", "2022-11-30"),
    ],
)
def test_dates_resolve_against_when_they_were_said(text, expected):
    assert [d.iso for d in find_dates(text, SAID)] == [expected]


def test_may_the_verb_is_no_date():
    assert find_dates("I may go, and you may too", SAID) == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.dates(min_value=date(2000, 1, 1), max_value=date(2090, 12, 31)))
def test_find_dates_never_raises_and_stays_near_the_day_said(text, said):
    for mention in find_dates(text, said):
        assert abs((mention.day - said).days) <= 2 * 366 or mention.text[:4].isdigit()


# --- the rules --------------------------------------------------------------------------------


def test_last_week_in_a_2023_conversation_is_a_2023_key_date():
    session = one("I moved to Lisbon last week, the flat is great.")
    assert [d.date for d in session.key_dates] == ["2023-05-01"]
    [move] = session.fact_candidates
    assert (move.slot, move.value, move.valid_from, move.message_ids) == ("home_city", "Lisbon", "2023-05-01", ["m1"])


@pytest.mark.parametrize(
    "text",
    [
        "Would I like living in Berlin?",
        "If I moved to Paris, I would love it.",
        "My friend said I work at Google.",
        "I don't live in Berlin anymore.",
        "I used to work at Acme.",
        "I'm thinking about moving to Lisbon.",
        'The character says "I live in London" in chapter two.',
        "```\nI love Python\nMy name is Bob\n```",
        "I love it!",
        "I'd prefer a shorter answer.",
        "I like that approach.",
        "I'm going to try it.",
        "I'm going to run the tests tomorrow.",
        "I ran the migration yesterday.",
        "Let's pretend I'm a senior engineer at Google.",
        "Maybe I'm vegetarian.",
        "I need a regex for dates.",
        "I live in a small flat.",
        "I work at night mostly.",
        "I know what you mean.",
        "I'm a bit tired today.",
        "Actually, the second option is better, not the first.",
    ],
)
def test_what_is_not_a_plain_statement_by_the_user_gives_no_candidate(text):
    assert one(text).fact_candidates == []


_WORDS = st.sampled_from(
    ["I", "I'm", "my", "name", "is", "live", "in", "Berlin", "moved", "to", "last", "week", "love", "prefer", "tea",
     "not", "actually", ",", ".", "?", "Project", "Heron", "launch", "on", "March", "14", "sister", "Leela", "She",
     "works", "at", "Acme", "a", "backend", "engineer", "decided", "use", "Postgres", "going", "run", "yesterday"]
)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=300), st.lists(_WORDS, max_size=40).map(" ".join)))
def test_any_text_gives_a_valid_session_with_user_cited_third_person_candidates(text):
    session = one(text)
    assert session.summary
    for candidate in session.fact_candidates:
        assert candidate.message_ids == ["m1"]
        assert not re.match(r"(?i)^(?:i|i'm|my|me)\b", candidate.content)


def test_the_assistant_never_is_a_source_of_facts():
    session = one("You prefer tea, you live in Berlin and your name is Priya. I'm vegan.", role="assistant")
    assert session.fact_candidates == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I work as a data scientist.", [("identity", "user", "job_title", "data scientist")]),
        ("My name is Ana Lima.", [("identity", "user", "name", "Ana Lima")]),
        ("I'm vegan.", [("preference", "user", "diet", "vegan")]),
        ("I hate cilantro.", [("preference", "user", None, "dislikes cilantro")]),
        ("I'm allergic to shellfish.", [("fact", "user", None, "shellfish")]),
        ("Actually, I live in Porto, not Lisbon.", [("correction", "user", "home_city", "Porto")]),
        ("I speak Portuguese and German.", [("skill", "user", None, "Portuguese"), ("skill", "user", None, "German")]),
        ("I work for Umbrella Health as a nurse.",
         [("fact", "user", "employer", "Umbrella Health"), ("identity", "user", "job_title", "nurse")]),
        ("My wife Sara is a teacher.", [("relationship", "user", "partner", "Sara")]),
        ("We decided to go with Kafka for the event bus.",
         [("decision", "user", None, "go with Kafka for the event bus")]),
    ],
)
def test_plain_statements_give_typed_candidates(text, expected):
    got = [(c.type, c.subject, c.slot, c.value) for c in one(text).fact_candidates]
    assert got == expected


# --- memlake-offline-2: more ways of saying the same slots ---------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # name
        ("My name's Tom.", [("name", "user", "Tom")]),
        ("Hey everyone, I'm Robert.", [("name", "user", "Robert")]),
        ("Hello! I'm Ana.", [("name", "user", "Ana")]),
        ("I'm Priya Nair, pleased to meet you.", [("name", "user", "Priya Nair")]),
        ("Hi, Sasha here.", [("name", "user", "Sasha")]),
        ("I go by Maggie.", [("name", "user", "Maggie")]),
        ("People call me Bob.", [("name", "user", "Bob")]),
        ("I legally changed my name to Priya Shah.", [("name", "user", "Priya Shah")]),
        # home city
        ("We live in Madrid.", [("home_city", "user", "Madrid")]),
        ("I'm currently living in Prague.", [("home_city", "user", "Prague")]),
        ("I've been living in Dublin since 2020.", [("home_city", "user", "Dublin")]),
        ("I've lived in Porto for six years.", [("home_city", "user", "Porto")]),
        ("I relocated to Zurich in January.", [("home_city", "user", "Zurich")]),
        ("Finally moved to Seattle!", [("home_city", "user", "Seattle")]),
        ("My apartment in Athens has a balcony.", [("home_city", "user", "Athens")]),
        # employer
        ("I'm employed by Globex.", [("employer", "user", "Globex")]),
        ("I've been working for Initech for two years.", [("employer", "user", "Initech")]),
        ("I just got hired at Pied Piper.", [("employer", "user", "Pied Piper")]),
        ("My first week at Hooli was intense.", [("employer", "user", "Hooli")]),
        ("I'm now working at Soylent Foods.", [("employer", "user", "Soylent Foods")]),
        ("I quit Initech and joined Hooli.", [("employer", "user", "Hooli")]),
        # job title
        ("My job title is site reliability engineer.", [("job_title", "user", "site reliability engineer")]),
        ("I've just been promoted to engineering manager.", [("job_title", "user", "engineering manager")]),
        ("I became a data scientist.", [("job_title", "user", "data scientist")]),
        ("I started as a frontend developer at Hooli.",
         [("job_title", "user", "frontend developer"), ("employer", "user", "Hooli")]),
        ("I'm the new tech lead.", [("job_title", "user", "tech lead")]),
        ("I've been a nurse for ten years.", [("job_title", "user", "nurse")]),
        # diet
        ("I became vegetarian last year.", [("diet", "user", "vegetarian")]),
        ("I follow a pescatarian diet.", [("diet", "user", "pescatarian")]),
        ("I've been vegan since 2015.", [("diet", "user", "vegan")]),
        ("I keep kosher.", [("diet", "user", "kosher")]),
        ("I eat halal.", [("diet", "user", "halal")]),
        ("I switched to keto.", [("diet", "user", "keto")]),
        # partner
        ("My husband is Chen.", [("partner", "user", "Chen")]),
        ("My wife's name is Ines.", [("partner", "user", "Ines")]),
        ("Noor is my girlfriend.", [("partner", "user", "Noor")]),
        ("I married Tomasz in 2019.", [("partner", "user", "Tomasz")]),
        ("I've been dating Alex for two years.", [("partner", "user", "Alex")]),
        ("Sam and I got engaged!", [("partner", "user", "Sam")]),
        # sibling
        ("My older sister Maria is a doctor.", [("sibling", "user", "Maria")]),
        ("My brother's name is Jonas.", [("sibling", "user", "Jonas")]),
        ("Jonas is my little brother.", [("sibling", "user", "Jonas")]),
        # project deadline
        ("The release date for Project Osprey is July 14.", [("project_deadline", "Project Osprey", "2023-07-14")]),
        ("Project Falcon is due by June 1.", [("project_deadline", "Project Falcon", "2023-06-01")]),
        ("We're shipping Project Kestrel on June 20.", [("project_deadline", "Project Kestrel", "2023-06-20")]),
        ("The Project Heron launch has been pushed back to July 1.",
         [("project_deadline", "Project Heron", "2023-07-01")]),
        ("They moved the Project Heron launch to August 1.", [("project_deadline", "Project Heron", "2023-08-01")]),
    ],
)
def test_more_ways_of_saying_a_slot(text, expected):
    got = [(c.slot, c.subject, c.value) for c in one(text).fact_candidates if c.slot]
    assert got == expected


@pytest.mark.parametrize(
    "text",
    [
        # names: no greeting or introduction, a description, a possessive, a nickname others use, a product
        "I'm Canadian.",
        "Hi, I'm German and I need help.",
        "Hi, I'm Stuck on a regex.",
        "I'm Sam's partner.",
        "My friend calls me Bobby.",
        "Don't call me Bob.",
        "I usually go by Uber.",
        # partners: descriptions, business partners, relatives of the partner, past or ended relationships
        "My partner is Italian.",
        "My partner is in Berlin this week.",
        "Sam is my partner in crime.",
        "My girlfriend, Toby and I are going camping.",
        "My girlfriend, Toby, and I are going camping.",
        "Sam is my partner at the law firm.",
        "Sam is my partner's brother.",
        "I was married to Tom for ten years.",
        "Sam and I broke up.",
        "My partner Jonas and I broke up.",
        "I married Tomasz in 2019 but we divorced in 2022.",
        "If I were dating Alex, I'd be happy.",
        "I'm not dating Sam.",
        "I'm seeing Dr Lee tomorrow.",
        "Leela is my sister's friend.",
        # diets: temporary, wished, past, someone else's, occasional
        "I went vegan for a month last year.",
        "I went vegan in January for Veganuary.",
        "I'm trying to go vegan.",
        "I'm eating vegan this week.",
        "I've been vegan before.",
        "I eat vegan sometimes.",
        "My friend is vegan.",
        "I haven't been vegetarian for years.",
        # homes: tools, teams, past homes, homes sold
        "I moved to Postgres last week.",
        "We moved to Kubernetes last month.",
        "We moved to Marketing.",
        "Just moved to GitHub Actions.",
        "I've lived in Rome and Paris.",
        "I lived in Rome for two years.",
        "We sold our flat in Porto.",
        "Our old flat in Porto was tiny.",
        # employers and titles: wishes, past, temporary, a start that ended, roles that are no job
        "I want a job at Globex.",
        "I've worked for Acme.",
        "I'm working at Acme this week.",
        "I started at Stanford in 2019 and left in 2022.",
        "I think Sam left and joined Google.",
        "If I left Acme and joined Globex, I'd earn more.",
        "I hope to get promoted to tech lead.",
        "My role is to review PRs.",
        "I'm the owner of this bug.",
        "I'm the tester on this PR.",
        "I've been a teacher.",
        # deadlines: negated, conditional, reported, past, not a known project
        "We won't launch Project Heron on May 3.",
        "If we launch Project Heron on May 3 we need QA.",
        "I'll launch Project Heron on May 3 if QA passes.",
        "Tomás said the Project Heron launch is on May 3.",
        "Project Heron was due on May 3.",
        "The Project Heron launch wasn't moved to June 2.",
        "Apple launches on September 12.",
        # quotes and questions
        'She wrote "My partner is Sam" in the card.',
        "Is my partner Sam?",
    ],
)
def test_new_patterns_stay_precise(text):
    assert [(c.slot, c.value) for c in one(text).fact_candidates if c.slot] == []


def test_a_coordinated_verb_phrase_shares_its_subject():
    got = [(c.type, c.slot, c.value) for c in one("I left Acme Robotics and joined Northwind Labs.").fact_candidates]
    assert got == [("event", None, "left Acme Robotics"), ("fact", "employer", "Northwind Labs")]


def test_a_rescheduled_deadline_is_the_nearest_such_day_not_last_years():
    # said 2023-05-08: "pushed" is past tense, but the date it is pushed to is not
    [c] = one("We pushed the Project Heron launch to June 2.").fact_candidates
    assert (c.subject, c.slot, c.value, c.content) == (
        "Project Heron", "project_deadline", "2023-06-02", "The Project Heron launch is on 2023-06-02.")


def test_only_the_user_introduces_themselves():
    session = distill_offline(Conversation("a", "c", None, (
        Message("m1", "assistant", "Hi, I'm Claude, nice to meet you.", SAID),
        Message("m2", "user", "Hello! I'm Ana.", SAID),
    )))
    assert [(c.slot, c.value, c.message_ids) for c in session.fact_candidates] == [("name", "Ana", ["m2"])]


def test_offline_distiller_is_deterministic_and_named():
    conversation = Conversation("a", "c", "Move", (Message("m1", "user", "I moved to Porto yesterday.", SAID),))
    distiller = OfflineDistiller()
    assert distiller.distill(conversation) == distiller.distill(conversation)
    assert distiller.name == "memlake-offline-2" and distiller.prompt_version is None
    assert distiller.usage.calls == distiller.usage.requests == 0


def test_a_conversation_without_facts_still_gets_a_summary():
    conversation = Conversation(
        "a", "c", "Regex help",
        (Message("m1", "user", "I need a regex that finds order numbers like ORD-58213.", SAID),
         Message("m2", "assistant", "Use `ORD-\\d{5}` with a word boundary on each side.", SAID)),
    )
    session = distill_offline(conversation)
    assert session.fact_candidates == []
    assert session.summary.startswith("Regex help.") and "ORD-58213" in session.summary
    assert "ORD-58213" in session.topics
    assert session.salience < 0.3


# --- the sample data --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_conversations(tmp_path_factory):
    """The demo conversations exactly as the turns table holds them (same ids, same order)."""
    settings = load_settings(tmp_path_factory.mktemp("samples") / "home")
    settings.ensure_dirs()
    shutil.copytree(SAMPLES / "demo", settings.landing_dir / "demo")
    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=datetime(2025, 1, 1, tzinfo=UTC))
    build = build_turns(settings, manifest_frame(update), sorted(update.touched_days))
    frame = pl.concat(
        [pl.from_arrow(conform(TURNS, rows)).with_columns(pl.lit(day).alias("day"))  # type: ignore[union-attr]
         for day, rows in build.rows.items() if rows]
    )
    return [item.conversation for item in conversations_from_turns(frame)]


@pytest.fixture(scope="module")
def sample_sessions(sample_conversations):
    return {c.conversation_id: (c, distill_offline(c)) for c in sample_conversations}


def test_every_candidate_on_the_samples_is_expected_and_every_expected_one_is_there(sample_sessions):
    expected = json.loads(EXPECTED.read_text())["candidates"]
    produced = [
        {"conversation_id": cid, **{k: getattr(c, k) for k in COMPARED if k != "conversation_id"}}
        for cid, (_, session) in sample_sessions.items()
        for c in session.fact_candidates
    ]

    def key(row):
        return json.dumps({k: row[k] for k in COMPARED}, sort_keys=True, ensure_ascii=False)

    unexpected = sorted(set(map(key, produced)) - set(map(key, expected)))
    missing = sorted(set(map(key, expected)) - set(map(key, produced)))
    assert not unexpected, "candidates not in the expectation file (precision):\n" + "\n".join(unexpected)
    assert not missing, "expected candidates not produced:\n" + "\n".join(missing)
    assert len(produced) == len(expected)


def test_samples_preferences_move_and_job_change_come_with_their_message_ids(sample_sessions):
    candidates = {(c.type, c.slot, c.value): c for _, s in sample_sessions.values() for c in s.fact_candidates}
    tea = candidates[("preference", None, "tea, especially oolong")]
    assert tea.message_ids == ["84882ec2-faa8-5a74-beb8-c2785e72320e"]
    assert candidates[("preference", None, "no coffee")].subject == "user"
    assert candidates[("preference", None, "concise answers with code examples")].message_ids == [
        "0129de8b-0958-5221-b6b5-e693e71e1cb6"
    ]
    move = candidates[("fact", "home_city", "Lisbon")]
    said_moved = ["42128431-eb5d-5b28-a019-70f32abde42f"]  # "I moved to Lisbon last week!"
    moves = [c for _, s in sample_sessions.values() for c in s.fact_candidates
             if c.slot == "home_city" and c.value == "Lisbon" and c.message_ids == said_moved]
    assert move and moves and moves[0].valid_from == "2024-06-03"  # "last week", said 2024-06-10
    job = [c for _, s in sample_sessions.values() for c in s.fact_candidates
           if c.slot == "employer" and c.value == "Northwind Labs"]
    assert [(c.valid_from, c.message_ids) for c in job] == [("2024-09-02", ["834e997f-7652-5983-a591-ed3adf32336e"])]


def test_samples_every_conversation_is_summarized(sample_sessions):
    assert len(sample_sessions) == 30
    for conversation, session in sample_sessions.values():
        assert session.summary.startswith(conversation.title)
        quoted = re.findall(r"(?:The user said|The user asked|The assistant answered): ", session.summary)
        assert 1 <= len(quoted) <= 2  # the title plus one or two quoted sentences: 1-3 sentences
        assert session.topics
        user_ids = {m.message_id for m in conversation.messages if m.role == "user"}
        for candidate in session.fact_candidates:
            assert set(candidate.message_ids) <= user_ids
            assert not candidate.content.lower().startswith(("i ", "i'm", "my "))


# --- the benchmark ----------------------------------------------------------------------------


def test_distill_benchmark_on_one_locomo_sample(tmp_path):
    from memlake.bench.distill import render_distill_section, run_distill_benchmark
    from tests.conftest import LOCOMO

    if not LOCOMO.is_file():
        pytest.skip("LoCoMo is not on this machine")
    one_sample = tmp_path / "one.json"
    one_sample.write_text(json.dumps(json.loads(LOCOMO.read_text())[:1]))  # a temp copy, never in the repo
    out = tmp_path / "distill.json"

    report = run_distill_benchmark(one_sample, out, rounds=1, log=lambda _: None)

    assert report["data"]["conversations"] == 19
    assert report["offline"]["conversations_per_second"] > 0
    assert report["model_calls"]["per_conversation_mean"] == 1.0
    assert report["cache_rerun"]["second_pass_distilled"] == 0
    assert report["cache_rerun"]["second_pass_cache_hits"] == 19
    assert report["offline"]["key_dates_within_a_year_of_the_session"] == report["offline"]["key_dates"]
    section = render_distill_section(out)
    assert "conversations/s" in section and "model calls per conversation" in section
