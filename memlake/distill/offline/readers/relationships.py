"""The people the user names and how they relate: partner, siblings, relatives, colleagues."""

from __future__ import annotations

import re

from memlake.distill.models import USER_SUBJECT
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import QUOTED, guarded, split_clauses, trim_name
from memlake.distill.offline.vocabulary import (
    AFTER_NAME,
    DEMONYMS,
    HYPOTHETICAL,
    NAME,
    NEGATION,
    NOT_NAMES,
    NOT_PLACES,
    ORG_WORDS,
    PARTNER_WORDS,
    ROLE,
    SIBLING_WORDS,
    SINCE_FOR,
    SKILL_WORDS,
)


def read_relationships(rule: Rule, clause: str) -> None:
    """The people the user names in other words than the table's ("my partner Jonas", "my sister Leela", "Sam is my
    partner", "I married Sam": `readers/table.py`, which writes them with `add_kin`): "I'm with Sam now" (after a
    break-up), "we've been together since June, Sam and I", "Tomás Ruiz is the tech lead"."""
    _partner_named(rule, clause)
    _partner_with(rule, clause)
    _couple_in_the_sentence(rule, clause)
    for m in re.finditer(rf"(?P<name>{NAME}) is (?P<det>the|our|my) (?P<role>{ROLE})\b", clause):
        name = trim_name(m.group("name"))
        if not name or name.split()[0] in NOT_NAMES or guarded(clause, m):
            continue
        role = m.group("role")
        rule.add("identity", role, f"{name} is the {role} the user works with.", subject=name, slot="job_title",
                 importance=0.5, tags=("work", "people"))
        rule.entity(name, "person")
        rule.relation(USER_SUBJECT, "works_with", name, confidence=0.8)


_PARTNER = "(?:" + "|".join(PARTNER_WORDS) + ")"
# What may follow a partner's name: what may follow any name, or when and how long ("I married Sam in 2019").
# ("for" only before a span: "dating Sam for two years", not "going out with Sam for drinks")
_AFTER_PARTNER = (rf"(?:{AFTER_NAME}|(?=\s+(?:in|on|last|next|this|since|back|recently|yesterday|a|two|three|four|"
                  r"five|six|seven|eight|nine|ten)\b)|(?=\s+for (?:(?:a|an|the past|over|almost|nearly|about|several|"
                  r"many|a few|a couple of|one|two|three|four|five|six|seven|eight|nine|ten|\d+) )*(?:while|days?|"
                  r"weeks?|months?|years?|decades?)\b))")
# A relationship that is over, said in the same sentence ("I married Sam in 2019 but we divorced in 2022").
_ENDED = re.compile(r"\b(?:divorced?|divorcing|broke up|break up|breaking up|split up|separated|separating|passed away|"
                    r"died|widow(?:ed|er)?|ex-\w+|late (?:wife|husband|partner))\b", re.I)
_RELATIONSHIP_VERBS = (
    r"(?:married|engaged) to|dating|going out with|in a relationship with|together with|getting married to|marrying|"
    # "I've been seeing Noor for a year" (not "I'm seeing Dr Lee tomorrow": see `_AFTER_PARTNER`)
    r"(?:seeing|dating) someone(?: new)?,?(?: called| named)?"
)
# "I'm with Sam now": a partner only when the conversation says a relationship of the user's ended, the name
# ends the clause (or "now", "these days" follows) and names a person: not an employer ("I'm with Acme now"),
# not where or with whom the user is ("I'm with Sam at the cafe"), not agreement ("I'm with you on that").
_WITH_PARTNER = re.compile(
    rf"\bI(?:'m| am) (?:now |back |currently )?with (?P<name>{NAME})"
    r"(?=\s*(?:$|[,.;:!)]|-\s|–)|\s+(?:now|these days|nowadays)\b)"
)


def _partner_with(rule: Rule, clause: str) -> None:
    """ "Jonas and I broke up; I'm with Sam now" -> partner Sam (see `_WITH_PARTNER`)."""
    if not rule.context.breakup:
        return
    m = _WITH_PARTNER.search(clause)
    if not m or guarded(clause, m) or "'s" in m.group("name"):
        return
    name = trim_name(m.group("name"))
    if _ended(rule, clause) and not _ended_with_another(rule, name):
        return
    if (_a_person(name) and not any(w in ORG_WORDS for w in name.split())
            and name not in rule.context.organizations and name not in rule.context.projects):
        _partner(rule, name)


# Partners named in other words than "my partner Jonas" (first match only).
_PARTNER_PATTERNS = (
    # "My boyfriend, Sam, is a chef", "my wife of ten years, Ines, ..." (an apposition closed by a comma; "my
    # girlfriend, Toby and I" is a list); closed by the end of the sentence: see `_partner_in_apposition`
    rf"\b[Mm]y (?:new |current )?{_PARTNER}(?: of (?:\w+ ){{1,2}}(?:years?|months?))?, (?P<name>{NAME}), "
    r"(?!and\b|or\b)",
    # "I'm married to Sam", "I'm dating Chen now", "I've been in a relationship with Ines for two years"
    rf"\bI(?:'m| am|'ve been| have been) (?:now |happily |currently |still )?(?:{_RELATIONSHIP_VERBS}) "
    rf"(?P<name>{NAME}){_AFTER_PARTNER}",
    # "I married Sam", "I got engaged to Noor", "I started dating Alex", "I've started seeing Chen"
    rf"\bI(?:'ve| have)? (?:just |recently |finally )?(?:married|got married to|got engaged to|tied the knot with|"
    rf"started dating|"
    rf"been dating|started seeing) (?P<name>{NAME}){_AFTER_PARTNER}",
    rf"\bI(?:'ve| have) been seeing (?P<name>{NAME}){SINCE_FOR}",
    # "I'm seeing Sam these days" (not "I'm seeing Sam tomorrow": a meeting)
    rf"\bI(?:'m| am) (?:now )?seeing (?P<name>{NAME})(?=\s+(?:now|these days|nowadays)\b)",
    # "Noor proposed (to me)", "Sam proposed last night" (not "Noor proposed a toast")
    rf"^(?P<name>{NAME}) (?:finally |just )?proposed(?: to me)?(?=\s*(?:$|[.!;,])|\s+(?:last|on|in|yesterday|this)\b)",
    # "I got together with Noor last spring" (not "for coffee": company, not a couple)
    rf"\bI (?:just |finally |recently )?got together with (?P<name>{NAME})(?:{AFTER_NAME}|(?=\s+(?:in|last|back|"
    r"recently|\w+ (?:years?|months?) ago)\b))",
    # "I have a boyfriend now, his name is Sam"
    rf"\bI(?:'ve got| have got| have|'ve) a (?:new )?{_PARTNER}(?: now)?,? (?:and )?(?:her|his|their) name(?:'s| is) "
    rf"(?P<name>{NAME}){AFTER_NAME}",
    # "Sam and I got engaged", "Chen and I have been together for six years"
    rf"^(?P<name>{NAME}) and I (?:just |recently |finally )?(?:got engaged|got married|are engaged|are married|"
    r"are dating|have been together|'ve been together|have been dating|'ve been dating|moved in together|"
    r"are a couple|have been married|'ve been married|have been a couple|'ve been a couple|"
    r"(?:are|have been|'ve been) (?:seeing each other|going out)|"
    r"(?:are|have been|'ve been) in a relationship|started dating|"
    # "Sam and I are together now", "Noor and I got together in 2019" (not "are together at the cafe", "got
    # together for coffee", "got together last week to plan the trip": company, not a couple)
    r"(?:are|are back|got back) together(?=\s*(?:$|[,.;!)])|\s+(?:now|again|since|these days|officially)\b)|"
    r"got together (?:in \d{4}|\w+ years? ago)(?=\s*(?:$|[,.;!)])))\b",
)
def _partner_named(rule: Rule, clause: str) -> None:
    """A partner named in other words than "my partner Jonas" (see `_PARTNER_PATTERNS`), or in an apposition."""
    for pattern in _PARTNER_PATTERNS:
        m = re.search(pattern, clause)
        if m and not guarded(clause, m) and "'s" not in m.group("name") and not _ended(rule, clause):
            name = trim_name(m.group("name"))
            if _a_person(name):
                _partner(rule, name)
            break
    else:
        _partner_in_apposition(rule, clause)


def _partner_in_apposition(rule: Rule, clause: str) -> None:
    """ "I live with my partner, Jonas.", "Sam, my partner, cooked": an apposition that ends or opens the sentence
    (not a clause: "My girlfriend, Toby and I are going camping" is split before "I", and Toby is one of a list)."""
    sentence = QUOTED.sub(" ", rule.sentence.text).strip()
    # "Sam, my partner, cooked dinner": the sentence opens with the name (the clauses split it before "my")
    m = re.match(rf"^(?P<name>{NAME}), my (?:new |current )?{_PARTNER}(?: of (?:\w+ ){{1,2}}(?:years?|months?))?, ",
                 sentence)
    if m and sentence.startswith(clause) and "'s" not in m.group("name"):
        name = trim_name(m.group("name"))
        if _a_person(name) and not _ENDED.search(sentence):
            _partner(rule, name)
        return
    m = re.search(rf"\b[Mm]y (?:new |current )?{_PARTNER}(?: of (?:\w+ ){{1,2}}(?:years?|months?))?[,:] "
                  rf"(?P<name>{NAME})\s*[.!]?$", clause)
    if not m or not re.sub(r"[\s.!]+$", "", sentence).endswith(m.group("name").rstrip(".!")):
        return
    if guarded(clause, m) or "'s" in m.group("name") or _ended(rule, clause):
        return
    name = trim_name(m.group("name"))
    if _a_person(name):
        _partner(rule, name)


# The user and one person as a couple, said of the two together: "we're official", "we've been together since June".
_A_COUPLE = re.compile(r"\b(?:we|we're|we've|we are|we have)\b[^.;!?]*?\b(?:together|official|a couple|dating|engaged|"
                       r"married|in a relationship|going out|seeing each other)\b", re.I)
# Who the "we" is: "..., Sam and I", "Sam and I ...", "Sam asked me out and we're official now".
_ONE_AND_I = re.compile(rf"(?:^|, |\band )(?P<name>{NAME}) and I\b(?! (?:\w+ )?(?:and|with)\b)")
_ASKED_ME_OUT = re.compile(rf"^(?P<name>{NAME}) (?:finally |just )?asked me out\b")
# "I'm seeing Noor." ends the sentence at the name: a partner, not a meeting ("I'm seeing Sam on Friday").
_SEEING = re.compile(rf"^I(?:'m| am) (?:now )?seeing (?P<name>{NAME})\s*[.!]?$")


def _couple_in_the_sentence(rule: Rule, clause: str) -> None:
    """A partner said of the user and one person together, across the clauses of a sentence, read once on its
    first clause: "We've been together since June, Sam and I", "Sam asked me out and we're official now", "I'm
    seeing Noor." (no partner pattern names them: see `_PARTNER_PATTERNS`)."""
    sentence = QUOTED.sub(" ", rule.sentence.text).strip()
    if not sentence.startswith(clause) or any(c.slot == "partner" for c in rule.found.candidates
                                              if rule.message_id in c.message_ids):
        return
    if any(g.search(sentence) for g in (HYPOTHETICAL, NEGATION, _ENDED)) or sentence.endswith("?"):
        return
    seeing = _SEEING.match(sentence)
    named = [seeing] if seeing else []
    if not seeing and _A_COUPLE.search(sentence):
        named = list(_ONE_AND_I.finditer(sentence)) or [m for m in [_ASKED_ME_OUT.match(sentence)] if m]
    names = {trim_name(m.group("name")) for m in named}
    if len(names) != 1:
        return
    name = names.pop()
    if (name and _a_person(name) and not any(w in ORG_WORDS for w in name.split())
            and name not in rule.context.organizations and name not in rule.context.projects):
        _partner(rule, name)


def _ended(rule: Rule, clause: str) -> bool:
    """True when the sentence says the relationship of `clause` is over: in the clause itself, or in a later
    clause ("my partner Jonas | and I broke up"; "I married Sam in 2019 | but we divorced")."""
    if _ENDED.search(clause):
        return True
    clauses = split_clauses(rule.sentence.text)
    later = clauses[clauses.index(clause) + 1:] if clause in clauses else []
    return any(_ENDED.search(c) and re.match(r"^(?:I|[Ww]e|[Tt]hey|[Ss]he|[Hh]e)\b", c) for c in later)


_SOMEONE_AND_I = re.compile(rf"\b(?P<who>{NAME}) and I(?:'ve| have| had)? (?:(?:just|finally|recently|officially) )*")


def _ended_with_another(rule: Rule, name: str) -> bool:
    """True when what the sentence says ended was with someone other than `name`: "I'm with Noor now, Alex and I
    divorced"."""
    text = rule.sentence.text
    others = [m.group("who") for m in _SOMEONE_AND_I.finditer(text) if _ENDED.match(text, m.end())]
    return bool(others) and all(trim_name(who) != name for who in others)


# Who the user works with, of the people a sentence names ("my colleague Tomás"); the rest the user knows.
_AT_WORK = frozenset({"colleague", "coworker", "co-worker", "manager", "boss", "mentor"})


def add_kin(rule: Rule, kin: str, name: str) -> None:
    """A person named as the user's partner, sibling or other relative, friend or colleague (`kin`, the word that
    says it); no partner when the sentence says the relationship is over ("I married Sam in 2019 but we divorced")."""
    if not _a_person(name) or name in rule.context.organizations:
        return
    kin = kin.lower()
    if kin in PARTNER_WORDS:
        if not _ENDED.search(rule.sentence.text):
            _partner(rule, name)
    elif kin in SIBLING_WORDS:
        _sibling(rule, kin, name)
    else:
        rule.add("relationship", f"{kin}: {name}", f"{name} is the user's {kin}.", subject=name, importance=0.6,
                 tags=("people",))
        rule.entity(name, "person")
        rule.relation(USER_SUBJECT, "works_with" if kin in _AT_WORK else "knows", name)


def _a_person(name: str) -> bool:
    words = name.split()
    return bool(words) and not any(w in NOT_NAMES or w in DEMONYMS or w in NOT_PLACES or w in SKILL_WORDS
                                   for w in words)


def _partner(rule: Rule, name: str) -> None:
    rule.add("relationship", name, f"The user's partner is {name}.", slot="partner", importance=0.8, tags=("family",))
    rule.entity(name, "person")
    rule.relation(USER_SUBJECT, "partner_of", name)


def _sibling(rule: Rule, rel: str, name: str) -> None:
    rule.add("relationship", name, f"The user's {rel} is {name}.", slot="sibling", importance=0.7, tags=("family",))
    rule.entity(name, "person")
    rule.relation(USER_SUBJECT, "sibling_of", name)
