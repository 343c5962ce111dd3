"""The settings a run uses, as its resources' config: the launchpad shows them with the home's values, and a
value changed there reaches that run only (memlake.toml is not written).

Each config class mirrors one settings group of memlake/settings.py, made from it, so a setting added to a group
is in the launchpad unlisted. Every field is optional: unset means the home's value, so a run config naming one
setting of a group (Dagster replaces a nested config whole) leaves the group's others as the home has them.
Dagster refuses a pydantic model as a resource field, hence these `dg.Config` copies; the run's `Settings` are
the home's with the set fields on top (`settings_for_run`), checked by the same model as any setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args, get_origin

import dagster as dg
from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo

from memlake.settings import (
    ChunkingSettings,
    ContextSettings,
    CoreModelSettings,
    EmbeddingSettings,
    FoldSettings,
    LimitsSettings,
    SearchSettings,
    ServingSettings,
    Settings,
    load_settings,
)


def group_config(group: type[BaseModel]) -> type[dg.Config]:
    """`group` as Dagster config: its fields and their descriptions, each optional (unset: the home's value)."""
    fields: dict[str, Any] = {}
    for name, field in group.model_fields.items():
        fields[name] = (_config_type(field.annotation) | None, Field(None, description=_described(field)))
    name = group.__name__.removesuffix("Settings") + "RunConfig"
    return create_model(name, __base__=dg.Config, __doc__=group.__doc__, **fields)


def _config_type(annotation: Any) -> Any:
    # Dagster config has no Literal: the value is text, and `Settings` refuses one not in the list
    return str if get_origin(annotation) is Literal else annotation


def _described(field: FieldInfo) -> str:
    if get_origin(field.annotation) is Literal:
        return f"{field.description} One of: {', '.join(get_args(field.annotation))}."
    return field.description or ""


if TYPE_CHECKING:  # to a type checker each is a dg.Config: their fields are made when the module loads
    LimitsRunConfig: TypeAlias = dg.Config
    ChunkingRunConfig: TypeAlias = dg.Config
    FoldRunConfig: TypeAlias = dg.Config
    EmbeddingRunConfig: TypeAlias = dg.Config
    CoreModelRunConfig: TypeAlias = dg.Config
else:
    LimitsRunConfig = group_config(LimitsSettings)
    ChunkingRunConfig = group_config(ChunkingSettings)
    FoldRunConfig = group_config(FoldSettings)
    EmbeddingRunConfig = group_config(EmbeddingSettings)
    CoreModelRunConfig = group_config(CoreModelSettings)


def filled(config: type[dg.Config], group: BaseModel) -> dg.Config:
    """`config` holding `group`'s values: what the launchpad shows."""
    return config(**group.model_dump())


def settings_for_run(home: str, *configs: dg.Config) -> Settings:
    """The home's settings (MEMLAKE_HOME's when `home` is empty) with the fields the run's config sets on top."""
    overrides = {name: value for config in configs for name, value in config.model_dump(exclude_none=True).items()}
    return load_settings(home or None, **overrides)


def run_config_settings(resources: Iterable[object]) -> set[str]:
    """The settings `resources` take as config."""
    return {name for resource in resources for value in vars(resource).values() if isinstance(value, dg.Config)
            for name in type(value).model_fields}


# The settings no resource takes as config, and why: every run reads them from the home (memlake.toml, MEMLAKE_*).
_READ_TIME = "read-time: how `Memory` (`memlake serve`, `memlake mcp`, the CLI's reads) ranks and assembles; a run " \
    "ranks no search"
_IN_NO_GROUP = "in no settings group yet: the facts, profile, episodes, graph and maintenance steps read it from " \
    "the home; a group a resource holds would make it run config (docs/decisions.md)"
NOT_RUN_CONFIG: dict[str, str] = {
    "home": "the resources' own `home` field: which home a run builds, not a setting of it",
    "core_api_key": "a secret: the core model's `api_key` comes through dg.EnvVar, so the UI never shows it",
    "partition_start_date": "the bound of the day partitions every run shares: one run moving it would accept "
    "days the others reject",
    "run_nice": "taken by the process before a run's resources exist (the executor lowers its priority)",
    "dagster_postgres_url": "where the Dagster instance keeps its runs, chosen before any run",
    "run_workers": "how many day runs `memlake run` launches at once: chosen before those runs exist",
    **{name: "where the lake and indexes live: every run and reader of the home must agree on it (the secret key "
       "is also a secret, never shown)" for name in ("storage_uri", "s3_endpoint_url", "s3_region",
                                                     "s3_access_key_id", "s3_secret_access_key")},
    **{name: _READ_TIME for group in (SearchSettings, ContextSettings, ServingSettings) for name in group.model_fields},
    **{name: _IN_NO_GROUP for name in ("summary_debounce_seconds", "half_life_days", "shown_confidence",
                                       "profile_regenerate_threshold", "graph_entity_cosine")},
    **{name: _IN_NO_GROUP for name in Settings.model_fields if name.startswith("maintenance_")},
}
