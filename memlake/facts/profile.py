"""Profiles: one versioned summary per agent of what it knows of the user, assembled from active facts.

Sections: identity, work, places, preferences, people, current projects, past
events; a plain fact about the user that no slot, type or tag places goes
where its meaning reads (`memlake.facts.sections`: habits and tastes under
preferences, how the user works under work, a hobby or a problem of the moment
under current projects). Each line is one active fact's sentence and cites its fact id; within a
section, lines that rest on a user override come first. A happening (an event,
a plan, a decision, a deadline) is past, and listed under past events, once the
latest day it names or was said or confirmed on is more than `CURRENT_DAYS`
before the version, or once its `valid_until` has come (a trip whose days are
over; a plan's line then says when it was planned); any other fact whose
`valid_until` has come is in no version from then on. A version is what the
profile said: a new one is made, when its lines differ from the last one's, at
the agent's first contribution, at the end of each conversation's contributions,
after every `profile_regenerate_threshold` contributions within one, and at once
after an override; so the newest version always covers every contribution so
far, and a profile whose content changed always has a new number. A
contribution is a fact version that became active (a new fact, an update, a
correction); confirmations are not. A rejected fact is left out of every
version (the tables do not say when it was rejected).

The versions are a pure function of `facts/facts` and `facts/fact_edges`:
walking the contributions in time order, the profile as of a contribution
holds the versions made by then that no `update` edge had replaced by then.

With a core model configured, the newest version's lines are written by the
model from the same active facts (`memlake.facts.profile_model.ProfileWriter`,
passed as `write`); an older version keeps the model's lines it was written
with while it was the newest (cached), else it is assembled, so a run costs at
most one profile call per agent whatever number of conversations it brings.
The version numbers, times and contribution counts stay the ones above, and a
version the model could not write is assembled.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import polars as pl

from memlake.distill.confidence import shown
from memlake.distill.dates import find_dates
from memlake.distill.models import KIN_OR_PET, UNNAMED_RELATIVE
from memlake.facts.fold import USER, subject_key
from memlake.facts.sections import sections_by_meaning
from memlake.lake import Lake, conform
from memlake.schemas import FACTS, PROFILES

SECTIONS = ("identity", "work", "places", "preferences", "people", "current projects", "past events")
PAST = "past events"
# A happening this long behind a version is history, not a current project: long enough for a plan that slips a
# few weeks, short enough that last season's launch and a finished move stop reading as what the user is doing.
CURRENT_DAYS = 30
HAPPENINGS = ("event", "decision", "commitment")
# Names the rules above; a profiles file built by other rules is built again by the next run (`profiles_outdated`),
# the facts folded again with it. profile-3: the fold closes plans carried out and states ended (issue 23), so a
# profile built before lists a finished move's plan; the next run, even with no new chat, folds and builds again.
# profile-4: a happening whose valid_until has come is a past event, and a version is made whenever a conversation
# changed what the profile says.
# profile-5: a plain fact about the user that no slot, type or tag places goes to the section its meaning reads as
# (`memlake.facts.sections`), no longer to identity.
# profile-6: a fact about someone else tagged as one of the user's people (a pet's birthday to come) is listed with
# the people, not under current projects.
PROFILE_RULES = "profile-7"  # 7: only the facts shown to the agent (confidence)
PROFILE_RULES_STAMP = "memlake.profile_rules"
WRITER = "assembled"
BLOCKED_REASON = "user override wins over extraction"

_SLOT_SECTIONS = {
    "name": "identity",
    "job_title": "work",
    "employer": "work",
    "home_city": "places",
    "diet": "preferences",
    "partner": "people",
    "sibling": "people",
    "project_deadline": "current projects",
}
_TYPE_SECTIONS = {
    "identity": "identity",
    "skill": "work",
    "preference": "preferences",
    "relationship": "people",
    "decision": "current projects",
    "commitment": "current projects",
    "event": "current projects",
}
# (agent_id, created_at, active facts, assembled lines, newest) -> (lines, writer); `newest`: the agent's latest
# version, the only one a writer may spend a model call on (older ones take a cached answer or stay assembled)
VersionWriter = Callable[[str, datetime, list[dict[str, Any]], list[dict[str, Any]], bool],
                         tuple[list[dict[str, Any]], str]]

_PROJECT_WORDS = ("project", "launch", "release", "sprint", "roadmap", "migration")
_PLACE_TAGS = ("place", "places", "travel", "home", "location")
_WORK_TAGS = ("work", "job", "career")


def known_people(facts: list[dict[str, Any]]) -> set[str]:
    """Subjects that are people: the user's partner and siblings, subjects of relationship or role facts, and the
    user's relatives said without a name ("the user's dad")."""
    people = set()
    for fact in facts:
        if fact.get("slot") in ("partner", "sibling") and fact.get("value"):
            people.add(subject_key(fact["value"]))
        if subject_key(fact.get("subject")) != USER and (
            fact.get("type") == "relationship" or fact.get("slot") in ("job_title", "employer", "name")
        ):
            people.add(subject_key(fact.get("subject")))
        if subject_key(fact.get("subject")).startswith(UNNAMED_RELATIVE):  # "the user's dad plans to retire"
            people.add(subject_key(fact.get("subject")))
    return people


def section_of(fact: dict[str, Any], people: set[str] = frozenset(),  # type: ignore[assignment]
               by_meaning: dict[str, str] | None = None) -> str:
    """The profile section a fact belongs in: facts about others go to people (or current projects); a plain fact
    about the user that no slot, type or tag places goes where its meaning reads (`sections_by_meaning`, given in
    `by_meaning` for many facts at once)."""
    subject = subject_key(fact.get("subject"))
    tags = set(fact.get("tags") or [])
    if subject != USER:
        if subject in people or tags & {"people", KIN_OR_PET}:  # ("Biscuit turns five on ...": the user's pet)
            return "people"
        projectish = (
            any(w in subject for w in _PROJECT_WORDS)
            or "project" in tags
            or fact.get("slot") == "project_deadline"
            or fact.get("type") in ("decision", "commitment", "event")
        )
        return "current projects" if projectish else "people"
    if fact.get("slot") in _SLOT_SECTIONS:
        return _SLOT_SECTIONS[fact["slot"]]
    if "project" in tags:
        return "current projects"
    if KIN_OR_PET in tags:  # "has a dog named Biscuit": one of the user's people, not who the user is
        return "people"
    if fact.get("type") in _TYPE_SECTIONS:
        return _TYPE_SECTIONS[fact["type"]]
    if tags & set(_PLACE_TAGS):
        return "places"
    if tags & set(_WORK_TAGS):
        return "work"
    content = fact.get("content") or ""
    if by_meaning is None or content not in by_meaning:
        by_meaning = sections_by_meaning([content])
    return by_meaning[content]


def profiles_outdated(lake: Lake) -> bool:
    """Whether there are facts and the profiles table was not built from them by these rules."""
    return bool(lake.paths_of(FACTS)) and lake.stamp(PROFILES, PROFILE_RULES_STAMP) != PROFILE_RULES


def latest_day(fact: dict[str, Any]) -> date:
    """The latest day a fact is about: when it was said, held from or confirmed, or a day its sentence names.

    A month or a season named ("in October 2024", "in summer 2026") counts to its last day.
    """
    said = fact["created_at"]
    days = [d.date() for d in (said, fact.get("valid_from"), fact.get("last_confirmed_at")) if d is not None]
    for mention in find_dates(fact.get("content") or "", said):
        days.append(mention.last)  # a month or a season ("in summer 2026") counts to its last day
    return max(days)


def is_happening(fact: dict[str, Any]) -> bool:
    return fact.get("type") in HAPPENINGS or fact.get("slot") == "project_deadline"


def is_past(fact: dict[str, Any], at: datetime) -> bool:
    """Whether a happening (event, plan, decision, deadline) is over at `at`: its `valid_until` has come (a trip's
    last day is behind), or it is more than `CURRENT_DAYS` behind."""
    ended = fact.get("valid_until") is not None and fact["valid_until"] <= at
    return is_happening(fact) and (ended or (at.date() - latest_day(fact)).days > CURRENT_DAYS)


def _past_text(fact: dict[str, Any]) -> str:
    """A past event's line: a plan says it was one ("Planned on 2025-07-02: the user is going to Lisbon ..."),
    since its sentence speaks of a future that is over; an event is said as it was."""
    content = fact["content"]
    if fact.get("type") != "commitment" or not content:
        return content
    said = f"{content[0].lower()}{content[1:]}" if content.startswith("The ") else content  # a name keeps its capital
    return f"Planned on {fact['created_at'].date().isoformat()}: {said}"


def profile_lines(
    active: list[dict[str, Any]], people: set[str] | None = None, at: datetime | None = None
) -> list[dict[str, Any]]:
    """One line per active fact, by section; override-backed lines first, then by importance and time (past
    events: newest first).

    With `at` (the version's time), happenings more than `CURRENT_DAYS` behind it go to past events.
    """
    people = known_people(active) if people is None else people
    # the user's facts without a slot, read for their meaning in one pass (most are placed by type or tag first)
    by_meaning = sections_by_meaning([f.get("content") or "" for f in active
                                      if subject_key(f.get("subject")) == USER and not f.get("slot")])
    by_section: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for fact in active:
        by_section[PAST if at is not None and is_past(fact, at) else section_of(fact, people, by_meaning)].append(fact)
    lines = []
    for section in SECTIONS:
        if section == PAST:  # history reads newest first
            facts = sorted(by_section.get(section, []),
                           key=lambda f: (not f.get("override_ids"), -latest_day(f).toordinal(), f["fact_id"]))
        else:
            facts = sorted(
                by_section.get(section, []),
                key=lambda f: (not f.get("override_ids"), -float(f.get("importance") or 0.0),
                               -f["created_at"].timestamp(), f["fact_id"]),
            )
        for fact in facts:
            lines.append(
                {
                    "section": section,
                    "text": _past_text(fact) if section == PAST else fact["content"],
                    "fact_ids": [fact["fact_id"]],
                    "is_override": bool(fact.get("override_ids")),
                }
            )
    return lines


def render(lines: list[dict[str, Any]]) -> str:
    """The profile as Markdown: a heading per section, each line citing its fact ids."""
    parts = []
    for section in SECTIONS:
        rows = [line for line in lines if line["section"] == section]
        if not rows:
            continue
        parts.append(f"## {section.capitalize()}")
        for line in rows:
            marker = " (override)" if line["is_override"] else ""
            parts.append(f"- {line['text']} [{', '.join(line['fact_ids'])}]{marker}")
    return "\n".join(parts)


def _contributions(facts: pl.DataFrame, edges: pl.DataFrame) -> list[dict[str, Any]]:
    blocked = {
        (r["to_fact_id"], r["to_version"])
        for r in edges.filter(pl.col("reason") == BLOCKED_REASON).iter_rows(named=True)
    }
    rows = [
        r for r in facts.iter_rows(named=True)
        if (r["fact_id"], r["version"]) not in blocked and r["status"] not in ("forgotten",)
    ]
    return sorted(rows, key=lambda r: (r["created_at"], r["fact_id"], r["version"]))


def _conversation(row: dict[str, Any]) -> str | None:
    """The conversation a contribution came from (None for an override)."""
    return (row.get("source_conversation_ids") or [None])[0]


def profile_versions(
    facts: pl.DataFrame, edges: pl.DataFrame, threshold: int, write: VersionWriter | None = None,
    shown_confidence: float = 0.0,
) -> pl.DataFrame:
    """Every profile version of every agent in `facts` (rows of `profile/profiles`), from the facts shown to the
    agent (`confidence.shown` at `shown_confidence`): a candidate is in no profile.

    `write`, when given, writes each version's lines (the core model); else they are assembled. It is told which
    version is the agent's newest: a run that brings many conversations makes a version for each that changed the
    profile, and only the newest is worth a model call (docs/decisions.md).
    """
    threshold = max(1, threshold)
    out: list[dict[str, Any]] = []
    for agent_id in sorted(facts["agent_id"].unique().to_list()) if facts.height else []:
        agent_facts = facts.filter((pl.col("agent_id") == agent_id) & shown(shown_confidence))
        agent_edges = edges.filter((pl.col("agent_id") == agent_id) & (pl.col("edge_type") == "update"))
        replaced_at: dict[tuple[str, int], datetime] = {}
        for e in agent_edges.iter_rows(named=True):
            key = (e["to_fact_id"], e["to_version"])
            replaced_at[key] = min(e["created_at"], replaced_at.get(key, e["created_at"]))
        contributions = _contributions(agent_facts, agent_edges)
        made: list[dict[str, Any]] = []
        since_last = 0
        versions: list[tuple[datetime, int, list[dict[str, Any]], list[dict[str, Any]]]] = []
        for i, row in enumerate(contributions):
            made.append(row)
            since_last += 1
            following = contributions[i + 1] if i + 1 < len(contributions) else None
            last_at_this_time = following is None or following["created_at"] != row["created_at"]
            # a conversation's last contribution (the last of all, too): what a run adds shows as a new version
            end_of_conversation = following is None or _conversation(following) != _conversation(row)
            due = not versions or since_last >= threshold or row["source_interface"] == "override" \
                or end_of_conversation
            if not (due and last_at_this_time):
                continue
            at = row["created_at"]
            active = [
                r for r in made
                if r["status"] != "rejected"
                and ((r["fact_id"], r["version"]) not in replaced_at or replaced_at[(r["fact_id"], r["version"])] > at)
                and (r["valid_until"] is None or r["valid_until"] > at or is_happening(r))
            ]
            lines = profile_lines(active, known_people(made), at)
            if versions and lines == versions[-1][3]:
                continue  # nothing the profile says changed: no new version
            versions.append((at, i + 1, active, lines))
            since_last = 0
        for number, (at, contributions_so_far, active, lines) in enumerate(versions, start=1):
            writer = WRITER
            if write is not None:
                lines, writer = write(agent_id, at, active, lines, number == len(versions))
            out.append({"agent_id": agent_id, "version": number, "created_at": at,
                        "contributions": contributions_so_far, "lines": lines, "text": render(lines),
                        "writer": writer})
    frame = pl.from_arrow(conform(PROFILES, out))
    assert isinstance(frame, pl.DataFrame)
    return frame
