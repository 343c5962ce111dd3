"""The reader table's rows for where the user works and lives that table_self.py's rows do not read (issue 37,
s14-readers-work; they replace the regular expressions of readers/employer.py and readers/home.py), and the writers
every work and home row hands its value to. Each row is data over the parse (`readers/table.py` builds and matches
them); `write` is what a row cannot say: which organisation is no employer, when a start is news, which home got a
move day ahead.
"""

from __future__ import annotations

import calendar
from datetime import date
from typing import TYPE_CHECKING, Any

from memlake.distill.dates import NUMBERS, DateMention, find_dates, human
from memlake.distill.models import INFERRED, USER_SUBJECT, FactCandidate, KeyDate
from memlake.distill.offline.readers.table_patterns import (
    _LEFT_OUT,
    Pattern,
    Reading,
    _child,
    _mine,
    _name,
    _prep,
    _rest_of_clause,
    _subject,
    _verb,
    _verb_of,
)
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import split_clauses, split_sentences
from memlake.distill.offline.vocabulary import NOT_NAMES, NOT_PLACES, ORG_WORDS, SKILL_WORDS, TEMPORARY
from memlake.nlp import parse_all, tense_of

if TYPE_CHECKING:
    from spacy.tokens import Token

    from memlake.distill.offline.sentences import Sentence

_PART_OF_A_DAY = (["morning"], ["afternoon"], ["evening"])
# A start this long before it is told is no news: "I joined Gojek in 2018" (a past start, with its time).
_NEWS_DAYS = 120


def add_employer(rule: Rule, org: str, valid_from: date | None = None, new: bool = False,
                 content: str | None = None) -> None:
    """The user's employer, from `valid_from`; a start (`new`) told long after it happened says when, not "new"."""
    if not org or org.split()[0] in NOT_NAMES:
        return
    if new and valid_from is not None and (rule.said - valid_from).days > _NEWS_DAYS:
        content = content or f"The user joined {org} in {valid_from.year}."
    content = content or (f"The user started a new job at {org}." if new else f"The user works at {org}.")
    rule.add("fact", org, content, slot="employer", importance=0.8, tags=("work",), valid_from=valid_from)
    rule.entity(org, "organization")
    rule.relation(USER_SUBJECT, "works_at", org, valid_from=(valid_from or rule.said).isoformat())
    if org not in rule.context.organizations:
        rule.context.organizations.append(org)


def add_past_employer(rule: Rule, org: str, when: DateMention | None, time: str = "") -> None:
    """A job told as over ("In 2018 I worked at Globex", "I used to work at Initech"): an event with its time (as
    resolved, or as said), never the employer now."""
    if not org or org.split()[0] in NOT_NAMES or org in rule.context.people:
        return
    content = f"The user worked at {org}" + (f" in {human(when)}." if when else f" ({time})." if time else
                                              " in the past.")
    rule.add("event", f"worked at {org}", content, importance=0.6, tags=("work",))
    rule.entity(org, "organization")


def home_until(rule: Rule, rest: str) -> DateMention | None:
    """The day a home is said to hold until: "I live in Berlin until then" (the last date said before it), "... until
    the end of June"."""
    words = [w.strip(".,;!?") for w in rest.split()]
    if words[:1] != ["until"]:
        return None
    if words[1:2] != ["then"]:
        return rule.date_in(rest)
    earlier = [d for d in rule.dates if d.start < rule.sentence.text.find(rest.strip())] or find_dates(
        rule.said_before, rule.sentence.message.created_at)  # (or the last said earlier in the message)
    return earlier[-1] if earlier else None


def add_move(rule: Rule, city: str, rest: str) -> None:
    """The home city a move made gives, from the day the rest of the clause says it happened (not a stay: "moved to
    Oslo for the summer"; a part of the day is when: "got the keys ... this morning")."""
    first = [w.lower().strip(".,;!?") for w in rest.split()[:2]]
    if TEMPORARY.match(rest) and not (first[:1] in (["today"], ["tonight"]) or first[1:] in _PART_OF_A_DAY):
        return
    when = rule.date_in(rest)
    day = when.day if when and when.precision == "day" else None
    content = f"The user moved to {city}" + (f" around {human(when)}." if when else ".")
    add_home_city(rule, city, content, valid_from=day)
    if when:
        rule.key_date(when, f"The user moved to {city}.")


def add_home_city(rule: Rule, city: str, content: str, valid_from: date | None = None,
                  valid_until: date | None = None, confidence: float = 0.9, inferred: bool = False) -> None:
    if not city or city.split()[0] in NOT_NAMES or any(w in NOT_PLACES or w in SKILL_WORDS or w in ORG_WORDS
                                                       for w in city.split()):
        return  # "We moved to Kubernetes", "I moved over to Acme Robotics"
    if city in rule.context.organizations or city in rule.context.people:
        return
    tags = ("home", INFERRED) if inferred else ("home",)
    rule.add("fact", city, content, slot="home_city", confidence=confidence, importance=0.8, tags=tags,
             valid_from=valid_from, valid_until=valid_until)
    rule.entity(city, "place")
    if inferred:
        return  # the graph holds what was said: a guess is no relation
    rule.relation(USER_SUBJECT, "lives_in", city, valid_from=(valid_from or rule.said).isoformat(),
                  valid_until=valid_until.isoformat() if valid_until else None)


def drop_inferred_homes(candidates: list[FactCandidate], sentences: list[Sentence]) -> list[FactCandidate]:
    """A home city read from the place of work goes when the conversation says where the user lives or that they
    work from somewhere else."""
    said_otherwise = any(c.slot == "home_city" and c.subject == USER_SUBJECT and INFERRED not in c.tags
                         for c in candidates) or any(_works_from_elsewhere(s.text) for s in sentences if not s.question)
    if not said_otherwise:
        return candidates
    return [c for c in candidates if not (c.slot == "home_city" and INFERRED in c.tags)]


# What says the user works from or lives somewhere, said by the user or their household in one clause.
_ELSEWHERE = frozenset({"remote", "remotely", "commute", "commutes", "commuting", "live", "lives", "living", "based"})


def _works_from_elsewhere(text: str) -> bool:
    return any(words & _ELSEWHERE or "from home" in clause for clause in split_clauses(text)
               if (words := set(clause.lower().replace(",", " ").split())) & {"i", "we", "i'm", "we're", "i've"})


# --- the rows: a start or an offer, the job one has said in other words, a job that was, a move planned ---
def _at(left: str, *words: str) -> Pattern:
    return [_prep(left, "at", *(words or ("at", "with"))), _child("at", "employer", DEP="pobj", **_TITLED)]


def _offer() -> list[dict[str, Any]]:
    return [_verb("accept", "take", "sign", "get", "receive"), _child("anchor", "offer", DEP="dobj", LEMMA="offer")]


_TITLED = {"IS_TITLE": True, "POS": {"IN": ["PROPN", "NOUN"]}}  # (a name the small model may take for a noun)
_JOB = ["job", "role", "position", "post"]
_EMPLOYER = ["employer", "company", "workplace"]
_SAID_YES = ["start", "begin", "join", "accept", "take", "sign", "say"]
_HIRED = ["hire", "recruit", "poach", "headhunt", "employ"]
_FIRST = ["day", "week", "month"]
# How a row tells the employer: "offer" (a job accepted), "starting" (a start now or ahead), "joined" (a start
# made), "" (the job the user has), "past" (a job that was).
ROWS: tuple[Reading, ...] = (
    # "I accepted an offer from Hooli and start Monday", "I took a job offer from Globex", "I accepted Initech's offer",
    # "I got an offer from Pied Piper and said yes", "Globex offered me a job and I took it", "I signed with Hooli last
    # week and start in May"
    Reading("offer", None, event="offer", patterns=(
        [*_offer(), *_at("offer", "from", "with")],
        [*_offer(), *_at("anchor", "from")],
        [*_offer(), _child("offer", "employer", DEP="poss", **_TITLED)],
        [_verb("offer"), _child("anchor", "employer", DEP="nsubj", **_TITLED), _child("anchor", "me", LOWER="me"),
         _child("anchor", "job", DEP="dobj", LEMMA={"IN": _JOB})],
        [_verb("sign"), *_at("anchor", "with")],
    )),
    # "I'm starting at Hooli next week", "I start a new job with Globex tomorrow", "I'm joining Globex next month"
    Reading("starting", None, event="starting", patterns=(
        [_verb("start", "begin"), *_at("anchor")],
        [_verb("start", "begin"), _child("anchor", "job", DEP="dobj", LEMMA={"IN": _JOB}), *_at("job")],
        [_verb("join"), _child("anchor", "employer", DEP="dobj", **_TITLED)],
    )),
    # the employer as the one that took the user on: "Northwind Labs hired me in March", "Hooli poached me from
    # Initech", "Pied Piper has taken me on", "I was recruited by Hooli"; "I left my old job for Globex", "I switched
    # to Hooli after three years at Initech", "I moved over to Acme Robotics"; "My first week at Hooli was intense",
    # "Yesterday was day one at Northwind Labs"
    Reading("joined", None, event="joined", patterns=(
        [_verb(*_HIRED), _child("anchor", "employer", DEP="nsubj", **_TITLED), _child("anchor", "me", LOWER="me")],
        [_verb("take"), _child("anchor", "employer", DEP="nsubj", **_TITLED), _child("anchor", "me", LOWER="me"),
         _child("anchor", "on", DEP="prt", LOWER="on")],
        [_verb(*_HIRED), _child("anchor", "by", DEP="agent"), _child("by", "employer", DEP="pobj", **_TITLED)],
        [_verb("leave", "quit"), _child("anchor", "job", DEP="dobj", LEMMA={"IN": _JOB}), *_at("anchor", "for")],
        [_verb("switch", "jump", "move"), *_at("anchor", "to")],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": _FIRST}}}, _child("anchor", "first", LOWER="first"),
         _mine("anchor"), *_at("anchor")],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": _FIRST}}}, _child("anchor", "first", LOWER="first"),
         _mine("anchor"), {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "verb", "RIGHT_ATTRS": {"POS": "VERB"}},
         *_at("verb")],
        # "Got a job at Globex!" (its "I" left out)
        [_verb("get", "land", "find"), _child("anchor", "job", DEP="dobj", LEMMA={"IN": _JOB}), *_at("job")],
        # "New employer: Vandelay Imports", "New job: Initech."
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": [*_EMPLOYER, *_JOB]}, "DEP": "ROOT"}},
         _child("anchor", "new", LOWER="new"),
         {"LEFT_ID": "anchor", "REL_OP": ">>", "RIGHT_ID": "employer", "RIGHT_ATTRS": {"IS_TITLE": True}}],
        [_verb("be"), _child("anchor", "day", DEP="attr", LEMMA="day"), _child("day", "one", LOWER="one"),
         *_at("anchor")],
    )),
    # the job one has, said in other words: "My employer is Globex", "Globex is my new employer", "My company is
    # Hooli", "My employer, Globex, ...", "My new job is at Hooli", "I'm a Hooli employee", "I'm an employee of Hooli",
    # "Globex is where I work now", "I work for a startup called Pied Piper"
    Reading("employer is", None, event="employer is", patterns=(
        [_verb("be"), _child("anchor", "what", DEP="nsubj", LEMMA={"IN": _EMPLOYER}), _mine("what"),
         _child("anchor", "employer", DEP="attr", **_TITLED)],
        [_verb("be"), _child("anchor", "employer", DEP="nsubj", **_TITLED),
         _child("anchor", "what", DEP="attr", LEMMA={"IN": _EMPLOYER}), _mine("what")],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": _EMPLOYER}}}, _mine("anchor"),
         _child("anchor", "employer", DEP="appos", **_TITLED)],
        [_verb("be"), _child("anchor", "what", DEP="nsubj", LEMMA={"IN": _JOB}), _mine("what"), *_at("anchor")],
        [_verb("be"), _child("anchor", "what", DEP="attr", LEMMA={"IN": ["employee", "staffer"]}),
         _child("what", "employer", DEP="compound", **_TITLED)],
        [_verb("be"), _child("anchor", "what", DEP="attr", LEMMA={"IN": ["employee", "staffer"]}),
         *_at("what", "of", "at")],
        [_verb("work"), _child("anchor", "where", LOWER="where"),
         {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "is", "RIGHT_ATTRS": {"LEMMA": "be"}},
         _child("is", "employer", DEP="nsubj", **_TITLED)],
        [_verb("work"), _prep("anchor", "for", "for", "at"), _child("for", "firm", DEP="pobj"),
         _child("firm", "called", LEMMA={"IN": ["call", "name"]}), _child("called", "employer", **_TITLED)],
    )),
    # at or with an organisation, for a while: "I've been at Globex since 2019", "I've been with Acme Robotics for
    # three years", "I've spent five years at Initech", "I'm now at Acme Robotics", "I'm with Initech these days";
    # a job that was: "In 2018 I worked at Globex", "I used to work at Initech", "I was at Globex until 2019"
    Reading("at for a while", None, event="at for a while", patterns=(
        [_verb("be"), *_at("anchor")],
        [_verb("spend"), _child("anchor", "span", DEP="dobj", LEMMA={"IN": ["year", "month"]}), *_at("anchor")],
        [_verb("work"), *_at("anchor", "at", "for", "with")],
    )),
    # "there" for the one workplace the message named before: "I accepted Halvard's offer! I started there last
    # Monday", "I had my final interview at Globex Labs ... I've been working there since Monday"
    Reading("there", None, event="there", patterns=(
        [_verb("start", "begin", "work"), _child("anchor", "there", DEP="advmod", LOWER="there")],
    )),
    # "We're moving from Berlin to Lisbon in May", "On June 1st I'm moving to Leeds": a plan, not yet a home
    Reading("moving to", None, event="moving to", patterns=(
        [_verb("move", "relocate"), _prep("anchor", "to", "to"), _child("to", "value", DEP="pobj", **_TITLED)],
    )),
    # the day ahead a move is on, for a home the message says was got: "we've signed for a flat in Bath, the move is
    # on 1 August", "We found a house in Leeds, we move on the 14th", "Moving day is 12 August, we got a flat in York"
    Reading("move day", None, event="move day", patterns=([{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": "move"}}],)),
)
READS_ITS_OWN_TIME = frozenset(r.name for r in ROWS)  # (table.py leaves whose and when to `write`)

# What makes a sentence about the user's work, so that an organisation one is "at" or "with" is where they work.
_WORK_WORDS = frozenset({"job", "role", "position", "team", "office", "colleague", "coworker", "boss", "commute",
                         "hire", "employer", "employ", "onboarding", "payroll", "join", "quit", "work", "company"})
# What sets an interview or an application as the frame: a job said in it is rehearsed or hoped for, not held.
_PRACTICE = frozenset({"mock", "practice", "practise", "practicing", "practising", "rehearse", "rehearsing",
                       "roleplay", "role-play", "answer", "prep", "prepping"})


def in_a_practice_frame(rule: Rule, org: str | None = None) -> bool:
    """Whether the message rehearses an interview ("Mock interview answer: I joined Globex as ..."), or `org` is
    the one the user applies or interviews to ("I'm applying to Hooli ... if I got the job at Hooli")."""
    text = rule.sentence.message.content.lower()
    words = set(text.replace(":", " ").replace(",", " ").split())
    if "interview" in text and words & _PRACTICE:
        return True
    return org is not None and any(f"{cue} {org.lower()}" in text for cue in (
        "applying to", "applying at", "applying for a job at", "interview at", "interview with", "interviewing at",
        "interviewing with"))


def write(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """What a row of this module read, to the employer, a job that was, or a move planned; whose and when said."""
    anchor = nodes["anchor"]
    verb = _verb_of(anchor) or anchor
    tense = tense_of(verb) if verb.pos_ in ("VERB", "AUX") else "present"
    if reading.name == "move day":
        _move_day(rule, anchor)
        return
    # (the user's, or a day's: "Yesterday was day one at Northwind Labs")
    mine = "me" in nodes or "owner" in nodes or _subject(verb) in ("i", "we", _LEFT_OUT, "today", "yesterday") or (
        anchor.dep_ == "ROOT" and anchor.pos_ == "NOUN") or _i_left_out(verb)
    if not mine or any(c.dep_ == "neg" for c in verb.children) or tense == "future":
        return
    if reading.name == "moving to":
        if tense == "present" and verb.tag_ == "VBG":
            _plan_move(rule, verb, nodes)
        return
    if "there" in nodes:
        org = rule.workplace_named_earlier()
        if org and (tense == "present" or verb.tag_ == "VBN") if verb.lemma_ == "work" else org and tense == "past":
            add_employer(rule, org, valid_from=rule.past_start_in(anchor.sent.text), new=verb.lemma_ != "work")
        return
    org = _name(nodes["employer"]) if "new" not in nodes else " ".join(  # (the capitals after "New job:")
        t.text for t in anchor.doc[anchor.i + 1:anchor.sent.end] if t.is_title).strip(" .!")
    rest = _rest_of_clause(anchor, nodes["employer"])
    if org in rule.context.people or org in rule.context.places or in_a_practice_frame(rule, org):
        return
    how = _how(rule, reading, nodes, verb, tense, org)
    if how == "past":
        time = next((f"{t.head.text.lower()} {t.text}" if t.head.dep_ == "prep" else t.text for t in verb.sent
                     if t.ent_type_ == "DATE"), "")  # ("until 2021", "in 2017")
        add_past_employer(rule, org, rule.date_in(verb.sent.text), time)
    elif how in ("offer", "starting"):  # the start may be days away: the fact holds from when it was said
        add_employer(rule, org, new=True, content=f"The user accepted a job at {org}." if how == "offer" else
                     f"The user starts a new job at {org}.")
    elif how is not None:
        since = rule.past_start_in(rest) if how == "joined" else None
        span = _years_or_months(verb) if how == "" else None
        if span:  # "I've been at Acme Robotics for four years": since then
            n, said, unit = span
            index = rule.said.year * 12 + rule.said.month - 1 - (n * 12 if unit.startswith("year") else n)
            since = date(index // 12, index % 12 + 1, min(rule.said.day, 28))
            add_employer(rule, org, valid_from=since, content=f"The user has worked at {org} for {said} {unit}.")
            return
        add_employer(rule, org, valid_from=since, new=how == "joined" and told_as_news(anchor))


def _how(rule: Rule, reading: Reading, nodes: dict[str, Token], verb: Token, tense: str, org: str) -> str | None:
    """How the row tells the employer (see `ROWS`), or None when the clause says no employer after all."""
    own = _own_words(verb)
    words = {t.lower_ for t in own}
    said_work = bool({t.lemma_ for t in own} & _WORK_WORDS) or any(w in ORG_WORDS for w in org.split()) or (
        org in rule.context.organizations) or rule.context.job_change or any(
        t.lemma_ in ("year", "month") and t.nbor().lower_ == "at" for t in own if t.i + 1 < len(t.doc))
    if any(c.lemma_ in ("leave", "quit") for c in verb.children if c.dep_ == "conj"):
        return None  # "I started at Stanford in 2019 and left in 2022": a job that was
    if reading.name == "offer":  # an offer is a job taken when it names a job or a start, or the user says yes
        taken = {c.lemma_ for c in verb.children if c.dep_ in ("conj", "advcl") and not any(
            g.dep_ == "neg" or g.lower_ == "no" for g in c.children)} & set(_SAID_YES)
        offer = nodes.get("offer")
        job = offer is not None and any(c.lemma_ in ("job", "work") for c in offer.children)
        return "offer" if tense == "past" and (taken or job) and (verb.lemma_ != "get" or taken) else None
    if reading.name == "starting":
        school = any(w in ("University", "College", "School", "Academy", "Institute") for w in org.split())
        company = any(  # "I'm joining Sam for dinner", "I started at Globex for a trial", not "... on Monday"
            c.dep_ == "prep" and c != nodes.get("at") and (c.lower_ == "for" or c.lower_ in ("on", "at") and not any(
                g.ent_type_ == "DATE" for g in c.subtree)) for c in verb.children)
        if school or company:
            return None
        return "starting" if tense == "present" else "joined"
    if reading.name == "joined":
        if sum(c.dep_ in ("dobj", "dative") for c in verb.children) > 1:
            return None  # "Northwind Labs hired me a new assistant": a favour, no job
        if "first" in nodes or "day" in nodes or "new" in nodes:
            return "joined"  # "My first week at Hooli was intense", "Today is day one at Hooli"
        return "joined" if tense == "past" and (verb.lemma_ not in ("switch", "jump", "move") or said_work) else None
    if reading.name == "employer is":
        if "where" in nodes and any(c.dep_ == "advmod" and c.lower_ not in _NOW for c in verb.children):
            return None  # "Starbucks is where I work best"
        return "joined" if "new" in words and tense == "present" else "" if tense == "present" else None
    # at or with it: a while said ("since 2019", "for three years", "five years at"), "now", or work said
    span = verb.lemma_ == "spend" or any(  # "since 2019", "for three years" (not "since 6am", not "for Globex")
        c.dep_ == "prep" and c.lower_ in ("since", "for") and c != nodes["at"] and any(
            g.lemma_ in ("year", "month") or g.like_num and len(g.text) == 4 for g in c.subtree) for c in verb.children)
    if "with" in nodes["at"].lower_ and not said_work:
        return None  # "I've been with Sam for three years"
    if tense == "past" and not span and verb.tag_ != "VBN" and (words & {"until", "till", "from", "before"} or (
            any(t.ent_type_ == "DATE" for t in verb.sent) and (verb.lemma_ == "work" or said_work))):
        return "past"  # "In 2018 I worked at Globex", "I used to work at Initech", "I was at Globex until 2019"
    if verb.lemma_ == "be" and (span and verb.tag_ == "VBN" or tense == "present" and (
            words & _NOW) and said_work):
        return ""  # "I've been at Globex since 2019", "I'm now at Acme Robotics"
    return "" if verb.lemma_ == "spend" and tense == "past" else None


_NOW = frozenset({"where", "now", "currently", "nowadays", "days"})


def _own_words(verb: Token) -> list[Token]:
    """The words of the verb's sentence but those of a clause said of someone else ("I'm with Jonas now, he's on the
    data team")."""
    others = {t.i for c in verb.sent if c.dep_ in ("nsubj", "nsubjpass") and c.lower_ not in ("i", "we")
              and c.head != verb and not any(o.lower_ in ("my", "our") for o in c.children) for t in c.head.subtree}
    return [t for t in verb.sent if t.i not in others]


def _years_or_months(verb: Token) -> tuple[int, str, str] | None:
    """How many years or months a "for" on the verb says ("for four years")."""
    for unit in (o for c in verb.children if c.lower_ == "for" for o in c.children):
        number = next((c for c in unit.children if c.dep_ == "nummod"), None)
        n = number and (int(number.text) if number.text.isdigit() else NUMBERS.get(number.lower_))
        if n and unit.lemma_ in ("year", "month"):
            return n, number.text, unit.lower_
    return None


def _i_left_out(verb: Token) -> bool:
    """A sentence opening on a past verb, its "I" left out as chat leaves it ("Started at Initech on Monday, ...",
    "Starting at Globex was the best decision")."""
    return verb.i == verb.sent.start and (verb.tag_ in ("VBD", "VBN") or verb.dep_ == "csubj") and not any(
        c.dep_ in ("nsubj", "nsubjpass") for c in verb.children)


def told_as_news(anchor: Token) -> bool:
    """A start told as what happened, not as the time of something else ("Before I joined Hooli I was at Globex")."""
    return not any(t.dep_ == "advcl" and any(c.dep_ == "mark" for c in t.children) for t in (anchor, *anchor.ancestors)
                   if t.pos_ in ("VERB", "AUX"))


def _plan_move(rule: Rule, verb: Token, nodes: dict[str, Token]) -> None:
    """"We're moving from Berlin to Lisbon in May": a plan, its day said before or after the verb; no end date (the
    move a later statement tells closes it, the fold)."""
    target = _name(nodes["value"])
    origin = next((_name(o) for c in verb.children if c.lower_ == "from" for o in c.children if o.pos_ == "PROPN"), "")
    when = rule.date_in(verb.sent.text)
    what = f"move from {origin} to {target}" if origin else f"move to {target}"
    day = f"around {when.day.isoformat()}" if when and when.precision == "day" else human(when) if when else ""
    _instead_of_said(rule, target)
    rule.add("commitment", what, f"The user plans to {what}" + (f" ({day})." if when else "."), importance=0.7,
             tags=("home", "move"))
    for place in (origin, target):
        if place:
            rule.entity(place, "place")
    if when:
        rule.key_date(when, f"The user plans to {what}.")


# A home got to move into: "signed for a flat in Bath", "found a house in Leeds", "signed the lease on a flat in
# Ancoats, Manchester" (a district, then its city: the city); a home sold or left gives none.
_GOT = frozenset({"sign", "find", "buy", "rent", "get", "secure", "purchase"})
_HOMES = frozenset({"flat", "apartment", "house", "home", "place", "condo", "studio", "loft", "cottage", "townhouse"})


def _home_got(rule: Rule) -> str | None:
    """The one city the message says the user got a home in ("a flat in Bath and one in Bristol": none)."""
    cities = {_name(next((a for a in city.children if a.dep_ == "appos" and a.pos_ == "PROPN"), city))
              for doc in parse_all([s.text for s in split_sentences(rule.sentence.message)])
              for got in doc if got.lemma_ in _GOT and got.pos_ == "VERB"
              and any(t.lower_ in _HOMES for t in got.subtree)
              for city in got.subtree if city.dep_ == "pobj" and city.pos_ == "PROPN" and city.head.lower_ == "in"}
    return next(iter(cities)) if len(cities) == 1 else None


def _move_day_ahead(rule: Rule, move: Token) -> date | None:
    """The day ahead a move is said to be on, after its word: "the move is on 1 August", "moving in on the 14th"."""
    after = move.doc[move.i + 1:move.sent.end]
    nth = next((t for t in after[:5] if t.like_num or t.lower_[:-2].isdigit() and t.lower_[-2:] in _NTH), None)
    if nth is not None and nth.i > 0 and nth.nbor(-1).lower_ == "the":  # "on the 14th": the next such day
        day, year, month = int(nth.lower_[:-2] or nth.text), rule.said.year, rule.said.month
        for _ in range(3):
            if day <= calendar.monthrange(year, month)[1] and date(year, month, day) > rule.said:
                return date(year, month, day)
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    when = rule.date_in(after.text, context=move.doc[move.i:move.sent.end].text)  # (the move's tense)
    return when.day if when and when.precision == "day" and when.day > rule.said else None


_NTH = frozenset({"st", "nd", "rd", "th"})


def _move_day(rule: Rule, move: Token) -> None:
    """A plan to move to the home got until the day ahead, and the home city from that day (a later "we live in
    Bath" confirms it)."""
    if move.dep_ == "amod" and move.head.lemma_ != "day" or any(c.dep_ == "neg" for c in move.children):
        return
    day = _move_day_ahead(rule, move)
    city = _home_got(rule) if day else None
    if day is None or city is None or any(c.type == "commitment" and c.valid_until == day.isoformat()
                                          for c in rule.found.candidates if rule.message_id in c.message_ids):
        return
    _instead_of_said(rule, day.isoformat())
    rule.add("commitment", f"move to {city}", f"The user plans to move to {city} (around {day.isoformat()}).",
             importance=0.7, tags=("home", "move"), valid_until=day)
    rule.found.key_dates.append(KeyDate(date=day.isoformat(), description=f"The user moves to {city}.",
                                        message_ids=[rule.message_id]))
    rule.found.candidates[:] = [c for c in rule.found.candidates if not (  # (not home now: from the day)
        c.slot == "home_city" and c.value == city and rule.message_id in c.message_ids)]
    add_home_city(rule, city, f"The user lives in {city} from {day.isoformat()}.", valid_from=day)


def guess_home_from_work(rule: Rule, employer: Token) -> None:
    """The city the user works in is home, as a guess the fact says ("a data analyst at Brightline Insurance in
    Leeds"), unless the sentence says they work from or live elsewhere (`drop_inferred_homes`: the conversation)."""
    city = next((o for t in (employer, employer.head.head) for c in t.children if c.lower_ == "in" and c.dep_ == "prep"
                 for o in c.children if o.dep_ == "pobj" and o.pos_ == "PROPN"), None)
    rest = employer.doc[city.i + 1:city.sent.end].text if city is not None else ""
    if city is None or _works_from_elsewhere(employer.sent.text) or TEMPORARY.match(rest):
        return
    place = _name(city)
    add_home_city(rule, place, f"The user works in {place}, and likely lives there (not said).", confidence=0.6,
                  inferred=True)


def _instead_of_said(rule: Rule, what: str) -> None:
    """A plan this module reads replaces the plan the message's clauses kept as said about the same move."""
    rule.found.candidates[:] = [c for c in rule.found.candidates if not (
        "said" in c.tags and c.type == "commitment" and what in c.content and rule.message_id in c.message_ids)]
