"""The people, projects, organisations and places one conversation names, read before any rule runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memlake.distill.models import UNNAMED_RELATIVE, Entity
from memlake.distill.offline.kinds import is_animal
from memlake.distill.offline.sentences import QUOTED, Sentence, split_clauses, trim_name
from memlake.distill.offline.vocabulary import (
    AGE,
    CAP,
    HYPOTHETICAL,
    NAME,
    NEGATION,
    NOT_NAMES,
    OTHER_RELATIVES,
    PARTNER_WORDS,
    REPORTED,
    ROLE,
    SIBLING_ADJECTIVES,
    SIBLING_WORDS,
    STOPWORDS,
)


def without_lead_in(text: str) -> str:
    """`text` without a capitalised word that only leads in before a name ("Also Giulia ..." -> "Giulia ...")."""
    lead_in = re.match(rf"^(?P<word>{CAP}),?\s+(?=[A-ZÀ-ÖØ-Þ])", text)
    return text[lead_in.end():] if lead_in and lead_in.group("word") in NOT_NAMES else text


@dataclass
class Context:
    """Names the user introduces in the conversation, to resolve first names and 'she'/'he'."""

    people: dict[str, str] = field(default_factory=dict)  # any form ("Tomás") -> full name ("Tomás Ruiz")
    projects: list[str] = field(default_factory=list)  # "Project Heron"
    organizations: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    # the user's pets by name, with the kind of animal ("Biscuit" -> "tortoise"); a pet is in `people` too, so that
    # "he" and its name resolve as a person's do, but it is no person
    pets: dict[str, str] = field(default_factory=dict)
    # the user says a relationship of theirs ended ("Jonas and I broke up"): "I'm with Sam now" then names a partner
    breakup: bool = False
    # the user says they changed or left a job ("I left Acme", "new job"): "I'm now at Globex" then names an employer
    job_change: bool = False
    # the relatives the user named, by the word they were named with ("my brother Tomasz": "brother" -> "Tomasz");
    # a word named for two people ("my sister Ana", "my sister Eve") names neither (`kin_ambiguous`)
    kin: dict[str, str] = field(default_factory=dict)
    kin_ambiguous: set[str] = field(default_factory=set)
    # the messages said inside a role-play or a pretend game the user set up, from the message setting it on: a name
    # said there is no name of the user's (`readers.frames.pretend_messages`, set by the distiller: the readers read
    # this module, so it reads none of theirs)
    pretend: set[str] = field(default_factory=set)
    # names the user played or wrote in a text to rework ("my name is Carla" in a role-play): not the user's
    played: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, sentences: list[Sentence]) -> Context:
        context = cls()
        relatives = "|".join(PARTNER_WORDS + SIBLING_WORDS + OTHER_RELATIVES)
        for sentence in sentences:
            text = QUOTED.sub(" ", sentence.text)
            for m in re.finditer(rf"\b[Mm]y {SIBLING_ADJECTIVES}(?P<kin>{relatives}) (?P<name>{NAME})", text):
                context.add_person(trim_name(m.group("name")))
                context.add_kin(m.group("kin"), trim_name(m.group("name")))
            for m in [*_OWN_PET.finditer(text), *_HAS_PET.finditer(text)]:
                kind, name = m.group("kind").lower(), trim_name(m.group("name"))
                if not name or name.split()[0] in NOT_NAMES or kind in _KIN_WORDS or kind in STOPWORDS:
                    continue  # "my brother Tomasz", "my husband and I"
                if is_animal(kind):  # "my tortoise Biscuit"
                    context.add_pet(name, kind)
            for m in re.finditer(rf"(?P<name>{NAME}) is (?:the|our|my) {ROLE}\b", text):
                context.add_person(trim_name(m.group("name")))
            # a name is a person by what is said of it: it lives somewhere, works somewhere, is a nurse
            # (a title may come without "a": "Tomasz is now lead pharmacist at Morriston"); a birthday is a person's
            for m in re.finditer(rf"(?P<name>{NAME})(?: (?:still |now |also )?(?:lives in|works (?:as|at|for)\b)|"
                                 rf"(?:'s| is) (?:now |also )?(?:(?:a|an) )?{ROLE}\b|'s birthday\b)", text):
                context.add_person(trim_name(m.group("name")))
            # ... or moves from one place to another, is promoted, reaches an age: "Giulia moved from Leeds to York",
            # "Tom has moved to Swansea", "Giulia got promoted to ward manager", "Biscuit turned four" (not "Finally
            # moved to Seattle": a lead-in)
            for m in re.finditer(rf"(?P<name>{CAP}(?: {CAP})?) (?:just |recently )?(?:moved from {CAP}(?: {CAP})* to|"
                                 rf"has moved to|is moving to|"
                                 rf"(?:got |was |has been )promoted\b|(?:got|had|was given) a promotion\b|turned {AGE}|"
                                 # "Ana got a job at Initech", "Imogen has just landed a new job as ..."
                                 rf"(?:has |had )?(?:just |recently )?(?:got|landed|taken|took|found) (?:a |an )?"
                                 rf"(?:new )?job (?:as|at|with)\b)", text):
                name = without_lead_in(m.group("name"))
                if not any(word in NOT_NAMES or word == "I" or word.endswith("ly") for word in name.split()):
                    context.add_person(trim_name(name))
            # ... or is about to move or to start a job: "Ana's going to move to York", "Tom's moving to Berlin",
            # "Ana is going to start at Initech" (the "'s" is no part of the name)
            for m in re.finditer(rf"(?P<name>{CAP}(?: {CAP})?)(?:'s| is) (?:(?:going|planning|about) to (?:(?:move|"
                                 rf"relocate) |(?:start|begin) (?:at|work at|a (?:new )?job)\b|join (?=[A-Z]))|"
                                 rf"(?:moving|relocating) to (?=[A-Z])|starting (?:at|a new job)\b)",
                                 text):
                context.add_person(trim_name(without_lead_in(m.group("name"))))
            for m in re.finditer(rf"\b(?P<name>{CAP}) and I\b", text):
                context.add_person(trim_name(m.group("name")))
            for m in re.finditer(rf"\b[Pp]roject (?P<name>{CAP})", text):
                if m.group("name").strip(".,") in NOT_NAMES:  # "a project I am working on" names no project
                    continue
                name = f"Project {m.group('name').strip('.,')}"
                if name not in context.projects:
                    context.projects.append(name)
            if not sentence.question and any(
                _BREAKUP.search(c) and not (HYPOTHETICAL.search(c) or NEGATION.search(c) or REPORTED.search(c))
                for c in split_clauses(text)
            ):
                context.breakup = True
            if not sentence.question and any(
                _JOB_CHANGE.search(c) and not (HYPOTHETICAL.search(c) or NEGATION.search(c) or REPORTED.search(c))
                for c in split_clauses(text)
            ):
                context.job_change = True
        return context

    def add_person(self, name: str) -> None:
        name = without_lead_in(name)  # "Also Giulia lives in York" names Giulia
        if not name or name.split()[0] in NOT_NAMES:
            return
        self.people[name] = name
        self.people.setdefault(name.split()[0], name)

    def add_kin(self, word: str, name: str) -> None:
        name = self.people.get(name, "")
        if not name or word in self.kin_ambiguous:
            return
        if self.kin.setdefault(word, name) != name:
            self.kin_ambiguous.add(word)
            del self.kin[word]

    def relative(self, word: str) -> str:
        """Whom "my <word>" is: the name the conversation gave that relative, else "the user's <word>" (the subject an
        unnamed relative's statements are about)."""
        return self.kin.get(word.lower()) or f"{UNNAMED_RELATIVE}{word.lower()}"

    def add_pet(self, name: str, kind: str) -> None:
        self.add_person(name)
        if name in self.people:
            self.pets[name] = kind

    def person(self, word: str) -> str | None:
        return self.people.get(word.strip())

    def only_person(self) -> str | None:
        full = set(self.people.values())
        return next(iter(full)) if len(full) == 1 else None

    def project(self, name: str | None) -> str | None:
        """The project `name` refers to ("Heron" -> "Project Heron"), or the one project discussed."""
        if name:
            bare = re.sub(r"^[Pp]roject\s+", "", name).strip()
            for project in self.projects:
                if project.split(" ", 1)[1] == bare:
                    return project
            return f"Project {bare}" if bare and bare[0].isupper() and bare not in NOT_NAMES else None
        return self.projects[0] if len(self.projects) == 1 else None

    def entities(self) -> list[Entity]:
        out = [Entity(name=p, type="person") for p in sorted(set(self.people.values()) - set(self.pets))]
        out += [Entity(name=p, type="other") for p in sorted(self.pets)]  # (the graph's animal: `has_pet`)
        out += [Entity(name=p, type="project") for p in self.projects]
        out += [Entity(name=o, type="organization") for o in self.organizations]
        out += [Entity(name=p, type="place") for p in self.places]
        return out


# A being of the user's, by name: "my tortoise Biscuit", "our old dog, Pepper", "my cat called Miso", "my brother
# Tomasz"; and one they have: "I've got a beagle called Biscuit". A pet when its word is an animal's (`kinds`).
_OWN_PET = re.compile(rf"\b(?:[Mm]y|[Oo]ur) (?:[a-z-]+ ){{0,2}}?(?P<kind>guinea pig|[a-z-]+),? (?:named |called )?"
                      rf"(?P<name>{CAP})")
_HAS_PET = re.compile(rf"\b(?:I|[Ww]e)(?:'ve| have)? (?:got|have|has|adopted|rescued|bought|own) (?:a|an) "
                      rf"(?:[a-z-]+ ){{0,2}}?(?P<kind>guinea pig|[a-z-]+) (?:called|named) (?P<name>{CAP})")
_KIN_WORDS = frozenset(w for words in (PARTNER_WORDS, SIBLING_WORDS, OTHER_RELATIVES) for w in words) | {
    "kid", "kids", "child", "children", "baby", "son", "daughter", "name", "favourite", "favorite", "new", "old"}
# The user changing or leaving a job, said in the conversation ("I left Acme", "I got a new job", "I resigned").
_JOB_CHANGE = re.compile(
    rf"\b(?:[Nn]ew (?:job|role|employer|position|company)|switched (?:jobs|companies|employers)|"
    rf"changed (?:jobs|companies|employers)|job change|left my (?:job|old job|company)|quit my (?:job|old job)|"
    rf"resigned|laid off|handed in my notice|gave (?:my )?notice|my last day at)\b|"
    rf"\bI(?:'ve| have)? (?:just |finally )?(?:left|quit) "
    rf"(?!my\b|the\b|it\b|this\b|that\b){CAP}"
)
# The user's own relationship ending: "Jonas and I broke up", "I split up with Sam", "We got divorced", "my ex".
_BREAKUP = re.compile(
    rf"(?:^(?:I|[Ww]e|{NAME} and I|[Mm]y (?:\w+ )?(?:{'|'.join(PARTNER_WORDS)}|ex) and I)\b.*\b(?:broke up|split up|"
    r"separated|got divorced|divorced|called it off|ended (?:it|things))\b"
    rf"|\b[Mm]y ex(?:-(?:{'|'.join(PARTNER_WORDS)}))?(?![\w-]))"
)
