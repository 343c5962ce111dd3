"""One type per name in an agent's chats, chosen from all its mentions' evidence: the sentences of the turns that
name it (`memlake.nlp.names`: a cue weighs `CUE_WEIGHT` labels, a request's topic nothing) and the types the
episodes listed it with (one label each). "Feedzai" joined in a turn and listed as a place by an episode is one
organisation, not an organisation and a place.

A person needs a person's evidence: a name the small model labels a person but that no sentence puts where only a
person goes (`Name.person_role`: "Marta said", "met Oskar", "my sister Ana", "reading Rothfuss") and that no one
speaks under is no person: it takes its next type, or none (a concept). Unknown capitalised words ("Kafka",
"Traefik") are what the model calls people most.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from memlake.graph.observed import Mention, Observation
from memlake.graph.stated import OBJECT_TYPES
from memlake.nlp.names import CUE_WEIGHT, Name

Key = tuple[str, str]  # (agent, name lowercased)
# Relations whose target is a person: whom a relation of these names is a person's evidence.
PERSON_RELATIONS = frozenset({"partner_of", "sibling_of", "works_with", "knows", "friend_of", "child_of", "parent_of",
                              "relative_of", "met"})


@dataclass
class TypeEvidence:
    """What an agent's chats say of each name's type: weighed votes, the names said in a person's role, the names
    turns read at all, and the people who speak."""

    votes: dict[Key, Counter[str]] = field(default_factory=dict)
    person_roles: set[Key] = field(default_factory=set)
    read_in_turns: set[Key] = field(default_factory=set)
    speakers: set[Key] = field(default_factory=set)

    def add_turn_name(self, agent: str, name: Name) -> None:
        """A name a turn said: a cue weighs `CUE_WEIGHT`, a label one, a request's topic nothing."""
        key = (agent, name.text.lower())
        weight = CUE_WEIGHT if name.cued else 0 if name.untyped else 1
        self.votes.setdefault(key, Counter())[name.type] += weight
        self.read_in_turns.add(key)
        if name.person_role:
            self.person_roles.add(key)

    def add_stated_subject(self, agent: str, name: str) -> None:
        """A name a sentence states a relation of ("Anna works at Stripe"): the subject of a person's relation."""
        self.person_roles.add((agent, name.lower()))

    def add_listed(self, agent: str, name: str, kind: str) -> None:
        """A name an episode listed with a type: one label's weight ("concept", no type: none)."""
        self.votes.setdefault((agent, name.lower()), Counter())[kind] += 0 if kind == "concept" else 1

    def with_listed(self, mentions: list[Mention], relations: list[Observation],
                    slot_relations: list[Observation]) -> TypeEvidence:
        """This evidence and what episodes and facts say: the episodes' listed `mentions` (a label each), the
        people at the person's end of their `relations` (a colleague, a partner: `PERSON_RELATIONS`), and the
        values of slot facts (`slot_relations`: a reader read the value as that slot's, a cue's weight)."""
        out = TypeEvidence({k: Counter(v) for k, v in self.votes.items()}, set(self.person_roles),
                           set(self.read_in_turns), set(self.speakers))
        for m in mentions:
            out.add_listed(m.agent_id, m.name, m.type)
        for o in relations + slot_relations:
            if o.relation in PERSON_RELATIONS:
                out.person_roles.add((o.agent_id, o.target.lower()))
        for o in slot_relations:
            out.votes.setdefault((o.agent_id, o.target.lower()), Counter())[o.target_type] += CUE_WEIGHT
        return out

    def agreed(self) -> dict[Key, str]:
        return {key: self._agreed(key, counted) for key, counted in self.votes.items()}

    def _agreed(self, key: Key, counted: Counter[str]) -> str:
        """A speaker's name is a person; a pet's, named once after its kind ("my pup Toby"), an animal however the
        pipeline labels it alone later; else the type with the most weight, the first said on a tie, and a person
        only with a person's evidence (when turns read the name)."""
        if key in self.speakers:
            return "person"
        if counted["animal"] >= CUE_WEIGHT:
            return "animal"
        ranked = [kind for kind, _ in counted.most_common()]
        if ranked[0] == "person" and key in self.read_in_turns and key not in self.person_roles:
            others = [kind for kind, weight in counted.most_common() if kind != "person" and weight > 0]
            return others[0] if others else "concept"
        return ranked[0]


def agreed_types(mentions: list[Mention], agreed: dict[Key, str]) -> list[Mention]:
    """Every mention with its name's agreed type, one per name per message (per conversation, for an episode's
    mention that cites none)."""
    out: dict[tuple[str, str, str, tuple[str, ...]], Mention] = {}
    for m in mentions:
        out.setdefault((m.agent_id, m.name, m.conversation_id, m.message_ids),
                       replace(m, type=agreed.get((m.agent_id, m.name.lower()), m.type)))
    return list(out.values())


def agreed_ends(observations: list[Observation], agreed: dict[Key, str], *, stated: bool) -> list[Observation]:
    """Every relation with its ends' agreed types, so they meet the mentions of the same names. A relation read from
    a sentence (`stated`) whose object the chat types as no object of it ("I love Toby" of the dog Toby: likes takes
    a work or a place) is dropped."""
    typed = [replace(o, source_type=agreed.get((o.agent_id, o.source.lower()), o.source_type),
                     target_type=agreed.get((o.agent_id, o.target.lower()), o.target_type)) for o in observations]
    if not stated:
        return typed
    return [o for o in typed if o.target_type in OBJECT_TYPES.get(o.relation, {o.target_type})]
