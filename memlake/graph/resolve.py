"""Entity resolution: which names said are one entity, and a row for every merge that made it so.

A node is one form said (agent, type, name); a person named with relations to the user that cannot be one
person's ("my brother Alex", "my colleague Alex") is one node per relation. Nodes then merge, in this order:

1. `normalized_name`: the same name once case, accents and punctuation are set aside ("priya nair", "Priya Nair").
2. `alias`: a shorter form is part of a longer one ("Tomás" of "Tomás Ruiz", "Priya Nair" of "Priya K. Nair"),
   a person's first name matching; a first name that could be several people's stays apart.
3. `embedding`: cosine of the names' embeddings at or above `threshold`, within the same type.

Guards keep two people apart: different relations to the user; for a merge by embedding, both named in one
conversation, or names not spelled alike (as many words, one surname, a close spelling); never two names that
differ in a number ("Apollo 11", "Apollo 13"). A merge a user undid
(`splits`) is not made, and the two never end up in one entity through a third. The user is its own entity,
named by what they said their name is.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from difflib import SequenceMatcher
from itertools import combinations

import numpy as np

from memlake.distill.models import USER_SUBJECT
from memlake.graph.observed import Mention, Observation, Said

# Relations to the user that say nothing about who someone is: they never keep two people apart.
GENERIC_RELATIONS = frozenset({"knows", "mentions", "met", "talked_to"})
_HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "the"})
_ORG_SUFFIXES = frozenset({"inc", "ltd", "llc", "corp", "co", "gmbh", "plc"})
_PLACE_GENERIC_WORDS = frozenset({"city", "town"})
_NON_WORD = re.compile(r"[^\w\s]+", re.UNICODE)
PERSON_SPELLING_RATIO = 0.75  # difflib's ratio of two people's names for a merge by embedding
RULES = ("user_name", "normalized_name", "alias", "embedding")
Embed = Callable[[list[str]], np.ndarray]


def normalize_name(name: str) -> str:
    """A name with case, accents, punctuation and extra spaces set aside: "Tomás  Ruiz." -> "tomas ruiz"."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


def name_tokens(name: str, type_: str) -> tuple[str, ...]:
    """The words that identify a name: no honorifics, initials or company suffixes."""
    words = [w for w in normalize_name(name).split() if w not in _HONORIFICS]
    if type_ == "person":
        words = [w for w in words if len(w) > 1]
    if type_ == "organization":
        words = [w for w in words if w not in _ORG_SUFFIXES]
    return tuple(words)


def stable_id(prefix: str, *parts: str) -> str:
    return prefix + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


@dataclass
class Node:
    """One form said, with everything said of it."""

    agent_id: str
    type: str
    name: str
    relations: frozenset[str]  # to the user, generic ones left out; empty: none said
    key: str  # unique within the agent and type: the name, and the relations when a name is split by them
    mentions: list[Mention] = field(default_factory=list)

    @property
    def conversations(self) -> set[str]:
        return {m.conversation_id for m in self.mentions if m.conversation_id}

    @property
    def first_seen(self) -> datetime:
        return min(m.at for m in self.mentions)

    @property
    def is_user(self) -> bool:
        return self.name == USER_SUBJECT


@dataclass(frozen=True)
class Merge:
    """One merge made (or undone): the two nodes, the rule, why, and its score."""

    merge_id: str
    agent_id: str
    type: str
    kept: Node
    merged: Node
    rule: str
    reason: str
    score: float
    undone_by: str | None = None


@dataclass(frozen=True)
class Split:
    """A merge a user undid: by id, or by the two forms when the id is another now."""

    split_id: str
    agent_id: str
    merge_id: str
    kept_name: str | None = None
    merged_name: str | None = None

    def undoes(self, merge_id: str, names: Iterable[str]) -> bool:
        return self.merge_id == merge_id or (
            self.kept_name is not None and self.merged_name is not None
            and {normalize_name(self.kept_name), normalize_name(self.merged_name)} == {normalize_name(n) for n in names}
        )


@dataclass
class Resolution:
    """Each node's entity (a list of nodes per entity), and the merges made or undone."""

    entities: list[list[Node]]
    merges: list[Merge]
    node_of: dict[tuple[str, str, str, str], Node]  # (agent, conversation, type, name lowercased) -> node


def _user_relations(observations: list[Observation]) -> dict[tuple[str, str, str], set[str]]:
    """(agent, conversation, name lowercased) -> the relations between the user and that name said there."""
    found: dict[tuple[str, str, str], set[str]] = {}
    for o in observations:
        if o.relation in GENERIC_RELATIONS:
            continue
        if o.source.lower() == USER_SUBJECT and o.target.lower() != USER_SUBJECT:
            found.setdefault((o.agent_id, o.conversation_id, o.target.lower()), set()).add(o.relation)
        elif o.target.lower() == USER_SUBJECT and o.source.lower() != USER_SUBJECT:
            found.setdefault((o.agent_id, o.conversation_id, o.source.lower()), set()).add(f"~{o.relation}")
    return found


def _all_mentions(said: Said) -> list[Mention]:
    """The mentions, with each relation's two ends said where the relation was said."""
    ends = [Mention(o.agent_id, name, type_, o.conversation_id, o.at, o.message_ids)
            for o in said.observations for name, type_ in ((o.source, o.source_type), (o.target, o.target_type))]
    return said.mentions + ends


def build_nodes(said: Said) -> tuple[list[Node], dict[tuple[str, str, str, str], Node]]:
    """One node per form said; a person's form said with relations to the user no one person has, one per those."""
    relations = _user_relations(said.observations)
    by_form: dict[tuple[str, str, str], list[Mention]] = {}
    for m in _all_mentions(said):
        name = USER_SUBJECT if m.name.lower() == USER_SUBJECT else m.name.strip()
        by_form.setdefault((m.agent_id, m.type if name != USER_SUBJECT else "person", name), []).append(m)
    nodes: list[Node] = []
    node_of: dict[tuple[str, str, str, str], Node] = {}
    for (agent, type_, name), mentions in sorted(by_form.items()):
        in_conversation: dict[str, set[str]] = {}
        for m in mentions:
            in_conversation.setdefault(m.conversation_id, set()).update(
                relations.get((agent, m.conversation_id, name.lower()), set()))
        groups = _relation_groups(in_conversation) if type_ == "person" and name != USER_SUBJECT else {
            "": set(in_conversation)}
        for signature, conversations in sorted(groups.items()):
            key = name if len(groups) == 1 else f"{name} [{signature or 'relation unsaid'}]"
            node = Node(agent, type_, name, frozenset(signature.split(",")) - {""}, key,
                        [m for m in mentions if m.conversation_id in conversations])
            nodes.append(node)
            for conversation in conversations:
                node_of[(agent, conversation, type_, name.lower())] = node
    return nodes, node_of


def _relation_groups(in_conversation: dict[str, set[str]]) -> dict[str, set[str]]:
    """Conversations of one name, grouped by the relations to the user said there: overlapping relations are
    one person; conversations that say none go with the one group there is, else apart."""
    groups: list[tuple[set[str], set[str]]] = []  # (relations, conversations)
    for conversation, rels in sorted(in_conversation.items()):
        if not rels:
            continue
        touching = [g for g in groups if g[0] & rels]
        merged = (set(rels), {conversation})
        for g in touching:
            merged[0].update(g[0])
            merged[1].update(g[1])
            groups.remove(g)
        groups.append(merged)
    silent = {c for c, rels in in_conversation.items() if not rels}
    if len(groups) <= 1:
        rels, conversations = groups[0] if groups else (set(), set())
        return {",".join(sorted(rels)): conversations | silent}
    out = {",".join(sorted(rels)): conversations for rels, conversations in groups}
    if silent:
        out[""] = silent
    return out


def _conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    """Relations to the user that one person cannot both have: both said, none shared."""
    return bool(a) and bool(b) and not (a & b)


def _alias(short: tuple[str, ...], long: tuple[str, ...], type_: str) -> bool:
    """Whether the words of one name (`name_tokens`) are a part of another's (a person's first names agreeing)."""
    if short and short == long:
        return True  # the same words but for an initial, an honorific or a company suffix
    if not short or len(short) >= len(long) or not set(short) < set(long):
        return False
    if type_ in ("place", "event"):  # "Berlin" is not the "Berlin Wall Trail", but it is "Berlin City"
        return set(long) - set(short) <= _PLACE_GENERIC_WORDS
    return type_ != "person" or short[0] == long[0]


def _numbers(words: Iterable[str]) -> set[str]:
    return {w for w in words if any(ch.isdigit() for ch in w)}


@dataclass
class _Components:
    """Union-find over nodes, with what each component holds for the guards."""

    parent: dict[int, int]
    members: dict[int, list[Node]]

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def relations(self, root: int) -> frozenset[str]:
        return frozenset().union(*(n.relations for n in self.members[root]))

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        self.parent[rb] = ra
        self.members[ra].extend(self.members.pop(rb))


def _candidates(nodes: list[Node], embed: Embed | None, threshold: float,
                user_names: set[str]) -> list[tuple[int, int, str, str, float]]:
    """Pairs of nodes (indexes) that may be one entity: (i, j, rule, reason, score), in the order to try them."""
    out: list[tuple[int, int, str, str, float]] = []
    user = next((i for i, n in enumerate(nodes) if n.is_user), None)
    normalized = [normalize_name(n.name) for n in nodes]
    if user is not None:
        own = {normalize_name(name) for name in user_names}
        for i, n in enumerate(nodes):
            # a concept too: the name's reading put it in no person's role ("This is Kim, back with ..."), but the
            # user said it is theirs
            if n.type in ("person", "concept") and not n.is_user and normalized[i] in own:
                out.append((user, i, "user_name", f"the user said their name is {n.name!r}", 1.0))
    others = [i for i, n in enumerate(nodes) if not n.is_user]
    tokens = [name_tokens(n.name, n.type) for n in nodes]
    numbers = [_numbers(words) for words in tokens]
    longer_forms: dict[int, list[int]] = {}
    for i, j in _sharing_a_word(nodes, others, normalized):
        if nodes[i].name == nodes[j].name or numbers[i] != numbers[j]:
            continue  # one form split by its relations stays split; "Heron 2" is not "Heron"
        if normalized[i] == normalized[j]:
            out.append((i, j, "normalized_name", f"{nodes[i].name!r} and {nodes[j].name!r} are one name once "
                        "case, accents and punctuation are set aside", 1.0))
        elif _alias(tokens[i], tokens[j], nodes[i].type):
            longer_forms.setdefault(i, []).append(j)
        elif _alias(tokens[j], tokens[i], nodes[i].type):
            longer_forms.setdefault(j, []).append(i)
    for short, longs in sorted(longer_forms.items()):
        names = {normalize_name(nodes[j].name) for j in longs}
        if len(names) > 1 and nodes[short].type == "person":
            continue  # "Sam" of "Sam Lee" and of "Sam Ortiz": which one is not said
        for j in longs:
            out.append((j, short, "alias", f"{nodes[short].name!r} is part of {nodes[j].name!r}", 1.0))
    out.extend(_typed_forms(nodes, others, normalized))
    if embed is not None and len(others) > 1:
        out.extend(_similar(nodes, others, normalized, embed, threshold))
    return sorted(out, key=lambda c: (RULES.index(c[2]), -c[4], nodes[c[0]].key, nodes[c[1]].key))


def _typed_forms(nodes: list[Node], others: list[int], normalized: list[str]) -> list[tuple[int, int, str, str, float]]:
    """A name said with nothing typing it (a concept) is the one typed entity of that name, if there is one:
    "Lisbon" in a talk that gave no cue is the place "Lisbon" another talk named."""
    typed: dict[str, list[int]] = {}
    for i in others:
        if nodes[i].type != "concept":
            typed.setdefault(normalized[i], []).append(i)
    organizations = [(j, name_tokens(nodes[j].name, "organization")) for j in others
                     if nodes[j].type == "organization"]
    out = []
    for i in others:
        forms = typed.get(normalized[i], []) if nodes[i].type == "concept" else []
        if forms and len({nodes[j].type for j in forms}) == 1:
            out.append((forms[0], i, "normalized_name", f"{nodes[i].name!r}, said untyped, is the "
                        f"{nodes[forms[0]].type} {nodes[forms[0]].name!r}", 1.0))
        elif nodes[i].type == "concept" and not forms:
            # ... and a short name of one organisation is that organisation: "Imogen is enjoying Kingswood" after
            # "Kingswood School" (an organisation's first words, as people shorten it; one only, else which is unsaid)
            short = name_tokens(nodes[i].name, "organization")
            longer = [j for j, words in organizations if short and words[:len(short)] == short
                      and _alias(short, words, "organization")]
            if len(longer) == 1:
                out.append((longer[0], i, "alias", f"{nodes[i].name!r}, said untyped, is the short name of "
                            f"{nodes[longer[0]].name!r}", 1.0))
    return out


def _sharing_a_word(nodes: list[Node], indexes: list[int], normalized: list[str]) -> list[tuple[int, int]]:
    """Pairs (i < j) of one type whose normalized names share a word: the only pairs a name or alias rule can
    join (an alias's words are all in the longer form), found without comparing every pair."""
    by_word: dict[tuple[str, str], list[int]] = {}
    for i in indexes:
        for word in set(normalized[i].split()):
            by_word.setdefault((nodes[i].type, word), []).append(i)
    pairs: set[tuple[int, int]] = set()
    for members in by_word.values():
        pairs.update(combinations(sorted(members), 2))
    return sorted(pairs)


def _similar(nodes: list[Node], others: list[int], normalized: list[str], embed: Embed,
             threshold: float) -> list[tuple[int, int, str, str, float]]:
    """Pairs of one type whose names embed within `threshold`; people's names spelled alike too."""
    out = []
    by_type: dict[str, list[int]] = {}
    for i in others:
        by_type.setdefault(nodes[i].type, []).append(i)
    for members in by_type.values():
        if len(members) < 2:
            continue
        vectors = np.asarray(embed([nodes[i].name for i in members]), dtype=np.float32)
        scores = vectors @ vectors.T
        rows, columns = np.nonzero(np.triu(scores >= threshold, k=1))  # only the pairs over the threshold
        for a, b in zip(rows.tolist(), columns.tolist(), strict=True):
            i, j, score = members[a], members[b], float(scores[a, b])
            if normalized[i] == normalized[j] or _numbers(normalized[i].split()) != _numbers(normalized[j].split()):
                continue  # one name already, or names that differ in a number ("Apollo 11", "Apollo 13")
            if nodes[i].type == "person" and not _spelled_alike(nodes[i].name, nodes[j].name):
                continue
            out.append((i, j, "embedding", f"names embed alike (cosine {score:.2f} >= {threshold:.2f})",
                        round(score, 4)))
    return out


def _spelled_alike(a: str, b: str) -> bool:
    """Whether two people's names may be one name misspelled ("Jon Smith", "John Smith"): as many words, the
    same surname, and spelled alike. An embedding knows words, not people: "Alex" and "Sam" may embed close."""
    ta, tb = name_tokens(a, "person"), name_tokens(b, "person")
    if len(ta) != len(tb) or (len(ta) > 1 and ta[-1] != tb[-1]):
        return False
    return SequenceMatcher(None, " ".join(ta), " ".join(tb)).ratio() >= PERSON_SPELLING_RATIO


def resolve(said: Said, embed: Embed | None, threshold: float, splits: Iterable[Split] = ()) -> Resolution:
    """The entities of every agent: nodes merged by the rules, guarded, minus the merges a user undid."""
    nodes, node_of = build_nodes(said)
    by_agent: dict[str, list[Node]] = {}
    for n in nodes:
        by_agent.setdefault(n.agent_id, []).append(n)
    undone: dict[str, list[Split]] = {}
    for s in splits:
        undone.setdefault(s.agent_id, []).append(s)
    entities: list[list[Node]] = []
    merges: list[Merge] = []
    for agent, agent_nodes in sorted(by_agent.items()):
        groups, made = _resolve_agent(agent_nodes, embed, threshold, said.user_names.get(agent, set()),
                                      undone.get(agent, []))
        entities.extend(groups)
        merges.extend(made)
    return Resolution(entities, merges, node_of)


def _resolve_agent(nodes: list[Node], embed: Embed | None, threshold: float, user_names: set[str],
                   splits: list[Split]) -> tuple[list[list[Node]], list[Merge]]:
    parts = _Components({i: i for i in range(len(nodes))}, {i: [n] for i, n in enumerate(nodes)})
    merges: list[Merge] = []
    kept_apart: list[tuple[int, int]] = []  # pairs a user split: never one entity
    for i, j, rule, reason, score in _candidates(nodes, embed, threshold, user_names):
        a, b = nodes[i], nodes[j]
        merge_id = stable_id("m_", a.agent_id, a.type, *sorted((a.key, b.key)))
        split = next((s for s in splits if s.undoes(merge_id, (a.name, b.name))), None)
        if split is not None:
            merges.append(Merge(merge_id, a.agent_id, a.type, a, b, rule, reason, score, split.split_id))
            kept_apart.append((i, j))
            continue
        ri, rj = parts.find(i), parts.find(j)
        if ri == rj or _guarded(parts, ri, rj, rule, kept_apart):
            continue
        parts.union(i, j)
        merges.append(Merge(merge_id, a.agent_id, a.type, a, b, rule, reason, score))
    return [sorted(members, key=lambda n: (n.first_seen, n.key)) for members in parts.members.values()], merges


def _guarded(parts: _Components, ri: int, rj: int, rule: str, kept_apart: list[tuple[int, int]]) -> bool:
    """Whether two components must stay apart: a pair a user split would join, the user's own entity with
    another's relations, people with different relations to the user, or (by embedding) named in one conversation."""
    if any({parts.find(x), parts.find(y)} == {ri, rj} for x, y in kept_apart):
        return True
    left, right = parts.members[ri], parts.members[rj]
    if rule == "user_name":
        return False
    if left[0].type == "person" and _conflict(parts.relations(ri), parts.relations(rj)):
        return True
    if rule == "embedding" and left[0].type == "person":
        together = set().union(*(n.conversations for n in left)) & set().union(*(n.conversations for n in right))
        return bool(together)
    return False
