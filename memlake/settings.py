"""One typed settings model for every part of memlake.

Values come, highest priority first, from keyword arguments, `MEMLAKE_*`
environment variables, a TOML settings file (`MEMLAKE_SETTINGS_FILE`, else
`<home>/memlake.toml` when it exists), and the defaults documented here.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from contextvars import ContextVar
from datetime import date
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource


class LimitsSettings(BaseModel):
    """How much one landing file may hold (`memlake.parsers.ParseLimits` is this group): over a limit, the file is
    quarantined with the setting named. They guard memory: a parsed file is held whole, and a zip of a few KB can
    hold gigabytes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_file_bytes: int = Field(
        256 << 20, gt=0, description="Largest landing file read, in bytes (256 MiB); a larger one is quarantined."
    )
    max_decompressed_bytes: int = Field(
        256 << 20, gt=0,
        description="Largest conversations.json read out of a zip, in bytes (256 MiB): checked against the zip's "
        "header, and reading stops past it whatever the header says.",
    )
    max_message_chars: int = Field(
        1_000_000, gt=0, description="Longest message, in characters (about 250k tokens: a long pasted log)."
    )
    max_messages_per_conversation: int = Field(
        100_000, gt=0, description="Most messages in one conversation of a file, skipped ones included."
    )


class ChunkingSettings(BaseModel):
    """How turns are cut into search keys: `memlake.chunks.build_chunks` takes the group whole, and every setting
    of it changes the chunks' rows, so the group is their staleness key (`memlake.chunks.chunk_recipe`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_window_size: int = Field(
        2, description="Turns per window chunk; consecutive windows share one turn (0 or 1 = no window chunks)."
    )
    chunk_pool_windows: bool = Field(
        True,
        description="A window's vector is the normalised mean of its turns' vectors, not an embedding of its text: "
        "windows were 44 % of the tokens LoCoMo embeds. On LoCoMo it holds recall (turn any@10 tune 0.861 -> 0.858, "
        "held back 0.857 -> 0.862; docs/decisions.md); false embeds each window's text.",
    )
    chunk_pool_turns: bool = Field(
        True,
        description="A turn with sentence keys gets the normalised mean of its sentences' vectors instead of an "
        "embedding of its own text, which says the same words again: LoCoMo embeds 40 % fewer tokens, and recall "
        "holds (turn any@10 tune 0.858 -> 0.853, held back 0.862 -> 0.863; RealMem evidence in 750 words held back "
        "0.524 -> 0.519; docs/decisions.md). False embeds every turn's text.",
    )
    chunk_span_sentences: bool = Field(
        False,
        description="A sentence key's vector is read from its turn's model pass (the mean of its tokens' vectors "
        "there, with the speaker's name) instead of an embedding of its own text: one pass per turn embeds the turn "
        "and all its sentences (onnx backend; others embed the text). Off: on LoCoMo it costs turn any@10 (tune "
        "0.861 -> 0.849, held back 0.857 -> 0.845; docs/decisions.md); with chunk_pool_windows it is the fast "
        "chunking of `memlake bench ingest`.",
    )
    chunk_sentences: bool = Field(
        True,
        description="A chunk per sentence of turns with two sentences or more: a sentence's own vector ranks its "
        "turn (a long turn's vector is the mean of all it says, cut at the model's input limit).",
    )
    chunk_questions: bool = Field(
        True,
        description="A chunk per question a turn replies to (the previous turn's, by another speaker, with 'you' "
        "turned into the replier's name): a memory query matches the question asked better than the reply.",
    )
    chunk_long_turn_words: int = Field(
        100, ge=1,
        description="A turn of more words is long: it gets passage keys (at most chunk_long_turn_keys) instead of "
        "a key per sentence, and a hit on it returns the passage that matched. LoCoMo's longest turn has 96.",
    )
    chunk_long_turn_keys: int = Field(
        6, ge=0,
        description="Most passage keys a long turn gets: two thirds runs of its sentences in order (~80 words or "
        "more each; the turn's own vector the mean of theirs), one third its most distinctive sentences alone. "
        "0 = no bound: a key per sentence, as short turns get.",
    )
    chunk_long_turn_tokens: int = Field(
        160, ge=0,
        description="Most word pieces a long turn's passage keys embed in all: its most distinctive sentences "
        "first, then its runs, each that still fits (the first always); the other passages are full-text keys "
        "with no vector, still returned as the part that matched, and the turn's vector is the mean of those "
        "embedded. RealMem sends the model 91 word pieces a turn instead of 219, and tune-half recall holds "
        "(session any@5 0.726 -> 0.719, evidence in 750 words 0.548 -> 0.562; docs/decisions.md). LoCoMo has no "
        "long turn. 0 = every passage is embedded.",
    )


class FoldSettings(BaseModel):
    """How the facts fold compares a statement with the facts it holds (`memlake.facts.fold.FoldConfig` is this
    group)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    duplicate_jaccard: float = Field(0.6, description="Jaccard at or above which two facts are duplicates.")
    duplicate_cosine: float = Field(0.85, description="Cosine at or above which two facts are duplicates.")
    near_duplicate_cosine: float = Field(
        0.8, description="Cosine at or above which two facts that share words (Jaccard >= contradict_jaccard) "
        "are duplicates rather than a contradiction."
    )
    contradict_jaccard: float = Field(0.3, description="Lower Jaccard bound of a contradict candidate.")
    contradiction_policy: Literal["flag", "supersede"] = Field("flag", description="What a contradiction does.")


class SearchSettings(BaseModel):
    """How a search ranks: the candidate lists, their fusion, the lifts and the diversity of the answer
    (`memlake.search.params.SearchParams.from_settings` takes the group whole)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rrf_k: int = Field(10, description="Reciprocal Rank Fusion constant (measured on LoCoMo 0-4: 10 beats 60).")
    recency_half_life_days: float = Field(180.0, description="Half-life of the recency boost, from as_of.")
    mmr_lambda: float = Field(
        0.9, description="MMR relevance weight (1.0 = no diversity; on LoCoMo 0.7-1.0 measure the same, 0.5 worse)."
    )
    search_same_conversation_decay: float = Field(
        0.85, gt=0, le=1,
        description="A turn hit's score is multiplied by this for every 100 words of better hits already taken "
        "from its conversation, so that a budget of words reaches more conversations (1 = off). RealMem held back: "
        "evidence inside 750 words 0.554 -> 0.603 (BM25 0.571); LoCoMo held back: turn any@10 0.863 -> 0.858, "
        "evidence in 750 words 0.852 -> 0.847 (docs/decisions.md).",
    )
    window_turns: int = Field(1, description="Adjacent turns added around each hit.")
    search_candidates: int = Field(50, description="Rows taken from each candidate list (vector, full text).")
    search_session_weight: float = Field(
        0.5, ge=0,
        description="How much a session hit lifts the turns inside it (on LoCoMo 0.5 adds 1.1 points of turn "
        "recall@10, 1.4 on the held-back half; 0 = off). Off for a query naming an identifier, where a session "
        "of near-miss identifiers would outvote the exact match.",
    )
    search_window_weight: float = Field(
        0.8, ge=0, description="How much a window hit lifts (and brings in) its turns (needs chunk_window_size > 1)."
    )
    search_recency_weight: float = Field(
        0.1, ge=0, description="Weight of the recency boost (score x (1 + w x recency))."
    )
    search_importance_weight: float = Field(0.2, ge=0, description="Weight of the importance boost (0..1 importance).")
    search_access_weight: float = Field(0.1, ge=0, description="Weight of the access-frequency boost.")
    search_neighbor_weight: float = Field(
        0.3, ge=0, description="Share of a turn's fused score passed to the turns just before and after it."
    )
    search_graph_hop_weight: float = Field(
        0.0, ge=0,
        description="Graph-assisted retrieval: how much a turn's session sharing rare entities with the search's "
        "first sessions lifts it (memlake.graph.hop; 0 = off). Off by default: see docs/benchmarks.md for what "
        "it did on LoCoMo.",
    )
    search_graph_hop_seeds: int = Field(
        1, ge=1, description="How many first sessions of a search the graph hop starts from (1: tuned on LoCoMo 0-4)."
    )
    search_graph_weight: float = Field(
        0.0, ge=0,
        description="Graph-assisted retrieval: the turns naming the query's entities and its first hits' (graph "
        "mentions, memlake.graph.links) fused as one more candidate list at this weight (0 = off).",
    )
    search_graph_seeds: int = Field(3, ge=0, description="How many first hits' entities the graph list pulls by.")
    search_graph_depth: int = Field(
        1, ge=1, le=2, description="1: the entities named; 2: also those a stated relation ties them to."
    )
    search_mention_weight: float = Field(
        1.0, ge=0, description="Boost when the query names a hit's speaker (chunks) or subject (facts)."
    )
    search_superseded_weight: float = Field(
        0.5, ge=0, le=1,
        description="For a question about now (its main verb in the present tense), a turn hit that said only facts "
        "since replaced keeps this share of its score, and the turns that said what replaced them get its whole "
        "score (brought in if no list found them): the move ranks above the old home (memlake.search.current).",
    )
    search_question_weight: float = Field(
        0.9, ge=0, description="Scale of a question chunk's cosine similarity in the vector list (1 = as a turn's own)."
    )


class ContextSettings(BaseModel):
    """How the context block is assembled: its budget, its relevance floor and gate, and how long it is reused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_budget_tokens: int = Field(800, description="Token budget of the assembled context block.")
    context_relevance_floor: float = Field(
        0.0, ge=0, le=1, description="A search hit (excerpt, fact, summary) enters the context block only when its "
        "score is at least this share of the best hit's: a block holds less than its budget when less is relevant "
        "(0: every hit, up to the budget). 0.4, chosen on LoCoMo 0-4, cut a fifth of the tokens but lost 0.012 of "
        "the evidence on the held-back half, so it is not the default (docs/decisions.md, 2026-11-28).")
    context_gate: Literal["heuristic", "llm", "off"] = Field(
        "heuristic", description="Relevance gate of the context block: cues in the question (heuristic), the core "
        "model (llm: one short call per new question, cached; the heuristic when no model is set or it fails), "
        "or off (facts for every question).")
    context_gate_timeout_seconds: float = Field(
        5.0, description="The llm gate's wait for the model (one try) before it falls back to the heuristic.")
    context_cache_seconds: float = Field(
        10.0, description="How long a context block is reused for the same request; any write to the agent's "
        "memory, by any process, ends it sooner. 0 = no cache.")


class ServingSettings(BaseModel):
    """What a long-lived reader (`Memory`, so `memlake serve` and `memlake mcp`) keeps in memory: the index
    snapshots `memlake.vectors.VectorStore.serving` takes whole. The HTTP service's own settings (its upstream
    model, its request bounds) are `service.config.ServiceSettings`, outside the core, which imports no service."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    search_snapshot_rows: int = Field(
        300_000,
        description="Index rows a long-lived reader (Memory) keeps in memory: one agent's rows of one table at one "
        "table version per entry, least recently used dropped first, about 2 KB a row with 384-d vectors. An agent "
        "with more rows is searched in LanceDB directly. 0 = off.",
    )
    search_snapshot_background_rows: int = Field(
        10_000,
        description="An agent with more index rows than this has its snapshot loaded on a background thread; "
        "its searches read LanceDB until it is ready (a 100k-row agent, cold: the first 1.7 s instead of 4.8 s, the "
        "next ~0.1 s each until the snapshot is ready).",
    )


class EmbeddingSettings(BaseModel):
    """Which model embeds the search keys, and how (`memlake.embedding.load_embedder` takes these)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    embedding_model: str = Field(
        "",
        description="sentence-transformers model name or path (a relative path to a folder in the home, "
        "such as models/adapted-..., is read from the home); empty = the packaged all-MiniLM-L6-v2; "
        "'none' = no embeddings (full-text search only).",
    )
    embedding_batch_size: int = Field(64, description="Texts per embedding batch.")
    embedding_backend: Literal["torch", "onnx"] = Field(
        "onnx",
        description="What runs the embedding model: torch (sentence-transformers) or onnx (ONNX Runtime, the "
        "model exported from its own weights on first use; mean-pooling models like the packaged one).",
    )


class CoreModelSettings(BaseModel):
    """Which model distils conversations and how hard it tries (`memlake.distill.client.CoreConfig`); the key is
    apart (`core_api_key`), a secret that is no group's, so nothing that shows a group shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    core_base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = offline distiller.")
    core_model: str = Field("gpt-4o-mini", description="Model name sent to the endpoint.")
    core_mode: Literal["tools", "json", "json_schema"] = Field(
        "tools", description="instructor mode; local servers often accept only plain JSON mode."
    )
    core_timeout_seconds: float = Field(60.0, description="Timeout of one model call.")
    core_max_tries: int = Field(3, description="Tries per call, with backoff 1 s, 2 s, 4 s.")
    core_backoff_seconds: float = Field(
        1.0, description="First wait between tries; it doubles per try up to 4x (1 s, 2 s, 4 s)."
    )
    core_breaker_fail_max: int = Field(5, description="Consecutive failures that open the circuit breaker.")
    core_breaker_reset_seconds: float = Field(60.0, description="Cool-down before one half-open probe.")
    core_context_tokens: int = Field(12000, description="Conversation tokens per call before splitting.")
    offline_distiller: bool = Field(True, description="Use the rule-based distiller when no endpoint is set.")


class Settings(
    LimitsSettings, ChunkingSettings, FoldSettings, SearchSettings, ContextSettings, ServingSettings,
    EmbeddingSettings, CoreModelSettings, BaseSettings
):
    """Every tunable of memlake, with its default and what it means.

    The settings the code takes together are typed once, in a group (`LimitsSettings`, `ChunkingSettings`,
    `FoldSettings`, `SearchSettings`, `ContextSettings`, `ServingSettings`, `EmbeddingSettings`,
    `CoreModelSettings`), and handed out whole (`settings.chunking`); the groups a run uses are also its
    resources' config (resources/run_config.py). Their fields are Settings' own, so a home's
    memlake.toml and the MEMLAKE_* variables name them flat, as before the groups (docs/decisions.md, 2026-11-28)."""

    model_config = SettingsConfigDict(env_prefix="MEMLAKE_", extra="forbid", frozen=True)

    home: Path = Field(Path("./data"), description="Root of everything: landing, lake, indexes, Dagster.")

    # Ingest and partitions
    partition_start_date: str = Field(
        "2015-01-01", description="Earliest conversation day accepted; older ones are rejected as clock errors."
    )

    @field_validator("partition_start_date")
    @classmethod
    def _a_day(cls, value: str) -> str:  # checked when read, not when the first run parses it
        date.fromisoformat(value)
        return value

    # The core model's key (its other settings are CoreModelSettings) and when a conversation is distilled
    core_api_key: str | None = Field(None, description="API key for the endpoint (read through dg.EnvVar).")
    summary_debounce_seconds: int = Field(
        60, description="A conversation is distilled once idle this long (from ingested_at and last message)."
    )

    # Facts
    half_life_days: dict[str, float] = Field(
        default_factory=lambda: {
            "identity": 180.0,
            "fact": 90.0,
            "preference": 90.0,
            "event": 14.0,
            "decision": 60.0,
            "correction": 90.0,
            "commitment": 30.0,
            "relationship": 180.0,
            "skill": 180.0,
        },
        description="Decay half-life per fact type, in days.",
    )
    # Maintenance sweeps (memlake.maintenance): consolidation and lint, computed as of a time the run gives
    maintenance_salience_floor: float = Field(
        0.1, ge=0, description="Salience below which an idle fact is evicted (hidden from now-reads and the "
        "context block, kept in history); salience = importance x 0.5^(idle days / its type's half-life).")
    maintenance_idle_days: float = Field(30.0, ge=0, description="Days without being said, confirmed or used "
                                         "before a fact below the salience floor is evicted.")
    maintenance_retention_days: float | None = Field(
        None, gt=0, description="Episodes and facts idle longer than this are pruned (hidden, never deleted); "
        "unset = kept forever.")
    maintenance_episode_merge_jaccard: float = Field(
        0.9, description="Jaccard of two episodes' summaries at or above which the later is merged into the earlier.")
    maintenance_promote_episodes: int = Field(
        3, description="Recent episodes that must overlap a fact (half its words in one) to promote it.")
    maintenance_promote_window_days: float = Field(30.0, description="How far back from as_of an episode is recent.")
    maintenance_stale_half_lives: float = Field(
        2.0, description="A fact idle longer than this many of its type's half-lives is flagged stale (lint).")
    maintenance_contradiction_cosine: float = Field(
        0.3, description="Cosine at or above which two facts of one subject are a contradiction candidate pair "
        "(without an embedder: Jaccard >= contradict_jaccard, or the same slot).")
    maintenance_judge_batch: int = Field(10, ge=1, description="Candidate pairs per core-model judge call.")
    shown_confidence: float = Field(
        0.65, ge=0, le=1, description="Confidence at or above which a fact is shown to the agent (the profile, the "
        "facts of the context block, recall, `facts` now); below it a fact is a candidate, kept and listed by "
        "`facts --candidates`. The user's own facts are always shown. Chosen once on development data "
        "(docs/decisions.md, 2026-11-28).")
    profile_regenerate_threshold: int = Field(
        10, description="New contributions within one conversation before a new profile version (a conversation that "
        "changed the profile always makes one).")

    # Graph
    graph_entity_cosine: float = Field(
        0.85, ge=0, le=1, description="Cosine of two names' embeddings at or above which entity resolution merges "
        "them (within one type; people's names must also be spelled alike)."
    )

    # Sharing the cores
    run_nice: int = Field(
        10, ge=0, le=19, description="The CPU niceness `memlake run`, `memlake reindex` and the runs Dagster launches "
        "(sensors, schedules, the UI) lower themselves to (at least; 0 = as started): on a machine that also serves "
        "reads, `memlake serve` then gets the cores first and a run takes the rest.")

    # Days built at once
    run_workers: int = Field(
        1, ge=1, le=64, description="How many processes `memlake run` builds days in at once: with more than 1 the "
        "touched days are split into that many Dagster runs, launched together (each loads the embedding model, "
        "~0.5 GB), their chunks' vectors embedded there; the index commits and the folds (facts, profiles, graph) "
        "stay one at a time (Dagster concurrency pools). 1 = one run, one process, as before.")

    # Where Dagster keeps its runs, events and schedules
    dagster_postgres_url: str = Field(
        "", description="A PostgreSQL URL (postgresql://user:password@host:5432/db) for the Dagster instance's runs, "
        "events and schedules, shared by every machine that runs `memlake run` or `memlake dev` on this home; "
        "empty = SQLite files under the home's dagster_home. The URL stays in the environment of the processes "
        "(MEMLAKE_DAGSTER_POSTGRES_URL), never in dagster.yaml.")

    # Where the lake and the indexes live (memlake.storage); everything else stays under the home
    storage_uri: str = Field(
        "", description="s3://bucket/prefix: the lake (<uri>/lake) and the LanceDB indexes (<uri>/lancedb) in "
        "S3-compatible object storage, read and written there by every process on this home; empty = the home's "
        "own lake and lancedb folders. The inputs logs (remember, forget, access) are at <uri>/inputs and "
        "conversations sent to `memlake serve` wait at <uri>/landing for a run on any host; the landing folder, "
        "the caches and the Dagster instance stay under the home.")
    s3_endpoint_url: str = Field(
        "", description="The object store's endpoint (http://127.0.0.1:9000 for a local server); empty = "
        "AWS_ENDPOINT_URL, else AWS's own.")
    s3_region: str = Field("", description="The object store's region; empty = AWS_REGION, else us-east-1.")
    s3_access_key_id: str = Field("", description="The object store's access key id; empty = AWS_ACCESS_KEY_ID, "
                                  "else the AWS default chain (a role, ~/.aws).")
    s3_secret_access_key: SecretStr = Field(
        SecretStr(""), description="The object store's secret key; empty = AWS_SECRET_ACCESS_KEY. Never printed "
        "or logged: better kept in the environment than in memlake.toml.")

    @field_validator("storage_uri")
    @classmethod
    def _an_object_store_uri(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value:
            bucket = value.removeprefix("s3://").split("/", 1)[0]
            if not value.startswith("s3://") or not bucket:
                raise ValueError(f"storage_uri {value!r} is not an object store location: s3://bucket/prefix, "
                                 "or empty for the home's own folders")
        return value

    @property
    def embedding(self) -> EmbeddingSettings:
        """The embedding model and how it runs, as one group."""
        return _group(self, EmbeddingSettings)

    @property
    def core(self) -> CoreModelSettings:
        """The core model's endpoint, model and tries (not its key), as one group."""
        return _group(self, CoreModelSettings)

    @property
    def limits(self) -> LimitsSettings:
        """The landing-file limits, as one group."""
        return _group(self, LimitsSettings)

    @property
    def fold(self) -> FoldSettings:
        """The facts fold's thresholds and policy, as one group."""
        return _group(self, FoldSettings)

    @property
    def chunking(self) -> ChunkingSettings:
        """The chunker's settings, as one group (its fields only)."""
        return _group(self, ChunkingSettings)

    @property
    def search(self) -> SearchSettings:
        """The search's ranking settings, as one group."""
        return _group(self, SearchSettings)

    @property
    def context(self) -> ContextSettings:
        """The context block's settings, as one group."""
        return _group(self, ContextSettings)

    @property
    def serving(self) -> ServingSettings:
        """What a long-lived reader keeps in memory, as one group."""
        return _group(self, ServingSettings)

    @property
    def landing_dir(self) -> Path:
        return self.home / "landing"

    @property
    def quarantine_dir(self) -> Path:
        return self.home / "quarantine"

    @property
    def inputs_dir(self) -> Path:
        return self.home / "inputs"

    @property
    def lake_dir(self) -> Path:
        return self.home / "lake"

    @property
    def lancedb_dir(self) -> Path:
        return self.home / "lancedb"

    @property
    def embedding_cache_dir(self) -> Path:
        """Vectors by (model identity, text hash), so a reindex embeds only texts never embedded before."""
        return self.home / "cache" / "embeddings"

    @property
    def models_dir(self) -> Path:
        """Embedding models adapted to this home's conversations (`memlake adapt`)."""
        return self.home / "models"

    @property
    def dagster_home(self) -> Path:
        return Path(os.environ["DAGSTER_HOME"]) if os.environ.get("DAGSTER_HOME") else self.home / "dagster_home"

    def ensure_dirs(self) -> None:
        """Create the folders of the home that DESIGN.md names (the lake's and the indexes' only when they are
        the home's: on object storage there is nothing to make)."""
        stores = () if self.storage_uri else (self.lake_dir, self.lancedb_dir)
        for path in (
            self.landing_dir,
            self.quarantine_dir,
            self.inputs_dir / "overrides",
            self.inputs_dir / "forget",
            self.inputs_dir / "access",
            *stores,
        ):
            path.mkdir(parents=True, exist_ok=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = _settings_file()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_file is not None:
            try:
                source = TomlConfigSettingsSource(settings_cls, toml_file=toml_file)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"settings file {toml_file} is not valid TOML: {exc}") from None
            _check_names(toml_file, source.toml_data, settings_cls.model_fields)
            sources.append(source)
        return tuple(sources)


Group = TypeVar("Group", bound=BaseModel)


def _group(settings: Settings, group: type[Group]) -> Group:
    """`settings`' values of `group`'s fields (already checked when `settings` were read)."""
    return group.model_construct(**{name: getattr(settings, name) for name in group.model_fields})


def _check_names(path: Path, data: dict[str, Any], known: dict[str, Any]) -> None:
    """A setting the file names that does not exist is a typo to report, not a default to keep quietly."""
    unknown = [name for name in data if name not in known]
    if unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"settings file {path}: unknown setting {name!r}{hint}")


# The home `load_settings` was given, while it builds the settings: its memlake.toml is the one to read.
_HOME_GIVEN: ContextVar[Path | None] = ContextVar("memlake_home_given", default=None)


def _settings_file() -> Path | None:
    explicit = os.environ.get("MEMLAKE_SETTINGS_FILE")
    if explicit:
        if not Path(explicit).is_file():
            raise ValueError(f"MEMLAKE_SETTINGS_FILE names {explicit}, which is not a file")
        return Path(explicit)
    home = _HOME_GIVEN.get() or Path(os.environ.get("MEMLAKE_HOME", "./data"))
    candidate = home / "memlake.toml"
    return candidate if candidate.is_file() else None


def load_settings(home: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings for `home` (or MEMLAKE_HOME), read from that home's memlake.toml, with explicit
    overrides on top."""
    if home is not None:
        overrides["home"] = Path(home)
    given = _HOME_GIVEN.set(Path(home) if home is not None else None)
    try:
        settings = Settings(**overrides)
    finally:
        _HOME_GIVEN.reset(given)
    return settings.model_copy(update={"home": settings.home.resolve()})


def existing_home(settings: Settings) -> Settings:
    """`settings`, if their home folder exists: reading a home that is not there is a mistake (a mistyped
    path), not an empty memory, and must not create it."""
    if not settings.home.is_dir():
        raise ValueError(f"no memlake home at {settings.home}: check the path (--home, MEMLAKE_HOME); "
                         "`memlake ingest` and `memlake run` make one")
    return settings


def write_home_setting(home: Path, key: str, value: str) -> Path:
    """Set `key` in `<home>/memlake.toml`, keeping the file's other settings and comments; returns the file.
    The environment (MEMLAKE_*) and MEMLAKE_SETTINGS_FILE still win over it, as for any setting."""
    import tomlkit  # deferred: ~6 ms on every import of the settings; only a write needs it

    from memlake.atomic_files import write_text_atomically  # deferred: pyarrow, which the settings never need

    if key not in Settings.model_fields:
        raise ValueError(f"unknown setting {key!r}")
    path = home / "memlake.toml"
    document = tomlkit.parse(path.read_text()) if path.exists() else tomlkit.document()
    document[key] = value
    write_text_atomically(path, tomlkit.dumps(document))  # a reader sees the old file or the new one
    return path
