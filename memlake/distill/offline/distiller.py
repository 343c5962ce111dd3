"""The offline distiller: every user sentence through the readers, then summary, topics and dedupe."""

from __future__ import annotations

import re
from dataclasses import replace

from memlake.distill.confidence import offline_prior, sets_a_frame
from memlake.distill.dates import find_dates
from memlake.distill.models import Conversation, DistilledSession, Entity, FactCandidate, Usage
from memlake.distill.offline.assistant_chat import is_assistant_chat, without_chat_talk
from memlake.distill.offline.dedupe import (
    dedupe_candidates,
    dedupe_key_dates,
    dedupe_relations,
    drop_said_again,
    drop_short_duplicates,
    unique,
)
from memlake.distill.offline.entities import named_entities
from memlake.distill.offline.meaning import by_meaning
from memlake.distill.offline.people_places import Context
from memlake.distill.offline.readers.about_people import read_about_person
from memlake.distill.offline.readers.action_items import read_action_items
from memlake.distill.offline.readers.commitment import read_commitment, read_trip_with_days
from memlake.distill.offline.readers.correction import read_correction
from memlake.distill.offline.readers.decision import read_decision
from memlake.distill.offline.readers.endings import read_ending
from memlake.distill.offline.readers.events import read_dated_event
from memlake.distill.offline.readers.frames import pretend_messages
from memlake.distill.offline.readers.own_age import read_own_age
from memlake.distill.offline.readers.preferences import read_preferences
from memlake.distill.offline.readers.referents import read_with_referents
from memlake.distill.offline.readers.self_statements import (
    PRAISE_AFTER_A_DASH,
    read_self_sentence,
    read_self_statement,
    with_the_i_left_out,
)
from memlake.distill.offline.readers.skills import read_skills
from memlake.distill.offline.readers.table import may_anchor, read_by_table
from memlake.distill.offline.readers.table_people import without_played_names
from memlake.distill.offline.readers.table_work import drop_inferred_homes
from memlake.distill.offline.readers.taste_changes import may_tell_a_taste_change, read_taste_change
from memlake.distill.offline.reading import Found, Rule
from memlake.distill.offline.sentences import (
    QUOTED,
    Sentence,
    split_clauses,
    split_sentences,
    with_the_user_as_subject,
    without_addressee,
    without_asides,
    without_telling,
)
from memlake.distill.offline.summary import salience_of, summary_of, topics_of
from memlake.distill.offline.vocabulary import HYPOTHETICAL
from memlake.nlp import parse_all
from memlake.nlp.words import letter_words

OFFLINE_DISTILLER_VERSION = "memlake-offline-27"


class OfflineDistiller:
    """Fills a `DistilledSession` from rules; deterministic, no model."""

    name = OFFLINE_DISTILLER_VERSION
    prompt_version: str | None = None

    def __init__(self) -> None:
        self.usage = Usage()

    def distill(self, conversation: Conversation) -> DistilledSession:
        return distill_offline(conversation)


def distill_offline(conversation: Conversation) -> DistilledSession:
    """The rule-based DistilledSession of one conversation."""
    sentences = [s for m in conversation.messages if m.role == "user" for s in split_sentences(m)]
    addressees = _addressees(conversation)
    other_side = next(iter(addressees)) if len(addressees) == 1 else None  # whom "you" stands for, when named
    for sentence in sentences:
        sentence.text = without_asides(without_telling(without_addressee(sentence.text, addressees)))
    _parse_what_the_readers_will(sentences)
    found = Found()
    context = Context.build(sentences)
    context.pretend = pretend_messages(sentences)
    for sentence in sentences:
        if sentence.question:
            _read_request(sentence, context, found)
            continue
        _read_sentence(sentence, context, found, other_side)
    for entity in context.entities():
        found.entities.setdefault(entity.name.lower(), entity)
    _add_named_entities(conversation, found)
    candidates = by_meaning(without_chat_talk(conversation, drop_inferred_homes(drop_said_again(dedupe_candidates(
        without_played_names(found.candidates, context))), sentences)))
    assistant_chat = is_assistant_chat(conversation)
    framed = _framed_messages(conversation, sentences) if assistant_chat else set()
    read_in = _sentences_read_in(candidates, found, sentences)
    candidates = _with_reading_priors(candidates, read_in, assistant_chat, framed)
    return DistilledSession(
        summary=summary_of(conversation, sentences, found),
        topics=topics_of(conversation, context),
        decisions=unique(found.decisions),
        action_items=unique(found.action_items),
        key_dates=dedupe_key_dates(found.key_dates),
        entities=drop_short_duplicates(list(found.entities.values())),
        relations=dedupe_relations(found.relations),
        fact_candidates=candidates,
        salience=salience_of(candidates, found, conversation),
    )


# For each reader that reads the parse: whether it will parse a statement's text (only such texts are parsed).
_PARSED_BY_READERS = (
    may_anchor,  # read_by_table
    may_tell_a_taste_change,  # read_taste_change
)


def _parse_what_the_readers_will(sentences: list[Sentence]) -> None:
    """Parse, in one batch, the statements the readers will ask the parse of: a parse alone costs about four times
    its share of a batch (memlake.nlp.language_model); the readers' own `parse` calls then find them cached."""
    parse_all([s.text for s in sentences if not s.question and any(will(s.text) for will in _PARSED_BY_READERS)])


def _sentences_read_in(candidates: list[FactCandidate], found: Found, sentences: list[Sentence]) -> list[str]:
    """The sentence each candidate was read from. The readers, the dedupe and the meaning pass hand on copies of what
    was read, which the reading no longer knows: for those, the sentence of its message sharing the most words with
    it ("" when none does)."""
    in_message: dict[str, list[Sentence]] = {}
    for sentence in sentences:
        in_message.setdefault(sentence.message.message_id, []).append(sentence)
    return [found.read_in.get(id(c)) or _sharing_most_words(c.content, [s for m in c.message_ids
                                                                         for s in in_message.get(m, ())])
            for c in candidates]


def _sharing_most_words(content: str, sentences: list[Sentence]) -> str:
    words = _long_words(content)
    shared, best = max(((len(words & _long_words(s.display)), s.display) for s in sentences), default=(0, ""))
    return best if shared else ""


def _long_words(text: str) -> set[str]:
    return {word for word in letter_words(text) if len(word) >= 3}


# The user's turns a pretend frame is looked for in: a frame is set up as a conversation opens, and parsing every turn
# of a long assistant chat to find one would cost more than the rest of its reading (RealMem, 2026-11-29).
FRAME_TURNS = 3


def _framed_messages(conversation: Conversation, sentences: list[Sentence]) -> set[str]:
    """The user's messages said inside a pretend frame: from the first turn that sets one up (role-play, practice,
    "reply as ...": `memlake.distill.confidence.sets_a_frame`), among the user's first `FRAME_TURNS`, to the end of
    the conversation."""
    said = [m.message_id for m in conversation.messages if m.role == "user"]
    opening = [s for s in sentences if s.message.message_id in said[:FRAME_TURNS]]
    docs = parse_all([s.text for s in opening])
    first = next((s.message.message_id for s, doc in zip(opening, docs, strict=True) if sets_a_frame(doc)), None)
    return set(said[said.index(first):]) if first is not None else set()


def _with_reading_priors(candidates: list[FactCandidate], sentences: list[str], assistant_chat: bool,
                         framed: set[str]) -> list[FactCandidate]:
    """Each candidate with the prior of its reading (`memlake.distill.confidence.offline_prior`) as its confidence; the
    facts and their sentences parsed in one batch first."""
    parse_all([c.content for c in candidates] + [s for s in sentences if s.strip()])
    return [c.model_copy(update={"confidence": offline_prior(
        c.content, sentence, slot=c.slot, subject=c.subject, tags=c.tags, assistant_chat=assistant_chat,
        framed=any(m in framed for m in c.message_ids))})
        for c, sentence in zip(candidates, sentences, strict=True)]


def _addressees(conversation: Conversation) -> set[str]:
    """The first names of the other side, as the user may call them ("Thanks, Gina!")."""
    users = {m.speaker for m in conversation.messages if m.role == "user"}
    return {m.speaker.split()[0] for m in conversation.messages
            if m.role != "user" and m.speaker and m.speaker not in users and m.speaker[0].isupper()}


def _add_named_entities(conversation: Conversation, found: Found) -> None:
    """The names both speakers say, beside those the rules typed: a rule's type stands (the name the user gives as
    their own is a person's), every message naming it is kept."""
    for told in found.candidates:
        if told.slot == "name" and told.value:
            found.entities.setdefault(told.value.lower(), Entity(name=told.value, type="person",
                                                                 message_ids=list(told.message_ids)))
    for entity in named_entities(conversation):
        known = found.entities.setdefault(entity.name.lower(), entity)
        if known is not entity:
            known.message_ids[:] = list(dict.fromkeys(known.message_ids + entity.message_ids))


# Every clause of a statement goes through every reader, in this order: the order of the findings.
_READERS = (
    read_ending,
    read_preferences,
    read_about_person,
    read_own_age,
    read_decision,
    read_commitment,
    read_trip_with_days,
    read_dated_event,
    read_skills,
    read_action_items,
)


def _read_sentence(sentence: Sentence, context: Context, found: Found, other_side: str | None) -> None:
    rule = Rule(sentence, context, found, find_dates(sentence.text, sentence.message.created_at))
    before = len(found.candidates)
    dated_before = len(found.key_dates)
    correction = read_correction(rule)
    if not correction:
        for said in split_clauses(sentence.text):
            # the slot readers read a change with the user as subject ("Initech hired me" as "I joined Initech"); what
            # no slot reader names is kept as said
            clause, as_the_user = said, rule.with_there_resolved(with_the_user_as_subject(said))
            if not PRAISE_AFTER_A_DASH.search(sentence.text):  # ("Making videos - that's awesome!" praises)
                # "Started at Initech on Monday" is read as "I started ..."
                clause, as_the_user = with_the_i_left_out(clause), with_the_i_left_out(as_the_user)
            read_by_rules = len(found.candidates)
            for reader in _READERS:
                reader(rule, as_the_user)
            if len(found.candidates) == read_by_rules:  # what no rule names, said plainly about the user's life
                read_self_statement(rule, clause)
        read_by_table(rule, since=before)  # the patterns over the parse, wherever the sentence puts the clause
        read_taste_change(rule, since=before)  # a taste told with its change: the one now current, the old ended
        if len(found.candidates) == before:  # no clause alone said enough: the sentence as a whole may
            read_self_sentence(rule)
        if len(found.candidates) == before:  # ... once its titles, "you" and "it" are resolved from the message
            read_with_referents(rule, other_side)
    if len(found.candidates) == before and not correction:
        _read_parts(sentence, context, found, other_side)
    if len(found.candidates) > before:
        found.summary_sentences.append(sentence.display)
    if len(found.key_dates) == dated_before and not HYPOTHETICAL.search(sentence.text):
        for mention in rule.dates:
            if mention.text.lower() not in ("today", "tonight"):  # the conversation's own day says nothing
                rule.key_date(mention, _key_date_description(sentence.display))


# Statements joined by a dash, a semicolon or a colon: each may say alone what the whole, with a "you" or a
# reaction in its other part, did not ("I had to share something cool with you - I asked my family to join ...").
_JOINED_STATEMENTS = re.compile(r"\s+[-\u2013\u2014]\s+|;\s+|:\s+(?=[A-Z])")


def _read_parts(sentence: Sentence, context: Context, found: Found, other_side: str | None) -> None:
    """The parts of a sentence that gave nothing as a whole, each read as a sentence of its own."""
    parts = [p.strip() for p in _JOINED_STATEMENTS.split(sentence.text) if p.strip()]
    if len(parts) < 2 or PRAISE_AFTER_A_DASH.search(sentence.text):  # "Making videos - that's awesome!" praises
        return
    for part in parts:
        _read_sentence(replace(sentence, text=part), context, found, other_side)


def _read_request(sentence: Sentence, context: Context, found: Found) -> None:
    """Questions give no facts, but a request about the user's name says the name."""
    rule = Rule(sentence, context, found, [])
    before = len(found.candidates)
    read_by_table(rule, only=frozenset({"name"}))  # "Could you call me Kate from now on?"
    if len(found.candidates) > before:
        found.summary_sentences.append(sentence.display)


def _key_date_description(text: str) -> str:
    text = QUOTED.sub(" ", text).strip()
    return text if len(text) <= 160 else text[:157].rsplit(" ", 1)[0] + "…"
