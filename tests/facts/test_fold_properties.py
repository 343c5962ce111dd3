"""Properties of the facts fold over generated inputs (hypothesis: bounded, derandomized).

- folding A then B equals folding A and B together (any split; and resuming
  from written tables when B comes after A);
- reordering the inputs (many share a timestamp) changes nothing;
- every history chain has exactly one active version, and the suite's
  cross-row rules hold whatever the inputs.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from memlake.embedding import HashEmbedder
from memlake.facts.fold import Candidate, FoldConfig, Folder, Forget, Override, chain_id, fold
from memlake.facts.quality import with_chain_checks

T0 = datetime(2024, 1, 1, tzinfo=UTC)
EMBED = HashEmbedder(64).embed
AGENTS = ("a1", "a2")
SUBJECTS = ("user", "Leela")
SLOT_VALUES = {
    "home_city": ("Berlin", "Lisbon", "Paris"),
    "employer": ("Acme", "Acme Robotics", "Northwind Labs"),
}
SLOT_TEMPLATES = {
    "home_city": ("{s} lives in {v}.", "{s} moved to {v}.", "{s} is based in {v}."),
    "employer": ("{s} works at {v}.", "{s} started a new job at {v}.", "{s} is employed by {v}."),
}
FREE = (
    ("preference", "coffee", "{s} likes coffee."),
    ("preference", "coffee", "{s} doesn't drink coffee."),
    ("preference", "coffee", "{s} no longer drinks coffee."),
    ("preference", "tea", "{s} likes tea."),
    ("preference", "tea", "{s} prefers tea, especially oolong."),
    ("preference", "cycling", "{s} enjoys cycling."),
    ("preference", "dark mode", "{s} prefers dark mode."),
    ("preference", "light mode", "{s} prefers light mode."),
    ("correction", "light mode", "Actually {s} prefers light mode."),
    ("fact", "peanuts", "{s} is allergic to peanuts."),
)


def _subject_text(subject: str) -> str:
    return "The user" if subject == "user" else subject


@st.composite
def candidates(draw: st.DrawFn) -> Candidate:
    agent = draw(st.sampled_from(AGENTS))
    subject = draw(st.sampled_from(SUBJECTS))
    hour = draw(st.integers(0, 6))
    conversation = draw(st.sampled_from(("c1", "c2", "c3")))
    message = f"{conversation}-m{draw(st.integers(0, 3))}"
    if draw(st.booleans()):
        slot = draw(st.sampled_from(sorted(SLOT_VALUES)))
        value = draw(st.sampled_from(SLOT_VALUES[slot]))
        template = draw(st.sampled_from(SLOT_TEMPLATES[slot]))
        fact_type, content = "fact", template.format(s=_subject_text(subject), v=value)
    else:
        slot = None
        fact_type, value, template = draw(st.sampled_from(FREE))
        content = template.format(s=_subject_text(subject))
    valid_from = T0 + timedelta(hours=hour - draw(st.integers(0, 30))) if draw(st.booleans()) else None
    return Candidate(
        agent_id=agent,
        type=fact_type,
        subject=subject,
        slot=slot,
        value=value,
        content=content,
        created_at=T0 + timedelta(hours=hour),
        valid_from=valid_from,
        ingested_at=T0 + timedelta(hours=hour + draw(st.integers(0, 2))),
        conversation_id=conversation,
        message_ids=(message,),
        confidence=draw(st.sampled_from((0.5, 0.8, 1.0))),
        importance=draw(st.sampled_from((0.3, 0.5, 0.9))),
    )


@st.composite
def overrides(draw: st.DrawFn) -> Override:
    agent = draw(st.sampled_from(AGENTS))
    action = draw(st.sampled_from(("add", "correct", "reject")))
    hour = draw(st.integers(0, 6))
    slot = draw(st.sampled_from(sorted(SLOT_VALUES)))
    target = draw(st.sampled_from((chain_id(agent, "user", slot, "fact", ""), "f_missing")))
    value = draw(st.sampled_from(SLOT_VALUES[slot]))
    content = SLOT_TEMPLATES[slot][0].format(s="The user", v=value)
    return Override(
        override_id=f"o{draw(st.integers(0, 10_000))}",
        agent_id=agent,
        action=action,
        written_at=T0 + timedelta(hours=hour, minutes=30),
        fact_id=None if action == "add" else target,
        slot=slot if action == "add" and draw(st.booleans()) else None,
        value=value,
        content=None if action == "reject" else content,
    )


@st.composite
def forgets(draw: st.DrawFn) -> Forget:
    agent = draw(st.sampled_from(AGENTS))
    scope = draw(st.sampled_from(("fact", "conversation", "agent")))
    target = {
        "fact": chain_id(agent, "user", draw(st.sampled_from(sorted(SLOT_VALUES))), "fact", ""),
        "conversation": draw(st.sampled_from(("c1", "c2"))),
        "agent": None,
    }[scope]
    return Forget(
        forget_id=f"x{draw(st.integers(0, 10_000))}",
        agent_id=agent,
        scope=scope,
        written_at=T0 + timedelta(hours=draw(st.integers(0, 6)), minutes=45),
        target=target,
    )


def _unique_ids(events: list) -> list:  # type: ignore[type-arg]
    """Log entries have unique ids in real logs: keep the first of each id."""
    seen, out = set(), []
    for e in events:
        key = getattr(e, "override_id", None) or getattr(e, "forget_id", None)
        if key is not None and key in seen:
            continue
        seen.add(key)
        out.append(e)
    return out


inputs = st.lists(
    st.one_of(candidates(), candidates(), candidates(), overrides(), forgets()), min_size=1, max_size=14
).map(_unique_ids)
extractions = st.lists(candidates(), min_size=1, max_size=14)
BOUNDED = settings(max_examples=60, deadline=None, derandomize=True)


def same_tables(a: Folder, b: Folder) -> None:
    assert a.facts_frame().equals(b.facts_frame()), (a.facts_frame(), b.facts_frame())
    assert a.edges_frame().equals(b.edges_frame()), (a.edges_frame(), b.edges_frame())


def folded(events: list) -> Folder:  # type: ignore[type-arg]
    return Folder(FoldConfig(), EMBED).add(events)


@BOUNDED
@given(inputs, st.randoms(use_true_random=False))
def test_reordering_inputs_changes_nothing(events: list, rnd: random.Random) -> None:  # type: ignore[type-arg]
    shuffled = list(events)
    rnd.shuffle(shuffled)
    same_tables(folded(events), folded(shuffled))


@BOUNDED
@given(inputs, st.data())
def test_folding_a_then_b_equals_folding_both(events: list, data: st.DataObject) -> None:  # type: ignore[type-arg]
    mask = data.draw(st.lists(st.booleans(), min_size=len(events), max_size=len(events)))
    a = [e for e, in_a in zip(events, mask, strict=True) if in_a]
    b = [e for e, in_a in zip(events, mask, strict=True) if not in_a]
    same_tables(Folder(FoldConfig(), EMBED).add(a).add(b), folded(events))


@BOUNDED
@given(inputs, st.integers(0, 6))
def test_resuming_from_written_tables_equals_folding_both(events: list, split_hour: int) -> None:  # type: ignore[type-arg]
    """What reads do with overrides written since the last run: fold them on top of the tables."""
    cut = T0 + timedelta(hours=split_hour, minutes=50)

    def when(e: object) -> datetime:
        return e.created_at if isinstance(e, Candidate) else e.written_at  # type: ignore[attr-defined]

    a = [e for e in events if when(e) <= cut]
    b = [e for e in events if when(e) > cut and not (isinstance(e, Forget) and e.scope != "fact")]
    written = folded(a)
    resumed = Folder.from_tables(written.facts_frame(), written.edges_frame(), FoldConfig(), EMBED).add(b)
    same_tables(resumed, folded(a + b))


@BOUNDED
@given(inputs)
def test_the_suite_rules_hold_whatever_the_inputs(events: list) -> None:  # type: ignore[type-arg]
    facts = folded(events).facts_frame()
    checked = with_chain_checks(facts)
    for rule in ("superseded_by_exists", "slot_chain_one_active", "fact_chain_at_most_one_active"):
        assert checked[rule].all(), (rule, facts)
    assert facts.select("fact_id", "version").is_unique().all()
    bounded = facts.filter(pl.col("valid_until").is_not_null())
    assert (bounded["valid_from"] <= bounded["valid_until"]).all()
    assert facts["status"].is_in(["active", "superseded", "rejected"]).all()


@BOUNDED
@given(extractions)
def test_every_history_chain_has_exactly_one_active_version(events: list[Candidate]) -> None:
    result = fold(events, config=FoldConfig(), embed=EMBED)
    per_chain = result.facts.group_by("fact_id").agg((pl.col("status") == "active").sum().alias("active"))
    assert (per_chain["active"] == 1).all(), result.facts
    slotted = result.facts.filter(pl.col("slot").is_not_null()).group_by("agent_id", "subject", "slot").agg(
        (pl.col("status") == "active").sum().alias("active")
    )
    assert (slotted["active"] == 1).all()
    # Every superseded version was closed and points at the version that replaced it.
    old = result.facts.filter(pl.col("status") == "superseded")
    assert old["valid_until"].is_not_null().all() and old["superseded_by"].is_not_null().all()


@BOUNDED
@given(extractions)
def test_the_same_inputs_twice_add_nothing(events: list[Candidate]) -> None:
    """A re-ingested export repeats the same statements (same message ids): no new facts, no new confirmations."""
    once, twice = fold(events, embed=EMBED), fold(events + events, embed=EMBED)
    assert once.facts.equals(twice.facts)
    assert once.edges.equals(twice.edges)
