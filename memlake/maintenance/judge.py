"""Contradiction judges: offline rules (always) and the core model (when one is configured).

Offline rules look at one subject's active facts at a time, grouped so a rule compares only facts it could
hold against each other:

- exclusive slots: two current values of a single-valued slot (two employers, two home cities); a fact with
  no slot whose sentence says "works at X" / "lives in X" counts for employer / home_city;
- diet: a vegetarian or vegan claim against a fact of eating meat ("had steak last night, loved it");
- opposite stance: nearly the same statement (Jaccard >= `OPPOSITE_JACCARD` of the words left when negations,
  liking and disliking verbs and the subject's own words are set aside), one side negated or disliking and the
  other not ("likes coffee" / "does not like coffee", "loves dogs" / "hates dogs");
- incompatible dates: the same one-time thing (born, married, graduated, moved, …) on different dates.

The model judge reads candidate pairs (similar facts of one subject, and the rules' pairs) in batches of
`judge_batch` a call, answers a validated `JudgeAnswer` through the distiller's client (instructor, retries,
the circuit breaker), and is cached by the pair's texts. A failed call leaves its pairs to the rules alone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from memlake.distill.models import DistillError
from memlake.text import NEGATIONS, content_words, words

if TYPE_CHECKING:
    from memlake.distill.client import CoreConfig

OFFLINE_JUDGE = "offline-rules-v1"
JUDGE_PROMPT_VERSION = "contradiction-judge-v1"

# single-valued attributes of a subject: two current values cannot both hold
EXCLUSIVE_SLOTS = frozenset({"employer", "home_city", "name", "partner", "diet", "job_title", "age", "birthday",
                             "nationality", "hometown"})
_SLOT_PATTERNS = {
    "employer": re.compile(r"\b(?:works|work|working) (?:at|for)\s+([A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*)"
                           r"|\bemployed by\s+([A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*)"),
    "home_city": re.compile(r"\b(?:lives|live|living) in\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
}
_MEAT_FREE = re.compile(r"\b(vegetarian|vegan|(?:not|never|no longer) eats? meat|(?:does|do) not eat meat)\b", re.I)
_MEAT = frozenset({"steak", "beef", "pork", "bacon", "burger", "burgers", "hamburger", "chicken", "ham", "lamb",
                   "sausage", "sausages", "meat", "ribs", "brisket", "veal", "turkey", "salami", "pepperoni"})
_EATING = frozenset({"had", "ate", "eat", "eats", "eating", "loved", "loves", "love", "enjoyed", "ordered",
                     "grilled", "cooked", "tried", "favorite", "favourite"})
_LIKING = frozenset({"like", "likes", "liked", "love", "loves", "loved", "enjoy", "enjoys", "enjoyed", "adore",
                     "adores", "prefer", "prefers"})
_DISLIKING = frozenset({"hate", "hates", "hated", "dislike", "dislikes", "disliked", "detest", "detests"})
# how much of what two statements say must be the same for opposite stances to clash: "doesn't like dogs" and
# "loves dogs" share all; "doesn't like dogs" and "loves cats", nothing
OPPOSITE_JACCARD = 0.6
_ONE_TIME = frozenset({"born", "birthday", "married", "wedding", "graduated", "graduation", "moved", "started",
                       "starts", "began", "begins", "due", "deadline", "anniversary", "retired"})
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?"
    r"(?:,? \d{4})?\b|\b\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)"
    r"[a-z]*(?: \d{4})?\b|\b(?:19|20)\d{2}\b", re.I)


@dataclass(frozen=True)
class Verdict:
    """One judged pair (a and b are `fact_id@version`, a < b): whether they contradict, why, and by whom."""

    a: str
    b: str
    contradicts: bool
    reason: str
    judge: str


def _key(fact: dict[str, Any]) -> str:
    return f"{fact['fact_id']}@{fact['version']}"


def _pair(x: dict[str, Any], y: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return (x, y) if _key(x) < _key(y) else (y, x)


def _slot_value(fact: dict[str, Any]) -> tuple[str, str] | None:
    """The exclusive slot a fact fills and its value (casefolded): its own, or read from its sentence."""
    if fact.get("slot") in EXCLUSIVE_SLOTS and fact.get("value"):
        return str(fact["slot"]), str(fact["value"]).strip().casefold()
    if fact.get("slot"):
        return None
    text = fact.get("content") or ""
    if any(w in NEGATIONS for w in words(text)) or re.search(r"\b(used to|formerly|previously)\b", text, re.I):
        return None
    for slot, pattern in _SLOT_PATTERNS.items():
        found = pattern.search(text)
        if found:
            return slot, next(g for g in found.groups() if g).strip().rstrip(".").casefold()
    return None


def _eats_meat(text: str) -> str | None:
    said = words(text)
    if any(w in NEGATIONS for w in said) or not _EATING & set(said):
        return None
    meat = sorted(_MEAT & set(said))
    return meat[0] if meat else None


def _stance(text: str, subject: str) -> tuple[bool, frozenset[str]] | None:
    """(against, what it is about): whether a statement is negated or disliking (not both), and its content words
    without those cue words and the subject's own words; None when nothing is left."""
    said = set(words(text))
    against = bool(said & NEGATIONS) != bool(said & _DISLIKING)
    about = frozenset(content_words(text) - NEGATIONS - _LIKING - _DISLIKING - {"user", "does", "did"}
                      - content_words(subject))
    return (against, about) if about else None


def _dated(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """A one-time thing's words (dates removed) and its dates, or None."""
    dates = frozenset(d.casefold() for d in _DATE.findall(text))
    if not dates or not _ONE_TIME & set(words(text)):
        return None
    return frozenset(content_words(_DATE.sub(" ", text)) - NEGATIONS), dates


def offline_verdicts(facts: list[dict[str, Any]]) -> list[Verdict]:
    """The offline rules over one subject's active facts: a verdict for each contradicting pair."""
    found: dict[tuple[str, str], Verdict] = {}

    def flag(x: dict[str, Any], y: dict[str, Any], reason: str) -> None:
        a, b = _pair(x, y)
        found.setdefault((_key(a), _key(b)), Verdict(_key(a), _key(b), True, reason, OFFLINE_JUDGE))

    by_slot: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    meat_free, meat_eaten = [], []
    stances: list[tuple[bool, frozenset[str], dict[str, Any]]] = []
    by_event: dict[frozenset[str], list[tuple[frozenset[str], dict[str, Any]]]] = {}
    for fact in facts:
        text = fact.get("content") or ""
        slot_value = _slot_value(fact)
        if slot_value is not None:
            by_slot.setdefault(slot_value[0], []).append((slot_value[1], fact))
        if _MEAT_FREE.search(text):
            meat_free.append(fact)
        elif (meat := _eats_meat(text)) is not None:
            meat_eaten.append((meat, fact))
        if (stance := _stance(text, str(fact.get("subject") or ""))) is not None:
            stances.append((*stance, fact))
        if (event := _dated(text)) is not None:
            by_event.setdefault(event[0], []).append((event[1], fact))
    for slot, values in by_slot.items():
        for i, (value, fact) in enumerate(values):
            for other_value, other in values[i + 1:]:
                if value != other_value:
                    flag(fact, other, f"exclusive slot {slot}: {value!r} and {other_value!r} both current")
    for fact in meat_free:
        for meat, other in meat_eaten:
            flag(fact, other, f"diet: a meat-free diet and eating {meat}")
    for i, (against, about, fact) in enumerate(stances):
        for other_against, other_about, other in stances[i + 1:]:
            shared = len(about & other_about) / len(about | other_about)
            if against != other_against and shared >= OPPOSITE_JACCARD:
                flag(fact, other, f"opposite stance: the same statement ({shared:.2f} of its words), "
                                  "one side negated or disliking")
    for _words, events in by_event.items():
        for i, (dates, fact) in enumerate(events):
            for other_dates, other in events[i + 1:]:
                if not dates & other_dates:
                    flag(fact, other, f"incompatible dates: {', '.join(sorted(dates))} and "
                                      f"{', '.join(sorted(other_dates))}")
    return sorted(found.values(), key=lambda v: (v.a, v.b))


class PairVerdict(BaseModel):
    """The judge's answer for one numbered pair."""

    pair: int = Field(description="The pair's number, as listed.")
    contradicts: bool = Field(description="True only if both statements cannot be true at the same time.")
    reason: str = Field("", description="One short sentence: why they conflict, or why not.")


class JudgeAnswer(BaseModel):
    """One verdict per listed pair."""

    verdicts: list[PairVerdict] = Field(default_factory=list)


SYSTEM_PROMPT = """You check a person's remembered facts for contradictions.
Each numbered pair is two statements about the same subject. A pair contradicts only if both cannot be true at
the same time (two current employers, a vegetarian who loved a steak last night, two birth dates). Different
topics, added detail, or a change over time stated as such are not contradictions.
Answer one verdict per pair, with its number."""


def pair_line(number: int, a: dict[str, Any], b: dict[str, Any]) -> str:
    return f"{number}. A: {a.get('content') or ''} | B: {b.get('content') or ''}"


def judge_cache_key(model: str, a: dict[str, Any], b: dict[str, Any]) -> str:
    texts = sorted([a.get("content") or "", b.get("content") or ""])
    return hashlib.sha256("\x1f".join([JUDGE_PROMPT_VERSION, model, *texts]).encode()).hexdigest()


@dataclass
class ModelJudge:
    """Judges candidate pairs with the core model, `batch` pairs a call, cached by the pairs' texts."""

    config: CoreConfig
    batch: int = 10
    cache: dict[str, dict[str, Any]] = field(default_factory=dict)  # cache_key -> JUDGE_CACHE row
    used: dict[str, dict[str, Any]] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=lambda: {"model_calls": 0, "cache_hits": 0, "failed_calls": 0})

    def __post_init__(self) -> None:
        from memlake.distill.client import CoreModelDistiller  # deferred: openai and instructor, ~1 s

        self.client = CoreModelDistiller(self.config, response_model=JudgeAnswer)

    @property
    def name(self) -> str:
        return self.config.model

    def judge(self, pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> list[Verdict]:
        """A verdict for each pair the model (or its cache) answered."""
        verdicts: list[Verdict] = []
        asked: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        for x, y in pairs:
            a, b = _pair(x, y)
            key = judge_cache_key(self.name, a, b)
            hit = self.used.get(key) or self.cache.get(key)
            if hit is not None:
                self.stats["cache_hits"] += 1
                self.used[key] = hit
                verdicts.append(Verdict(_key(a), _key(b), bool(hit["contradicts"]), hit["reason"] or "", self.name))
            else:
                asked.append((key, a, b))
        for start in range(0, len(asked), self.batch):
            verdicts.extend(self._ask(asked[start:start + self.batch]))
        return verdicts

    def _ask(self, chunk: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> list[Verdict]:
        listing = "\n".join(pair_line(n, a, b) for n, (_key_, a, b) in enumerate(chunk, start=1))
        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": f"Pairs:\n{listing}\n\nJudge every pair."}]
        try:
            answer = self.client.ask(messages)
        except DistillError:
            self.stats["failed_calls"] += 1
            return []
        self.stats["model_calls"] += 1
        out = []
        for verdict in answer.verdicts:  # type: ignore[attr-defined]
            if not 1 <= verdict.pair <= len(chunk):
                continue  # a pair number not listed
            key, a, b = chunk[verdict.pair - 1]
            reason = " ".join(verdict.reason.split())[:300]
            self.used[key] = {"cache_key": key, "judge": self.name, "prompt_version": JUDGE_PROMPT_VERSION,
                              "contradicts": verdict.contradicts, "reason": reason}
            out.append(Verdict(_key(a), _key(b), verdict.contradicts, reason, self.name))
        return out
