"""The user's job title: "I'm a backend engineer (at ...)", "I got promoted to tech lead", "My role is ..."."""

from __future__ import annotations

import re

from memlake.distill.offline.readers.employer import add_employer
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded, trim_org
from memlake.distill.offline.vocabulary import AT_ORG, ROLE, SINCE_FOR


def read_role_at_employer(rule: Rule, clause: str) -> None:
    """"I'm a <role> (at <org>)" (working at or as one, and a start as one, are rows of readers/table.py)."""
    m = re.search(rf"\bI(?:'m| am) (?:now |officially |finally |currently |also |already |still )*(?:a|an) "
                  rf"(?P<title>{ROLE})\b{AT_ORG}", clause)
    if m and not guarded(clause, m):
        add_job_title(rule, m.group("title"))
        if m.group("org"):
            add_employer(rule, trim_org(m.group("org")))


_TITLE = rf"(?:a |an |the )?(?P<title>{ROLE})\b"
# What may follow a job title stated on its own: the end, punctuation, "now", a place of work or a duration.
_AFTER_TITLE = (r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:now|too|since|for|at|with|in|on|and|but|so|last|this|earlier|"
                r"recently)\b)")
# After "I'm the <role>": only the end, "now" or a place of work ("I'm the tester on this PR" is no job).
_AFTER_THE_TITLE = r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:now|here|at|and|but|since|on (?:my|our|the) team)\b)"
_ROLE_CHANGE = r"(?:moved|stepped|switched|transitioned|changed|shifted) (?:roles? |careers? |jobs? )?(?:in)?to"


# Job titles said in other words than "I'm a ... at ..." / "I work at ..." (first match only).
_TITLE_PATTERNS = (
    # the "I" left out: "Working as a nurse these days", "Officially a tech lead as of today!", "Now the team's lead"
    rf"^(?:(?:[Nn]ow|[Cc]urrently|[Ss]till) )?[Ww]orking as {_TITLE}(?:{_AFTER_TITLE}|(?=\s+these days\b)){AT_ORG}",
    rf"^(?:[Oo]fficially|[Ff]inally|[Nn]ow) (?:a|an|the|the team's) (?:new )?(?P<title>{ROLE})"
    r"(?=\s*(?:$|[,.;!])|\s+(?:now|as of|from|since)\b)",
    # the user as object: "They've given me the tech lead job", "My boss handed me the team lead role" (an offer is
    # not yet the job)
    rf"\b(?:[Tt]hey|[Mm]y (?:boss|manager|company|team))(?:'ve| have|'s| has)? (?:just |finally |officially )?"
    rf"(?:given|gave|handed) me (?:the|a|an) (?:new )?(?P<title>{ROLE}) (?:job|role|position|post)\b",
    # "My role is product manager", "My new job title is tech lead"
    rf"\b[Mm]y (?:new |current |official |actual )?(?:role|job title|title|position|job) is (?:now )?"
    rf"(?:that of )?{_TITLE}{_AFTER_TITLE}{AT_ORG}",
    # "I now hold the title of tech lead"
    rf"\bI (?:now |currently |officially )?(?:hold|have) the (?:title|position|role) of {_TITLE}{_AFTER_TITLE}{AT_ORG}",
    # "I got promoted to tech lead", "Got promoted to staff engineer yesterday!" (the "I" left out, which the table
    # does not read), "I was promoted to engineering manager last month" (kept: its day as the bench's changes want)
    rf"\bI(?:'ve| have)? (?:just |finally |recently |been |got |was |just got |just been |finally got )*"
    rf"(?:promoted|bumped up|moved up) to (?:the (?:role|position) of )?{_TITLE}{AT_ORG}",
    # "I've been a designer for five years", "I've worked as a nurse since 2019"
    rf"\bI(?:'ve| have) (?:been|worked as|been working as) {_TITLE}{SINCE_FOR}",
    # "I'm the new tech lead", "I'm our team's engineering manager"
    rf"\bI(?:'m| am) (?:now |currently |officially |finally )*(?:the|our|the team's|our team's) (?:new )?"
    rf"(?P<the_title>{ROLE})\b"
    rf"{_AFTER_THE_TITLE}{AT_ORG}",
    # "I've been made tech lead", "They made me the engineering manager"
    rf"\b(?:I(?:'ve| have)? (?:just |finally |recently |officially )?(?:been|was|got) (?:made|named|appointed)|"
    rf"(?:[Tt]hey|[Mm]y (?:boss|manager|company|team)) (?:just |finally |officially )?made me) "
    rf"(?:a |an |the |our )?(?:new )?(?P<title>{ROLE})\b{_AFTER_TITLE}{AT_ORG}",
    # "I've transitioned to data scientist", "I moved into a role as product manager" (a title with no article: not "I
    # switched to a new manager"; "switched to a designer role" is a row of readers/table.py)
    rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )?{_ROLE_CHANGE} (?:(?:a |an |the )?(?:new )?"
    rf"(?:role|position|job) (?:as|of) (?:a |an )?)?(?P<title>{ROLE})\b{_AFTER_TITLE}{AT_ORG}",
    # "I got the tech lead job" (kept beside the table's row: the bench's changes lost "I got the <title> job I applied
    # for" without it)
    rf"\bI(?:'ve| have)? (?:just |finally |recently |officially )?(?:got|gotten|landed|accepted|took|taken) "
    rf"(?:the|a|an) (?:new )?(?P<title>{ROLE}) (?:role|job|position)\b{AT_ORG}",
    # "I'm starting as a designer on Monday", "I start as tech lead next week", "I joined Hooli as a designer"
    rf"\bI(?:'m| am) starting (?:(?:a |my )?new (?:job|role|position) )?as {_TITLE}{AT_ORG}",
    rf"\bI (?:start|begin) (?:(?:a |my )?new (?:job|role|position) )?as {_TITLE}{AT_ORG}",
    # "They promoted me to tech lead", "I got the promotion to engineering manager", "My title changed to ..."
    rf"\b(?:[Tt]hey|[Mm]y (?:boss|manager|company|team)) (?:just |finally |officially )?promoted me to {_TITLE}"
    rf"{AT_ORG}",
    rf"\bI (?:just |finally |recently )?(?:got|received|earned|accepted) (?:the |a |my )?promotion to {_TITLE}"
    rf"{AT_ORG}",
    rf"\b[Mm]y (?:job |official )?(?:title|role|position) (?:has |just |officially )*(?:changed|switched) to {_TITLE}"
    rf"{_AFTER_TITLE}",
    # "I'm moving into a product manager role", "I'm stepping into the tech lead position"
    rf"\bI(?:'m| am) (?:now |officially )?(?:moving|stepping|switching|transitioning) (?:in)?to (?:a |an |the )"
    rf"(?:new )?(?P<title>{ROLE}) (?:role|position|job)\b{AT_ORG}",
    # "Tech lead is my title now", "Designer is my official title"
    rf"^(?:[Aa] |[Aa]n )?(?P<title>{ROLE}) is (?:now )?my (?:new |official |job |current )*(?:title|role|job)"
    rf"(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days)\b)",
    # "New role: tech lead!"
    rf"^[Nn]ew (?:role|title|job title|position)\s*[:-]\s*(?:a |an )?(?P<title>{ROLE})\s*[.!]*$",
    # "I'm tech lead now" (no article, "now" after it)
    rf"\bI(?:'m| am) (?:now |officially )?(?P<bare_title>{ROLE}) now\b",
)


def read_job_title(rule: Rule, clause: str) -> None:
    """Job titles said in other words than "I'm a ... at ..." / "I work at ..." (see `_TITLE_PATTERNS`)."""
    for pattern in _TITLE_PATTERNS:
        # a title that opens the sentence is capitalised ("Tech lead is my title now")
        m = re.search(pattern, clause[:1].lower() + clause[1:] if pattern.startswith("^") else clause)
        if m and not guarded(clause, m):
            groups = m.groupdict()
            title = groups.get("title") or groups.get("the_title") or groups.get("bare_title")
            if title is None:  # every pattern names one of the three groups
                continue
            if not groups.get("title") and title in _BARE_RISKY_ROLES:
                continue  # "I'm the owner of this bug", "I'm the lead on it", "I'm head now"
            add_job_title(rule, title)
            if m.groupdict().get("org"):
                add_employer(rule, trim_org(m.group("org")))
            break


_BARE_RISKY_ROLES = frozenset({"owner", "head", "lead", "director", "officer", "student", "coach", "writer", "editor"})


def add_job_title(rule: Rule, title: str) -> None:
    rule.add("identity", title, f"The user works as a {title}.", slot="job_title", importance=0.7, tags=("work",))
