"""Project deadlines: "the Heron launch is on March 4", "Project Heron slipped to June 3"."""

from __future__ import annotations

import re

from memlake.distill.dates import DateMention, find_dates
from memlake.distill.models import SLOT_TYPES
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded
from memlake.distill.offline.vocabulary import CAP, CONDITION

_DEADLINE_NOUN = (r"(?:(?P<adjective>new|revised|updated|final|official|target|current) )?"
                  r"(?P<what>launch|deadline|release|go-live|due date|ship date|target date|date|target)(?: date)?")
_PROJECT_NAME = rf"(?:[Pp]roject )?{CAP}"
_RESCHEDULED = (r"(?:moved|pushed|postponed|rescheduled|delayed|shifted|brought forward|pulled in|bumped|changed|"
                r"slipped|slid|pushed out|put back|deferred|extended|moves|slips|shifts|slides)"
                r"(?: back| out| up| forward)?")
_RESCHEDULING = (r"(?:moving|pushing|postponing|rescheduling|delaying|shifting|bumping|deferring)(?: back| out| up|"
                 r" forward)?")
# "slipped a week to June 2", "moved by two weeks to June 2"
_BY_HOW_MUCH = r"(?:(?:by )?(?:a|one|two|three|four|another|a few|a couple of) (?:days?|weeks?|months?) )?"
_DEADLINE_FRAMES = (
    # "The Heron launch is on March 4", "Our deadline for Project Heron is May 3", "The launch moved to June 2"
    re.compile(
        rf"\b(?:[Tt]he |[Oo]ur )?(?:(?P<project>{_PROJECT_NAME}) (?:has (?:a |an )?)?)?{_DEADLINE_NOUN}"
        rf"(?: (?:for|of) (?P<project2>{_PROJECT_NAME}))?(?:\s*:\s*| (?:is (?:now |still )?(?:on |set for |"
        rf"scheduled for |planned for |due |due on |due by |by )?|(?:is |was |has |has been |have been |got |just )*"
        rf"(?:now )?{_RESCHEDULED} (?:to|until|for) (?:on )?))(?P<rest>.*)$"
    ),
    # "Project Heron launches on May 3", "Project Heron is due on May 3", "Heron now ships on June 1", "Project Heron
    # is now scheduled for June 2", "Project Falcon will now go live on May 3"
    re.compile(
        rf"\b(?P<project>{_PROJECT_NAME}) (?:now |still |officially )?(?P<verb>launches|ships|goes live|releases|"
        r"goes out|is (?:now |still |officially )?(?:launching|shipping|going live|releasing|going out)|"
        r"will (?:now |still |officially )?(?:launch|ship|go live|be released|be live|release)|"
        r"is (?:now |still |officially )?(?:scheduled|set|slated|planned|due|expected) to (?:launch|ship|go live|"
        r"be released|release)|"
        r"is (?:now |still |officially )?(?:scheduled|planned|set|slated|targeted|expected|due)(?= (?:on|by|for)\b)|"
        r"is (?:now |still |officially )?due|is (?:now |still |officially )?(?:targeting|aiming for)|"
        r"is (?:still |now )?on track (?:for|to (?:launch|ship|go live|be released|release)(?: on)?)) "
        r"(?:on |by |for )?(?P<rest>.*)$"
    ),
    # "We launch Project Heron on May 3", "We're shipping Heron on June 1", "Launching Project Osprey on May 3!"
    re.compile(
        r"(?:(?:\b(?:[Ww]e|I)(?:'ll| will|'re| are|'m| am)?(?: going to| planning to| set to| scheduled to| aiming to|"
        r" due to)?|\b[Tt]he plan is to) "
        r"(?:now |still |officially )?(?P<verb>launch|ship|release|go live with|launching|shipping|releasing)|"
        r"^(?:(?:[Nn]ow|[Oo]fficially) )?(?:[Ll]aunching|[Ss]hipping|[Rr]eleasing|[Gg]oing live with)) "
        rf"(?P<project>{_PROJECT_NAME}) (?:on |by )?(?P<rest>.*)$"
    ),
    # "Project Heron slipped to June 2", "Project Falcon has been pushed back to July 1", "Project Osprey's launch was
    # delayed by two weeks to June 20" (not "Project Heron wasn't moved ...": no negated auxiliary is read)
    re.compile(
        rf"\b(?P<project>{_PROJECT_NAME})(?:'s (?:launch|release|deadline|go-live|due date|ship date))? "
        rf"(?:(?:has|had|was|is|got|has been|have been|just|now|officially|already|again|also) )*{_RESCHEDULED} "
        rf"(?:again )?{_BY_HOW_MUCH}(?:to|until|till|for) (?:on )?(?P<rest>.*)$"
    ),
    # "We pushed the Project Heron launch to May 3", "They moved the launch back to June 2", "We pushed Heron to ...",
    # "We're pushing Project Heron to May 3"
    re.compile(
        rf"\b(?:[Ww]e|I|[Tt]hey)(?:'ve| have|'re| are|'m| am)? (?:just |now |officially )?(?:{_RESCHEDULED}|"
        rf"{_RESCHEDULING}) "
        rf"(?:(?:the |our )?(?:(?P<project>{_PROJECT_NAME})(?:'s)? )?{_DEADLINE_NOUN}"
        rf"(?: (?:for|of) (?P<project2>{_PROJECT_NAME}))?|(?P<project3>{_PROJECT_NAME}))"
        rf"(?: back| out| up| forward)? {_BY_HOW_MUCH}(?:to|until|for) (?:on )?(?P<rest>.*)$"
    ),
    # "June 2 is the new launch date for Project Heron"
    re.compile(
        r"^(?P<rest>.+?) is (?:now )?(?:the|our) (?:new |revised |updated |final |official |target )*"
        r"(?:launch |release |ship |go-live |due |target )?(?:date|deadline) (?:for|of) (?:the )?"
        rf"(?P<project>{_PROJECT_NAME})(?: (?:launch|release))?\s*[.!]?$"
    ),
    # "We're targeting June 2 for Project Heron", "We're aiming for June 2 for the Project Heron launch"
    re.compile(
        r"\b(?:[Ww]e|I)(?:'re| are|'m| am)? (?:now |still |officially )?(?:targeting|aiming for|planning for|"
        r"looking at|target|aim for|plan for) (?P<rest>.+?) for (?:the )?"
        rf"(?P<project>{_PROJECT_NAME})(?: (?:launch|release|deadline|go-live))?\s*[.!]?$"
    ),
)


# "it" standing for the project the same sentence named: "Heron is no longer June 3; it's June 17", "Heron was June 3
# but now it's June 17" (not "it's not ...", and a change said: "now" or "no longer", not "it is June 17 today").
_IT_IS_NOW = re.compile(r"(?:^|\b(?:but|and|so) )(?:now,? )?it(?:'s| is) (?:now )?(?!not\b|no\b)(?:on |due |set for |"
                        r"scheduled for )?(?P<rest>.*)$")


def read_deadline(rule: Rule, clause: str, correction: str | None = None) -> bool:
    if _read_it_is_now(rule, clause, correction):
        return True
    for frame, pattern in enumerate(_DEADLINE_FRAMES):
        m = pattern.search(clause)
        if not m or guarded(clause, m) or CONDITION.search(m.group("rest")):
            continue  # "We launch Heron on May 3 if QA passes" is no date yet
        # "pushed to June 2" is the nearest June 2, not last year's: a deadline's tense is not its verb's
        when = rule.date_in(m.group("rest"), context="")
        if not when or when.precision != "day" or when.start > 3:
            continue
        groups = m.groupdict()
        named = next((groups[k] for k in ("project", "project2", "project3") if groups.get(k)), None)
        named = re.sub(r"'s$", "", named.rstrip(".")) if named else None
        # "The Heron launch": Heron is the project; a bare capitalised word before a verb may be anything
        project = rule.context.project(named) if frame == 0 else _known_project(rule, named)
        if not project or (groups.get("what") in ("date", "target date", "target") and not named
                           and groups.get("adjective") not in ("new", "revised", "updated")):
            continue  # "Our wedding date is June 3" says nothing of the conversation's project; "the new date" may
        what = groups.get("what") or ("deadline" if "due" in (groups.get("verb") or "") else "launch")
        what = "deadline" if what in ("date", "target date", "target") else what
        _add_deadline(rule, project, what, when, correction)
        return True
    return False


def _read_it_is_now(rule: Rule, clause: str, correction: str | None) -> bool:
    """A deadline said of "it" where the sentence names one project before it (see `_IT_IS_NOW`)."""
    m = _IT_IS_NOW.search(clause)
    if not m or guarded(clause, m) or CONDITION.search(m.group("rest")):
        return False
    before = rule.sentence.text[: rule.sentence.text.find(clause)] + clause[: m.start()]
    named = {p for p in rule.context.projects if p in before}
    when = rule.date_in(m.group("rest"), context="")
    changed = re.search(r"\bnow\b", m.group(0)) or re.search(r"\bno longer\b", before)
    if len(named) != 1 or not when or when.precision != "day" or when.start > 3 or not changed:
        return False
    _add_deadline(rule, named.pop(), "deadline", when, correction)
    return True


def _known_project(rule: Rule, name: str | None) -> str | None:
    """`name` as a project: "Project X", or a name the conversation already calls a project."""
    if not name:
        return None
    if re.match(r"^[Pp]roject\s+\S", name):
        return rule.context.project(name)
    return next((p for p in rule.context.projects if p.split(" ", 1)[1] == name), None)


def _add_deadline(rule: Rule, project: str, what: str, when: DateMention, correction: str | None) -> None:
    value = when.day.isoformat()
    if correction:
        old = find_dates(correction, rule.sentence.message.created_at)
        old_text = f", not {old[0].day.isoformat()}" if old else ""
        rule.add("correction", value, f"Correction: the {project} {what} is on {value}{old_text}.",
                 subject=project, slot="project_deadline", confidence=0.95, importance=0.8,
                 tags=("project", "deadline", "correction"))
    else:
        rule.add(SLOT_TYPES["project_deadline"], value, f"The {project} {what} is on {value}.", subject=project,
                 slot="project_deadline", importance=0.7, tags=("project", "deadline"))
    rule.entity(project, "project")
    rule.key_date(when, f"The {project} {what}.")
