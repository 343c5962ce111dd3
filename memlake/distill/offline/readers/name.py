"""The user's name: "my name is ...", "call me ...", "I'm going by ...", an introduction after a greeting."""

from __future__ import annotations

import re

from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import QUOTED, guarded, trim_name
from memlake.distill.offline.vocabulary import (
    AFTER_NAME,
    DEMONYMS,
    DIETS,
    NAME,
    NOT_NAMES,
    NOT_PLACES,
    REPORTED,
    SKILL_WORDS,
)

# A question that is a request about the user's own name: "Could you call me Kate from now on?"
_NAME_REQUEST = re.compile(
    r"^(?:(?:[Oo]k(?:ay)?|[Ss]o|[Aa]lso|[Bb]y the way),? )?(?:[Cc]ould|[Cc]an|[Ww]ould|[Ww]ill) you "
    r"(?:please |kindly )?"
    rf"(?:call me|refer to me as|address me as) (?P<name>{NAME})"
    r"(?: (?:from now on|instead|going forward|now|please))*(?:,? please)?\s*\?$"
)


def read_name_request(rule: Rule) -> None:
    """A question asking to be called by a name: "Could you call me Kate from now on?"."""
    m = _NAME_REQUEST.match(QUOTED.sub(" ", rule.sentence.text).strip())
    if m and "'s" not in m.group("name"):
        _user_name(rule, trim_name(m.group("name")))


_GREETING = r"(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening))(?: there| all| everyone| again)?"
# A lead-in that ends in a colon ("Quick intro since I'll be using you a lot: ", "A bit about me: ") announces what
# follows it: it is no statement of its own between the greeting and the introduction.
_OPENING = rf"\s*{_GREETING}[\s!,.:–-]*(?:[^.!?:]+:\s*)?"
_NAMING = (
    r"[Mm]y (?:new |full |real |legal |first |preferred )?name(?: is|'s)(?: now)?"
    r"|[Cc]all me"
    r"|I (?:now |usually |mostly |prefer to |'d rather |would rather |'d like to |would like to )?go by(?: the name)?"
    # "I'm going by Kate now", "I've started going by Sasha"
    r"|I(?:'m| am|'ve been| have been|'ve started| have started| started) (?:now )?going by(?: the name)?"
    # "I'd prefer to be called Kate", "I'd rather be called Bob", "I want to be known as Maggie"
    r"|I(?:'d| would)? (?:prefer|like|rather|want)(?: to)? (?:be|being) (?:called|known as|addressed as|referred to as)"
    r"|(?:[Rr]efer to|[Aa]ddress) me as"
    # "I'm known as Bob", "Most people know me as Maggie", "I've switched to going by Sasha"
    r"|I(?:'m| am) (?:better |usually |mostly |now )?known as"
    r"|(?:[Ee]veryone|[Ee]verybody|[Pp]eople|[Mm]ost (?:people|folks)|[Ff]olks|[Mm]y friends) (?:know|knows) me as"
    r"|I(?:'ve| have)? (?:switched|changed) to going by"
    r"|I(?:'m| am) (?:now )?called"
    r"|I(?:'ve| have)? (?:just |legally |officially )?changed my name to"
    r"|[Mm]y (?:first )?name (?:has |just |legally |officially )*changed to"
    r"|(?:[Ee]veryone|[Ee]verybody|[Pp]eople|[Mm]y friends|[Ff]riends|[Mm]ost people) (?:call|calls) me"
)


def read_name(rule: Rule, clause: str) -> None:
    m = re.search(rf"\b(?:{_NAMING}) (?P<name>{NAME})", clause)
    # "going by" is also passing a place ("I'm going by Lisbon on the way"): only a name that ends the clause
    passing = m and "going by" in m.group(0) and not re.match(AFTER_NAME, clause[m.end():])
    if m and not passing and not guarded(clause, m) and "'s" not in m.group("name"):
        _user_name(rule, trim_name(m.group("name")))
        return
    # An introduction: "I'm Katherine, nice to meet you", "Hi, I'm Sam", "Hello! Sam here."
    m = re.match(rf"^I(?:'m| am) (?P<name>{NAME}){AFTER_NAME}(?P<rest>.*)$", clause)
    if m and "'s" not in m.group("name"):
        met = re.match(r"^[\s,.!–-]*(?:(?:it's |it is |so |really )?(?:nice|good|great|pleased|lovely|glad) to "
                       r"(?:meet|e-?meet) you|here\b)", m.group("rest"), re.I)
        if met or _greeted(rule, clause):
            _user_name(rule, trim_name(m.group("name")), confidence=0.85)
        return
    m = re.match(rf"^(?P<name>{NAME}) here\s*[.!]?$", clause)
    if m and _greeted(rule, clause):
        _user_name(rule, trim_name(m.group("name")), confidence=0.85)
        return
    # "Hi, this is Kate", "Hey, it's Bob here" (after a greeting)
    m = re.match(rf"^(?:[Tt]his is|[Ii]t's|[Ii]t is) (?P<name>{NAME})(?: here)?{AFTER_NAME}", clause)
    if m and "'s" not in m.group("name") and _greeted(rule, clause) and m.group("name") not in _OCCASIONS:
        _user_name(rule, trim_name(m.group("name")), confidence=0.85)
        return
    # "From now on I'm Kate", "Please use Kate from now on"
    m = re.match(rf"^(?:[Ff]rom now on|[Gg]oing forward|[Ff]rom today),? I(?:'m| am) (?P<name>{NAME})\s*[.!]?$",
                 clause) or re.search(
        rf"\b[Pp]lease (?:just )?use (?P<name>{NAME}) (?:from now on|instead|going forward|as my name|"
        r"when you (?:address|talk to|write to) me)\b", clause)
    if m and "'s" not in m.group("name") and not guarded(clause, m):
        _user_name(rule, trim_name(m.group("name")))
        return
    m = re.match(rf"^(?:[Tt]he )?[Nn]ame(?:'s| is) (?P<name>{NAME}){AFTER_NAME}", clause)
    if m and "'s" not in m.group("name"):
        _user_name(rule, trim_name(m.group("name")))
        return
    m = re.match(rf"^(?P<name>{NAME}) is (?:now )?(?:my (?:new |preferred |real )?name|what (?:I(?:'m| am)? (?:now )?"
                 r"(?:go by|going by|called)|(?:people|everyone|everybody|my friends|friends) (?:now )?call me))"
                 r"(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days|nowadays|from now on)\s*[.!]?$)", clause)
    if m and "'s" not in m.group("name"):
        _user_name(rule, trim_name(m.group("name")))


# "Hi, it's Christmas!": a day, not the user.
_OCCASIONS = frozenset({"Christmas", "Easter", "Halloween", "Thanksgiving", "Diwali", "Eid", "Hanukkah", "Ramadan",
                        "Passover", "Xmas", "New Year", "New Year's", "Valentine's"})
_HONORIFICS = frozenset({"Doctor", "Professor", "Prof", "Sir", "Madam", "Ma'am", "Miss", "Mx", "Captain", "Boss",
                         "Chief", "Coach"})


def _user_name(rule: Rule, name: str, confidence: float = 0.9) -> None:
    words = name.split()
    if not words or words[0] in _HONORIFICS or any(
            w in NOT_NAMES or w in DEMONYMS or w in NOT_PLACES or w in SKILL_WORDS or w.lower() in DIETS
            for w in words):
        return
    rule.add("identity", name, f"The user's name is {name}.", slot="name", confidence=confidence, importance=0.9)


def _greeted(rule: Rule, clause: str) -> bool:
    """True when `clause` comes right after a greeting ("Hi, I'm Sam"; "Hello! I'm Sam.")."""
    text = rule.sentence.text
    position = text.find(clause)
    if position < 0:
        return False
    before = text[:position]
    if not before.strip():
        before = rule.said_before
    # (a lead-in that reports someone else's words is theirs: "My sister always says: I'm Bella")
    return bool(before) and bool(re.fullmatch(_OPENING, before, re.I)) and not REPORTED.search(before)
