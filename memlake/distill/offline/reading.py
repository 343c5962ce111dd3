"""One sentence being read (`Rule`) and what the rules found in a conversation (`Found`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property

from memlake.chunks import SENTENCE_END
from memlake.distill.dates import DateMention, find_date_range, find_dates
from memlake.distill.models import UNNAMED_RELATIVE, USER_SUBJECT, Entity, FactCandidate, KeyDate, Relation, iso_day
from memlake.distill.offline.people_places import Context
from memlake.distill.offline.sentences import Sentence, message_text, sentence_case, split_clauses
from memlake.distill.offline.stands_alone import why_not_standalone, with_its_frame
from memlake.distill.offline.vocabulary import (
    CAP,
    NOT_NAMES,
    ORG,
    RELATIVES,
    SIBLING_ADJECTIVES,
)
from memlake.distill.offline.worth_keeping import why_not_worth_keeping

# A statement cut off before its object ("The user loves their.", "started a new job at the."): a fragment is
# no memory, whichever reader read it.
FRAGMENT_END = re.compile(r"\b(?:a|an|the|and|or|but|so|of|my|our|their|your|very|really|just|because|than|"
                          r"called|named|titled)\W*$",  # "a group called." : the name in quotes was cut out
                          re.I)  # not "with", "in", "on": "the designer the user works with" is whole
# A clause saying a state began ("I started as a nurse at X in 2015", "I've lived here since 2019"): a slot it gives
# holds from the year or month it names. (A bare year is no key date: find_dates leaves it out.)
_BEGAN = re.compile(r"\b(?:started|began|joined|since|moved|settled|became|hired|promoted|promotion)\b", re.I)
_IN_YEAR = re.compile(r"\b(?:in|since|from) (?P<y>(?:19|20)\d{2})\b")
# Where a message names a place of work: "an interview at Globex Labs", "an offer from Hooli", "Halvard's offer",
# "joined Initech". "There" after a verb of working can stand for it (`Rule.with_there_resolved`).
_WORKPLACE_CUE = re.compile(rf"\b(?:(?:interview(?:ing|ed|s)?|job|offer|work(?:ing|s|ed)?|started|joined?|joining) "
                            rf"(?:at|with|from|for) (?:the )?|joined |joining )(?P<org>{ORG})|(?P<org_of>{ORG})'s "
                            rf"(?:job )?offer")
# A statement whose subject is a relative of the user's, or someone close ("The user's dad plans to retire", "The
# user's best friend works as a nurse"): about that person, not the user. Not their thing ("my dad's car broke
# down"), not the two together ("my sister and I"), not a name's introduction ("my brother is Tomasz", a relationship).
_A_RELATIVE_SAID = re.compile(rf"^The user's (?P<adjective>{SIBLING_ADJECTIVES})(?P<kin>{RELATIVES})"
                              rf"(?: (?P<name>{CAP}))? (?!and\b|or\b|&|(?:is|was) {CAP}\W*$)(?=[a-z])")
_WORK_THERE = re.compile(r"\b(started|start|starting|began|begun|working|work|works|worked|joined)\s+there\b")


@dataclass
class Found:
    """What the rules found in one conversation."""

    candidates: list[FactCandidate] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    action_items: list[str] = field(default_factory=list)
    entities: dict[str, Entity] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    key_dates: list[KeyDate] = field(default_factory=list)
    summary_sentences: list[str] = field(default_factory=list)
    # The sentence each candidate was read from, by the candidate's id: its reading prior reads the sentence's parse.
    read_in: dict[int, str] = field(default_factory=dict)


@dataclass
class Rule:
    """One sentence being read: its message, its dates, and where findings go."""

    sentence: Sentence
    context: Context
    found: Found
    dates: list[DateMention]

    @property
    def message_id(self) -> str:
        return self.sentence.message.message_id

    @property
    def said(self) -> date:
        return self.sentence.message.created_at.date()

    @cached_property
    def said_before(self) -> str:
        """The message's text before this sentence, as the sentences were split from it ("" for its first); worked
        out once per sentence, though several readers ask."""
        text = message_text(self.sentence.message)
        return text[: max(text.find(self.sentence.display), 0)]

    @cached_property
    def introduced_sentence(self) -> str:
        """The sentence whole, as said (not the part of it being read), after what introduces it when a colon ends
        the text before it ("Rewrite this for my cover letter: I work as ..."): its reading prior reads both."""
        before = self.said_before.rstrip()
        if not before.endswith(":"):
            return self.sentence.display
        return f"{SENTENCE_END.split(before)[-1]} {self.sentence.display}"

    def named_earlier_in_message(self) -> str | None:
        """The one person or pet the user named earlier in the same message, whom "he" or "her" can stand for."""
        before = self.said_before
        names = self.named_in(before)
        if len(names) > 1:  # "My tortoise Biscuit ... And my brother Tomasz lives in Cardiff. He works as ...": the
            names = self.named_in(re.split(r"(?<=[.!?])\s+", before.strip())[-1])  # one the sentence before named
        return next(iter(names)) if len(names) == 1 else None

    def named_in(self, text: str) -> set[str]:
        """The people and pets the conversation knows that `text` names, and names it gives ("a dog called Max")."""
        names = {full for word, full in self.context.people.items() if re.search(rf"\b{re.escape(word)}\b", text)}
        names |= {m.group(1) for m in re.finditer(rf"\b(?:named|called) ({CAP})", text)
                  if m.group(1).strip(".,") not in NOT_NAMES}
        return {name.strip(".,!?") for name in names}

    def workplace_named_earlier(self) -> str | None:
        """The one organisation the user named earlier in the same message as a place to work, be interviewed or
        be offered a job ("an interview at Globex Labs", "Halvard's offer"), whom "there" can stand for."""
        before = self.said_before
        # (a name ending its sentence keeps no full stop: "... works at Globex. She has worked there since 2019")
        named = {(m.group("org") or m.group("org_of")).rstrip(".") for m in _WORKPLACE_CUE.finditer(before)}
        named = {org for org in named if org.split()[0] not in NOT_NAMES and org not in self.context.people}
        return next(iter(named)) if len(named) == 1 else None

    def with_there_resolved(self, clause: str) -> str:
        """ "I started there last Monday" as "I started at Halvard last Monday" when the message named one workplace
        before it; the clause as it is otherwise."""
        if not _WORK_THERE.search(clause):
            return clause
        org = self.workplace_named_earlier()
        return _WORK_THERE.sub(lambda m: f"{m.group(1)} at {org}", clause) if org else clause

    def date_in(self, clause: str, context: str | None = None) -> DateMention | None:
        """The first date expression inside `clause` (resolved against when it was said)."""
        # Tense comes from the clause that holds it: "I'm planning to visit Japan in April" is next April.
        if context is None:
            context = next((c for c in split_clauses(self.sentence.text) if clause.strip() and clause.strip() in c),
                           clause)
        mentions = find_dates(clause, self.sentence.message.created_at, context=context)
        return mentions[0] if mentions else None

    def began(self, value: str) -> date | None:
        """The past year, month or day the clause holding `value` says it began, if it says so."""
        clause = next((c for c in split_clauses(self.sentence.text) if value.lower() in c.lower()), "")
        if not _BEGAN.search(clause):
            return None
        return self.past_start_in(clause)

    def past_start_in(self, clause: str) -> date | None:
        """The past year, month or day `clause` names ("since June", "in 2019"), if it names one."""
        when = self.date_in(clause)
        year = _IN_YEAR.search(clause)
        day = when.day if when is not None else date(int(year.group("y")), 1, 1) if year else None
        return day if day is not None and day < self.said else None

    def add(self, type_: str, value: str, content: str, *, subject: str = USER_SUBJECT, slot: str | None = None,
            confidence: float = 0.9, importance: float = 0.6, tags: tuple[str, ...] = (),
            valid_from: date | str | None = None, valid_until: date | str | None = None) -> FactCandidate | None:
        if FRAGMENT_END.search(content) or not value.strip(" .,"):
            return None
        if slot is None and content.startswith("The user ") and why_not_worth_keeping(content[len("The user "):]):
            return None  # whichever reader read it: "The user loves the view" names no view
        if subject == USER_SUBJECT and slot is None and type_ != "relationship":
            subject, content = self._said_of_a_relative(content)
        if slot is None:  # "always bakes bread" keeps the "when they're anxious" its sentence said
            content = with_its_frame(content, self.sentence.text)
            if why_not_standalone(content, self.sentence.text):
                return None  # "The user took that pic in Tokyo": only the chat shows which
        if type_ == "commitment" and valid_until is None:
            # a plan for a stretch of days ("going to Lisbon from 2025-08-14 to 2025-08-21") is no plan once its last
            # day is over, whichever reader read it
            stretch = find_date_range(content, self.sentence.message.created_at)
            valid_until = stretch.last + timedelta(days=1) if stretch else self._end_of_a_stretch(content)
        if valid_from is None:  # a slot holds from when the user says it began ("since 2016"), else from the saying
            valid_from = (self.began(value) if slot else None) or self.said
        candidate = FactCandidate(
            type=type_,  # type: ignore[arg-type]
            subject=subject,
            slot=slot,
            value=value.strip(),
            content=sentence_case(content),
            confidence=confidence,
            importance=importance,
            tags=list(tags),
            valid_from=iso_day(valid_from),
            valid_until=iso_day(valid_until),
            message_ids=[self.message_id],
        )
        self.found.candidates.append(candidate)
        self.found.read_in[id(candidate)] = self.introduced_sentence
        return candidate

    def _said_of_a_relative(self, content: str) -> tuple[str, str]:
        """The subject a statement about "my <relative>" is about, and the statement as said of them: the relative's
        name when the conversation gave it ("my brother Tomasz" earlier: "Tomasz is moving ..."), else "the user's
        dad" (one subject for every statement about that relative, never the user's own fact)."""
        m = _A_RELATIVE_SAID.match(content)
        if not m:
            return USER_SUBJECT, content
        named = self.context.person(m.group("name")) if m.group("name") else None
        if m.group("name") and not named:
            return USER_SUBJECT, content  # "my boss Gandalf-like ...": a word after it that names no one known
        person = named or self.context.relative(m.group("kin"))
        if person.startswith(UNNAMED_RELATIVE):
            return f"{UNNAMED_RELATIVE}{m.group('adjective')}{m.group('kin').lower()}", content
        return person, f"{person} {content[m.end():]}"

    def _end_of_a_stretch(self, content: str) -> date | None:
        """The day after the season or part of a month a plan names for itself ("moving to Swansea in summer 2026"
        is no plan from September on). A plan for a day or a month keeps its decay, as before (a month's plan carried
        out after it is closed on the day told, which the samples and the fold's outcome tests rely on)."""
        mentions = [m for m in find_dates(content, self.sentence.message.created_at) if m.precision == "stretch"]
        last = max((m.last for m in mentions), default=None)
        return last + timedelta(days=1) if last is not None and last >= self.said else None

    def entity(self, name: str, type_: str) -> None:
        if not name:
            return
        entity = self.found.entities.setdefault(name.lower(), Entity(name=name, type=type_))
        if self.message_id not in entity.message_ids:
            entity.message_ids.append(self.message_id)

    def relation(self, source: str, relation: str, target: str, confidence: float = 0.9,
                 valid_from: str | None = None, valid_until: str | None = None) -> None:
        self.found.relations.append(Relation(source=source, relation=relation, target=target,
                                             confidence=confidence, valid_from=valid_from,
                                             valid_until=valid_until))

    def key_date(self, mention: DateMention, description: str) -> None:
        self.found.key_dates.append(KeyDate(date=mention.iso, description=sentence_case(description),
                                            message_ids=[self.message_id]))
