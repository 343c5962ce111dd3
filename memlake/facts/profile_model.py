"""Profiles written by the core model: one call per new profile version, validated, cached, with a fallback.

The model sees the version's active facts (id, type, subject, slot, value,
content, valid_from; user overrides first and marked; happenings the assembly
puts under past events marked past) and answers a
`ProfileAnswer`: sections of lines, each citing the fact ids it rests on.
The answer is checked before it becomes the profile:

- a line citing no fact id, or any id not in the list, is dropped;
- every override fact is cited by some line: if the model left one out, the
  assembled line for it is added;
- within a section, override-backed lines come first.

The call goes through the distiller's client (instructor on openai, tenacity
retries, the process-wide circuit breaker of the endpoint and model). When it
fails or the breaker is open, the version is assembled from the facts as
without a model (writer "assembled") and the reason is recorded; the next run
tries again, since only model answers are cached.

Cache: `profile/model_cache` in the lake, one row per key = sha256(prompt
version, model, sha256 of the prompt's fact list). A rerun over unchanged
facts finds every version's answer there and makes no call. The table keeps
the entries the latest run used (so it does not grow without bound).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from memlake.distill.models import DistillError
from memlake.facts.profile import PAST, SECTIONS, WRITER
from memlake.lake import Lake
from memlake.schemas import PROFILE_CACHE

if TYPE_CHECKING:
    from memlake.distill.client import CoreConfig

PROFILE_PROMPT_VERSION = "profile-v2"

SYSTEM_PROMPT = """You write the profile an assistant keeps of its user, from a numbered list of facts.

Sections: identity, work, places, preferences, people, current_projects, past_events.
Rules:
- Each line is one short sentence and lists in fact_ids the ids of the facts it rests on, copied exactly from the list.
- Every line must cite at least one fact id from the list. Never invent a fact or an id.
- Facts marked OVERRIDE were stated by the user themselves. Overrides win: when another fact disagrees with an
  override, follow the override and leave the other out. Every override must appear in some line, and override
  lines come first in their section.
- Facts about other people go under people (or current_projects when they are about a project).
- Facts marked PAST are events, plans and decisions that are over: they go under past_events, never under
  current_projects.
- Merge facts into one line only when they say the same thing."""


class ProfileLineAnswer(BaseModel):
    """One line of the profile and the fact ids it rests on."""

    text: str = Field(description="One short sentence.")
    fact_ids: list[str] = Field(default_factory=list, description="Ids of the facts this line rests on.")


class ProfileAnswer(BaseModel):
    """A profile in sections; every line cites fact ids from the list given."""

    identity: list[ProfileLineAnswer] = Field(default_factory=list)
    work: list[ProfileLineAnswer] = Field(default_factory=list)
    places: list[ProfileLineAnswer] = Field(default_factory=list)
    preferences: list[ProfileLineAnswer] = Field(default_factory=list)
    people: list[ProfileLineAnswer] = Field(default_factory=list)
    current_projects: list[ProfileLineAnswer] = Field(default_factory=list)
    past_events: list[ProfileLineAnswer] = Field(default_factory=list)

    def section_lines(self) -> list[tuple[str, ProfileLineAnswer]]:
        out = []
        for section in SECTIONS:
            for line in getattr(self, section.replace(" ", "_")):
                out.append((section, line))
        return out


def _day(value: Any) -> str:
    return value.date().isoformat() if isinstance(value, datetime) else "unknown"


def facts_listing(active: list[dict[str, Any]], assembled: list[dict[str, Any]]) -> str:
    """The prompt's fact list: overrides first (marked), then the assembled order; one fact a line."""
    order = {fid: i for i, line in enumerate(assembled) for fid in line["fact_ids"]}
    past = {fid for line in assembled if line["section"] == PAST for fid in line["fact_ids"]}
    facts = sorted(active, key=lambda f: (not f.get("override_ids"), order.get(f["fact_id"], len(order)),
                                          f["fact_id"]))
    rows = []
    for fact in facts:
        marker = "OVERRIDE" if fact.get("override_ids") else "extracted"
        if fact["fact_id"] in past:
            marker += " | PAST"
        rows.append(
            f"- id={fact['fact_id']} | {marker} | type={fact.get('type') or '-'} | subject={fact.get('subject') or '-'}"
            f" | slot={fact.get('slot') or '-'} | value={fact.get('value') or '-'}"
            f" | valid_from={_day(fact.get('valid_from'))} | content: {fact.get('content') or ''}"
        )
    return "\n".join(rows)


def build_messages(agent_id: str, listing: str) -> list[dict[str, str]]:
    user = (
        f"Agent: {agent_id}\n"
        "Active facts (user overrides first):\n"
        f"{listing}\n\n"
        "Write the profile. Every line must cite fact ids from this list; overrides win."
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def input_hash(listing: str) -> str:
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def cache_key(prompt_version: str, model: str, digest: str) -> str:
    return hashlib.sha256(f"{prompt_version}\x1f{model}\x1f{digest}".encode()).hexdigest()


def validate_answer(
    answer: ProfileAnswer, active: list[dict[str, Any]], assembled: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The answer's lines that cite only listed facts, plus assembled lines for overrides the model left out."""
    known = {f["fact_id"] for f in active}
    overrides = {f["fact_id"] for f in active if f.get("override_ids")}
    dropped: Counter[str] = Counter()
    kept: list[dict[str, Any]] = []
    for section, line in answer.section_lines():
        ids = list(dict.fromkeys(i.strip() for i in line.fact_ids if i and i.strip()))
        text = line.text.strip()
        if not text:
            dropped["empty text"] += 1
        elif not ids:
            dropped["no fact id"] += 1
        elif any(i not in known for i in ids):
            dropped["unknown fact id"] += 1
        else:
            kept.append({"section": section, "text": text, "fact_ids": ids,
                         "is_override": any(i in overrides for i in ids)})
    cited = {i for line in kept for i in line["fact_ids"]}
    added = [line for line in assembled if line["is_override"] and not set(line["fact_ids"]) & cited]
    lines = []
    for section in SECTIONS:
        rows = [line for line in kept + added if line["section"] == section]
        lines.extend(sorted(rows, key=lambda line: not line["is_override"]))  # stable: model order otherwise
    stats = {**dropped, "overrides_added": len(added), "model_lines_kept": len(kept)}
    return lines, dict(stats)


@dataclass
class ProfileWriter:
    """Writes profile versions with the core model; one instance per run (its stats and usage are per run)."""

    config: CoreConfig
    cache_rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: dict[str, dict[str, Any]] = field(default_factory=dict)
    stats: Counter[str] = field(default_factory=Counter)
    fallbacks: Counter[str] = field(default_factory=Counter)
    validation: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        from memlake.distill.client import CoreModelDistiller  # deferred: openai and instructor, ~1 s

        self.client = CoreModelDistiller(self.config, response_model=ProfileAnswer)

    @property
    def name(self) -> str:
        return self.config.model

    @classmethod
    def load(cls, config: CoreConfig, lake: Lake) -> ProfileWriter:
        rows = {r["cache_key"]: r for r in lake.read(PROFILE_CACHE).iter_rows(named=True)}
        return cls(config, cache_rows=rows)

    def write(
        self, agent_id: str, at: datetime, active: list[dict[str, Any]], assembled: list[dict[str, Any]],
        newest: bool = True,
    ) -> tuple[list[dict[str, Any]], str]:
        """(lines, writer) of one version: the model's validated lines, or the assembled ones on failure. Only the
        agent's newest version is sent to the model; an older one keeps the answer cached when it was the newest,
        else its assembled lines: an import of many conversations costs one call, not one per version."""
        listing = facts_listing(active, assembled)
        digest = input_hash(listing)
        key = cache_key(PROFILE_PROMPT_VERSION, self.name, digest)
        cached = self.used.get(key) or self.cache_rows.get(key)
        if cached is not None:
            self.stats["cache_hits"] += 1
            self.used[key] = cached
            return json.loads(cached["answer"]), self.name
        if not active or not newest:
            return assembled, WRITER
        try:
            answer = self.client.ask(build_messages(agent_id, listing))
        except DistillError as exc:
            self.stats["fallbacks"] += 1
            self.fallbacks[str(getattr(exc, "reason", exc))] += 1
            return assembled, WRITER
        self.stats["model_calls"] += 1
        lines, stats = validate_answer(answer, active, assembled)  # type: ignore[arg-type]
        self.validation.update({k: v for k, v in stats.items() if k != "model_lines_kept"})
        if not stats["model_lines_kept"]:
            self.stats["fallbacks"] += 1
            self.fallbacks["the model's answer had no valid line"] += 1
            return assembled, WRITER
        self.used[key] = {"cache_key": key, "agent_id": agent_id, "prompt_version": PROFILE_PROMPT_VERSION,
                          "model": self.name, "input_hash": digest, "answer": json.dumps(lines), "created_at": at}
        return lines, self.name

    def save(self, lake: Lake) -> int:
        """Keep the entries this run used (the only ones a rerun over the same facts can hit)."""
        return lake.write(PROFILE_CACHE, sorted(self.used.values(), key=lambda r: r["cache_key"]))

    def metadata(self) -> dict[str, Any]:
        return {
            "model_calls": self.stats["model_calls"],
            "cache_hits": self.stats["cache_hits"],
            "fallbacks": self.stats["fallbacks"],
            "fallback_reasons": dict(self.fallbacks),
            "dropped_or_added_lines": dict(self.validation),
            "token_usage": self.client.usage.as_dict(),
            "breaker_state": self.client.breaker_state(),
            "prompt_version": PROFILE_PROMPT_VERSION,
        }

