"""The facts fold: fact candidates, user overrides and the forget log, in time order, into fact versions.

One pass over every input of every agent, sorted by (when it happened, kind,
content), so the same inputs always give the same tables whatever order they
came in. Each candidate meets the agent's active facts about the same subject
and the first rule that applies decides:

1. same subject and slot: the same value confirms the current version, another
   value supersedes it (the old row is kept: status superseded, valid_until
   set, superseded_by and an `update` edge), except that a guessed value (tag
   `inferred`) never replaces one the user said and is left out;
2. a duplicate (same polarity, no conflicting short values, and Jaccard >=
   `duplicate_jaccard`, or cosine >= `duplicate_cosine`, or Jaccard >=
   `contradict_jaccard` with cosine >= `near_duplicate_cosine`) confirms the
   old fact: confirmation_count, source_count, last_confirmed_at, sources;
   but an event that duplicates a commitment carries the plan out: it
   supersedes it in its chain (the plan valid until the event), and a
   statement of another type that duplicates a plan is a new fact;
3. an explicit change (type correction, or "instead of", "no longer",
   "switched", ... ) supersedes the closest fact it shares words with
   (Jaccard >= `contradict_jaccard`);
4. same type and subject with Jaccard >= `contradict_jaccard` (negation words
   left out when exactly one side is negated): a `contradict` edge, both stay
   active (`contradiction_policy` = supersede makes the newer supersede);
5. otherwise a new fact.

A statement that says a value it names ended ("I left Acme": an end cue and a
current slot value) is a new fact before rule 3. Then outcomes (`_settle`):
what a new version carried out or ended is closed as of the day it says it
happened (status superseded, valid_until, superseded_by and an `update` edge
whose reason says why), whatever its type: a slot's new value carries out
the subject's plans and open events naming it as their goal ("plans to move
to Montreal", "is interviewing at Initech"); a slot value replaced or ended
ends the subject's plans, states and open events naming it ("works with
Tomás at Acme"), and an ended value stays its slot's current version, with
valid_until; a plan that a statement of another type duplicates is carried
out by it (not confirmed). Plans and decisions carry nothing out.

Overrides always win: an active version that an override made or confirmed
is never superseded by an extraction; such an extraction is kept as a version
with status superseded (valid for no time) pointing at the override. A
correction replaces a fact retroactively (the old version gets valid_until =
its valid_from); a rejection sets the version's status to `rejected`, and the
same statement extracted again only confirms the rejected row. A correction
giving a multi-valued slot (sibling) another value keeps its chain under both
values (`slot_chains`); if another chain held the new value, that chain's
current version is superseded, so each value is current once. Forgetting a
fact removes its whole chain from the tables; forgetting an agent or a
conversation drops what was ingested from it before the forget. Applied on
top of written tables (a read merging the logs), a forget removes what the
run will remove and no more, so it may be applied again: a chain said anew
after it stays, and a conversation takes only the versions it alone
supported (the version one of them replaced is current again).

Ids come from content: a slotted chain is `hash(agent, subject, slot)`, a
slot-less one `hash(agent, subject, type, first content)`. Pure domain code.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from memlake.distill.models import INFERRED
from memlake.facts.confidence import fact_confidence
from memlake.facts.tastes import left_out_by_diet, reverses
from memlake.lake import conform
from memlake.moments import as_utc_or_none
from memlake.schemas import FACT_EDGES, FACTS
from memlake.text import NEGATIONS, content_words, is_negated, words

Embed = Callable[[list[str]], np.ndarray]

USER = "user"
_USER_ALIASES = {"", "user", "the user", "i", "me", "myself"}
EXTRACTION = "extraction"
OVERRIDE = "override"
_CHANGE_CUE = re.compile(
    r"\b(instead of|rather than|no longer|not any ?more|any ?more|switched|switching|changed|stopped|quit|"
    r"used to|replaced)\b",
    re.IGNORECASE,
)
# A statement that says a value it names ended ("I left Acme", "we moved out of Berlin", "I stopped working at
# Acme", "The user is done with Acme": how the distiller says "Acme is behind me"). Ordinary English verbs of ending,
# not phrases of any one chat.
_ENDINGS = (r"left|leaving|quit|quitting|resigned|no longer|not any ?more|moved (?:away |out )?(?:of|from)|"
            r"stopped|stopping|gave up|given up|giving up|done with|moved on from")
_END_CUE = re.compile(rf"\b({_ENDINGS})\b", re.IGNORECASE)
# ... and a state or a trip: "I've gone off oat milk", "we're back from Lisbon" (never a slot's value: "back from
# Acme's offsite" leaves the employer as it was).
_STATE_END_CUE = re.compile(
    rf"\b({_ENDINGS}|(?:gone|went|going|gotten|got) off|(?:back|returned|got back|came back|come back) from)\b",
    re.IGNORECASE,
)
# After these cues a verb comes first ("no longer goes to the gym"): the thing ended is what follows it.
_CUE_BEFORE_A_VERB = re.compile(r"^(?:no longer|not any ?more)$", re.IGNORECASE)
# Words that say when, not what: "stopped playing squash last week" ended squash, not weeks.
TIME_WORDS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years", "ago", "last", "since",
                         "yesterday", "today", "recently", "now", "anymore", "around", "weekend", "morning",
                         "evening", "night", "after", "before", "until"})
# A word of manner after what ended ("completely", "totally", "entirely"): an -ly word, nouns ending so aside.
_MANNER = re.compile(r"(?!(?:family|italy|jelly|belly|lily|holly|rally|ally|supply|assembly|july|fly|butterfly|"
                     r"monopoly|anomaly|bully|reply|rugby|poetry|pottery|jewelry|jewellery|dairy|curry|ugly)$)"
                     r"[a-z]{3,}ly")
# Types that look ahead: they carry nothing out, and a statement of another type carries a plan out.
PLAN_TYPES = ("commitment", "decision")
# What a later statement carries out (it names the new value as its goal): plans and events still open.
GOAL_TYPES = ("commitment", "event")
# What a value's end ends (it names the value): states as well as plans and open events.
STATE_TYPES = ("commitment", "event", "fact", "relationship")
# What a statement that names it as ended ends ("gone off oat milk"): any state, taste or skill, and open plans.
ENDABLE_TYPES = (*STATE_TYPES, "preference", "skill")
_KIND_RANK = {"candidate": 0, "override": 1, "forget": 2}
_ATOMIC_WORDS = 2  # values of at most this many content words are compared as atoms


# ---------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Candidate:
    """A fact candidate, dated: `created_at` is when the user said it."""

    agent_id: str
    type: str
    subject: str
    content: str
    created_at: datetime
    slot: str | None = None
    value: str | None = None
    confidence: float = 0.8
    importance: float = 0.5
    tags: tuple[str, ...] = ()
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    ingested_at: datetime | None = None
    conversation_id: str | None = None
    message_ids: tuple[str, ...] = ()

    def sort_key(self) -> tuple[Any, ...]:
        return (
            as_utc_or_none(self.created_at),
            _KIND_RANK["candidate"],
            self.agent_id,
            subject_key(self.subject),
            self.slot or "",
            self.type,
            self.content,
            self.value or "",
            _iso(self.valid_from),
            _iso(self.valid_until),
            self.conversation_id or "",
            self.message_ids,
            self.confidence,
            self.importance,
            tuple(sorted(self.tags)),
            _iso(self.ingested_at),
        )


@dataclass(frozen=True)
class Override:
    """One entry of the overrides log: add a fact, correct one (by id), or reject one (by id)."""

    override_id: str
    agent_id: str
    action: str  # add | correct | reject
    written_at: datetime
    fact_id: str | None = None
    type: str | None = None
    subject: str | None = None
    slot: str | None = None
    value: str | None = None
    content: str | None = None
    confidence: float | None = None
    importance: float | None = None
    tags: tuple[str, ...] = ()
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    # What the target looked like when the override was written, to find it again if its id changed.
    target_subject: str | None = None
    target_slot: str | None = None
    target_content: str | None = None

    def sort_key(self) -> tuple[Any, ...]:
        return (as_utc_or_none(self.written_at), _KIND_RANK["override"], self.agent_id, self.override_id)


@dataclass(frozen=True)
class Forget:
    """One entry of the forget log: an agent, a conversation or a fact (chain) to forget."""

    forget_id: str
    agent_id: str
    scope: str  # agent | conversation | fact
    written_at: datetime
    target: str | None = None

    def sort_key(self) -> tuple[Any, ...]:
        return (as_utc_or_none(self.written_at), _KIND_RANK["forget"], self.agent_id, self.forget_id)


Event = Candidate | Override | Forget


@dataclass(frozen=True)
class FoldConfig:
    """The fold's thresholds and policy (from `Settings`)."""

    duplicate_jaccard: float = 0.6
    duplicate_cosine: float = 0.85
    near_duplicate_cosine: float = 0.8
    contradict_jaccard: float = 0.3
    contradiction_policy: str = "flag"

    @classmethod
    def from_settings(cls, settings: Any) -> FoldConfig:
        return cls(
            duplicate_jaccard=settings.duplicate_jaccard,
            duplicate_cosine=settings.duplicate_cosine,
            near_duplicate_cosine=getattr(settings, "near_duplicate_cosine", cls.near_duplicate_cosine),
            contradict_jaccard=settings.contradict_jaccard,
            contradiction_policy=settings.contradiction_policy,
        )


# --------------------------------------------------------------------------------------------- helpers


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


def subject_key(subject: str | None) -> str:
    """How subjects compare: the user's aliases are "user", names compare casefolded."""
    text = " ".join((subject or "").split())
    return USER if text.casefold() in _USER_ALIASES else text.casefold()


def display_subject(subject: str | None) -> str:
    text = " ".join((subject or "").split())
    return USER if text.casefold() in _USER_ALIASES else text


def _hash_id(*parts: str) -> str:
    return "f_" + hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def chain_id(agent_id: str, subject: str, slot: str | None, fact_type: str, first_content: str) -> str:
    """The id of a fact chain: stable for a slot, else derived from the first statement."""
    if slot:
        return _hash_id(agent_id, subject_key(subject), "slot", slot)
    return _hash_id(agent_id, subject_key(subject), "type", fact_type, " ".join(words(first_content)))


# Slots a subject may hold several values of at once (a second sister is not a new value of the first): each
# value is a chain of its own, and two values are neither a change nor a contradiction.
MULTI_VALUED_SLOTS = frozenset({"sibling"})


def slot_of(slot: str, value: str | None) -> str:
    """The slot a chain is kept under: the slot, or for a multi-valued one the slot and its value."""
    if slot in MULTI_VALUED_SLOTS:
        return f"{slot}={' '.join((value or '').split()).casefold()}"
    return slot


def slot_key(agent_id: str, subject: str | None, slot: str, value: str | None) -> tuple[str, str, str]:
    return (agent_id, subject_key(subject), slot_of(slot, value))


def slot_chains(facts: pl.DataFrame) -> pl.DataFrame:
    """One row per fact (`agent_id`, `fact_id`) with a slot, and `slot_chain`: the slot chain the fold keeps it in.

    The fold keeps a fact under the slot key of every value its versions held (`slot_key`): one key for a
    single-valued slot; for a multi-valued one (sibling), a value replaced by another adds the new value's key.
    Facts sharing a key are one slot chain, and the fold keeps exactly one active version in each (none only when
    the newest was rejected): Bob replacing Ken joins Ken's key and Bob's; Tom stays a chain of his own. The
    chain is named by its smallest key, so the same facts always give the same names."""
    pairs = facts.filter(pl.col("slot").is_not_null()).select("agent_id", "fact_id", "subject", "slot", "value")
    joined: dict[tuple[str, str, str], tuple[str, str, str]] = {}  # a key -> a key of the same chain (a union-find)

    def root(key: tuple[str, str, str]) -> tuple[str, str, str]:
        while joined.setdefault(key, key) != key:
            key = joined[key]
        return key

    first_key: dict[tuple[str, str], tuple[str, str, str]] = {}
    for agent_id, fact_id, subject, slot, value in pairs.iter_rows():
        key = slot_key(agent_id, subject, slot, value)
        held = first_key.setdefault((agent_id, fact_id), key)
        a, b = root(held), root(key)
        if a != b:  # the smaller key names the joined chain
            joined[max(a, b)] = min(a, b)
    return pl.DataFrame(
        [(agent_id, fact_id, "\x1f".join(root(key))) for (agent_id, fact_id), key in first_key.items()],
        schema={"agent_id": pl.String, "fact_id": pl.String, "slot_chain": pl.String}, orient="row",
    )


# Words that name the same thing inside a value ("backend developer" is a "backend engineer").
_VALUE_SYNONYMS = {"developer": "engineer", "programmer": "engineer", "dev": "engineer"}


def _value_words(value: str | None) -> set[str]:
    found = content_words(value) | {w for w in words(value) if w.isdigit()}
    return {_VALUE_SYNONYMS.get(w, w) for w in found}


def _norm_value(value: str | None) -> str:
    return " ".join(_VALUE_SYNONYMS.get(w, w) for w in words(value))


def same_value_loosely(a: str | None, b: str | None) -> bool:
    """Equal once normalised, or one's content words contain the other's ("Acme" / "Acme Robotics")."""
    if not a or not b:
        return False
    if _norm_value(a) == _norm_value(b):
        return True
    wa, wb = _value_words(a), _value_words(b)
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def _is_atomic(value: str | None) -> bool:
    return bool(value) and len(_value_words(value)) <= _ATOMIC_WORDS


_TOKEN = re.compile(r"[\w'’-]+")


def _capitalised_names(text: str) -> list[str]:
    """The runs of capitalised words in `text` ("The", "Acme Robotics")."""
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(text):
        if token[0].isupper():
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [" ".join(run) for run in runs if run]


def _names(text: str, value: str | None) -> bool:
    """Whether `text` names `value`: every content word of the value is in it ("Acme Robotics" in "left Acme
    Robotics"), or a capitalised name in it is the value loosely, as slot values compare ("left Acme")."""
    value_words = _value_words(value)
    if not value_words:
        return False
    if value_words <= _value_words(text):
        return True
    return any(_value_words(name) and same_value_loosely(name, value) for name in _capitalised_names(text))


def _names_goal(text: str, value: str | None) -> bool:
    """Whether `text` names `value` as where it goes, not where it comes from: "move from Berlin to Lisbon"
    names Lisbon as its goal, and Berlin as its origin."""
    if not _names(text, value):
        return False
    said, named = words(text), words(value)
    starts = [i for i in range(len(said) - len(named) + 1) if said[i:i + len(named)] == named]
    return not starts or any(i == 0 or said[i - 1] != "from" for i in starts)


def _ended_object(content: str) -> frozenset[str]:
    """The content words of what a statement says ended: after its end cue, up to the clause's end or the first
    word of when ("stopped playing squash after the injury" -> squash; "no longer goes to the gym" -> gym)."""
    cue = _STATE_END_CUE.search(content)
    if cue is None:
        return frozenset()
    clause = re.split(r"[,.;:!?()]|\s[-–—]\s|\b(?:and|but|because|so|when|while)\b", content[cue.end():], maxsplit=1)[0]
    said = []
    for word in words(clause):
        if word in TIME_WORDS or any(ch.isdigit() for ch in word):
            break
        if _MANNER.fullmatch(word):
            continue  # how it ended, not what: "given up coffee completely"
        said.append(word)
    if said and (said[0].endswith("ing") or _CUE_BEFORE_A_VERB.match(cue.group(1))):
        said = said[1:]  # the verb of what ended ("playing squash", "no longer goes to"): the thing is after it
    return frozenset(_value_words(" ".join(said)))


def words_loosely_in(wanted: AbstractSet[str], found: AbstractSet[str]) -> bool:
    """Whether every wanted word is in `found`, a plural and its singular counting as one ("sugar", "sugars")."""
    return all(w in found or f"{w}s" in found or f"{w}es" in found or w.rstrip("s") in found for w in wanted)


def has_change_cue(content: str) -> bool:
    """Whether a statement says something changed ("instead of", "no longer", "switched", …)."""
    return bool(_CHANGE_CUE.search(content))


def _jaccard_sets(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _clamp01(value: float | None, default: float) -> float:
    if value is None or value != value:
        return default
    return min(1.0, max(0.0, float(value)))


# ----------------------------------------------------------------------------------------- fact rows


@dataclass
class FactVersion:
    """One row of `facts/facts` while the fold runs."""

    fact_id: str
    version: int
    agent_id: str
    type: str
    subject: str
    slot: str | None
    value: str | None
    content: str
    confidence: float
    importance: float
    tags: list[str]
    valid_from: datetime
    valid_until: datetime | None
    created_at: datetime
    ingested_at: datetime | None
    source_conversation_ids: list[str]
    source_message_ids: list[str]
    source_count: int
    confirmation_count: int
    last_confirmed_at: datetime | None
    status: str
    superseded_by: str | None
    source_interface: str
    override_ids: list[str] = field(default_factory=list)
    # The best prior of the readings that said it (`confidence.reading_prior`), kept while the fold runs (not a
    # column): `confidence` is worked out from it and the conversations that said it (`fact_confidence`).
    prior: float | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.fact_id, self.version)

    @property
    def held(self) -> bool:
        """Made or confirmed by a user override: extraction never replaces it."""
        return bool(self.override_ids)

    def row(self) -> dict[str, Any]:
        return {
            "fact_id": self.fact_id,
            "version": self.version,
            "agent_id": self.agent_id,
            "type": self.type,
            "subject": self.subject,
            "slot": self.slot,
            "value": self.value,
            "content": self.content,
            "confidence": self.confidence,
            "importance": self.importance,
            "tags": list(self.tags),
            "valid_from": self.valid_from,
            "valid_until": self.valid_until,
            "created_at": self.created_at,
            "ingested_at": self.ingested_at,
            "source_conversation_ids": list(self.source_conversation_ids),
            "source_message_ids": list(self.source_message_ids),
            "source_count": self.source_count,
            "confirmation_count": self.confirmation_count,
            "last_confirmed_at": self.last_confirmed_at,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "source_interface": self.source_interface,
            "override_ids": list(self.override_ids),
        }


@dataclass
class Edge:
    """One row of `facts/fact_edges`: from the newer version to the one it updates or contradicts."""

    agent_id: str
    edge_type: str
    from_fact_id: str
    from_version: int
    to_fact_id: str
    to_version: int
    created_at: datetime
    reason: str

    def row(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class _Obs:
    """A statement entering the fold: an extracted candidate or an override's new fact."""

    agent_id: str
    type: str
    subject: str
    slot: str | None
    value: str | None
    content: str
    confidence: float
    importance: float
    tags: tuple[str, ...]
    valid_from: datetime
    valid_until: datetime | None
    created_at: datetime
    ingested_at: datetime | None
    conversation_id: str | None
    message_ids: tuple[str, ...]
    override_id: str | None = None

    @property
    def is_override(self) -> bool:
        return self.override_id is not None

    @property
    def interface(self) -> str:
        return OVERRIDE if self.is_override else EXTRACTION


@dataclass(frozen=True)
class _Match:
    fact: FactVersion
    jaccard: float
    cosine: float
    same_polarity: bool
    values_conflict: bool


@dataclass
class FoldStats:
    """What the fold did, for asset metadata."""

    candidates: int = 0
    overrides: int = 0
    forgets: int = 0
    created: int = 0
    superseded: int = 0
    confirmed: int = 0
    contradictions: int = 0
    blocked_by_override: int = 0
    closed: int = 0  # plans carried out and states ended by a later statement
    rejected: int = 0
    forgotten_chains: int = 0
    dropped_by_forget: int = 0
    unresolved_overrides: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class FoldResult:
    """The fold's tables and what it did."""

    facts: pl.DataFrame
    edges: pl.DataFrame
    stats: FoldStats


# ----------------------------------------------------------------------------------------------- fold


class _SubjectIndex:
    """The versions about one subject of one agent: by content word, and their vectors as one matrix."""

    def __init__(self, dim: int | None) -> None:
        self.versions: list[FactVersion] = []
        self.by_word: dict[str, list[int]] = {}
        self.matrix = np.zeros((16, dim), dtype=np.float32) if dim else None

    def add(self, version: FactVersion, words: frozenset[str], vector: np.ndarray | None) -> None:
        position = len(self.versions)
        self.versions.append(version)
        for word in words:
            self.by_word.setdefault(word, []).append(position)
        if self.matrix is not None and vector is not None:
            if position >= self.matrix.shape[0]:
                grown = np.zeros((self.matrix.shape[0] * 2, self.matrix.shape[1]), dtype=np.float32)
                grown[:position] = self.matrix[:position]
                self.matrix = grown
            self.matrix[position] = vector

    def near(self, words: frozenset[str], vector: np.ndarray | None, min_cosine: float) -> dict[int, float]:
        """Positions sharing a word with `words`, or with cosine >= `min_cosine` to `vector`, with their cosine."""
        found: set[int] = set()
        for word in words:
            found.update(self.by_word.get(word, ()))
        if self.matrix is None or vector is None or not self.versions:
            return dict.fromkeys(found, 0.0)
        cosines = self.matrix[: len(self.versions)] @ vector
        found.update(np.nonzero(cosines >= min_cosine)[0].tolist())
        return {position: float(cosines[position]) for position in found}


class Folder:
    """Applies events in time order to the fact versions of every agent.

    `add(events)` continues the fold when every new event sorts after the
    last one applied, and folds everything again otherwise, so adding A then
    B always equals adding A and B together. `from_tables` resumes from
    written tables (reads use it to merge overrides not folded yet).
    """

    def __init__(self, config: FoldConfig | None = None, embed: Embed | None = None) -> None:
        self.config = config or FoldConfig()
        self.embed = embed
        self._vectors: dict[str, np.ndarray] = {}
        self._words: dict[str, frozenset[str]] = {}
        self._negated: dict[str, bool] = {}
        self.resumed = False  # built from tables: no inputs to fold again
        self.resumed_at: datetime | None = None
        self._reset()

    def _reset(self) -> None:
        self.chains: dict[str, list[FactVersion]] = {}
        self.slot_chain: dict[tuple[str, str, str], str] = {}
        self.edges: list[Edge] = []
        self.events: list[Event] = []
        self.last_key: tuple[Any, ...] | None = None
        self.stats = FoldStats()
        self.applied_overrides: set[str] = set()
        self._index: dict[tuple[str, str], _SubjectIndex] = {}
        self._forgotten_agents: dict[str, list[datetime]] = {}
        self._forgotten_conversations: dict[tuple[str, str], list[datetime]] = {}

    # ---------------------------------------------------------------- public

    def add(self, events: Iterable[Event]) -> Folder:
        new = sorted(events, key=lambda e: e.sort_key())
        if not new:
            return self
        forgets_sources = any(isinstance(e, Forget) and e.scope != "fact" for e in new)
        late = self.last_key is not None and not new[0].sort_key() > self.last_key
        if self.events and not self.resumed and (late or forgets_sources):
            everything = sorted([*self.events, *new], key=lambda e: e.sort_key())
            self._reset()
            new = everything
        self._prime([e.content for e in new if isinstance(e, Candidate)])
        for event in new:
            self._register_forget(event)
        for event in new:
            self.events.append(event)
            self.last_key = event.sort_key()
            if isinstance(event, Candidate):
                self._apply_candidate(event)
            elif isinstance(event, Override):
                self._apply_override(event)
            else:
                self._apply_forget(event)
        return self

    def result(self) -> FoldResult:
        return FoldResult(facts=self.facts_frame(), edges=self.edges_frame(), stats=self.stats)

    def versions(self) -> list[FactVersion]:
        return [v for chain in self.chains.values() for v in chain]

    @property
    def vectors(self) -> dict[str, np.ndarray]:
        """Content -> vector of every text the fold embedded (empty without an embedder)."""
        return self._vectors

    def facts_frame(self) -> pl.DataFrame:
        rows = sorted((v.row() for v in self.versions()), key=lambda r: (r["agent_id"], r["fact_id"], r["version"]))
        return _frame(conform(FACTS, pa.Table.from_pylist(rows, schema=FACTS.schema)) if rows else None, FACTS)

    def edges_frame(self) -> pl.DataFrame:
        rows = sorted(
            (e.row() for e in self.edges),
            key=lambda r: (r["agent_id"], r["edge_type"], r["from_fact_id"], r["from_version"], r["to_fact_id"],
                           r["to_version"]),
        )
        table = pa.Table.from_pylist(rows, schema=FACT_EDGES.schema) if rows else None
        return _frame(table, FACT_EDGES)

    @classmethod
    def from_tables(
        cls,
        facts: pl.DataFrame,
        edges: pl.DataFrame,
        config: FoldConfig | None = None,
        embed: Embed | None = None,
    ) -> Folder:
        """A folder holding written tables, ready to apply events that come after them."""
        folder = cls(config, embed)
        latest: datetime | None = None
        for r in facts.sort("agent_id", "fact_id", "version").iter_rows(named=True):
            fields: dict[str, Any] = {k: r.get(k) for k in FactVersion.__dataclass_fields__
                                      if k not in ("override_ids", "prior")}
            version = FactVersion(**fields, override_ids=list(r.get("override_ids") or []))
            version.tags = list(version.tags or [])
            version.source_conversation_ids = list(version.source_conversation_ids or [])
            version.source_message_ids = list(version.source_message_ids or [])
            folder.chains.setdefault(version.fact_id, []).append(version)
            folder.applied_overrides.update(version.override_ids)
            for t in (version.created_at, version.last_confirmed_at):
                if t is not None and (latest is None or t > latest):
                    latest = t
        for r in edges.iter_rows(named=True):
            folder.edges.append(Edge(**{k: r[k] for k in Edge.__dataclass_fields__}))
            if latest is None or r["created_at"] > latest:
                latest = r["created_at"]
        # every value a chain held names it; a value two chains held names the one whose version of it is active
        for version in sorted(folder.versions(), key=lambda v: (v.status == "active", v.agent_id, v.fact_id,
                                                                 v.version)):
            if version.slot:
                folder.slot_chain[slot_key(version.agent_id, version.subject, version.slot, version.value)] = (
                    version.fact_id)
        folder.resumed = True
        folder.resumed_at = latest
        folder._prime([v.content for v in folder.versions()])
        for version in folder.versions():
            folder._index_add(version)
        return folder

    # ---------------------------------------------------------------- embeddings

    def _prime(self, texts: Sequence[str]) -> None:
        if self.embed is None:
            return
        missing = sorted({t for t in texts if t and t not in self._vectors})
        if missing:
            vectors = np.asarray(self.embed(missing), dtype=np.float32)
            for text, vector in zip(missing, vectors, strict=True):
                self._vectors[text] = vector

    def _vector(self, text: str) -> np.ndarray | None:
        if self.embed is None:
            return None
        self._prime([text])
        return self._vectors[text]

    def _cosine(self, a: str, b: str) -> float:
        va, vb = self._vector(a), self._vector(b)
        return 0.0 if va is None or vb is None else float(np.dot(va, vb))

    def _content_words(self, text: str) -> frozenset[str]:
        if text not in self._words:
            self._words[text] = frozenset(content_words(text))
        return self._words[text]

    def _is_negated(self, text: str) -> bool:
        if text not in self._negated:
            self._negated[text] = is_negated(text)
        return self._negated[text]

    def _index_add(self, version: FactVersion) -> None:
        key = (version.agent_id, subject_key(version.subject))
        vector = self._vector(version.content)
        if key not in self._index:
            self._index[key] = _SubjectIndex(None if vector is None else vector.shape[0])
        self._index[key].add(version, self._content_words(version.content), vector)

    # ---------------------------------------------------------------- forget

    def _register_forget(self, event: Event) -> None:
        if not isinstance(event, Forget):
            return
        at = as_utc_or_none(event.written_at)
        assert at is not None
        if event.scope == "agent":
            self._forgotten_agents.setdefault(event.agent_id, []).append(at)
        elif event.scope == "conversation" and event.target:
            self._forgotten_conversations.setdefault((event.agent_id, event.target), []).append(at)

    def _is_forgotten(self, event: Candidate | Override) -> bool:
        if isinstance(event, Candidate):
            seen = as_utc_or_none(event.ingested_at or event.created_at)
            times = list(self._forgotten_agents.get(event.agent_id, []))
            if event.conversation_id:
                times += self._forgotten_conversations.get((event.agent_id, event.conversation_id), [])
        else:
            seen = as_utc_or_none(event.written_at)
            times = self._forgotten_agents.get(event.agent_id, [])
        return seen is not None and any(seen <= t for t in times)

    def _apply_forget(self, event: Forget) -> None:
        self.stats.forgets += 1
        at = as_utc_or_none(event.written_at)
        assert at is not None
        if event.scope == "fact" and event.target:
            chain = self.chains.get(event.target)
            # Resumed from tables, a chain first said after the forget was said again after it (a run already
            # dropped the forgotten one): applying the forget again must leave it, so reads can re-apply forgets.
            if chain is not None and not (self.resumed and chain[0].created_at > at):
                self._drop_chains({event.target}, event.agent_id)
        elif not self.resumed:
            return  # a fold over the inputs never let the forgotten agent's or conversation's statements in
        elif event.scope == "agent":
            self._drop_chains(
                {
                    fid for fid, c in self.chains.items()
                    if c[0].agent_id == event.agent_id and (c[0].ingested_at is None or c[0].ingested_at <= at)
                },
                event.agent_id,
            )
        elif event.scope == "conversation" and event.target:
            doomed: dict[str, set[int]] = {}
            for fid, chain in self.chains.items():
                if chain[0].agent_id != event.agent_id:
                    continue
                for v in chain:
                    # a version first ingested after the forget came from the conversation sent again later
                    if event.target in v.source_conversation_ids and (v.ingested_at is None or v.ingested_at <= at):
                        v.source_conversation_ids = [c for c in v.source_conversation_ids if c != event.target]
                        if not v.source_conversation_ids and not v.held:
                            doomed.setdefault(fid, set()).add(v.version)
            self._drop_versions(doomed, event.agent_id)

    def _drop_versions(self, doomed: dict[str, set[int]], agent_id: str) -> None:
        """Remove the versions whose only source was forgotten, as if never said: a chain left empty goes; when
        the current version goes, the version it replaced is current again (the other versions stay)."""
        emptied = set()
        gone: set[tuple[str, int]] = set()
        for fid, versions in doomed.items():
            chain = self.chains[fid]
            kept = [v for v in chain if v.version not in versions]
            if not kept:
                emptied.add(fid)
                continue
            gone |= {(fid, n) for n in versions}
            self.chains[fid] = kept
            replaced_by_gone = {
                (e.to_fact_id, e.to_version) for e in self.edges
                if e.edge_type == "update" and (e.from_fact_id, e.from_version) in gone
            }
            newest = kept[-1]
            if not any(v.status == "active" for v in kept) and (fid, newest.version) in replaced_by_gone:
                newest.status, newest.superseded_by, newest.valid_until = "active", None, None
        if gone:
            self.stats.dropped_by_forget += len(gone)
            self.edges = [e for e in self.edges
                          if (e.from_fact_id, e.from_version) not in gone and (e.to_fact_id, e.to_version) not in gone]
            self._index = {key: index for key, index in self._index.items() if key[0] != agent_id}
            for chain in self.chains.values():
                if chain[0].agent_id == agent_id:
                    for version in chain:
                        self._index_add(version)
        self._drop_chains(emptied, agent_id)

    def _drop_chains(self, fact_ids: set[str], agent_id: str) -> None:
        fact_ids = {f for f in fact_ids if f in self.chains and self.chains[f][0].agent_id == agent_id}
        if not fact_ids:
            return
        for fid in fact_ids:
            chain = self.chains.pop(fid)
            for v in chain:
                if v.slot:
                    key = slot_key(agent_id, v.subject, v.slot, v.value)
                    if self.slot_chain.get(key) == fid:
                        del self.slot_chain[key]
        self.stats.forgotten_chains += len(fact_ids)
        self._index = {key: index for key, index in self._index.items() if key[0] != agent_id}
        for chain in self.chains.values():
            if chain[0].agent_id == agent_id:
                for version in chain:
                    self._index_add(version)
        self.edges = [e for e in self.edges if e.from_fact_id not in fact_ids and e.to_fact_id not in fact_ids]
        for chain in self.chains.values():
            for v in chain:
                if v.superseded_by in fact_ids:
                    v.superseded_by = None

    # ---------------------------------------------------------------- candidates

    def _apply_candidate(self, c: Candidate) -> None:
        self.stats.candidates += 1
        if self._is_forgotten(c):
            self.stats.dropped_by_forget += 1
            return
        created_at = as_utc_or_none(c.created_at)
        assert created_at is not None
        valid_from = as_utc_or_none(c.valid_from) or created_at
        valid_until = as_utc_or_none(c.valid_until)
        if valid_until is not None and valid_until < valid_from:
            valid_until = valid_from
        obs = _Obs(
            agent_id=c.agent_id,
            type=c.type,
            subject=display_subject(c.subject),
            slot=c.slot or None,
            value=(c.value or "").strip() or None,
            content=" ".join(c.content.split()),
            confidence=_clamp01(c.confidence, 0.8),
            importance=_clamp01(c.importance, 0.5),
            tags=tuple(sorted({t for t in c.tags if t})),
            valid_from=valid_from,
            valid_until=valid_until,
            created_at=created_at,
            ingested_at=as_utc_or_none(c.ingested_at),
            conversation_id=c.conversation_id,
            message_ids=tuple(c.message_ids),
        )
        self._observe(obs)

    def _observe(self, obs: _Obs) -> None:
        made = self._place(obs)
        if made is not None and made.status == "active":
            self._settle(made)

    def _place(self, obs: _Obs) -> FactVersion | None:
        """Apply the first rule that fits; the version `obs` became (None when it confirmed a fact or an
        override blocked it)."""
        skey = subject_key(obs.subject)
        # Rule 1: same subject and slot.
        if obs.slot:
            fid = self.slot_chain.get(slot_key(obs.agent_id, obs.subject, obs.slot, obs.value))
            if fid is not None:
                chain = self.chains[fid]
                current = next((v for v in reversed(chain) if v.status == "active"), None)
                if current is None:
                    rejected = [v for v in chain if v.status == "rejected" and self._same_slot_value(v, obs)]
                    if rejected and not obs.is_override:
                        self._confirm(rejected[-1], obs)
                        return None
                    return self._new_version(fid, obs)
                if self._same_slot_value(current, obs):
                    self._confirm(current, obs)
                    self._start_said(chain, current, obs)
                    return None
                if current.held and not obs.is_override:
                    self._block(obs, current, chain_fid=fid)
                    return None
                if INFERRED in obs.tags and INFERRED not in current.tags:
                    return None  # a guess ("works in Leeds", so lives there) never replaces a value the user said
                if self._said_in_one_breath(current, obs):
                    # "We moved into the Leith flat, so I live in Edinburgh now": one message giving the slot two
                    # values tells no change between them (a district and its city; no gazetteer says which holds
                    # which). The slot keeps its value and the other is kept too, as a statement without the slot.
                    return self._new_chain(replace(obs, slot=None))
                return self._supersede(current, obs, chain_fid=fid, reason=f"{obs.slot}: new value")
        # A statement that ends something the subject holds is never a duplicate of it, however alike they read. "I
        # left Acme" is a fact of its own that ends the employer (the slot keeps its chain); "I've gone off oat milk"
        # is the next version of the state it ends, the closest by words (`_settle` closes any other it names).
        if self._ended_values(obs):
            return self._new_chain(obs)
        ended = self._ended_states(obs)
        if ended:
            words_said = self._content_words(obs.content)
            closest = max(ended, key=lambda v: (_jaccard_sets(words_said, self._content_words(v.content)), v.key))
            return self._replace(closest, obs, reason="ended")
        matches = self._matches(obs, skey, statuses=("active",))
        # Rule 2: duplicate. What the user tells memory (an override) confirms a fact only if it says nothing more:
        # "My sister Giulia moved to York" reads like "The user's sister is Giulia", but the move is news.
        # (the opposite taste of the same thing is never a duplicate: "disliked board games" beside "likes them now")
        duplicates = [m for m in matches if self._is_duplicate(m) and not reverses(obs, m.fact) and not (
            obs.is_override and not words_loosely_in(self._content_words(obs.content),
                                                     self._content_words(m.fact.content)))]
        if duplicates:
            best = max(duplicates, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id))
            if best.fact.type in PLAN_TYPES and obs.type not in PLAN_TYPES:
                if obs.type == "event" and not obs.slot:
                    # "I ran the half marathon yesterday" fulfils the plan to run it: the plan ends there, and the
                    # chain goes on as the event, rather than the event confirming a plan still to come
                    return self._replace(best.fact, obs, reason="plan carried out")
                # an outcome of another kind ("I live in Montreal" after the plan to move there) is a fact of its
                # own, which closes the plan (`_settle`)
                return self._new_chain(obs)
            self._confirm(best.fact, obs)
            if obs.slot and not best.fact.slot and slot_key(obs.agent_id, obs.subject, obs.slot, obs.value) not in (
                    self.slot_chain):
                best.fact.slot = obs.slot
                best.fact.value = best.fact.value or obs.value
                self.slot_chain[slot_key(obs.agent_id, obs.subject, obs.slot, best.fact.value)] = best.fact.fact_id
            return None
        # Rule 3: an explicit change supersedes the closest fact.
        related = [m for m in matches if m.jaccard >= self.config.contradict_jaccard]
        if related and (obs.type == "correction" or has_change_cue(obs.content)):
            best = max(related, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id))
            return self._replace(best.fact, obs, reason="correction" if obs.type == "correction" else "stated change")
        # A statement the user rejected before only confirms the rejected row.
        blocked = [m for m in self._matches(obs, skey, statuses=("rejected",)) if self._is_duplicate(m)]
        if blocked and not obs.is_override:
            self._confirm(max(blocked, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id)).fact, obs)
            return None
        # Rule 4: contradiction candidates.
        contradicted = [m for m in related if m.fact.type == obs.type]
        if contradicted:
            if self.config.contradiction_policy == "supersede":
                best = max(contradicted, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id))
                return self._replace(best.fact, obs, reason="contradiction (policy supersede)")
            new = self._new_chain(obs)
            for m in sorted(contradicted, key=lambda m: m.fact.key):
                self._edge("contradict", new, m.fact, obs.created_at, f"jaccard {m.jaccard:.2f}")
                self.stats.contradictions += 1
            return new
        # Rule 5: a new fact.
        return self._new_chain(obs)

    # ---------------------------------------------------------------- outcomes

    def _settle(self, made: FactVersion) -> None:
        """Close what the statement `made` carried out or ended, as of the day it says it happened.

        A value that became current (a slot's new value) carries out the subject's open plans and states that
        name it as their goal ("plans to move to Montreal", "is interviewing at Initech"); a value that ended
        (replaced, or left: `_ended_values`) ends the subject's states that name it ("works with Tomás at
        Acme"); and a plan that `made` reads like (a duplicate, rule 2) is carried out by it."""
        if made.type in PLAN_TYPES:
            return  # a plan or a decision carries nothing out
        if made.slot and made.value:
            for item in self._open_items(made, GOAL_TYPES, made.value, as_goal=True):
                self._close_item(item, made, f"plan carried out: {made.slot} {made.value}")
        for old in self._replaced_in_slot(made):
            for item in self._open_items(made, STATE_TYPES, old.value):
                self._close_item(item, made, f"ended: {old.slot} {old.value} -> {made.value}")
        for version in self._ended_values(made):
            if version.held and not made.held:
                continue  # an override's value is never ended by an extraction
            self._close(version, made.valid_from)  # still the slot's current version (one per chain), ended
            self._edge("update", made, version, made.created_at, f"ended: {version.slot} {version.value}")
            self.stats.closed += 1
            for item in self._open_items(made, STATE_TYPES, version.value):
                self._close_item(item, made, f"ended: {version.slot} {version.value}")
        for state in self._ended_states(made):
            self._close_item(state, made, f"ended: {' '.join(sorted(_ended_object(made.content)))}")
        for state, reason in self._ended_by_taste_or_diet(made):
            self._close_item(state, made, reason)
        for m in self._matches(self._obs_of(made), subject_key(made.subject), statuses=("active",)):
            if m.fact.type == "commitment" and m.fact.created_at < made.created_at and self._is_duplicate(m):
                self._close_item(m.fact, made, "plan carried out")

    def _open_items(
        self, made: FactVersion, types: tuple[str, ...], value: str | None, as_goal: bool = False
    ) -> list[FactVersion]:
        """The subject's active versions of `types` said before `made`, without a slot, still open, that name
        `value` (`as_goal`: as where they go). An event is open when it was happening or coming when said: one
        told after it happened is done, and no later statement ends it."""
        names = _names_goal if as_goal else _names
        index = self._index.get((made.agent_id, subject_key(made.subject)))
        found = []
        for v in index.versions if index is not None else ():
            if v.status != "active" or v.slot or v.fact_id == made.fact_id or v.created_at >= made.created_at:
                continue
            if v.type not in types or (v.type == "event" and v.valid_from.date() < v.created_at.date()):
                continue
            if names(v.content, value):
                found.append(v)
        return sorted(found, key=lambda v: v.key)

    def _close_item(self, item: FactVersion, by: FactVersion, reason: str) -> None:
        """`by` carried out or ended `item`: it holds until the day `by` says, and `by` replaces it."""
        if item.status != "active" or (item.held and not by.held):
            return  # an override's fact is never replaced by an extraction
        item.status = "superseded"
        item.superseded_by = by.fact_id
        self._close(item, by.valid_from)
        self._edge("update", by, item, by.created_at, reason)
        self.stats.closed += 1

    def _replaced_in_slot(self, made: FactVersion) -> list[FactVersion]:
        """The slot value `made` replaced in its chain (the version before it, with another value)."""
        if not made.slot or made.version == 1:
            return []
        before = self.chains[made.fact_id][-2] if self.chains[made.fact_id][-1] is made else None
        if before is None or not before.value or same_value_loosely(before.value, made.value):
            return []
        return [before]

    def _ended_values(self, said: _Obs | FactVersion) -> list[FactVersion]:
        """The subject's current slot values a statement without a slot says ended ("left Acme" ends employer
        Acme): it has an end cue and names the value."""
        if said.slot or said.type in PLAN_TYPES or not _END_CUE.search(said.content):
            return []
        index = self._index.get((said.agent_id, subject_key(said.subject)))
        return sorted(
            (v for v in (index.versions if index is not None else ())
             if v.status == "active" and v.slot and v.value and _is_atomic(v.value) and v.valid_until is None
             and v.created_at <= said.created_at and _names(said.content, v.value)),
            key=lambda v: v.key,
        )

    @staticmethod
    def _said_in_one_breath(current: FactVersion, obs: _Obs) -> bool:
        """Whether `obs` gives `current`'s slot another value in the same message, with no word of a change or an
        end in either ("I used to live in Berlin, now I live in Lisbon" is a change)."""
        return (not obs.is_override and current.source_interface == EXTRACTION and current.created_at == obs.created_at
                and bool(set(current.source_message_ids) & set(obs.message_ids))
                and current.valid_until is None and obs.valid_until is None
                and not any(has_change_cue(text) or _END_CUE.search(text) for text in (current.content, obs.content)))

    def _ended_states(self, said: _Obs | FactVersion) -> list[FactVersion]:
        """The subject's states without a slot that a later statement says ended: it has an end cue, and what
        follows the cue names them ("gone off oat milk" ends "takes oat milk in their coffee", not "doesn't drink
        cow's milk"; "back from Lisbon" ends the trip to Lisbon)."""
        if said.type in PLAN_TYPES:
            return []
        ended = _ended_object(said.content)
        if not ended:
            return []
        index = self._index.get((said.agent_id, subject_key(said.subject)))
        return sorted(
            (v for v in (index.versions if index is not None else ())
             if v.status == "active" and not v.slot and v.type in ENDABLE_TYPES and v.created_at < said.created_at
             and v.fact_id != getattr(said, "fact_id", None) and not _STATE_END_CUE.search(v.content)
             and words_loosely_in(ended, _value_words(v.content))),
            key=lambda v: v.key,
        )

    def _ended_by_taste_or_diet(self, made: FactVersion) -> list[tuple[FactVersion, str]]:
        """The subject's earlier slot-less states that `made` ends: the opposite taste of the same thing, or what
        a diet taken up leaves out (`memlake.facts.tastes`)."""
        index = self._index.get((made.agent_id, subject_key(made.subject)))
        ended = []
        for v in sorted(index.versions if index is not None else (), key=lambda v: v.key):
            if v.status != "active" or v.slot or v.type not in ENDABLE_TYPES or v.created_at >= made.created_at:
                continue
            if reverses(made, v):
                ended.append((v, f"taste changed: {made.value}"))
            elif left_out_by_diet(made, v):
                ended.append((v, f"ended: diet {made.value}"))
        return ended

    def _obs_of(self, version: FactVersion) -> _Obs:
        return _Obs(
            agent_id=version.agent_id, type=version.type, subject=version.subject, slot=version.slot,
            value=version.value, content=version.content, confidence=version.confidence,
            importance=version.importance, tags=tuple(version.tags), valid_from=version.valid_from,
            valid_until=version.valid_until, created_at=version.created_at, ingested_at=version.ingested_at,
            conversation_id=None, message_ids=(),
        )

    def _matches(self, obs: _Obs, skey: str, statuses: tuple[str, ...]) -> list[_Match]:
        """The agent's versions about the same subject, in `statuses`, whose slot does not differ, that could
        match `obs`: sharing a content word, or with cosine >= duplicate_cosine (the others can be neither
        duplicates nor related)."""
        index = self._index.get((obs.agent_id, skey))
        if index is None:
            return []
        near = index.near(self._content_words(obs.content), self._vector(obs.content), self.config.duplicate_cosine)
        out = []
        for position, cosine in sorted(near.items()):
            v = index.versions[position]
            if v.status in statuses and not (obs.slot and v.slot and slot_of(v.slot, v.value) != slot_of(
                    obs.slot, obs.value)):
                out.append(self._match(obs, v, cosine))
        return out

    def _match(self, obs: _Obs, fact: FactVersion, cosine: float | None = None) -> _Match:
        negated_obs, negated_fact = self._is_negated(obs.content), self._is_negated(fact.content)
        same_polarity = negated_obs == negated_fact
        a, b = self._content_words(obs.content), self._content_words(fact.content)
        if not same_polarity:
            a, b = a - NEGATIONS, b - NEGATIONS
        conflict = (
            _is_atomic(obs.value) and _is_atomic(fact.value) and not same_value_loosely(obs.value, fact.value)
        )
        if cosine is None:
            cosine = self._cosine(obs.content, fact.content)
        return _Match(fact, _jaccard_sets(a, b), cosine, same_polarity, conflict)

    def _is_duplicate(self, m: _Match) -> bool:
        c = self.config
        if not m.same_polarity or m.values_conflict:
            return False
        return (
            m.jaccard >= c.duplicate_jaccard
            or m.cosine >= c.duplicate_cosine
            or (m.jaccard >= c.contradict_jaccard and m.cosine >= c.near_duplicate_cosine)
        )

    def _same_slot_value(self, fact: FactVersion, obs: _Obs) -> bool:
        if fact.value and obs.value:
            if obs.slot == "job_title" and _value_words(fact.value) < _value_words(obs.value):
                return False  # a title with more words is a new one ("pharmacist" -> "lead pharmacist"), not shorter
            return same_value_loosely(fact.value, obs.value)
        return self._is_duplicate(self._match(obs, fact))

    # ---------------------------------------------------------------- changes

    def _version_from(self, fid: str, version: int, obs: _Obs, status: str = "active") -> FactVersion:
        return FactVersion(
            fact_id=fid,
            version=version,
            agent_id=obs.agent_id,
            type=obs.type,
            subject=obs.subject,
            slot=obs.slot,
            value=obs.value,
            content=obs.content,
            confidence=fact_confidence(obs.confidence, 1),
            importance=obs.importance,
            tags=list(obs.tags),
            valid_from=obs.valid_from,
            valid_until=obs.valid_until,
            created_at=obs.created_at,
            ingested_at=obs.ingested_at,
            source_conversation_ids=[obs.conversation_id] if obs.conversation_id else [],
            source_message_ids=list(dict.fromkeys(obs.message_ids)),
            source_count=1,
            confirmation_count=0,
            last_confirmed_at=None,
            status=status,
            superseded_by=None,
            source_interface=obs.interface,
            override_ids=[obs.override_id] if obs.override_id else [],
            prior=obs.confidence,
        )

    def _new_chain(self, obs: _Obs, status: str = "active") -> FactVersion:
        if obs.slot and slot_key(obs.agent_id, obs.subject, obs.slot, obs.value) not in self.slot_chain:
            fid = chain_id(obs.agent_id, obs.subject, slot_of(obs.slot, obs.value), obs.type, obs.content)
            if fid in self.chains:  # a slotted chain that lost its slot key: start a fresh one
                fid = self._unique(fid)
            self.slot_chain[slot_key(obs.agent_id, obs.subject, obs.slot, obs.value)] = fid
        else:
            fid = self._unique(chain_id(obs.agent_id, obs.subject, None, obs.type, obs.content))
        version = self._version_from(fid, 1, obs, status)
        self.chains[fid] = [version]
        self._index_add(version)
        self.stats.created += 1
        return version

    def _unique(self, fid: str) -> str:
        if fid not in self.chains:
            return fid
        n = 2
        while f"{fid}-{n}" in self.chains:
            n += 1
        return f"{fid}-{n}"

    def _new_version(self, fid: str, obs: _Obs, status: str = "active") -> FactVersion:
        chain = self.chains[fid]
        version = self._version_from(fid, chain[-1].version + 1, obs, status)
        chain.append(version)
        self._index_add(version)
        self.stats.created += 1
        self._keep_under_value(version)
        return version

    def _keep_under_value(self, version: FactVersion) -> None:
        """Keep `version`'s chain under the slot key of its value too (see `slot_chains`).

        Only a new value of a multi-valued slot (a replaced sibling) makes a new key. A later mention of that value
        then confirms this chain rather than starting a second one; and when another chain holds the value, this
        active version supersedes that chain's, so the value stays current once."""
        if not version.slot:
            return
        key = slot_key(version.agent_id, version.subject, version.slot, version.value)
        holder = self.slot_chain.get(key)
        if holder is not None and version.status != "active":
            return  # a version kept for history only (blocked by an override) takes no value from a chain
        self.slot_chain[key] = version.fact_id
        if holder is None or holder == version.fact_id:
            return
        other = next((v for v in reversed(self.chains.get(holder, [])) if v.status == "active"), None)
        if other is not None:
            other.status = "superseded"
            other.superseded_by = version.fact_id
            self._close(other, version.valid_from)
            self._edge("update", version, other, version.created_at, f"{version.slot}: the same value, replaced")
            self.stats.superseded += 1

    def _close(self, old: FactVersion, until: datetime) -> None:
        end = max(old.valid_from, until)
        old.valid_until = end if old.valid_until is None else max(old.valid_from, min(old.valid_until, end))

    def _supersede(self, old: FactVersion, obs: _Obs, chain_fid: str, reason: str) -> FactVersion:
        new = self._new_version(chain_fid, obs)
        old.status = "superseded"
        old.superseded_by = new.fact_id
        self._close(old, new.valid_from)
        self._edge("update", new, old, obs.created_at, reason)
        self.stats.superseded += 1
        return new

    def _replace(self, old: FactVersion, obs: _Obs, reason: str) -> FactVersion | None:
        """Supersede `old` (found by words, not by slot) by `obs` in old's chain, unless an override holds it."""
        if old.held and not obs.is_override:
            self._block(obs, old, chain_fid=None)
            return None
        return self._supersede(old, replace(obs, slot=old.slot or obs.slot), chain_fid=old.fact_id, reason=reason)

    def _block(self, obs: _Obs, holder: FactVersion, chain_fid: str | None) -> None:
        """An extraction that would replace an override: kept for history, valid for no time."""
        blocked = replace(obs, valid_until=obs.valid_from)
        if chain_fid is not None:
            row = self._new_version(chain_fid, blocked, status="superseded")
        else:
            row = self._new_chain(replace(blocked, slot=None), status="superseded")
        row.superseded_by = holder.fact_id
        self._edge("update", holder, row, obs.created_at, "user override wins over extraction")
        self.stats.blocked_by_override += 1

    @staticmethod
    def _start_said(chain: list[FactVersion], current: FactVersion, obs: _Obs) -> None:
        """A statement of the current value that says when it began ("He's been there since June") dates the version
        from then, and the version it replaced until then: a start said beats the day the value was first told
        ("He's taken a job at Morriston Hospital" in May). Not before the replaced version began, never an
        override's."""
        start = obs.valid_from
        if obs.is_override or current.held or start.date() >= obs.created_at.date() or start == current.valid_from:
            return
        before = chain[chain.index(current) - 1] if chain.index(current) > 0 else None
        if before is not None and (before.valid_until != current.valid_from or start <= before.valid_from):
            return
        current.valid_from = start
        if before is not None:
            before.valid_until = start

    def _confirm(self, fact: FactVersion, obs: _Obs) -> None:
        if obs.is_override:
            if obs.override_id not in fact.override_ids:
                fact.override_ids.append(obs.override_id)  # type: ignore[arg-type]
        elif obs.message_ids and set(obs.message_ids) <= set(fact.source_message_ids) and (
            obs.conversation_id is None or obs.conversation_id in fact.source_conversation_ids
        ):
            return  # the same statement again (a re-ingested export): nothing new
        fact.confirmation_count += 1
        fact.source_count += 1
        fact.last_confirmed_at = obs.created_at if fact.last_confirmed_at is None else max(
            fact.last_confirmed_at, obs.created_at
        )
        if obs.conversation_id and obs.conversation_id not in fact.source_conversation_ids:
            fact.source_conversation_ids.append(obs.conversation_id)
        for message_id in obs.message_ids:
            if message_id not in fact.source_message_ids:
                fact.source_message_ids.append(message_id)
        fact.prior = max(fact.confidence if fact.prior is None else fact.prior, obs.confidence)
        fact.confidence = fact_confidence(fact.prior, len(fact.source_conversation_ids))
        fact.importance = max(fact.importance, obs.importance)
        said = INFERRED not in fact.tags or INFERRED not in obs.tags  # a value said once is said, guessed again or not
        fact.tags = sorted((set(fact.tags) | set(obs.tags)) - ({INFERRED} if said else set()))
        self.stats.confirmed += 1

    def _edge(self, edge_type: str, new: FactVersion, old: FactVersion, at: datetime, reason: str) -> None:
        self.edges.append(
            Edge(new.agent_id, edge_type, new.fact_id, new.version, old.fact_id, old.version, at, reason)
        )

    # ---------------------------------------------------------------- overrides

    def _apply_override(self, o: Override) -> None:
        self.stats.overrides += 1
        if self._is_forgotten(o):
            self.stats.dropped_by_forget += 1
            return
        written_at = as_utc_or_none(o.written_at)
        assert written_at is not None
        if o.action == "add":
            if not o.content:
                self.stats.unresolved_overrides.append(o.override_id)
                return
            self._observe(self._override_obs(o, written_at, None))
            return
        target = self._resolve(o)
        if target is None:
            self.stats.unresolved_overrides.append(o.override_id)
            return
        chain = self.chains[target]
        current = next((v for v in reversed(chain) if v.status == "active"), chain[-1])
        if o.action == "reject":
            if current.status == "active":
                current.status = "rejected"
                current.valid_until = current.valid_from
                self.stats.rejected += 1
            if o.override_id not in current.override_ids:
                current.override_ids.append(o.override_id)
            return
        if o.action == "correct":
            if not o.content:
                self.stats.unresolved_overrides.append(o.override_id)
                return
            obs = self._override_obs(o, written_at, current)
            new = self._new_version(target, obs)
            if current.status == "active":
                current.status = "superseded"
                current.superseded_by = new.fact_id
                self._close(current, new.valid_from)
            self._edge("update", new, current, written_at, "user correction")
            self.stats.superseded += 1
            return
        self.stats.unresolved_overrides.append(o.override_id)

    def _override_obs(self, o: Override, written_at: datetime, target: FactVersion | None) -> _Obs:
        valid_from = as_utc_or_none(o.valid_from) or (target.valid_from if target is not None else written_at)
        valid_until = as_utc_or_none(o.valid_until)
        if valid_until is not None and valid_until < valid_from:
            valid_until = valid_from
        content = " ".join((o.content or "").split())
        return _Obs(
            agent_id=o.agent_id,
            type=o.type or (target.type if target is not None else "fact"),
            subject=target.subject if target is not None else display_subject(o.subject or USER),
            slot=o.slot or (target.slot if target is not None else None),
            value=(o.value or "").strip() or None,
            content=content,
            confidence=_clamp01(o.confidence, 1.0),
            importance=_clamp01(o.importance, max(0.7, target.importance) if target is not None else 0.7),
            tags=tuple(sorted(set(o.tags))),
            valid_from=valid_from,
            valid_until=valid_until,
            created_at=written_at,
            ingested_at=written_at,
            conversation_id=None,
            message_ids=(),
            override_id=o.override_id,
        )

    def _resolve(self, o: Override) -> str | None:
        """The chain an override targets: by id, else by what the target looked like."""
        if o.fact_id and o.fact_id in self.chains and self.chains[o.fact_id][0].agent_id == o.agent_id:
            return o.fact_id
        if o.target_slot:
            fid = self.slot_chain.get((o.agent_id, subject_key(o.target_subject), o.target_slot))
            if fid is not None:
                return fid
        if o.target_content:
            skey = subject_key(o.target_subject)
            best: tuple[float, str] | None = None
            for fid, chain in self.chains.items():
                current = chain[-1]
                if current.agent_id != o.agent_id or subject_key(current.subject) != skey:
                    continue
                score = max(_jaccard_sets(content_words(v.content), content_words(o.target_content)) for v in chain)
                if score >= self.config.duplicate_jaccard and (best is None or (score, fid) > best):
                    best = (score, fid)
            if best is not None:
                return best[1]
        return None


def _frame(table: pa.Table | None, spec: Any) -> pl.DataFrame:
    table = table if table is not None else spec.schema.empty_table()
    frame = pl.from_arrow(conform(spec, table))
    assert isinstance(frame, pl.DataFrame)
    return frame


def fold(
    candidates: Iterable[Candidate],
    overrides: Iterable[Override] = (),
    forgets: Iterable[Forget] = (),
    config: FoldConfig | None = None,
    embed: Embed | None = None,
) -> FoldResult:
    """Fold every input, in time order, into `facts/facts` and `facts/fact_edges` frames."""
    return Folder(config, embed).add([*candidates, *overrides, *forgets]).result()
