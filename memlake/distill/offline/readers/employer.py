"""The user's employer: "I work at ...", "I joined ...", "I accepted an offer from ...", "I'm on the
platform team at ...", "I've been at ... for four years"."""

from __future__ import annotations

import re
from datetime import date

from memlake.distill.dates import NUMBERS
from memlake.distill.models import USER_SUBJECT
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import QUOTED, guarded, trim_org
from memlake.distill.offline.vocabulary import (
    AFTER_ORG,
    AFTER_START_ORG,
    DEMONYMS,
    FOR_A_WHILE,
    HYPOTHETICAL,
    NEGATION,
    NOT_NAMES,
    NOT_PLACES,
    ORG,
    ORG_WORDS,
    REPORTED,
    ROLE,
    SINCE_FOR,
)


def read_employer_tenure_or_start(rule: Rule, clause: str) -> None:
    """"I've been at <org> for four years", "I joined <org>" (kept beside the table's rows for the clauses the
    distiller rewrites: "Initech hired me" read as "I joined Initech", "I started there" with "there" named)."""
    m = re.search(rf"\bI(?:'ve| have) been (?:working )?at (?P<org>{ORG}) for (?P<n>\w+) (?P<unit>years?|months?)\b",
                  clause)
    if m and not guarded(clause, m):
        since = _years_back(rule.said, m.group("n"), m.group("unit"))
        org = trim_org(m.group("org"))
        add_employer(rule, org, valid_from=since,
                     content=f"The user has worked at {org} for {m.group('n')} {m.group('unit')}.")
    m = re.search(rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )*(?:started|began|took|accepted) "
                  rf"(?:a |my )?(?:new )?(?:job|position|role) (?:at|with) (?P<org>{ORG}){AFTER_ORG}", clause) \
        or re.search(rf"\bI(?:'ve| have)? (?:just |recently |finally |officially |now |also )*joined (?P<org>{ORG})"
                     rf"{AFTER_ORG}", clause)
    if m and not guarded(clause, m) and not _joined_company(rule, m.group("org"), clause[m.end():]):
        when = rule.date_in(clause[m.end():])
        org = trim_org(m.group("org"))
        add_employer(rule, org, valid_from=when.day if when and when.precision == "day" else None, new=True)
        if when:
            rule.key_date(when, f"The user started a new job at {org}.")


# Employers said plainly: (pattern, whether it says a new job starts).
_EMPLOYER_PATTERNS = (
    # "I'm an employee of Globex now"
    (rf"\bI(?:'m| am) (?:now |currently |still )?(?:a|an) (?:new |full-time |permanent )?employee (?:of|at) "
     rf"(?P<org>{ORG}){AFTER_ORG}", False),
    # "Globex is my new employer"
    (rf"^(?P<org>{ORG}) is (?:now )?my (?:new |current )?employer\b", False),
    # "I left my old job for Globex" (not "for a break")
    (rf"\bI (?:just |finally |recently )?left (?:my|a) (?:old |previous |last )?job (?:for|to join) (?P<org>{ORG})"
     rf"{AFTER_ORG}", True),
    # "My employer is Globex", "My new employer is ..."
    (rf"\b[Mm]y (?:new |current )?employer is (?:now )?(?P<org>{ORG}){AFTER_ORG}", False),
    # "I've worked for Globex since 2020", "I've been working there since Monday" ("there" named: the table reads
    # only the sentence as said)
    (rf"\bI(?:'ve| have) (?:worked|been working|been employed) (?:at|for|by) (?P<org>{ORG}){SINCE_FOR}", False),
    # "I've just started at Globex", "Started at Hooli on Monday" (the "I" left out), "I started there last Monday"
    (rf"\bI(?:'ve| have)? (?:just |recently |finally )?(?:started|began|begun) (?:work(?:ing)? )?at "
     rf"(?P<org>{ORG}){AFTER_ORG}", True),
    # "Got a job at Globex!" (the "I" left out, which the table does not read)
    (rf"\bI(?:'ve| have)? (?:just |finally |recently )?(?:got|landed|gotten|found) (?:a |the |my )?(?:new )?"
     rf"(?:job|position|role) (?:at|with) (?P<org>{ORG}){AFTER_ORG}", True),
    # "Today was my first day at Globex", "My first week at Hooli was intense"
    (rf"\b[Mm]y first (?:day|week) (?:of work |on the job )?at (?P<org>{ORG})(?:{AFTER_ORG}|(?=\s+(?:was|is|went|"
     r"felt|has|starts|started|begins)\b))", True),
)


def read_employer(rule: Rule, clause: str) -> None:
    """"I'm employed by <org>", "My employer is <org>", "I started at <org>", "I got hired at <org>" (first match
    only; see `_EMPLOYER_PATTERNS`)."""
    for pattern, new in _EMPLOYER_PATTERNS:
        m = re.search(pattern, clause)
        if m and not guarded(clause, m):
            if new and re.search(r"\b(?:started|began|begun|first|got|landed|hired)\b.*\b(?:left|quit)\b",
                                 rule.sentence.text):
                continue  # "I started at Acme in 2019 and left in 2022"
            rest = clause[m.end():]
            # "I'm working at the Acme stand this week" (a start "today" or "this week" is when it began)
            if FOR_A_WHILE.search(re.sub(r"\b(?:today|this (?:week|month))\b", " ", rest) if new else rest):
                continue
            org = trim_org(m.group("org"))
            when = rule.date_in(clause[m.end():]) if new else None
            add_employer(rule, org, valid_from=when.day if when and when.precision == "day" else None, new=new)
            break


def _joined_company(rule: Rule, org: str, rest: str) -> bool:
    """True when "joined X" is keeping someone company, not a new employer: "I joined Sam for dinner", "I joined
    Ana at the bar" (a person the conversation names, or a meal or a place after the name)."""
    if trim_org(org) in rule.context.people or trim_org(org).split()[0] in rule.context.people:
        return True
    return bool(re.match(r"\s+(?:for\b(?! (?:a |the |my )?(?:new )?(?:role|position|job)\b)|"
                         r"at (?:the|a|an|my|our|his|her|their)\b(?! (?:start|end|beginning)\b))", rest)
                or _SOCIAL.search(rest))


# Company kept, not a job: "I'm joining Sam and Ana for dinner", "I joined Noor on a hike".
_SOCIAL = re.compile(r"\b(?:for|on|at) (?:a |an |the |some )?(?:lunch|dinner|breakfast|brunch|drinks?|coffee|tea|walk|"
                     r"run|hike|trip|ride|game|party|movie|concert|show|picnic|call|chat|meeting|swim|beer|wedding)\b",
                     re.I)
_TEAM = r"(?:team|squad|group|department|division|unit|org|organization|practice)"
_SCHOOL = re.compile(r"\b(?:University|College|School|Academy|Institute|Kindergarten|Nursery)\b")
_SPAN = re.compile(r"\bfor (?:a|an|one|two|three|four|\d+|a few|a couple of) (?:days?|weeks?|months?)\b", re.I)
# What may follow "an offer from X" for it to be a job the user took: a start, a role, a move to join.
_OFFER_TAKEN = re.compile(
    rf"^\s*,?\s*(?:and (?:I )?(?:will |'ll |am going to |)(?:start|begin|join)|starting|to (?:join|work|start)|"
    rf"as (?:a |an |the |their )?(?:new )?{ROLE}\b)"
)


def read_employer_indirect(rule: Rule, clause: str) -> None:
    """Employers said through an offer, a contract, a team, a start still to come, a tenure or "I'm now at X"
    (see `_PHRASINGS`): the first one that is not guarded, temporary or a person."""
    said = [match for phrasing in _PHRASINGS if (match := phrasing(rule, clause))]
    for m, how in said:
        org = trim_org(m.group("org"))
        rest = clause[m.end():]
        # a state said for a while is temporary ("I'm contracting for Hooli this week"); an event's time is its date
        # ("I start at Hooli today"), but not a span ("I joined the team at Hooli for a month")
        temporary = _SPAN.search(rest) if how else FOR_A_WHILE.search(rest)
        if guarded(clause, m) or temporary or not org or org in rule.context.people:
            continue
        if org.split()[0] in DEMONYMS or any(w in NOT_PLACES for w in org.split()):
            continue
        if how in ("offer", "starting"):  # the start may be days away: the fact holds from when it was said
            content = f"The user accepted a job at {org}." if how == "offer" else f"The user starts a new job at {org}."
            add_employer(rule, org, new=True, content=content)
        else:
            when = rule.date_in(clause[m.end():]) if how == "joined" else None
            add_employer(rule, org, valid_from=when.day if when and when.precision == "day" else None, new=bool(how))
        break


# A match naming an employer, and how: "offer", "starting", "joined" (a new job) or "" (the job the user has).
_Said = tuple[re.Match[str], str]


def _accepted_offer(rule: Rule, clause: str) -> _Said | None:
    # "I accepted an offer from Hooli and start Monday", "I took a job offer from Globex", "I signed Initech's offer"
    # (not "I accepted an offer from Santander for a loan": an offer needs "job" or a start after it)
    m = re.search(rf"\bI(?:'ve| have)? (?:just |finally |officially |now )*(?:accepted|took|taken|signed) "
                  rf"(?:(?:a|an|the|their|my) )?(?:new )?(?P<job>(?:job|work|full-time|permanent|employment) )?offer "
                  rf"(?:from|with|at) (?P<org>{ORG})(?P<rest>(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:and|starting|to|as|last|"
                  rf"this|yesterday|today|earlier|in|on)\b).*)$", clause) or re.search(
        rf"\bI(?:'ve| have)? (?:just |finally |officially |now )*(?:accepted|took|taken|signed) (?P<org>{ORG})'s "
        rf"(?:new )?(?P<job>(?:job |work )?)offer(?P<rest>(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:and|starting|to|as)\b).*)$",
        clause)
    if m and (m.group("job") or _OFFER_TAKEN.match(m.group("rest"))):
        return m, "offer"
    return None


def _signed_with(rule: Rule, clause: str) -> _Said | None:
    # "I signed with Hooli last week and start in May", "I just signed with Hooli, starting next week" (a contract
    # signed, with a start: not "signed with a label")
    m = re.search(rf"\bI(?:'ve| have)? (?:just |finally |officially )?signed (?:on )?with (?P<org>{ORG})(?P<rest>.*)$",
                  clause)
    if m and re.search(r"^,? (?:and (?:I )?(?:will |'ll )?(?:start|begin)|starting|beginning)\b|"
                       r"\band (?:I )?(?:will |'ll )?(?:start|begin)\b", m.group("rest")):
        return m, "offer"
    return None


def _job_is_at(rule: Rule, clause: str) -> _Said | None:
    # "My new job is at Hooli", "My job is now with Globex"
    m = re.search(rf"\b[Mm]y (?P<new>new |current )?(?:job|role|position) is (?:now )?(?:at|with) (?P<org>{ORG})"
                  rf"{AFTER_ORG}", clause)
    if m:
        return m, "joined" if m.group("new") == "new " else ""
    return None


def _starting_at(rule: Rule, clause: str) -> _Said | None:
    # "I'm starting at Hooli next week", "I start a new job with Globex on Monday" (not a school: "I'm starting at
    # Stanford University in the fall")
    m = re.search(rf"\bI(?:'m| am| will be|'ll be) starting (?P<job>(?:(?:a|my) )?new (?:job|role|position) )?"
                  rf"(?:at|with) (?P<org>{ORG}){AFTER_START_ORG}", clause) or re.search(
        rf"\bI (?:start|begin) (?P<job>(?:(?:a|my) )?new (?:job|role|position) )?(?:at|with) (?P<org>{ORG})"
        rf"{AFTER_START_ORG}", clause)
    if m and (m.group("job") or not _SCHOOL.search(m.group("org"))):
        return m, "starting"
    return None


def _been_with(rule: Rule, clause: str) -> _Said | None:
    # "I've been with Acme Robotics for three years": "with" a person is no employer, so only an organisation's name
    m = re.search(rf"\bI(?:'ve| have) been with (?P<org>{ORG}){SINCE_FOR}", clause)
    if m and (any(w in ORG_WORDS for w in trim_org(m.group("org")).split()) or trim_org(m.group("org"))
              in rule.context.organizations):
        return m, ""
    return None


def _tenure_at(rule: Rule, clause: str) -> _Said | None:
    # "I've been at Globex since 2019", "I've spent five years at Initech", "I'm a Hooli employee", "My employer,
    # Globex, ..."
    m = re.search(rf"\bI(?:'ve| have) been (?:working )?at (?P<org>{ORG}) since (?:\d{{4}}|last year)\b", clause) \
        or re.search(rf"\bI(?:'ve| have) (?:now )?spent (?:the (?:last|past) )?(?:\w+ ){{1,2}}(?:years?|months?) "
                     rf"(?:at|with|working (?:at|for)) (?P<org>{ORG}){AFTER_ORG}", clause) \
        or re.search(rf"\bI(?:'m| am) (?:now |currently )?(?:a|an) (?P<org>{ORG}) (?:employee|staffer|engineer|"
                     rf"developer|designer|manager)\b", clause) \
        or re.search(rf"\b[Mm]y (?:new |current )?(?:employer|company), (?P<org>{ORG}), ", clause)
    if m and not _SCHOOL.search(m.group("org")):
        return m, ""
    return None


def _joining(rule: Rule, clause: str) -> _Said | None:
    # "I'm joining Globex next month", "I'll be joining Hooli as a designer" (not "I'm joining Sam for dinner")
    m = re.search(rf"\bI(?:'m| am|'ll be| will be) (?:officially |now )?joining (?P<org>{ORG}){AFTER_START_ORG}",
                  clause)
    if m and not _joined_company(rule, m.group("org"), clause[m.end():]) and not _SCHOOL.search(m.group("org")):
        return m, "starting"
    return None


def _offer_said_yes(rule: Rule, clause: str) -> _Said | None:
    # "I got an offer from Hooli and said yes"
    m = re.search(rf"\bI (?:just )?(?:got|received|had) (?:a |an |the |their )?(?:new |job )?offer (?:from|with) "
                  rf"(?P<org>{ORG})(?:,? and (?:I )?(?:accepted(?: it)?|took it|said yes|signed)|,? which I "
                  rf"(?:accepted|took))\b", clause)
    if m:
        return m, "offer"
    return None


def _workplace_named(rule: Rule, clause: str) -> _Said | None:
    # "Globex is where I work now", "My company is Hooli", "I work for a startup called Pied Piper"
    m = re.search(rf"(?:^|\b(?:and|but|so) )(?P<org>{ORG}) is where I (?:now |currently )?"
                  r"(?:work|am working|'m working)(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days|nowadays|as)\b)", clause) \
        or re.search(
        rf"\b[Mm]y (?:new |current )?(?:company|workplace) is (?:now )?(?P<org>{ORG})"
        r"(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days)\b)", clause) or re.search(
        rf"\bI (?:now |currently )?work (?:at|for) (?:a |an )?(?:\w+ )?(?:company|startup|firm|agency|bank|studio|"
        rf"consultancy|lab|shop|business) (?:called|named) (?P<org>{ORG}){AFTER_ORG}", clause)
    if m:
        return m, ""
    return None


def _now_at(rule: Rule, clause: str) -> _Said | None:
    # "I'm now at Globex", "I'm at Hooli these days": an employer only when the conversation says the user changed
    # jobs, or the name is an organisation's ("I'm now at the station", "I'm at Heathrow now" give none)
    m = re.search(rf"\bI(?:'m| am) (?P<now>now |currently )?at (?P<org>{ORG})"
                  r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?P<after>now|these days|nowadays)\b)", clause)
    if m and (m.group("now") or m.group("after")):
        org = trim_org(m.group("org"))
        if any(w in ORG_WORDS for w in org.split()) or org in rule.context.organizations or rule.context.job_change:
            return m, ""
    return None


def _employer_in_the_sentence(rule: Rule, clause: str) -> _Said | None:
    """Employers said across the clauses of a sentence, read once on its first clause: "At Globex, I'm a backend
    engineer" / "At Hooli I lead the data team", "Globex offered me a job and I took it" (the clauses split before
    "I", so the name and the statement are in different clauses)."""
    sentence = QUOTED.sub(" ", rule.sentence.text).strip()
    if not sentence.startswith(clause):
        return None
    m = re.match(rf"^[Aa]t (?P<org>{ORG}),? I(?: (?:now |currently )?work as |(?:'m| am) (?:now )?(?:a|an|the) "
                 rf"{ROLE}\b| (?:lead|manage|run|head) (?:the |a |our )?(?:[\w&-]+ ){{0,3}}{_TEAM}\b)", sentence) \
        or re.match(rf"^(?P<org>{ORG}) (?:just |finally )?offered me (?:a|the|their) (?:\w+ ){{0,3}}"
                    rf"(?:job|role|position)\b[^.;!?]*?,? and I (?:accepted(?: it)?|took it|said yes|signed)\b",
                    sentence)
    if not m or _SCHOOL.search(m.group("org")) or any(g.search(m.group(0)) for g in (HYPOTHETICAL, NEGATION, REPORTED)):
        return None
    return m, "offer" if "offered me" in m.group(0) else ""


# What makes a sentence about the user's work: a job, a team, a start, a commute, a tenure somewhere.
_WORK = re.compile(r"\b(?:jobs?|role|position|team|office|colleagues?|co-?workers?|boss|commute|hired|employer|"
                   r"employed|onboarding|payroll|day one|first (?:day|week|month)|(?:years?|months?) (?:at|with))\b",
                   re.I)
_SOMEONE_ELSES = re.compile(r"^(?:he|she|they|it)(?:'s|'re|'ve|'d)?\b", re.I)
_FIRST_DAYS = r"(?:day one|(?:my )?first (?:day|week|month)(?: of work| on the job)?)"


def _work_in_the_sentence(rule: Rule, clause: str) -> _Said | None:
    """An organisation the user is at or with, in a sentence that says it is about work: "I'm with Globex now, on
    their payments team", "Today was day one at Hooli", "New job: Initech.", "Starting at Globex was the best thing",
    "I've moved over to Hooli after five years at Initech" (with a person or a place the name is no employer)."""
    sentence = QUOTED.sub(" ", rule.sentence.text).strip()
    m = re.search(rf"\bI(?:'m| am|'ve been| have been) (?:now |currently |still )?(?:with|at) (?P<org>{ORG})"
                  rf"{AFTER_ORG}", clause)
    how = ""
    if m is None:
        m = re.search(rf"\b{_FIRST_DAYS} (?:at|with) (?P<org>{ORG}){AFTER_ORG}", clause) \
            or re.match(rf"^(?:[Mm]y )?[Nn]ew (?:job|role|position|employer)(?: is)?:? (?:at |with )?(?P<org>{ORG})"
                        r"\s*[.!]*$", clause) \
            or re.match(rf"^(?:Starting|Joining) (?:at |with )?(?P<org>{ORG}) (?:was|is|has been|felt)\b", clause) \
            or re.search(rf"\bI(?:'ve| have)? (?:just |finally |recently )?(?:moved over|switched|jumped(?: ship)?) "
                         rf"to (?P<org>{ORG})(?:{AFTER_ORG}|(?=\s+after\b))", clause)
        how = "joined"
    if m is None:
        return None
    org = trim_org(m.group("org"))
    if org in rule.context.people or org in rule.context.places or _SCHOOL.search(org):
        return None
    # the work said in the user's own clauses ("I'm with Jonas now, he's on the data team" is Jonas's team); a first
    # day somewhere may be a holiday's ("day one at Yosemite"), so only at an organisation's name or in a job change
    users_clauses = [c for c in re.split(r"[,;:]|\b(?:and|but|so)\b", sentence.replace(m.group(0), " "))
                     if not _SOMEONE_ELSES.match(c.strip())]
    says_work = re.match(r"(?:[Mm]y )?[Nn]ew (?:job|role|position|employer)", m.group(0)) \
        or any(_WORK.search(c) for c in users_clauses) \
        or (how and (any(w in ORG_WORDS for w in org.split()) or rule.context.job_change))
    if not says_work:
        return None
    return m, how


def _years_back(said: date, number: str, unit: str) -> date | None:
    n = int(number) if number.isdigit() else NUMBERS.get(number.lower())
    if not n:
        return None
    months = n * 12 if unit.startswith("year") else n
    index = said.year * 12 + said.month - 1 - months
    return date(index // 12, index % 12 + 1, min(said.day, 28))


def add_employer(rule: Rule, org: str, valid_from: date | None = None, new: bool = False,
                 content: str | None = None) -> None:
    if not org or org.split()[0] in NOT_NAMES:
        return
    content = content or (f"The user started a new job at {org}." if new else f"The user works at {org}.")
    rule.add("fact", org, content, slot="employer", importance=0.8, tags=("work",), valid_from=valid_from)
    rule.entity(org, "organization")
    rule.relation(USER_SUBJECT, "works_at", org, valid_from=(valid_from or rule.said).isoformat())
    if org not in rule.context.organizations:
        rule.context.organizations.append(org)


# Tried in this order; the first that holds names the employer.
_PHRASINGS = (
    _accepted_offer,
    _signed_with,
    _job_is_at,
    _starting_at,
    _been_with,
    _tenure_at,
    _joining,
    _offer_said_yes,
    _workplace_named,
    _now_at,
    _employer_in_the_sentence,
    _work_in_the_sentence,
)
