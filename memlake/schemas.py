"""One Arrow schema per lake table, and the other contracts of DESIGN.md.

Writers, checks and readers all take a table's shape from here. A change to a
table name, a key column or a status value needs a record in
docs/decisions.md.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pyarrow as pa

from memlake.errors import BadRequest

# An agent id becomes a folder name (landing/<agent_id>/, quarantine/<agent_id>/) and a filter value. The
# characters alone let through names that are not plain folders: "..", ".", a hidden ".x", "-rf" (an option
# to any shell tool), "okid." (Windows drops the final dot: the same folder as "okid") and device names.
AGENT_ID_CHARS = re.compile(r"[A-Za-z0-9_.-]{1,64}")
WINDOWS_DEVICE_NAMES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{port}{n}" for port in ("COM", "LPT") for n in range(1, 10)]
)
AGENT_ID_RULE = (
    "1 to 64 letters, digits, '_', '.' or '-'; not starting with a '.' or '-', no '..', not ending with '.', "
    "not a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with or without an extension)"
)

ROLES = ("user", "assistant", "system", "tool")

FACT_STATUSES = ("active", "superseded", "evicted", "forgotten", "merged", "rejected")
FACT_TYPES = (
    "fact",
    "preference",
    "decision",
    "correction",
    "commitment",
    "relationship",
    "skill",
    "identity",
    "event",
)
FACT_EDGE_TYPES = ("update", "extend", "derive", "contradict")

MANIFEST_STATUSES = ("ingested", "duplicate", "quarantined")

# Daily partitions are stored as hive folders `day=YYYY-MM-DD`; the column is
# added by readers from the path, never stored inside the file.
PARTITION_COLUMN = "day"


def check_day(day: str) -> str:
    """`day` if it is a real `YYYY-MM-DD` day (a partition's name, a filter value, a Dagster key)."""
    try:
        valid = date.fromisoformat(day).isoformat() == day
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise BadRequest(f"not a day: {day!r}")
    return day


UTC_TS = pa.timestamp("us", tz="UTC")


def agent_id_problem(agent_id: object) -> str | None:
    """What breaks the agent id rule (`AGENT_ID_RULE`), or None for a valid id. A full match: a final newline
    is not allowed, as `$` would."""
    if not isinstance(agent_id, str):
        return f"expected a string, got {type(agent_id).__name__}"
    if not AGENT_ID_CHARS.fullmatch(agent_id):
        if not 1 <= len(agent_id) <= 64:
            return f"it must be 1 to 64 letters, digits, '_', '.' or '-', not {len(agent_id)} characters"
        bad = sorted({c for c in agent_id if not AGENT_ID_CHARS.fullmatch(c)})
        return f"it may hold only letters, digits, '_', '.' and '-', not {', '.join(repr(c) for c in bad[:5])}"
    if agent_id.startswith((".", "-")):
        return "it may not start with a '.' or '-' (a hidden or parent folder, a command-line option)"
    if ".." in agent_id:
        return "it may not hold '..' (a parent folder in a path)"
    if agent_id.endswith("."):
        return "it may not end with '.' (Windows drops it: another id's folder)"
    if agent_id.split(".")[0].upper() in WINDOWS_DEVICE_NAMES:
        return "it may not be a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9), even with an extension"
    return None


def is_valid_agent_id(agent_id: object) -> bool:
    return agent_id_problem(agent_id) is None


def check_agent_id(agent_id: str) -> str:
    """`agent_id` if it is a valid agent id (it becomes a folder name and a filter value)."""
    problem = agent_id_problem(agent_id)
    if problem is not None:
        raise BadRequest(f"invalid agent id {_shown(agent_id)}: {problem}")
    return agent_id


def path_inside(parent: Path, *parts: str) -> Path:
    """`parent/parts…`, checked to stay strictly inside `parent` once links and `..` are resolved: a path built
    from an agent id or a landing name must never be the folder itself or anywhere outside it."""
    path = parent.joinpath(*parts)
    root = parent.resolve()
    resolved = path.resolve()
    if resolved == root or not resolved.is_relative_to(root):
        raise BadRequest(f"{'/'.join(parts)!r} is not a path inside {parent}")
    return path


def agent_folder(parent: Path, agent_id: str) -> Path:
    """An agent's folder under `parent` (landing, quarantine): the id checked, then the path."""
    return path_inside(parent, check_agent_id(agent_id))


def _shown(value: object) -> str:
    """A value as quoted in an error message: its repr, cut to 80 characters (a file may carry a megabyte)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Table:
    """A lake table: where it lives, its schema, its key and whether it is daily-partitioned."""

    layer: str
    name: str
    schema: pa.Schema
    key: tuple[str, ...]
    partitioned: bool = False

    @property
    def path(self) -> str:
        return f"{self.layer}/{self.name}"


def schema_version(table: Table) -> str:
    """A short fingerprint of the table's columns and their types: it changes when a column is added, removed,
    renamed or retyped, so an export says which shape its files have and an import refuses another."""
    columns = ";".join(f"{field.name}:{field.type}" for field in table.schema)
    return hashlib.sha256(columns.encode()).hexdigest()[:12]


LANDING_MANIFEST = Table(
    "transcripts",
    "landing_manifest",
    pa.schema(
        [
            ("source_file", pa.string()),  # path relative to <home>/landing
            ("source_sha256", pa.string()),
            ("source_format", pa.string()),  # chatgpt | claude | jsonl | csv | parquet | ingest_json | null
            ("archive", pa.string()),  # "zip" when the export came zipped
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("conversation_started_at", UTC_TS),
            ("partition", pa.string()),  # the conversation's day, fixed when first seen
            ("message_count", pa.int64()),
            ("skipped", pa.map_(pa.string(), pa.int64())),  # reason -> messages skipped
            ("first_seen_at", UTC_TS),  # ingested_at of the file
            ("status", pa.string()),  # MANIFEST_STATUSES
            ("reason", pa.string()),
            ("quarantine_path", pa.string()),
            # quarantined by a size limit: which setting and its value then; the file is read again once the
            # setting differs (null for other reasons: those bytes would fail again)
            ("limit_setting", pa.string()),
            ("limit_value", pa.int64()),
        ]
    ),
    key=("source_sha256", "agent_id", "conversation_id"),
)

PROXY_ORIGIN = "proxy"  # `transcripts/turns.origin` of an exchange the OpenAI-compatible proxy landed

TURNS = Table(
    "transcripts",
    "turns",
    pa.schema(
        [
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("message_id", pa.string()),
            ("turn_index", pa.int32()),
            ("role", pa.string()),
            ("speaker", pa.string()),
            ("content", pa.string()),
            ("created_at", UTC_TS),
            ("created_at_inferred", pa.bool_()),  # true when the source had no time for the message
            ("conversation_started_at", UTC_TS),
            ("title", pa.string()),
            ("source_format", pa.string()),
            ("source_file", pa.string()),
            ("source_sha256", pa.string()),
            ("content_sha256", pa.string()),
            ("ingested_at", UTC_TS),
            # PROXY_ORIGIN: an exchange the proxy landed, its assistant side the agent's own output (kept in the
            # transcript, never a chunk: search and the context block do not quote it back); null: any other source
            ("origin", pa.string()),
        ]
    ),
    key=("agent_id", "conversation_id", "message_id"),
    partitioned=True,
)

CHUNKS = Table(
    "transcripts",
    "chunks",
    pa.schema(
        [
            ("chunk_id", pa.string()),
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("kind", pa.string()),  # turn | session | window
            ("message_ids", pa.list_(pa.string())),
            ("turn_start", pa.int32()),
            ("turn_end", pa.int32()),
            ("role", pa.string()),
            ("speaker", pa.string()),
            ("created_at", UTC_TS),
            ("text", pa.string()),  # what full-text search indexes and a hit returns
            ("embed_text", pa.string()),  # what the embedding model reads (no date header)
            ("token_count", pa.int32()),  # of text, by the embedding model's tokenizer
            ("text_sha256", pa.string()),  # of embed_text: a changed hash means embed again
        ]
    ),
    key=("chunk_id",),
    partitioned=True,
)

KEY_DATE = pa.struct([("date", pa.string()), ("description", pa.string()), ("message_ids", pa.list_(pa.string()))])
ENTITY = pa.struct([("name", pa.string()), ("type", pa.string()), ("message_ids", pa.list_(pa.string()))])
RELATION = pa.struct(
    [
        ("source", pa.string()),
        ("relation", pa.string()),
        ("target", pa.string()),
        ("confidence", pa.float64()),
        ("valid_from", pa.string()),
        ("valid_until", pa.string()),
    ]
)
FACT_CANDIDATE = pa.struct(
    [
        ("type", pa.string()),
        ("subject", pa.string()),
        ("slot", pa.string()),
        ("value", pa.string()),
        ("content", pa.string()),
        ("confidence", pa.float64()),
        ("importance", pa.float64()),
        ("tags", pa.list_(pa.string())),
        ("valid_from", pa.string()),
        ("valid_until", pa.string()),
        ("message_ids", pa.list_(pa.string())),
    ]
)

EPISODES = Table(
    "episodes",
    "episodes",
    pa.schema(
        [
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("title", pa.string()),
            ("conversation_started_at", UTC_TS),
            ("conversation_ended_at", UTC_TS),
            ("summary", pa.string()),
            ("topics", pa.list_(pa.string())),
            ("decisions", pa.list_(pa.string())),
            ("action_items", pa.list_(pa.string())),
            ("key_dates", pa.list_(KEY_DATE)),
            ("entities", pa.list_(ENTITY)),
            ("relations", pa.list_(RELATION)),
            ("fact_candidates", pa.list_(FACT_CANDIDATE)),
            ("salience", pa.float64()),
            ("message_ids", pa.list_(pa.string())),
            ("content_hash", pa.string()),
            ("distiller", pa.string()),  # model name or offline distiller version
            ("prompt_version", pa.string()),
            ("ingested_at", UTC_TS),
        ]
    ),
    key=("agent_id", "conversation_id"),
    partitioned=True,
)

PENDING = Table(
    "episodes",
    "pending",
    pa.schema(
        [
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("content_hash", pa.string()),
            ("reason", pa.string()),
            ("since", UTC_TS),
            ("attempts", pa.int32()),
        ]
    ),
    key=("agent_id", "conversation_id"),
    partitioned=True,
)

# The distillation result cache (written by the episodes asset only): one row per
# (prompt version, distiller, conversation content hash), the DistilledSession as JSON.
DISTILL_CACHE = Table(
    "episodes",
    "distill_cache",
    pa.schema(
        [
            ("cache_key", pa.string()),  # sha256 of prompt_version, distiller, content_hash
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("content_hash", pa.string()),
            ("distiller", pa.string()),
            ("prompt_version", pa.string()),
            ("result", pa.string()),  # DistilledSession JSON
            ("created_at", UTC_TS),
            ("requests", pa.int32()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
        ]
    ),
    key=("cache_key",),
    partitioned=True,
)

FACTS = Table(
    "facts",
    "facts",
    pa.schema(
        [
            ("fact_id", pa.string()),
            ("version", pa.int32()),
            ("agent_id", pa.string()),
            ("type", pa.string()),
            ("subject", pa.string()),
            ("slot", pa.string()),
            ("value", pa.string()),
            ("content", pa.string()),
            ("confidence", pa.float64()),
            ("importance", pa.float64()),
            ("tags", pa.list_(pa.string())),
            ("valid_from", UTC_TS),
            ("valid_until", UTC_TS),
            ("created_at", UTC_TS),  # when it was said
            ("ingested_at", UTC_TS),
            ("source_conversation_ids", pa.list_(pa.string())),
            ("source_message_ids", pa.list_(pa.string())),
            ("source_count", pa.int32()),
            ("confirmation_count", pa.int32()),
            ("last_confirmed_at", UTC_TS),
            ("status", pa.string()),  # FACT_STATUSES
            ("superseded_by", pa.string()),
            ("source_interface", pa.string()),  # extraction | override
            ("override_ids", pa.list_(pa.string())),  # override log entries that made, confirmed or rejected it
        ]
    ),
    key=("fact_id", "version"),
)

FACT_EDGES = Table(
    "facts",
    "fact_edges",
    pa.schema(
        [
            ("agent_id", pa.string()),
            ("edge_type", pa.string()),  # FACT_EDGE_TYPES
            ("from_fact_id", pa.string()),
            ("from_version", pa.int32()),
            ("to_fact_id", pa.string()),
            ("to_version", pa.int32()),
            ("created_at", UTC_TS),
            ("reason", pa.string()),
        ]
    ),
    key=("agent_id", "edge_type", "from_fact_id", "from_version", "to_fact_id", "to_version"),
)

PROFILES = Table(
    "profile",
    "profiles",
    pa.schema(
        [
            ("agent_id", pa.string()),
            ("version", pa.int32()),
            ("created_at", UTC_TS),
            ("contributions", pa.int32()),
            (
                "lines",
                pa.list_(
                    pa.struct(
                        [
                            ("section", pa.string()),
                            ("text", pa.string()),
                            ("fact_ids", pa.list_(pa.string())),
                            ("is_override", pa.bool_()),
                        ]
                    )
                ),
            ),
            ("text", pa.string()),
            ("writer", pa.string()),  # model name or "assembled"
        ]
    ),
    key=("agent_id", "version"),
)

# The profile writer's model answers (written by the profiles asset only), keyed by
# (prompt version, model, hash of the facts the prompt listed).
PROFILE_CACHE = Table(
    "profile",
    "model_cache",
    pa.schema(
        [
            ("cache_key", pa.string()),
            ("agent_id", pa.string()),
            ("prompt_version", pa.string()),
            ("model", pa.string()),
            ("input_hash", pa.string()),
            ("answer", pa.string()),  # the validated lines, as JSON
            ("created_at", UTC_TS),
        ]
    ),
    key=("cache_key",),
)

# The graph layer (memlake.graph). Entity types: the seven, and work (a book, a film, a game: issue 39);
# the distiller's "product" reads as a tool, its "other" as a concept. A relation version is active (in force),
# superseded (another target, or for a one-holder relation another source, took its place: valid_until set) or
# ended (said to be over).
GRAPH_ENTITY_TYPES = ("person", "organization", "place", "project", "tool", "concept", "event", "animal", "work")
RELATION_STATUSES = ("active", "superseded", "ended")

ENTITIES = Table(
    "graph",
    "entities",
    pa.schema(
        [
            ("entity_id", pa.string()),
            ("agent_id", pa.string()),
            ("name", pa.string()),  # the canonical name: the fullest form said
            ("type", pa.string()),  # GRAPH_ENTITY_TYPES
            ("aliases", pa.list_(pa.string())),  # the other forms said, merged into this entity
            ("first_seen_at", UTC_TS),
            ("last_seen_at", UTC_TS),
            ("mention_count", pa.int32()),  # conversations and facts that name it
            ("source_conversation_ids", pa.list_(pa.string())),
            ("source_message_ids", pa.list_(pa.string())),
        ]
    ),
    key=("entity_id",),
)

RELATIONS = Table(
    "graph",
    "relations",
    pa.schema(
        [
            ("relation_id", pa.string()),  # one per (agent, source, relation, target)
            ("version", pa.int32()),  # a relation that ends and holds again gets a new version
            ("agent_id", pa.string()),
            ("source_entity_id", pa.string()),
            ("relation", pa.string()),  # normalized: lowercase snake_case, synonyms folded ("works for" -> works_at)
            ("relation_text", pa.string()),  # as first said
            ("target_entity_id", pa.string()),
            ("confidence", pa.float64()),
            ("valid_from", UTC_TS),
            ("valid_until", UTC_TS),
            ("created_at", UTC_TS),  # when it was first said
            ("source_conversation_ids", pa.list_(pa.string())),
            ("source_message_ids", pa.list_(pa.string())),
            ("status", pa.string()),  # RELATION_STATUSES
        ]
    ),
    key=("relation_id", "version"),
)

# One row per entity per message that names it (issue 39): every entity links back to what was said, whether a
# turn, an episode or a fact named it. `name` is the form said there.
MENTIONS = Table(
    "graph",
    "mentions",
    pa.schema(
        [
            ("agent_id", pa.string()),
            ("entity_id", pa.string()),
            ("name", pa.string()),
            ("type", pa.string()),  # GRAPH_ENTITY_TYPES: the type its sentence gave this form
            ("conversation_id", pa.string()),
            ("message_id", pa.string()),
            ("said_at", UTC_TS),
        ]
    ),
    key=("entity_id", "message_id", "name"),
)

# One row per person's turn the graph read (issue 39): the names and stated relations its text gave, as JSON, kept by
# the text's hash and the readers' version, so a rerun over unchanged turns parses none of them again (written by
# the graph asset only; rows of turns gone from turns go with the next build).
TURN_READS = Table(
    "graph",
    "turn_reads",
    pa.schema(
        [
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("message_id", pa.string()),
            ("content_sha256", pa.string()),
            ("reader_version", pa.string()),  # a hash of the readers' code and the language model's name
            ("names", pa.string()),  # JSON list of memlake.nlp.names.Name fields
            ("stated", pa.string()),  # JSON list of memlake.graph.stated.Stated fields
        ]
    ),
    key=("agent_id", "message_id"),
)

# One row per merge entity resolution made: which two forms became one entity, why, with what score. A user
# undoes one by its merge_id (`memlake graph split`, the graph_splits log); the row then stays, undone.
ENTITY_MERGES = Table(
    "graph",
    "entity_merges",
    pa.schema(
        [
            ("merge_id", pa.string()),  # derived from (agent, type, the two forms): stable across rebuilds
            ("agent_id", pa.string()),
            ("entity_id", pa.string()),  # the entity the merge went into (the kept one when undone)
            ("type", pa.string()),
            ("kept_name", pa.string()),
            ("merged_name", pa.string()),
            ("rule", pa.string()),  # normalized_name | alias | embedding
            ("reason", pa.string()),
            ("score", pa.float64()),
            ("undone_by", pa.string()),  # the split_id that undid it; null while in force
        ]
    ),
    key=("merge_id",),
)

# The maintenance layer, written by the sweeps (`memlake.maintenance`) only; reads join the latest
# sweep's fact_status (`memlake.maintenance.status`), so a sweep never rewrites `facts/*`.
SWEEP_KINDS = ("consolidation", "lint")
SWEEP_FLAGS = ("stale", "redundant", "conflicting", "promoted")

FACT_STATUS = Table(
    "maintenance",
    "fact_status",
    pa.schema(
        [
            ("sweep_id", pa.string()),  # <kind>-<as_of>: a rerun at the same as_of replaces its own rows
            ("kind", pa.string()),  # SWEEP_KINDS
            ("as_of", UTC_TS),
            ("agent_id", pa.string()),
            ("fact_id", pa.string()),
            ("version", pa.int32()),
            ("status", pa.string()),  # FACT_STATUSES: the fact's status as reads see it after the sweep
            ("flag", pa.string()),  # SWEEP_FLAGS or null: what the sweep found without changing the status
            ("salience", pa.float64()),  # importance decayed by kind from the last activity (consolidation)
            ("last_active_at", UTC_TS),  # the latest of said, confirmed and used, up to as_of
            ("use_count", pa.int32()),  # uses in the access log up to as_of
            ("reason", pa.string()),
            ("related_fact_ids", pa.list_(pa.string())),  # the other side of a conflict or a redundancy
        ]
    ),
    key=("sweep_id", "fact_id", "version"),
)

REPORTS = Table(
    "maintenance",
    "reports",
    pa.schema(
        [
            ("sweep_id", pa.string()),
            ("kind", pa.string()),
            ("as_of", UTC_TS),
            ("agents", pa.int32()),
            ("counts", pa.string()),  # JSON: step -> count
            ("durations", pa.string()),  # JSON: step -> seconds
            ("judge", pa.string()),  # the contradiction judges used (lint)
            ("ran_at", UTC_TS),  # wall clock, for the "no sweep in 48 h" check; not used by any step
        ]
    ),
    key=("sweep_id",),
)

AUDIT = Table(
    "maintenance",
    "audit",
    pa.schema(
        [
            ("sweep_id", pa.string()),
            ("at", UTC_TS),  # the sweep's as_of
            ("agent_id", pa.string()),
            ("object_kind", pa.string()),  # fact | episode
            ("object_id", pa.string()),  # fact_id@version, or the conversation id
            ("field", pa.string()),  # status | flag
            ("old_value", pa.string()),
            ("new_value", pa.string()),
            ("reason", pa.string()),
        ]
    ),
    key=("sweep_id", "object_kind", "object_id", "field"),
)

# The contradictions a lint sweep judged, as edges between fact versions (a sweep never writes `facts/fact_edges`):
# one row per contradicting pair per lint sweep, from the newer version to the older; reads show the latest
# lint sweep's edges on both versions (`conflicts`), and the supersede policy's verdict rests on them.
SWEEP_EDGES = Table(
    "maintenance",
    "fact_edges",
    pa.schema(
        [
            ("sweep_id", pa.string()),
            ("as_of", UTC_TS),
            ("agent_id", pa.string()),
            ("edge_type", pa.string()),  # contradict
            ("from_fact_id", pa.string()),  # the newer version (said later)
            ("from_version", pa.int32()),
            ("to_fact_id", pa.string()),  # the older version
            ("to_version", pa.int32()),
            ("judge", pa.string()),  # the judge(s) that found it: offline-rules-v1, a model name, or both
            ("reason", pa.string()),
        ]
    ),
    key=("sweep_id", "agent_id", "from_fact_id", "from_version", "to_fact_id", "to_version"),
)

# The contradiction judge's answers (written by the sweep only): one row per pair of fact texts judged by
# a model, key = sha256(prompt version, model, the pair's texts in order), so a rerun never pays twice.
JUDGE_CACHE = Table(
    "maintenance",
    "judge_cache",
    pa.schema(
        [
            ("cache_key", pa.string()),
            ("judge", pa.string()),
            ("prompt_version", pa.string()),
            ("contradicts", pa.bool_()),
            ("reason", pa.string()),
        ]
    ),
    key=("cache_key",),
)

# The append-only logs people write (`<home>/inputs/<name>/`, one uniquely named Parquet file per
# write). Inputs, not lake tables: not in TABLES.
OVERRIDE_ACTIONS = ("add", "correct", "reject")
FORGET_SCOPES = ("agent", "conversation", "fact")

OVERRIDES = Table(
    "inputs",
    "overrides",
    pa.schema(
        [
            ("override_id", pa.string()),
            ("agent_id", pa.string()),
            ("action", pa.string()),  # OVERRIDE_ACTIONS
            ("fact_id", pa.string()),  # the fact corrected or rejected
            ("type", pa.string()),
            ("subject", pa.string()),
            ("slot", pa.string()),
            ("value", pa.string()),
            ("content", pa.string()),
            ("confidence", pa.float64()),
            ("importance", pa.float64()),
            ("tags", pa.list_(pa.string())),
            ("valid_from", UTC_TS),
            ("valid_until", UTC_TS),
            ("target_subject", pa.string()),  # what the target looked like, to find it again if its id changed
            ("target_slot", pa.string()),
            ("target_content", pa.string()),
            ("written_at", UTC_TS),
            ("author", pa.string()),  # cli | api | ...
        ]
    ),
    key=("override_id",),
)

FORGET = Table(
    "inputs",
    "forget",
    pa.schema(
        [
            ("forget_id", pa.string()),
            ("agent_id", pa.string()),
            ("scope", pa.string()),  # FORGET_SCOPES
            ("target", pa.string()),  # conversation id or fact id; null for an agent
            ("written_at", UTC_TS),
            ("reason", pa.string()),
        ]
    ),
    key=("forget_id",),
)

# One row per forget: what was asked (scope and id, never text), what each store lost, and the ids and content
# hashes of what went, which the `forgotten_content_absent` check looks for in every store afterwards.
FORGET_RECEIPTS = Table(
    "inputs",
    "forget_receipts",
    pa.schema(
        [
            ("forget_id", pa.string()),  # the forget log entry it answers
            ("agent_id", pa.string()),
            ("scope", pa.string()),  # FORGET_SCOPES
            ("target", pa.string()),  # conversation id or fact id; null for an agent
            ("asked_at", UTC_TS),
            ("written_at", UTC_TS),  # when the erasure was done and this receipt written
            ("removed", pa.map_(pa.string(), pa.int64())),  # store (a table path, landing, ...) -> rows or files
            ("message_ids", pa.list_(pa.string())),
            ("content_sha256", pa.list_(pa.string())),  # of each message and indexed text removed
            ("fact_keys", pa.list_(pa.string())),  # fact_id@version
        ]
    ),
    key=("forget_id",),
)

# What an agent used: one row per object a write names (a search that records its hits, or
# `Memory.record_access`). The search's access-frequency boost counts these rows up to `as_of`.
ACCESS_SCOPES = ("chunks", "episodes", "facts")
ACCESS = Table(
    "inputs",
    "access",
    pa.schema(
        [
            ("access_id", pa.string()),  # one per write
            ("agent_id", pa.string()),
            ("scope", pa.string()),  # ACCESS_SCOPES
            ("object_id", pa.string()),  # a search result's `key`: chunk id, agent/conversation, fact_id@version
            ("accessed_at", UTC_TS),
        ]
    ),
    key=("access_id", "object_id"),
)

# A user undoing one entity merge (`memlake graph split`): the merge id, and the two forms it joined, to find
# it again if resolution changes its id.
GRAPH_SPLITS = Table(
    "inputs",
    "graph_splits",
    pa.schema(
        [
            ("split_id", pa.string()),
            ("agent_id", pa.string()),
            ("merge_id", pa.string()),
            ("kept_name", pa.string()),
            ("merged_name", pa.string()),
            ("written_at", UTC_TS),
            ("author", pa.string()),
        ]
    ),
    key=("split_id",),
)

TABLES: dict[str, Table] = {
    t.path: t
    for t in (
        LANDING_MANIFEST,
        TURNS,
        CHUNKS,
        EPISODES,
        PENDING,
        DISTILL_CACHE,
        FACTS,
        FACT_EDGES,
        PROFILES,
        PROFILE_CACHE,
        ENTITIES,
        RELATIONS,
        MENTIONS,
        TURN_READS,
        ENTITY_MERGES,
        FACT_STATUS,
        REPORTS,
        AUDIT,
        SWEEP_EDGES,
        JUDGE_CACHE,
    )
}

# LanceDB tables (search layer); rebuildable from the lake.
CHUNK_INDEX = "chunk_index"
EPISODE_INDEX = "episode_index"
FACT_INDEX = "fact_index"
