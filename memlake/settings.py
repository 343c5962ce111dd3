"""One typed settings model for every part of memlake.

Values come, highest priority first, from keyword arguments, `MEMLAKE_*`
environment variables, a TOML settings file (`MEMLAKE_SETTINGS_FILE`, else
`<home>/memlake.toml` when it exists), and the defaults documented here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource


class Settings(BaseSettings):
    """Every tunable of memlake, with its default and what it means."""

    model_config = SettingsConfigDict(env_prefix="MEMLAKE_", extra="ignore", frozen=True)

    home: Path = Field(Path("./data"), description="Root of everything: landing, lake, indexes, Dagster.")

    # Ingest and partitions
    partition_start_date: str = Field(
        "2015-01-01", description="First day of the daily partitions; older conversations are rejected."
    )

    # Embeddings
    embedding_model: str = Field(
        "",
        description="sentence-transformers model name or path; empty = the packaged all-MiniLM-L6-v2; "
        "'none' = no embeddings (full-text search only).",
    )
    embedding_batch_size: int = Field(64, description="Texts per embedding batch.")

    # Core model (distillation)
    core_base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = offline distiller.")
    core_model: str = Field("gpt-4o-mini", description="Model name sent to the endpoint.")
    core_api_key: str | None = Field(None, description="API key for the endpoint (read through dg.EnvVar).")
    core_mode: Literal["tools", "json", "json_schema"] = Field(
        "tools", description="instructor mode; local servers often accept only plain JSON mode."
    )
    core_timeout_seconds: float = Field(60.0, description="Timeout of one model call.")
    core_max_tries: int = Field(3, description="Tries per call, with backoff 1 s, 2 s, 4 s.")
    core_breaker_fail_max: int = Field(5, description="Consecutive failures that open the circuit breaker.")
    core_breaker_reset_seconds: float = Field(60.0, description="Cool-down before one half-open probe.")
    core_context_tokens: int = Field(12000, description="Conversation tokens per call before splitting.")
    offline_distiller: bool = Field(True, description="Use the rule-based distiller when no endpoint is set.")
    summary_debounce_seconds: int = Field(
        60, description="A conversation is distilled once idle this long (from ingested_at and last message)."
    )

    # Facts
    duplicate_jaccard: float = Field(0.6, description="Jaccard at or above which two facts are duplicates.")
    duplicate_cosine: float = Field(0.85, description="Cosine at or above which two facts are duplicates.")
    contradict_jaccard: float = Field(0.3, description="Lower Jaccard bound of a contradict candidate.")
    contradiction_policy: Literal["flag", "supersede"] = Field("flag", description="What a contradiction does.")
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
    profile_regenerate_threshold: int = Field(10, description="New contributions before a new profile version.")

    # Search and context
    rrf_k: int = Field(60, description="Reciprocal Rank Fusion constant.")
    recency_half_life_days: float = Field(180.0, description="Half-life of the recency boost, from as_of.")
    mmr_lambda: float = Field(0.9, description="MMR relevance weight (1.0 = no diversity).")
    window_turns: int = Field(1, description="Adjacent turns added around each hit.")
    context_budget_tokens: int = Field(800, description="Token budget of the assembled context block.")

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
    def dagster_home(self) -> Path:
        return Path(os.environ["DAGSTER_HOME"]) if os.environ.get("DAGSTER_HOME") else self.home / "dagster_home"

    def ensure_dirs(self) -> None:
        """Create the folders of the home that DESIGN.md names."""
        for path in (
            self.landing_dir,
            self.quarantine_dir,
            self.inputs_dir / "overrides",
            self.inputs_dir / "forget",
            self.inputs_dir / "access",
            self.lake_dir,
            self.lancedb_dir,
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
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_file))
        return tuple(sources)


def _settings_file() -> Path | None:
    explicit = os.environ.get("MEMLAKE_SETTINGS_FILE")
    if explicit:
        return Path(explicit)
    candidate = Path(os.environ.get("MEMLAKE_HOME", "./data")) / "memlake.toml"
    return candidate if candidate.is_file() else None


def load_settings(home: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings for `home` (or MEMLAKE_HOME), with explicit overrides on top."""
    if home is not None:
        overrides["home"] = Path(home)
    settings = Settings(**overrides)
    return settings.model_copy(update={"home": settings.home.resolve()})
