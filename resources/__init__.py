"""Dagster resources: thin, typed wrappers that hand the domain core a home's settings and tools. Each is built
from the home's one `Settings` (`build_resources`): the settings a run uses are their config, filled with the
home's values, so the launchpad shows them and a value changed there holds for that run (resources/run_config.py)."""

import os

import dagster as dg

from memlake.settings import Settings, load_settings
from resources.core_model import CoreModelResource
from resources.embedder import EmbedderResource, HashEmbedderResource
from resources.lake import LakeResource
from resources.run_config import (
    NOT_RUN_CONFIG,
    ChunkingRunConfig,
    CoreModelRunConfig,
    EmbeddingRunConfig,
    FoldRunConfig,
    LimitsRunConfig,
    filled,
)
from resources.vectors import VectorStoreResource

__all__ = ["CoreModelResource", "EmbedderResource", "HashEmbedderResource", "LakeResource", "VectorStoreResource",
           "build_resources"]


def build_resources(settings: Settings | None = None) -> dict[str, object]:
    """The resources of a normal run over `settings`' home (with none, MEMLAKE_HOME's as it is now: the code
    location's), their config filled with those settings' values. Settings changed in memory only
    (`load_settings(home, key=value)`) reach the run when they are run config; any other is refused, naming it,
    as the run would read the home's."""
    if settings is None:
        settings = load_settings()
    else:
        _refuse_settings_in_memory_only(settings)
    home = str(settings.home)
    # the key through dg.EnvVar when the environment has it, so the UI never shows it
    api_key = dg.EnvVar("MEMLAKE_CORE_API_KEY") if os.environ.get("MEMLAKE_CORE_API_KEY") else None
    return {
        "lake": LakeResource(home=home, limits=filled(LimitsRunConfig, settings.limits),
                             chunking=filled(ChunkingRunConfig, settings.chunking),
                             fold=filled(FoldRunConfig, settings.fold)),
        "embedder": EmbedderResource(home=home, embedding=filled(EmbeddingRunConfig, settings.embedding)),
        "vectors": VectorStoreResource(home=home),
        "core_model": CoreModelResource(home=home, api_key=api_key, core=filled(CoreModelRunConfig, settings.core)),
    }


def _refuse_settings_in_memory_only(settings: Settings) -> None:
    on_disk = load_settings(settings.home)
    differ = sorted(name for name in NOT_RUN_CONFIG if getattr(settings, name) != getattr(on_disk, name))
    if differ:
        raise ValueError(f"settings {', '.join(differ)} differ from {settings.home}'s own (its memlake.toml and "
                         "MEMLAKE_* variables) and are no run config: a run reads the home's, so write them there "
                         "(memlake.settings.write_home_setting)")
