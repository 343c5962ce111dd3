"""What episodes and facts say about entities: one `Mention` per name said, one `Observation` per relation said."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import polars as pl

from memlake.distill.models import USER_SUBJECT
from memlake.facts.fold import chain_id, slot_of
from memlake.graph.entity_types import TypeEvidence, agreed_ends, agreed_types
from memlake.graph.observed import Mention, Observation, Said
from memlake.nlp.names import CHAT_ROLE_WORDS, only_a_verb
from memlake.schemas import GRAPH_ENTITY_TYPES

# The distiller's entity types, as the graph's (GRAPH_ENTITY_TYPES).
TYPE_OF_DISTILLED = {"organisation": "organization", "company": "organization", "product": "tool", "other": "concept"}

# Fact slots that are a relation of the subject to the value, and the type of the value.
SLOT_RELATIONS = {
    "employer": ("works_at", "organization"),
    "home_city": ("lives_in", "place"),
    "partner": ("partner_of", "person"),
    "sibling": ("sibling_of", "person"),
}

SLOT_OF_RELATION = {relation: slot for slot, (relation, _) in SLOT_RELATIONS.items()}

# Relation names that mean the same, as one (lowercase snake_case first).
RELATION_SYNONYMS = {
    "works_for": "works_at",
    "employed_at": "works_at",
    "employed_by": "works_at",
    "employer": "works_at",
    "works_in": "works_at",
    "lives_at": "lives_in",
    "resides_in": "lives_in",
    "based_in": "lives_in",
    "home_city": "lives_in",
    "lead": "leads",
    "leader_of": "leads",
    "lead_of": "leads",
    "is_lead_of": "leads",
    "partner": "partner_of",
    "married_to": "partner_of",
    "sibling": "sibling_of",
    "pet": "has_pet",
    "owns_pet": "has_pet",
}

# The type a relation's target has when nothing else says (a distiller that named no entity for it).
TARGET_TYPES = {"works_at": "organization", "lives_in": "place", "partner_of": "person", "sibling_of": "person",
                "works_with": "person", "knows": "person", "member_of": "organization", "uses": "tool",
                "has_pet": "animal"}
# Relations whose target is of their type wherever the name is said: "my tortoise Biscuit" makes Biscuit an animal in
# every conversation, though "Biscuit's birthday" elsewhere reads like a person's and a fact's subject is guessed one.
TYPING_RELATIONS = frozenset({"has_pet"})
_NOT_WORD = re.compile(r"[^\w]+", re.UNICODE)


def normalize_relation(text: str) -> str:
    """A relation as one lowercase snake_case verb phrase, synonyms folded: "Works for" -> works_at."""
    name = _NOT_WORD.sub("_", text.strip().lower()).strip("_")
    return RELATION_SYNONYMS.get(name, name)


def graph_type(distilled: str | None) -> str:
    """The graph's type for a distiller's entity type; anything unknown is a concept."""
    kind = (distilled or "").strip().lower()
    kind = TYPE_OF_DISTILLED.get(kind, kind)
    return kind if kind in GRAPH_ENTITY_TYPES else "concept"


def guess_type(name: str) -> str:
    """The type of a name nothing typed: a project by its word, else a person (fact subjects are people)."""
    return "project" if name.lower().startswith("project ") else "person"


def _day(value: str | None, default: datetime) -> datetime:
    if not value:
        return default
    try:
        return datetime.fromisoformat(value[:10]).replace(tzinfo=UTC)
    except ValueError:
        return default


def _messages_naming(candidates: Sequence[dict[str, Any]], name: str) -> tuple[str, ...]:
    """The message ids of the fact candidates that name `name` (for an episode whose entities carry none)."""
    low = name.lower()
    found: list[str] = []
    for c in candidates:
        said = " ".join(str(c.get(k) or "") for k in ("subject", "value", "content")).lower()
        if low in said:
            found.extend(c.get("message_ids") or [])
    return tuple(dict.fromkeys(found))


def from_episodes(episodes: pl.DataFrame) -> tuple[list[Mention], list[Observation]]:
    """The names and relations every episode lists."""
    mentions: list[Mention] = []
    observations: list[Observation] = []
    columns = ("agent_id", "conversation_id", "conversation_started_at", "entities", "relations", "fact_candidates")
    for agent, conversation, started, entities, relations, candidates in episodes.select(columns).iter_rows():
        candidates = candidates or []
        types: dict[str, str] = {}
        for entity in entities or []:
            name = (entity.get("name") or "").strip()
            if (not name or name.lower() == USER_SUBJECT or name.lower() in CHAT_ROLE_WORDS
                    or the_users_description(name)):
                continue  # the user is their own entity; "Assistant" is a side of the chat, no one in it
            types[name.lower()] = graph_type(entity.get("type"))
            said_in = tuple(entity.get("message_ids") or ()) or _messages_naming(candidates, name)
            mentions.append(Mention(agent, name, types[name.lower()], conversation, started, said_in))
        for r in relations or []:
            source, target = (r.get("source") or "").strip(), (r.get("target") or "").strip()
            if (not source or not target or not (r.get("relation") or "").strip() or _a_role(source, target)
                    or the_users_description(source) or the_users_description(target)):
                continue
            relation = normalize_relation(r["relation"])
            observations.append(Observation(
                agent, source, _type_of(source, types, None), relation, r["relation"].strip(), target,
                _type_of(target, types, TARGET_TYPES.get(relation)), float(r.get("confidence") or 0.5),
                _day(r.get("valid_from"), started), _day(r.get("valid_until"), started) if r.get("valid_until")
                else None, started, conversation, _messages_naming(candidates, target)))
    return mentions, observations


def the_users_description(name: str) -> bool:
    """Whether a name is the pipeline's description of someone by the user's placeholder ("the user's mum", "User's
    dentist"): its words, not a name anyone said; the user themself ("user") is their own entity."""
    words = _NOT_WORD.split(name.strip().lower())
    return name.strip().lower() != USER_SUBJECT and USER_SUBJECT in words


def _a_role(*names: str) -> bool:
    """Whether a relation's end is a chat's side other than the user ("assistant"): no one in the user's world."""
    return any(n.lower() in CHAT_ROLE_WORDS and n.lower() != USER_SUBJECT for n in names)


def _type_of(name: str, types: dict[str, str], default: str | None) -> str:
    if name.lower() == USER_SUBJECT:
        return "person"
    return types.get(name.lower()) or default or guess_type(name)


# Fact versions the graph reads: what was said and not taken back (forgotten and rejected facts are not).
FACT_STATUSES_READ = ("active", "superseded", "evicted", "merged")


def from_facts(facts: pl.DataFrame) -> tuple[list[Mention], list[Observation], dict[str, set[str]]]:
    """The people and things facts are about, their slot relations (employer -> works_at), and the user's names."""
    mentions: list[Mention] = []
    observations: list[Observation] = []
    user_names: dict[str, set[str]] = {}
    rows = facts.filter(pl.col("status").is_in(FACT_STATUSES_READ)).sort("fact_id", "version")
    for f in rows.iter_rows(named=True):
        agent, subject, value, slot = f["agent_id"], (f["subject"] or "").strip(), (f["value"] or "").strip(), f["slot"]
        conversation = (f["source_conversation_ids"] or [""])[0]
        said = f["created_at"]
        messages = tuple(f["source_message_ids"] or ())
        if slot == "name" and subject == USER_SUBJECT and value:
            user_names.setdefault(agent, set()).add(value)
            continue
        if the_users_description(subject) or the_users_description(value):
            continue  # "the user's mum": whom it is about has no name here
        if subject and subject != USER_SUBJECT:
            mentions.append(Mention(agent, subject, guess_type(subject), conversation, said, messages))
        if slot in SLOT_RELATIONS and subject and value:
            relation, target_type = SLOT_RELATIONS[slot]
            observations.append(Observation(
                agent, subject, "person" if subject == USER_SUBJECT else guess_type(subject), relation, slot, value,
                target_type, float(f["confidence"] or 0.5), f["valid_from"] or said,
                f["valid_until"] if f["status"] != "superseded" else None, said, conversation, messages))
    return mentions, observations, user_names


def _typed_by_relations(said: list[Observation], *lists: list[Any]) -> list[list[Any]]:
    """Each list with the names a typing relation introduced (`TYPING_RELATIONS`: the user's pet) given its type,
    in every mention and at either end of every relation of the agent's."""
    kind = {(o.agent_id, o.target.lower()): TARGET_TYPES[o.relation] for o in said if o.relation in TYPING_RELATIONS}
    if not kind:
        return list(lists)

    def retyped(item: Any) -> Any:
        if isinstance(item, Mention):
            return replace(item, type=kind.get((item.agent_id, item.name.lower()), item.type))
        return replace(item, source_type=kind.get((item.agent_id, item.source.lower()), item.source_type),
                       target_type=kind.get((item.agent_id, item.target.lower()), item.target_type))

    return [[retyped(item) for item in items] for items in lists]


def _forgotten_fact(o: Observation, facts_gone: dict[tuple[str, str], datetime]) -> bool:
    """Whether an episode's relation is the statement of a slot fact the user forgot (and said before that)."""
    slot = SLOT_OF_RELATION.get(o.relation)
    if slot is None or not facts_gone:
        return False
    fact_id = chain_id(o.agent_id, o.source, slot_of(slot, o.target), "fact", "")
    forgotten_at = facts_gone.get((o.agent_id, fact_id))
    return forgotten_at is not None and o.at <= forgotten_at


def _without_request_verbs(listed: list[Mention], read_in_turns: list[Mention]) -> list[Mention]:
    """An episode's untyped one-word name that is only a verb ("Summarise": the offline distiller lists a sentence's
    capitalised first word) and that no person's turn of the agent reads as a name, left out."""
    named = {(m.agent_id, m.name.lower()) for m in read_in_turns}
    return [m for m in listed if not (m.type == "concept" and " " not in m.name.strip() and only_a_verb(m.name)
                                      and (m.agent_id, m.name.lower()) not in named)]


def read_said(episodes: pl.DataFrame, facts: pl.DataFrame, forgotten: Iterable[tuple[str, str | None]] = (),
              forgotten_facts: Iterable[tuple[str, str, datetime]] = (),
              said_in_turns: tuple[list[Mention], list[Observation]] = ([], []),
              evidence: TypeEvidence | None = None) -> Said:
    """What episodes and facts say, without what the forget log names: `forgotten` (agent, None) an agent, (agent,
    conversation) one conversation; `forgotten_facts` (agent, fact id, when): an episode's relation that states
    that slot fact (the user's employer), said before then. The facts table has already dropped such facts.
    `said_in_turns`: the names people's turns say and the relations they state (`turn_names.from_turns`),
    forgotten like the rest; `evidence`, what their sentences say of each name's type: with the episodes' listed
    types, every name gets one type (`entity_types`)."""
    gone = set(forgotten)
    facts_gone: dict[tuple[str, str], datetime] = {}
    for agent, fact_id, at in forgotten_facts:
        facts_gone[(agent, fact_id)] = max(at, facts_gone.get((agent, fact_id), at))
    ep_mentions, ep_observations = from_episodes(episodes)
    ep_mentions = _without_request_verbs(ep_mentions, said_in_turns[0])
    fact_mentions, fact_observations, user_names = from_facts(facts)
    agreed = (evidence or TypeEvidence()).with_listed(ep_mentions, ep_observations, fact_observations).agreed()
    ep_mentions = agreed_types(ep_mentions + said_in_turns[0], agreed)
    ep_observations = (agreed_ends(ep_observations, agreed, stated=False)
                       + agreed_ends(said_in_turns[1], agreed, stated=True))
    # a fact's subject is typed by a guess; an episode or a turn that named it says what it is (the agreed type)
    fact_mentions = [replace(m, type=agreed.get((m.agent_id, m.name.lower()), m.type)) for m in fact_mentions]
    fact_observations = agreed_ends(fact_observations, agreed, stated=False)
    ep_mentions, ep_observations, fact_mentions, fact_observations = _typed_by_relations(
        ep_observations, ep_mentions, ep_observations, fact_mentions, fact_observations)

    def kept(agent: str, conversation: str) -> bool:
        return (agent, None) not in gone and (agent, conversation) not in gone

    return Said(
        mentions=[m for m in ep_mentions + fact_mentions if kept(m.agent_id, m.conversation_id)],
        observations=[o for o in ep_observations if kept(o.agent_id, o.conversation_id)
                      and not _forgotten_fact(o, facts_gone)]
        + [o for o in fact_observations if kept(o.agent_id, o.conversation_id)],
        user_names={a: names for a, names in user_names.items() if (a, None) not in gone},
    )
