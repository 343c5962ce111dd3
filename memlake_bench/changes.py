"""The change-set benchmark: templated stories in which a user's attribute changes, through the whole pipeline.

Each story is one slot of one user (home city, employer, job title, diet,
partner, name, a project's launch date): a first conversation states the old
value in one of several phrasings, sometimes a later one repeats it, and a
conversation weeks or months later states the new value in another phrasing.
The stories are written as JSONL exports into landing (one agent per user, at
most one story per slot and agent), the pipeline runs as `memlake run` would
(offline distiller, the configured embedder), and each story is then read
back through `Memory`:

- new_first: the first row `Memory.facts(agent, include_history=True)` returns
  for the slot holds the new value (and it is the active one);
- old_in_history: the old value is among the versions of that chain;
- as_of_old: `Memory.facts(agent, as_of=<between the two>)` gives the old value;
- search_new_first: `Memory.search(question, scope="facts")` ranks a fact with
  the new value first (the fact index holds active facts only).

`fold_only` repeats the first two on candidates built straight from the
stories (no distiller): what the fold does when extraction is right.

Tuning and held-back halves (fixed; docs/decisions.md, "the change-set
benchmark split"): per slot, the old and the new phrasings at even positions
of `PHRASINGS` (0, 2, ...) and the first repeat phrasing are the tuning half;
those at odd positions, every phrasing of `ADDED_PHRASINGS` (written before the
rules of memlake-offline-2 were changed, never tuned on) and the second repeat
phrasing are the held-back half. A story takes both its phrasings from one
half, and a slot's stories alternate between the halves, so each half has
half of every slot's stories. The report gives each half and the total.

    python -m memlake_bench.changes --out docs/benchmarks/changes.json [--model hash] [--stories 240]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from memlake.api import Memory
from memlake.distill.offline import OFFLINE_DISTILLER_VERSION
from memlake.embedding import HashEmbedder, configured_embedder
from memlake.facts.fold import Candidate, fold
from memlake.lake import Lake
from memlake.schemas import EPISODES, agent_folder
from memlake_bench.machine import machine
from memlake_bench.pipeline import HomePipeline, home_with_model

SEED = 20240601
START = datetime(2023, 1, 9, 9, 0, tzinfo=UTC)

CITIES = ["Berlin", "Lisbon", "Paris", "Madrid", "Rome", "Oslo", "Vienna", "Prague", "Dublin", "Porto", "Amsterdam",
          "Warsaw", "Athens", "Zurich", "Toronto", "Seattle", "Melbourne", "Copenhagen"]
EMPLOYERS = ["Acme Robotics", "Northwind Labs", "Globex", "Initech", "Umbrella Health", "Hooli", "Vandelay Imports",
             "Blue Harbor Bank", "Pied Piper", "Wayne Enterprises", "Cyberdyne Systems", "Soylent Foods"]
TITLES = ["backend engineer", "data scientist", "engineering manager", "product manager", "site reliability engineer",
          "designer", "tech lead", "frontend developer", "security analyst", "research scientist"]
DIETS = ["vegetarian", "vegan", "pescatarian", "keto"]
PARTNERS = ["Jonas", "Sam", "Maria", "Chen", "Alex", "Noor", "Tomasz", "Ines"]
NAMES = [("Katherine", "Kate"), ("Priya Nair", "Priya Shah"), ("Robert", "Bob"), ("Alexandra", "Sasha"),
         ("Johannes", "Hannes"), ("Margaret", "Maggie")]
PROJECTS = ["Project Heron", "Project Falcon", "Project Osprey", "Project Kestrel"]

# slot -> (old phrasings, new phrasings, repeat phrasing, search question)
PHRASINGS: dict[str, tuple[list[str], list[str], str, str]] = {
    "home_city": (
        ["I live in {old}.", "I'm based in {old}.", "I've been living in {old} for a few years now.",
         "Our flat in {old} is tiny but I love living here."],
        ["I moved to {new} last week.", "I just relocated to {new}.", "I live in {new} now.",
         "Big news: we finally moved to {new}!"],
        "It's raining again here in {old}.",
        "Where does the user live?",
    ),
    "employer": (
        ["I work at {old}.", "I'm a software engineer at {old}.", "I've been at {old} for three years."],
        ["I started a new job at {new}.", "I joined {new} this month.", "I now work at {new}.",
         "I left {old} and joined {new}."],
        "Busy week at {old}, lots of meetings.",
        "Where does the user work?",
    ),
    "job_title": (
        ["I'm a {old}.", "I work as a {old}.", "My role is {old}."],
        ["I got promoted to {new}.", "I'm now a {new}.", "My new role is {new}."],
        "As a {old} I spend a lot of time in reviews.",
        "What is the user's job?",
    ),
    "diet": (
        ["I'm {old}.", "I've been {old} for years."],
        ["I've gone {new}.", "I'm {new} now.", "I switched to a {new} diet."],
        "Being {old} makes travelling harder.",
        "What diet does the user follow?",
    ),
    "partner": (
        ["My partner is {old}.", "My partner {old} and I are going hiking this weekend."],
        ["My partner is {new}.", "{old} and I broke up; I'm with {new} now."],
        "{old} says hi.",
        "Who is the user's partner?",
    ),
    "name": (
        ["My name is {old}.", "I'm {old}, nice to meet you."],
        ["Please call me {new} from now on.", "My name is {new} now."],
        "Sign it with {old}, please.",
        "What is the user's name?",
    ),
    "project_deadline": (
        ["The {project} launch is on {old}.", "We launch {project} on {old}."],
        ["The {project} launch moved to {new}.", "Actually, the {project} launch is on {new}, not {old}."],
        "Reminder to self: {project} still launches on {old}.",
        "When does {project} launch?",
    ),
}

# Held back only: slot -> (old phrasings, new phrasings, repeat phrasing). Natural variants a user would type,
# written before any rule of the offline distiller was changed for this benchmark (memlake-offline-2).
ADDED_PHRASINGS: dict[str, tuple[list[str], list[str], str]] = {
    "home_city": (
        ["I've lived in {old} since 2019.", "I'm currently living in {old}."],
        ["We relocated to {new} in March.", "I'm living in {new} these days.", "Just moved to {new}!"],
        "The weather in {old} has been lovely this week.",
    ),
    "employer": (
        ["I'm employed by {old}.", "I've worked for {old} since 2020."],
        ["I've just started at {new}.", "Today was my first day at {new}.", "I'm working for {new} now."],
        "My team at {old} is growing fast.",
    ),
    "job_title": (
        ["I've been a {old} for five years.", "My job title is {old}."],
        ["I was promoted to {new} last month.", "I took a new role as {new}."],
        "Being a {old} means lots of meetings.",
    ),
    "diet": (
        ["I follow a {old} diet.", "I've been eating {old} since last year."],
        ["I'm on a {new} diet now.", "I went {new} last month."],
        "Finding {old} food while travelling is hard.",
    ),
    "partner": (
        ["{old} is my partner.", "I'm married to {old}."],
        ["I'm dating {new} now.", "{new} and I got engaged last weekend!"],
        "{old} made dinner tonight.",
    ),
    "name": (
        ["Hi, {old} here.", "Everyone calls me {old}."],
        ["I go by {new} these days.", "I changed my name to {new}."],
        "Cheers, {old}",
    ),
    "project_deadline": (
        ["{project} is due on {old}.", "Our deadline for {project} is {old}."],
        ["We pushed the {project} launch to {new}.", "{project} now launches on {new}."],
        "{project} is on track for {old}.",
    ),
}
# A third, blind set (not part of the halves or the total): written 2026-11-22 by the lead engineer before reading
# memlake-offline-3's rules and before any run on them, after the held-back half stopped being blind for the
# partner slot (docs/decisions.md). Never tuned on; its stories get their own agents.
BLIND_PHRASINGS: dict[str, tuple[list[str], list[str], str]] = {
    "home_city": (
        ["My apartment in {old} has a great view.", "I live in {old} with my two cats."],
        ["I moved to {new} two weeks ago.", "We've settled in {new} now."],
        "Is there a good bakery near me in {old}?",
    ),
    "employer": (
        ["I work at {old}.", "I'm on the platform team at {old}."],
        ["I accepted an offer from {new} and start Monday.", "I joined {new} last week."],
        "Lunch at the {old} office was good today.",
    ),
    "job_title": (
        ["I work as a {old}.", "My current role is {old}."],
        ["I've switched roles and I'm a {new} now.", "Starting Monday I'm officially a {new}."],
        "As a {old}, I review a lot of pull requests.",
    ),
    "diet": (
        ["I'm {old}.", "I've eaten {old} for years."],
        ["I switched to a {new} diet this spring.", "These days I'm {new}."],
        "Any {old} recipes for dinner?",
    ),
    "partner": (
        ["My partner {old} and I went hiking.", "I live with my partner, {old}."],
        ["My new partner, {new}, is amazing.", "I'm in a relationship with {new} now."],
        "{old} and I are cooking tonight.",
    ),
    "name": (
        ["My name is {old}.", "You can call me {old}."],
        ["Please call me {new} from now on.", "I'd prefer to be called {new} now."],
        "Thanks! - {old}",
    ),
    "project_deadline": (
        ["{project} ships on {old}.", "The {project} release is planned for {old}."],
        ["{project} slipped to {new}.", "The new date for {project} is {new}."],
        "Still aiming for {old} with {project}.",
    ),
}

# A fourth set, written 2026-11-22 after the blind set above had shown 39 % and before the rules were widened
# on it (which made that set a development set): sealed until those rule changes were final, then run once.
BLIND2_PHRASINGS: dict[str, tuple[list[str], list[str], str]] = {
    "home_city": (
        ["I rent a small place in {old}.", "I've called {old} home for a decade."],
        ["Big news: we finally made the move to {new}!", "I'm now living in {new}."],
        "The trams in {old} were late again.",
    ),
    "employer": (
        ["I'm a contractor for {old}.", "{old} is where I work."],
        ["I left my old job and now work at {new}.", "I'm now at {new}."],
        "{old} gave everyone Friday off.",
    ),
    "job_title": (
        ["I'm currently a {old}.", "At work I'm the {old}."],
        ["I got promoted and I'm now a {new}.", "My new title is {new}."],
        "Being the {old} keeps me busy.",
    ),
    "diet": (
        ["I eat {old}.", "I'm strictly {old}."],
        ["I've recently gone {new}.", "I've started eating {new}."],
        "I found a great {old} cookbook.",
    ),
    "partner": (
        ["My husband {old} says hi.", "{old} and I have been together for years."],
        ["I've met someone new, {new}, and we're together now.", "{new} is my boyfriend now."],
        "{old} and I watched a movie.",
    ),
    "name": (
        ["I'm {old}, nice to meet you.", "{old} is my name."],
        ["I've started going by {new}.", "From now on my name is {new}."],
        "Best, {old}",
    ),
    "project_deadline": (
        ["We're launching {project} on {old}.", "{project} goes live on {old}."],
        ["{project} has been delayed to {new}.", "{project} is now scheduled for {new}."],
        "{project} still looks good for {old}.",
    ),
}

# A fifth set, written 2026-11-26 (issue 23) before any rule change of that round and without reading the sets above
# closely: many new-value phrasings per slot in everyday chat (contractions, fillers, dates, "we", the passive,
# news style, lowercase), so that one rule cannot pass a slot by one phrasing. Sealed: run once, at the end of the
# round. Its stories take the phrasings in turn (`generate(cycle=True)`), so every phrasing is told twice.
BLIND3_PHRASINGS: dict[str, tuple[list[str], list[str], str]] = {
    "home_city": (
        ["Our place in {old} is pretty small.", "I've been renting in {old} since college.",
         "Living in {old} has its perks.", "i'm in {old} btw"],
        ["We finally made the move to {new} last weekend.", "I'm living over in {new} now.",
         "so i moved to {new_lc} lol", "Just got the keys to our new flat in {new}!",
         "After months of planning, we've relocated to {new}.", "Moved to {new} on the 3rd, still unpacking boxes.",
         "I'm a {new} resident now, officially.", "Home is {new} these days.",
         "We packed up and left {old} for {new} in the spring.", "My new address is in {new}.",
         "Update: the move to {new} is done and we love it.", "Um, I actually live in {new} now, we moved last month.",
         "It's been a month since I moved to {new}.", "We were transferred to {new}, so that's where we live now.",
         "ok so we're in {new} for good now"],
        "The traffic in {old} was awful this morning.",
    ),
    "employer": (
        ["I work for {old}.", "I'm at {old} these days, on the data team.", "I've been with {old} for about two years.",
         "My employer is {old}."],
        ["I just signed with {new}, starting next week.", "Today was day one at {new}.",
         "I left {old}; {new} hired me last month.", "I was hired by {new} in May.", "Got a job at {new}!",
         "so i work at {new_lc} now", "I've moved over to {new} after five years at {old}.",
         "Starting at {new} was the best decision I made this year.", "{new} offered me a position and I took it.",
         "I'm working at {new} since last month.", "Just finished my first week at {new}.",
         "I handed in my notice at {old} and joined {new}.", "These days I'm employed at {new}.",
         "New job: {new}. Still getting used to the commute.", "I'm with {new} now, on their payments team."],
        "Our all-hands at {old} ran long again.",
    ),
    "job_title": (
        ["I'm a {old} at a mid-size company.", "I've worked as a {old} for a while.", "My title is {old}.",
         "by day i'm a {old}"],
        ["Got promoted to {new} yesterday!", "They made me {new} last week.",
         "I'm a {new} now, still getting used to it.",
         "I've stepped into the {new} role.", "As of this month I'm the team's {new}.", "My new title is {new}.",
         "I moved from {old} to {new} in March.", "i'm a {new} now as of monday", "After the reorg I became a {new}.",
         "I've taken on a {new} position.", "They've given me the {new} job.", "Working as a {new} these days.",
         "I switched careers and now work as a {new}.", "Officially a {new} as of today!",
         "I got the {new} job I applied for."],
        "Being a {old} means a lot of context switching.",
    ),
    "diet": (
        ["I've been {old} since uni.", "I'm {old}.", "I keep a {old} diet."],
        ["I went {new} in January.", "I'm trying {new} now and honestly loving it.",
         "Switched to {new} a few weeks ago.",
         "i'm {new} now, so no more pizza nights", "I've been {new} for two months now.",
         "We've gone {new} as a family.",
         "I've dropped {old} and gone {new}.", "My doctor put me on a {new} diet.", "These days I eat {new}.",
         "Since March I've been eating {new}.", "Decided to go {new} this year.", "Eating {new} now, feeling great.",
         "I gave up being {old}; I'm {new} these days.", "i do {new} now", "I've started a {new} diet."],
        "Finding {old} options at work lunches is tricky.",
    ),
    "partner": (
        ["My boyfriend is {old}.", "{old} and I have been together for three years.", "I'm seeing {old}.",
         "My husband {old} cooks most nights."],
        ["I'm seeing {new} now.", "{new} and I just moved in together.", "I've got a new girlfriend, {new}.",
         "I started dating {new} in the spring.", "{new} is my boyfriend now.", "i'm with {new} now, it's going great",
         "{old} and I split up, and now I'm dating {new}.", "Meet my new partner: {new}.",
         "{new} and I are a couple now.",
         "I married {new} last weekend!", "My fiancé {new} proposed on our trip.",
         "Been going out with {new} for a few months.", "We've been together since June, {new} and I.",
         "{new} asked me out and we're official now.", "I've been in a relationship with {new} since March."],
        "{old} picked the restaurant tonight.",
    ),
    "name": (
        ["Hi, I'm {old}.", "The name's {old}.", "{old} here, hi!", "My name's {old}."],
        ["Call me {new}, please.", "Actually, I go by {new} now.", "I'd rather you called me {new}.",
         "My friends call me {new} and I prefer it.", "I legally changed my name to {new}.",
         "Please use {new} from now on.", "Just {new} is fine.", "i go by {new} now", "You can just call me {new}.",
         "My name is now {new}.", "I've started going by {new}.", "Can you call me {new} instead of {old}?",
         "It's {new} now, not {old}.", "I prefer {new}, if that's ok.", "Everybody knows me as {new} these days."],
        "Best, {old}",
    ),
    "project_deadline": (
        ["{project} goes live on {old}.", "We're targeting {old} for {project}.", "The {project} deadline is {old}.",
         "{project} is scheduled for {old_dm}."],
        ["{project} has been pushed back to {new}.", "We moved the {project} release to {new_dm}.",
         "{project} is now due {new_iso}.", "New deadline for {project}: {new}.",
         "The {project} launch got delayed to {new}.", "We're now launching {project} on {new_dm}.",
         "{project} was postponed until {new}.", "heads up, {project} slipped to {new_short}",
         "The {project} go-live date changed to {new}.", "Leadership rescheduled {project} for {new}.",
         "{project} won't make {old}; it's {new} now.", "They bumped {project} to {new_dm}.",
         "We'll ship {project} on {new} instead.", "Looks like {project} launches {new} now.",
         "{project} is delayed until {new}, per the PM."],
        "Quick check: {project} is still set for {old}.",
    ),
}


HALVES = ("tuning", "held_back")
BLIND = "blind"
BLIND_2 = "blind_2"
BLIND_3 = "blind_3"
BLIND_SETS = {BLIND: BLIND_PHRASINGS, BLIND_2: BLIND2_PHRASINGS, BLIND_3: BLIND3_PHRASINGS}
# blind_3 tells each of its new phrasings twice (it takes them in turn); the older sets draw 84 stories at random.
BLIND3_STORIES = 2 * len(BLIND3_PHRASINGS) * max(len(news) for _, news, _ in BLIND3_PHRASINGS.values())
# Phrasings that also state another slot ("I'm a software engineer at Globex" gives a job title too). A story
# never uses one when the same agent has a story of that other slot: the fold rightly takes the newest statement
# of a slot, whichever story said it, so such a pair measured the generator, not memory.
ALSO_STATES: dict[str, tuple[str, ...]] = {"I'm a software engineer at {old}.": ("job_title",)}


def templates(slot: str, half: str) -> tuple[list[str], list[str], str]:
    """(old phrasings, new phrasings, repeat phrasing) of `slot` in one half of the benchmark (the fixed split)."""
    if half in BLIND_SETS:
        return BLIND_SETS[half][slot]
    olds, news, repeat, _ = PHRASINGS[slot]
    if half == "tuning":
        return olds[0::2], news[0::2], repeat
    added_olds, added_news, added_repeat = ADDED_PHRASINGS[slot]
    return olds[1::2] + added_olds, news[1::2] + added_news, added_repeat


def added_templates() -> set[str]:
    """Every phrasing written for the held-back half only."""
    return {t for olds, news, repeat in ADDED_PHRASINGS.values() for t in (*olds, *news, repeat)}


@dataclass(frozen=True)
class Story:
    story_id: str
    agent_id: str
    slot: str
    subject: str
    old: str
    new: str
    old_text: str
    new_text: str
    repeat_text: str | None
    old_at: datetime
    repeat_at: datetime | None
    new_at: datetime
    question: str
    old_text_template: str = ""
    new_text_template: str = ""
    half: str = "tuning"


def _iso_day(d: date) -> str:
    return d.isoformat()


def _values(slot: str, rnd: random.Random, day: date) -> tuple[str, str, str]:
    """(subject, old, new) for a story of `slot`."""
    if slot == "home_city":
        old, new = rnd.sample(CITIES, 2)
    elif slot == "employer":
        old, new = rnd.sample(EMPLOYERS, 2)
    elif slot == "job_title":
        old, new = rnd.sample(TITLES, 2)
    elif slot == "diet":
        old, new = rnd.sample(DIETS, 2)
    elif slot == "partner":
        old, new = rnd.sample(PARTNERS, 2)
    elif slot == "name":
        old, new = rnd.choice(NAMES)
    else:
        first = day + timedelta(days=rnd.randint(40, 90))
        second = first + timedelta(days=rnd.randint(7, 40))
        return rnd.choice(PROJECTS), _iso_day(first), _iso_day(second)
    return "user", old, new


def _pretty_day(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%B} {d.day}, {d.year}"


def _fill(slot: str, subject: str, old: str, new: str) -> dict[str, str]:
    """The values a phrasing may name: as said ({old}, {new}), lowercase as typed in chat ({old_lc}), and for a
    date the other ways people write one ({new_dm} "5 March 2023", {new_short} "Mar 5 2023", {new_iso})."""
    fill = {"project": subject}
    for side, value in (("old", old), ("new", new)):
        if slot == "project_deadline":
            d = date.fromisoformat(value)
            shown = _pretty_day(value)
            fill |= {f"{side}_dm": f"{d.day} {d:%B} {d.year}", f"{side}_short": f"{d:%b} {d.day} {d.year}",
                     f"{side}_iso": value}
        else:
            shown = value
        fill |= {side: shown, f"{side}_lc": shown.lower()}
    return fill


def _free(template: str, choices: list[str], other_slots: set[str]) -> str:
    """`template`, or when it states a slot another story of the agent has, the first of `choices` that does not
    (no random draw, so the other stories stay as they were)."""
    if not set(ALSO_STATES.get(template, ())) & other_slots:
        return template
    return next(t for t in choices if not set(ALSO_STATES.get(t, ())) & other_slots)


def generate(
    n_stories: int = 240, seed: int = SEED, halves: tuple[str, ...] = HALVES, prefix: str = "", cycle: bool = False
) -> list[Story]:
    """`n_stories` change stories, spread over agents with at most one story per slot each; no story states
    the slot of another story of its agent (see `ALSO_STATES`). A slot's stories alternate between `halves`;
    `prefix` keeps the ids and agents of another set apart; `cycle` takes a slot's phrasings in turn instead of
    at random, so every phrasing is told."""
    rnd = random.Random(seed)
    slots = list(PHRASINGS)
    stories: list[Story] = []
    per_slot: Counter[str] = Counter()
    agent = 0
    while len(stories) < n_stories:
        agent += 1
        agent_slots = rnd.sample(slots, len(slots))
        planned = set(agent_slots[: n_stories - len(stories)])  # the slots this agent gets a story of
        for slot in agent_slots:
            if len(stories) >= n_stories:
                break
            turn = per_slot[slot]
            half = halves[turn % len(halves)]  # a slot's stories alternate between the halves
            per_slot[slot] += 1
            olds, news, repeat = templates(slot, half)
            question = PHRASINGS[slot][3]
            old_at = START + timedelta(days=rnd.randint(0, 300), hours=rnd.randint(0, 10))
            new_at = old_at + timedelta(days=rnd.randint(20, 200), hours=rnd.randint(0, 8))
            repeat_at = old_at + (new_at - old_at) / 2 if rnd.random() < 0.4 else None
            subject, old, new = _values(slot, rnd, old_at.date())
            others = planned - {slot}
            old_pick, new_pick = rnd.choice(olds), rnd.choice(news)
            if cycle:
                old_pick, new_pick = olds[turn % len(olds)], news[turn % len(news)]
            old_template, new_template = _free(old_pick, olds, others), _free(new_pick, news, others)
            fill = _fill(slot, subject, old, new)
            stories.append(
                Story(
                    story_id=f"{prefix}s{len(stories):04d}",
                    agent_id=f"{prefix}changes-{agent:03d}",
                    slot=slot,
                    subject=subject,
                    old=old,
                    new=new,
                    old_text=old_template.format(**fill),
                    new_text=new_template.format(**fill),
                    repeat_text=repeat.format(**fill) if repeat_at is not None else None,
                    old_at=old_at,
                    repeat_at=repeat_at,
                    new_at=new_at,
                    question=question.format(**fill),
                    old_text_template=old_template,
                    new_text_template=new_template,
                    half=half,
                )
            )
    return stories


def landing_rows(stories: list[Story]) -> dict[str, list[dict[str, Any]]]:
    """JSONL export rows per agent: one conversation per statement, an assistant reply after each."""
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for story in stories:
        said = [("a", story.old_text, story.old_at), ("c", story.new_text, story.new_at)]
        if story.repeat_text and story.repeat_at is not None:
            said.append(("b", story.repeat_text, story.repeat_at))
        for tag, text, when in said:
            conversation = f"{story.story_id}-{tag}"
            rows[story.agent_id] += [
                {"conversation_id": conversation, "message_id": f"{conversation}-1", "role": "user",
                 "speaker": "user", "content": text, "created_at": when.isoformat().replace("+00:00", "Z"),
                 "title": f"{story.slot} chat"},
                {"conversation_id": conversation, "message_id": f"{conversation}-2", "role": "assistant",
                 "speaker": "assistant", "content": "Thanks for letting me know.",
                 "created_at": (when + timedelta(seconds=40)).isoformat().replace("+00:00", "Z")},
            ]
    return rows


def _same(a: str | None, b: str) -> bool:
    if not a:
        return False
    a, b = a.casefold().strip(" ."), b.casefold().strip(" .")
    return a == b or b in a or a in b


def _chain_rows(frame: Any, story: Story) -> Any:

    subject = "user" if story.subject == "user" else story.subject
    return frame.filter((pl.col("slot") == story.slot) & (pl.col("subject").str.to_lowercase() == subject.lower()))


def score_story(memory: Any, story: Story, search: bool) -> dict[str, Any]:
    history = _chain_rows(memory.facts(story.agent_id, include_history=True), story)
    first = history.row(0, named=True) if history.height else None
    new_first = bool(first and first["status"] == "active" and _same(first["value"], story.new))
    old_in_history = any(_same(v, story.old) for v in history["value"].to_list()) if history.height else False
    between = story.old_at + (story.new_at - story.old_at) / 4
    then = _chain_rows(memory.facts(story.agent_id, as_of=between), story)
    as_of_old = then.height == 1 and _same(then["value"][0], story.old)
    out: dict[str, Any] = {
        "story": story.story_id,
        "slot": story.slot,
        "half": story.half,
        "phrasing": f"{story.old_text_template} -> {story.new_text_template}",
        "new_first": new_first,
        "old_in_history": old_in_history,
        "as_of_old": as_of_old,
        "values": history["value"].to_list(),
        "statuses": history["status"].to_list(),
    }
    if search:
        try:
            hits = memory.search(story.question, story.agent_id, k=3, scope="facts")
            out["search_new_first"] = bool(hits.height) and story.new.casefold() in str(hits["text"][0]).casefold()
        except Exception as exc:  # search is another layer's; report, don't fail the benchmark
            out["search_error"] = f"{type(exc).__name__}: {exc}"
    return out


def fold_only(stories: list[Story]) -> dict[str, Any]:
    """The fold alone, on candidates built straight from the stories (extraction assumed right)."""


    candidates = []
    for s in stories:
        for tag, value, when in (("a", s.old, s.old_at), ("c", s.new, s.new_at)):
            candidates.append(
                Candidate(agent_id=s.agent_id, type="fact", subject=s.subject, slot=s.slot, value=value,
                          content=f"The {s.slot.replace('_', ' ')} of {s.subject} is {value}.", created_at=when,
                          conversation_id=f"{s.story_id}-{tag}", message_ids=(f"{s.story_id}-{tag}-1",))
            )
    facts = fold(candidates, embed=HashEmbedder().embed).facts
    ok = 0
    for s in stories:
        chain = facts.filter((pl.col("agent_id") == s.agent_id) & (pl.col("slot") == s.slot))
        active = chain.filter(pl.col("status") == "active")["value"].to_list()
        ok += active == [s.new] and s.old in chain["value"].to_list()
    return {"stories": len(stories), "new_first_with_old_in_history": round(ok / len(stories), 4)}


def extracted_values(settings: Any) -> dict[tuple[str, str], list[tuple[str | None, str | None]]]:
    """(agent, conversation) -> the (slot, value) of every fact candidate the distiller made of it."""
    out: dict[tuple[str, str], list[tuple[str | None, str | None]]] = {}
    for row in Lake.of(settings).read(EPISODES).iter_rows(named=True):
        out[(row["agent_id"], row["conversation_id"])] = [
            (c.get("slot"), c.get("value")) for c in row.get("fact_candidates") or []
        ]
    return out


def _rate(results: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in results if key in r]
    return round(sum(values) / len(values), 4) if values else float("nan")


def _summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a set of scored stories: overall, per slot, per phrasing pair, extraction."""
    extracted_both = [r for r in results if r["extracted_old"] and r["extracted_new"]]
    by_slot: dict[str, dict[str, Any]] = {}
    for slot in PHRASINGS:
        mine = [r for r in results if r["slot"] == slot]
        by_slot[slot] = {"stories": len(mine), **{k: _rate(mine, k) for k in
                                                  ("both", "new_first", "old_in_history", "as_of_old",
                                                   "search_new_first", "extracted_old", "extracted_new")}}
    by_phrasing = {
        f"{slot}: {phrasing}": {
            "half": mine[0]["half"],
            "stories": len(mine),
            **{k: _rate(mine, k) for k in ("both", "extracted_old", "extracted_new")},
        }
        for slot, phrasing in sorted({(r["slot"], r["phrasing"]) for r in results})
        if (mine := [r for r in results if r["slot"] == slot and r["phrasing"] == phrasing])
    }
    return {
        "stories": len(results),
        "overall": {k: _rate(results, k) for k in
                    ("both", "new_first", "old_in_history", "as_of_old", "search_new_first")},
        "by_slot": by_slot,
        "by_phrasing": by_phrasing,
        "extraction": {
            "old_value_extracted": _rate(results, "extracted_old"),
            "new_value_extracted": _rate(results, "extracted_new"),
            "stories_with_both_extracted": len(extracted_both),
            "both_given_both_extracted": _rate(extracted_both, "both"),
        },
    }


def _by_template(stories: list[Story], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Extraction rate per phrasing template (old ones: the old value; new ones: the new value), per half;
    `added` marks the phrasings written for the held-back half only."""
    added = added_templates()
    rows: dict[tuple[str, str, str, str], list[bool]] = defaultdict(list)
    for story, r in zip(stories, results, strict=True):
        rows[(story.half, story.slot, "old", story.old_text_template)].append(r["extracted_old"])
        rows[(story.half, story.slot, "new", story.new_text_template)].append(r["extracted_new"])
    out: dict[str, Any] = {}
    for half in (h for h in (*HALVES, *BLIND_SETS) if any(k[0] == h for k in rows)):
        mine = {k: v for k, v in rows.items() if k[0] == half}
        templates_ = [
            {"slot": slot, "side": side, "template": template, "added": template in added, "stories": len(v),
             "extracted": round(sum(v) / len(v), 4)}
            for (_, slot, side, template), v in sorted(mine.items())
        ]
        flat = [x for v in mine.values() for x in v]
        added_flat = [x for k, v in mine.items() if k[3] in added for x in v]
        out[half] = {
            "extracted": round(sum(flat) / len(flat), 4) if flat else float("nan"),
            "extracted_added_only": round(sum(added_flat) / len(added_flat), 4) if added_flat else None,
            "templates": templates_,
        }
    return out


def run_changes(out: Path, pipeline: HomePipeline, n_stories: int = 240, model: str = "", home: Path | None = None,
                search: bool = True, log: Any = print, n_blind: int = 84) -> dict[str, Any]:
    """Generate the stories, run the pipeline on them, read them back, and write the figures to `out`."""
    stories = generate(n_stories) + [
        story for i, name in enumerate(BLIND_SETS, start=1) if n_blind
        for story in generate(BLIND3_STORIES if name == BLIND_3 else n_blind, SEED + i, halves=(name,),
                              prefix=name[0] + str(i), cycle=name == BLIND_3)
    ]
    workdir = Path(tempfile.mkdtemp(prefix="memlake-changes-")) if home is None else home
    settings = home_with_model(workdir, model)
    settings.ensure_dirs()
    for agent_id, rows in landing_rows(stories).items():
        path = agent_folder(settings.landing_dir, agent_id) / "changes.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log(f"{len(stories)} stories over {len({s.agent_id for s in stories})} agents -> {settings.landing_dir}")
    started = time.perf_counter()
    outcome = pipeline.land(settings)
    pipeline_seconds = time.perf_counter() - started
    if not outcome.success:
        raise RuntimeError(f"pipeline failed: {outcome.detail}")
    memory = Memory(settings=settings)
    embedder = configured_embedder(settings)
    started = time.perf_counter()
    results = [score_story(memory, s, search) for s in stories]
    read_seconds = time.perf_counter() - started
    extracted = extracted_values(settings)
    for story, r in zip(stories, results, strict=True):
        r["both"] = r["new_first"] and r["old_in_history"]
        said = extracted.get((story.agent_id, f"{story.story_id}-a"), []), extracted.get(
            (story.agent_id, f"{story.story_id}-c"), []
        )
        r["extracted_old"] = any(slot == story.slot and _same(value, story.old) for slot, value in said[0])
        r["extracted_new"] = any(slot == story.slot and _same(value, story.new) for slot, value in said[1])
        # Another story of the same agent that also stated this slot ("I'm a software engineer at Globex" in an
        # employer story gives a job title): the fold rightly takes the newest statement, whichever story said it.
        r["crossed_by"] = sorted(
            other.story_id for other in stories
            if other.agent_id == story.agent_id and other.story_id != story.story_id
            and any(slot == story.slot and story.subject == "user"
                    for tag in "abc" for slot, _ in extracted.get((story.agent_id, f"{other.story_id}-{tag}"), []))
        )
    halves = (*HALVES, *BLIND_SETS) if n_blind else HALVES
    by_half = {half: _summary([r for r in results if r["half"] == half]) for half in halves}
    failures = [r for r in results if not r["both"]]
    main_results = [r for r in results if r["half"] in HALVES]  # the total is the two halves, as before
    report: dict[str, Any] = {
        "benchmark": "changes",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": machine(),
        "embedding_model": embedder.name if embedder is not None else "none",
        "distiller": OFFLINE_DISTILLER_VERSION,
        "stories": len(main_results),
        "blind_stories": len(results) - len(main_results),
        "agents": len({s.agent_id for s in stories}),
        "phrasings": len({r["phrasing"] for r in results}),
        "target": "new value returned first with the old value in history for >= 95 % of stories",
        "split": "per slot, phrasings at even positions of PHRASINGS are the tuning half; odd positions and "
                 "ADDED_PHRASINGS (written before the rules were changed) are held back; stories alternate",
        "halves": {half: {k: v for k, v in summary.items() if k in ("stories", "overall", "extraction")}
                   for half, summary in by_half.items()},
        **_summary(main_results),
        "by_half": {half: {k: v for k, v in summary.items() if k in ("by_slot",)} for half, summary in by_half.items()},
        "by_template": _by_template(stories, results),
        "fold_only": fold_only(stories),
        "pipeline_seconds": round(pipeline_seconds, 1),
        "read_ms_per_story": round(1000 * read_seconds / len(stories), 1),
        "failures": Counter(f"{r['half']} {r['slot']}: {r['phrasing']}" for r in failures).most_common(),
        "crossed_stories": {
            "about": "stories whose slot another story of the same agent also stated (counted as they come out)",
            "stories": sum(1 for r in results if r["crossed_by"]),
            "failed": sum(1 for r in failures if r["crossed_by"]),
            "failed_by_half": dict(Counter(r["half"] for r in failures if r["crossed_by"])),
        },
        "failure_examples": failures[:15],
        "search_errors": sorted({r["search_error"] for r in results if "search_error" in r})[:5],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    log(" | ".join(
        f"{name} both {part['overall']['both']:.3f} (n={part['stories']})"
        for name, part in (*report["halves"].items(), ("total", report))
    ) + f"; when both were extracted {report['extraction']['both_given_both_extracted']} of "
        f"{report['extraction']['stories_with_both_extracted']}; fold only "
        f"{report['fold_only']['new_first_with_old_in_history']} -> {out}")
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/changes.json"))
    parser.add_argument("--stories", type=int, default=240)
    parser.add_argument("--model", default="", help="embedding model ('' = default, 'hash' = test double)")
    parser.add_argument("--home", type=Path, default=None, help="build into this home (default: a temporary one)")
    parser.add_argument("--no-search", action="store_true", help="skip the Memory.search figure")
    args = parser.parse_args(argv)
    run_changes(args.out, args.stories, args.model, args.home, search=not args.no_search)


if __name__ == "__main__":
    main()


def render_changes_section(path: Path) -> str:
    """The Markdown section of docs/benchmarks.md from `changes.json` (empty when it was not run)."""
    if not Path(path).is_file():
        return ""
    r = json.loads(Path(path).read_text())
    rows = [("total", r["stories"], r["overall"])] + [
        (name, half["stories"], half["overall"]) for name, half in r["halves"].items()
    ]

    def pct(value: float) -> str:
        return f"{100 * value:.1f}"

    lines = [
        "## Fact changes (templated change stories)",
        "",
        f"{r['stories']} (+ {r.get('blind_stories', 0)} blind) generated change stories across slots in "
        f"{r['phrasings']} phrasings, through the whole "
        f"pipeline with the offline distiller ({r['distiller']}) and the embedding model {r['embedding_model']}. "
        "The phrasings are split into a tuning half and a held-back half (see docs/decisions.md); `total` is "
        "those two. `blind` and `blind_2` are further phrasing sets with stories of their own, outside the total: "
        "`blind` was written blind but the rules were then widened on it (a development set now); `blind_2` "
        "was sealed until those changes were final; `blind_3` (every new phrasing told twice) was written before "
        "the rule changes of issue 23's last round and run once at its end, then became a development set "
        "(docs/decisions.md, 2026-11-26); `blind_2` is the sealed measure. "
        f"Target: {r['target']}. Run: `memlake bench changes`.",
        "",
        "| stories | n | new first + old in history | new first | old in history | as_of gives old "
        "| fact search ranks new first |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, n, o in rows:
        lines.append(
            f"| {name} | {n} | **{pct(o['both'])}** | {pct(o['new_first'])} | {pct(o['old_in_history'])} | "
            f"{pct(o['as_of_old'])} | {pct(o['search_new_first'])} |"
        )
    lines += ["", f"Machine: {r['machine'].get('cpu')}, {r['machine'].get('cores')} cores; date {r['date']}.", ""]
    return "\n".join(lines)
