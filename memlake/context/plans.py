"""What each section of a context block is made of: the reads `Memory` already has, as ordered candidate lines.

`compact_plans` gives the overrides, the section the gate chose and the matched excerpts; `full_plans` every
section of `memlake.requests.FULL_SECTIONS`. The assembler then fits them to the budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from memlake.context import lines as to_lines
from memlake.context.assemble import ContextLine, SectionPlan
from memlake.context.gate import GateDecision, first_name_in
from memlake.distill.models import USER_SUBJECT
from memlake.lake import query
from memlake.requests import FULL_SECTIONS
from memlake.text import content_words

HITS = 10  # search hits a section of facts or summaries is made from, best first
# turn hits: as many as an 800-token section of chat lines holds (LoCoMo's blocks left a fifth of it unused at 10)
TURN_HITS = 40
# A message with fewer content words that fires no cue is small talk: its block holds no excerpts
SAYS_SOMETHING = 4
_NOT_NAMES = {"user", "assistant", "system", "tool", "me", "you"}
_SPEAKERS = ("SELECT agent_id, speaker, min(created_at) AS first_said FROM transcripts.turns "
             "WHERE speaker IS NOT NULL GROUP BY agent_id, speaker")


def names_said(memory: Any, agent_id: str, as_of: datetime | None) -> list[str]:
    """The proper names in an agent's conversations by `as_of` (speakers, episodes' entities and the first names
    of their people), longest first so that "Mary Ann" is found before "Mary": what the gate recognises as
    something said before. Those said by now are read again only after a lake write (~3 ms of a context block)."""
    if as_of is None:
        return list(memory._on_lake(f"names_said/{agent_id}", lambda: _names_said(memory, agent_id, None)))
    return _names_said(memory, agent_id, as_of)


def _names_said(memory: Any, agent_id: str, as_of: datetime | None) -> list[str]:
    episodes = memory.episodes(agent_id, until=as_of)
    entities = [e for row in episodes["entities"].to_list() for e in (row or []) if e and e["name"]]
    # a person is called by the first name too ("Tomás" for "Tomás Ruiz")
    first_names = [e["name"].split()[0] for e in entities if e["type"] == "person" and " " in e["name"].strip()]
    first_said = memory._on_lake("speakers", lambda: query(memory.lake.connect(), _SPEAKERS).with_columns(
        pl.col("first_said").dt.convert_time_zone("UTC")))  # DuckDB says Etc/UTC
    said = first_said.filter(pl.col("agent_id") == agent_id)
    speakers = (said if as_of is None else said.filter(pl.col("first_said") <= as_of))["speaker"].to_list()
    names = {n.strip() for n in [*speakers, *(e["name"] for e in entities), *first_names]
             if len(n.strip()) >= 3 and n.strip()[0].isupper() and n.strip().lower() not in _NOT_NAMES}
    return sorted(names, key=lambda n: (-len(n), n))


@dataclass(frozen=True)
class Ask:
    """One context request, as the plans read it: the question, whose memory, as of when, what the gate chose."""

    memory: Any  # the `Memory` to read (typed loosely: memlake.api imports this module)
    query: str
    agent_id: str
    gate: GateDecision
    current: pl.DataFrame  # the facts in force at `as_of`
    as_of: datetime | None  # None: now

    @property
    def said_by(self) -> datetime | None:
        """The exclusive end of what the block may hold: what was said at the `as_of` instant itself counts."""
        return None if self.as_of is None else self.as_of + timedelta(microseconds=1)

    def search(self, scope: str) -> pl.DataFrame:
        """The search's hits for the block, above the relevance floor: a hit scoring under `context_relevance_floor`
        times the best hit's score is left out, so a block holds less than its budget when less is relevant."""
        hits = self.memory.search(self.query, self.agent_id, k=TURN_HITS if scope == "chunks" else HITS,
                                  scope=scope, as_of=self.as_of, until=self.said_by)
        floor = self.memory.settings.context_relevance_floor
        if floor <= 0 or hits.height == 0:
            return hits
        return hits.filter(pl.col("score") >= floor * hits["score"].max())


def compact_plans(ask: Ask) -> list[SectionPlan]:
    """The overrides, the section the gate chose, then the matched excerpts of past turns in what the budget
    leaves (the assembler leaves out a line already in). A facts section with no fact the question names or
    shares a word with gives way to the excerpts. When no cue fired, excerpts only for a message that says
    something (`SAYS_SOMETHING` content words) and shares words with a past turn: "thanks, sounds good" gets
    the overrides alone."""
    plans = [SectionPlan("overrides", to_lines.override_lines(ask.current))]
    section = ask.gate.section
    if section == "facts":
        facts = matched_facts(ask)
        if facts:
            plans.append(SectionPlan("facts", facts))
    elif section == "identity":
        plans.append(SectionPlan("identity", to_lines.identity_lines(ask.current)))
    elif section == "episodes":
        plans.append(SectionPlan("episodes", to_lines.hit_lines(ask.search("episodes"), "episode")))
    turns = ask.search("chunks") if section != "none" or len(content_words(ask.query)) >= SAYS_SOMETHING else None
    if turns is not None and (section != "none" or turns["text_match"].is_not_null().any()):
        plans.append(SectionPlan("transcript" if section == "transcript" else "excerpts",
                                 to_lines.hit_lines(turns, "turn")))
    return plans


def matched_facts(ask: Ask) -> list[ContextLine]:
    """The current facts the question asks about, in `working_memory` order (with their past when the question asks
    about it): those in a slot it names of whom it is about (a subject it names, else the user), and those that say
    something it asks: a fact of whom it is about, or one the fact search found by its words (of that subject when
    it names one), that shares a topic word with it (`topic_words`: a lemma, no name). That is the facts' relevance
    floor, so a question that names
    little gets a short section. The nearest vectors alone are no match (there always are some: a block filled with
    them held about half unrelated facts), nor is a name alone: "what instrument does Nadia play?" gets her violin,
    not her greyhound, her allergy and her job."""
    hits = ask.search("facts")
    current = ask.current
    subject = pl.col("subject").str.to_lowercase()
    named = (ask.gate.fired or "").lower()
    whom = named if named in set(current["subject"].str.to_lowercase().to_list()) else "user"
    slotted = current.filter((subject == whom) & pl.col("slot").is_in(list(ask.gate.slots)))["fact_id"].to_list()
    found = set(hits.filter(pl.col("text_match").is_not_null())["fact_id"].to_list())
    said = current.filter(pl.col("fact_id").is_in(list(found)) | (subject == named))
    if whom != "user":  # a question about someone it names: "where does Nadia live?" is not about the user's home
        said = said.filter(subject == whom)
    asked, *words = _topic_words([ask.query, *said["content"].to_list()])
    on_topic = [fact_id for fact_id, own in zip(said["fact_id"].to_list(), words, strict=True) if own & asked]
    wanted = {*slotted, *on_topic}
    if not wanted:
        return []
    return [line for line in working_memory(ask, hits) if line.ref.split("@")[0] in wanted]


def _topic_words(texts: list[str]) -> list[frozenset[str]]:
    """`memlake.nlp.topic_words`, or without the language model each text's content words but capitalised ones."""
    from memlake.nlp import LanguageModelMissing, topic_words  # deferred: spaCy loads in seconds

    try:
        return topic_words(texts)
    except LanguageModelMissing:
        return [frozenset(word for word in content_words(" ".join(w for w in text.split() if not w[:1].isupper())))
                for text in texts]


def working_memory(ask: Ask, hits: pl.DataFrame) -> list[ContextLine]:
    """Every current fact, ordered for the question, with its past when the question asks about it."""
    history = (ask.memory.facts(ask.agent_id, as_of=ask.as_of, include_history=True)
               if ask.gate.wants_history else None)
    return to_lines.fact_lines(ask.current, history, hits["fact_id"].to_list(), ask.gate)


def named_relations(ask: Ask) -> list[ContextLine]:
    """The graph's relations in force at `as_of` that have an entity the question names (by its name or an
    alias, as a whole word) at either end: "where does Leela live?" gives "Leela lives in Porto"."""
    entities = ask.memory.entities(ask.agent_id)
    users = {row["entity_id"] for row in entities.iter_rows(named=True)
             if USER_SUBJECT in (row["name"], *(row["aliases"] or []))}  # "user" is their name or an alias
    named = [row["entity_id"] for row in entities.iter_rows(named=True) if row["entity_id"] not in users
             and first_name_in(ask.query, [row["name"], *(row["aliases"] or [])])]
    if not named:
        return []
    relations = ask.memory.relations(ask.agent_id, as_of=ask.as_of)
    if ask.as_of is None:
        relations = relations.filter(pl.col("status") == "active")
    touching = relations.filter(pl.col("source_entity_id").is_in(named) | pl.col("target_entity_id").is_in(named))
    return to_lines.graph_relation_lines(touching, users)




def full_plans(ask: Ask) -> list[SectionPlan]:
    """Every section of `memlake.requests.FULL_SECTIONS`, in its order, under its budget, after the overrides."""
    hits = ask.search("facts")
    working = working_memory(ask, hits)
    by_id = {line.ref.split("@")[0]: line for line in working if line.until is None}
    recent = ask.memory.episodes(ask.agent_id, until=ask.as_of).sort("conversation_started_at", descending=True)
    candidates = {
        "profile": to_lines.identity_lines(ask.current),
        "working memory": working,
        "summaries": to_lines.episode_lines(recent),
        "key relationships": [*named_relations(ask), *to_lines.relationship_lines(ask.current)],
        "matched excerpts": to_lines.hit_lines(ask.search("chunks"), "turn"),
        "matched memories": [by_id[fact_id] for fact_id in dict.fromkeys(hits["fact_id"].to_list())
                             if fact_id in by_id],
        "matched summaries": to_lines.hit_lines(ask.search("episodes"), "episode"),
    }
    return [SectionPlan("overrides", to_lines.override_lines(ask.current)),
            *(SectionPlan(name, candidates[name], tokens) for name, tokens in FULL_SECTIONS)]
